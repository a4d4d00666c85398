// Status: how kiln reports errors a user can cause (bad file, unsupported op, wrong shape).
// Nothing in the public API throws; every fallible call returns a Status.
#pragma once
#include <string>
#include <utility>

namespace kiln {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // wrong shape, dtype, missing input, malformed request
  kNotFound,         // missing file, unknown input or model name
  kInvalidModel,     // file does not parse or the graph is inconsistent
  kUnsupported,      // op, attribute, dtype or opset kiln does not implement
  kInternal,         // a broken invariant inside kiln
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status OK() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "unsupported: <message>" etc.; one line, suitable for a CLI error.
  std::string to_string() const;
  // A copy whose message has `context` prepended ("node 'conv1' (Conv): ...").
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

const char* status_code_name(StatusCode code);

}  // namespace kiln

#define KILN_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::kiln::Status kiln_status_ = (expr);   \
    if (!kiln_status_.ok()) return kiln_status_; \
  } while (0)
