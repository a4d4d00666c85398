// parse_input_profile (kiln/build.h): "NAME:MIN,OPT,MAX" with full shapes or, for an input with
// one dynamic dimension, just that dimension's values.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>

#include "core/error.h"
#include "builder/input_profile.h"

namespace kiln {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

bool parse_dim(const std::string& s, int64_t* v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size() && *v > 0;
}

// One of MIN/OPT/MAX: "1x3x224x224", or a single value that fills the input's one dynamic dim.
Status parse_point(const std::string& text, const TensorInfo* input, std::vector<int64_t>* shape) {
  const std::vector<std::string> dims = split(text, 'x');
  shape->clear();
  for (const std::string& d : dims) {
    int64_t v = 0;
    if (!parse_dim(d, &v)) return invalid_argument("'{}' is not a shape like 1x3x224x224 (positive dims)", text);
    shape->push_back(v);
  }
  if (dims.size() != 1 || !input || input->shape.size() == 1) return Status::OK();
  int dynamic = 0;
  for (int64_t d : input->shape) dynamic += d < 0;
  if (dynamic != 1) {
    return invalid_argument("'{}' gives one value, but input '{}' has {} dynamic dimensions: give full shapes", text,
                            input->name, dynamic);
  }
  const int64_t value = shape->front();
  *shape = input->shape;
  for (int64_t& d : *shape) d = d < 0 ? value : d;
  return Status::OK();
}

}  // namespace

Status check_input_profile(const InputProfile& p, const TensorInfo& input) {
  for (const auto* s : {&p.min, &p.opt, &p.max}) {
    if (!input.has_shape) continue;
    if (s->size() != input.shape.size()) {
      return invalid_argument("{} has rank {}, but input '{}' has rank {}", fmt::format("{}", fmt::join(*s, "x")),
                              s->size(), input.name, input.shape.size());
    }
    for (size_t i = 0; i < s->size(); ++i) {
      if (input.shape[i] >= 0 && (*s)[i] != input.shape[i]) {
        return invalid_argument("dimension {} of input '{}' is fixed at {}, the profile says {}", i, input.name,
                                input.shape[i], (*s)[i]);
      }
    }
  }
  if (p.min.size() != p.opt.size() || p.opt.size() != p.max.size()) {
    return invalid_argument("MIN, OPT and MAX have different ranks");
  }
  for (size_t i = 0; i < p.min.size(); ++i) {
    if (p.min[i] > p.opt[i] || p.opt[i] > p.max[i]) {
      return invalid_argument("dimension {} is not ordered MIN <= OPT <= MAX ({}, {}, {})", i, p.min[i], p.opt[i],
                              p.max[i]);
    }
  }
  return Status::OK();
}

Status parse_input_profile(const std::string& text, const TensorInfo* input, InputProfile* out) {
  const auto fail = [&](const Status& s) { return invalid_argument("--profile '{}': {}", text, s.message()); };
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return fail(invalid_argument("expected NAME:MIN,OPT,MAX (e.g. x:1x3x224x224,8x3x224x224,32x3x224x224)"));
  }
  const std::vector<std::string> points = split(text.substr(colon + 1), ',');
  if (points.size() != 3) return fail(invalid_argument("expected three shapes MIN,OPT,MAX after the ':'"));
  InputProfile p;
  p.input = text.substr(0, colon);
  if (input && input->name != p.input) return fail(invalid_argument("the profile names '{}', not '{}'", p.input, input->name));
  std::vector<int64_t>* shapes[] = {&p.min, &p.opt, &p.max};
  for (int i = 0; i < 3; ++i) {
    Status s = parse_point(points[i], input, shapes[i]);
    if (!s.ok()) return fail(s);
  }
  if (input) {
    Status s = check_input_profile(p, *input);
    if (!s.ok()) return fail(s);
  }
  *out = std::move(p);
  return Status::OK();
}

}  // namespace kiln
