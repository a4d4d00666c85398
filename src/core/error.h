// Helpers to build Status values with formatted messages, and the internal-invariant check.
#pragma once
#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "kiln/status.h"

namespace kiln {

template <class... Args>
Status invalid_argument(fmt::format_string<Args...> f, Args&&... args) {
  return {StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...)};
}
template <class... Args>
Status unsupported(fmt::format_string<Args...> f, Args&&... args) {
  return {StatusCode::kUnsupported, fmt::format(f, std::forward<Args>(args)...)};
}
template <class... Args>
Status invalid_model(fmt::format_string<Args...> f, Args&&... args) {
  return {StatusCode::kInvalidModel, fmt::format(f, std::forward<Args>(args)...)};
}
template <class... Args>
Status not_found(fmt::format_string<Args...> f, Args&&... args) {
  return {StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...)};
}

// Thrown for broken internal invariants (a kiln bug, not a user error); carries file:line.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace kiln

#define KILN_ASSERT(cond, ...)                                                                  \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      throw ::kiln::InternalError(fmt::format("{}:{}: internal check '{}' failed: {}", __FILE__, \
                                              __LINE__, #cond, fmt::format(__VA_ARGS__)));      \
    }                                                                                           \
  } while (0)

// Returns an invalid-argument Status from the enclosing function when `cond` is false.
#define KILN_ENSURE(cond, ...)                                   \
  do {                                                           \
    if (!(cond)) return ::kiln::invalid_argument(__VA_ARGS__);   \
  } while (0)
