#include "cli_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace kiln::cli {

int report_error(const std::string& message) {
  // One line, whatever the message holds, so scripts can rely on it.
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::fprintf(stderr, "kiln: error: %s\n", line.c_str());
  return 1;
}

int report_error(const Status& status) { return report_error(status.to_string()); }

Status parse_shape_options(const std::vector<std::string>& options, std::map<std::string, std::vector<int64_t>>* out) {
  for (const std::string& opt : options) {
    const size_t eq = opt.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      return {StatusCode::kInvalidArgument, fmt::format("--shape '{}' is not of the form NAME=d1,d2,...", opt)};
    }
    std::vector<int64_t> dims;
    const std::string list = opt.substr(eq + 1);
    size_t pos = 0;
    while (pos < list.size()) {
      const size_t comma = std::min(list.find(',', pos), list.size());
      const std::string item = list.substr(pos, comma - pos);
      size_t used = 0;
      int64_t d = -1;
      try {
        d = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != item.size() || d < 0) {
        return {StatusCode::kInvalidArgument,
                fmt::format("--shape '{}': '{}' is not a dimension (a number >= 0)", opt, item)};
      }
      dims.push_back(d);
      pos = comma + 1;
    }
    (*out)[opt.substr(0, eq)] = std::move(dims);
  }
  return Status::OK();
}

std::string declared_type(const TensorInfo& info) {
  std::string s = dtype_name(info.dtype);
  if (!info.has_shape) return s + "[...]";
  s += "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (i) s += ",";
    if (info.shape[i] >= 0) {
      s += std::to_string(info.shape[i]);
    } else {
      const bool named = i < info.dim_names.size() && !info.dim_names[i].empty();
      s += named ? info.dim_names[i] : "?";
    }
  }
  return s + "]";
}

std::string dims_to_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return s + "]";
}

std::string quoted_names(const std::vector<TensorInfo>& infos) {
  std::string s;
  for (const TensorInfo& i : infos) s += (s.empty() ? "'" : ", '") + i.name + "'";
  return s.empty() ? "(none)" : s;
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

}  // namespace kiln::cli
