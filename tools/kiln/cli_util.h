// Helpers shared by the kiln subcommands: error reporting, option parsing, number formatting.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln::cli {

// Prints `kiln: error: <message>` as one line on stderr and returns the exit status (1).
int report_error(const std::string& message);
int report_error(const Status& status);

// Parses "NAME=d1,d2,..." options (an empty list after '=' is a scalar) into a map.
Status parse_shape_options(const std::vector<std::string>& options, std::map<std::string, std::vector<int64_t>>* out);

// "float32[N,3,224,224]": the declared type, dynamic dims by name ('?' when unnamed).
std::string declared_type(const TensorInfo& info);
// "[1,3,224,224]"
std::string dims_to_string(const std::vector<int64_t>& dims);
// "'a', 'b'": the names of a model's inputs or outputs, for error messages.
std::string quoted_names(const std::vector<TensorInfo>& infos);

// 1234567 -> "1,234,567"
std::string with_commas(int64_t n);
// 102760448 -> "98.0 MiB"
std::string human_bytes(double bytes);

}  // namespace kiln::cli
