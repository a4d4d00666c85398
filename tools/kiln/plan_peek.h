// A look at a plan file's header from the command line (public API only): is the file a plan
// (magic "KILNPLAN", see src/runtime/plan_file.h), and which precision was it built for.
#pragma once
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::cli {

// True when `path` starts with the plan magic. `*precision` gets the header's "precision", or
// "" when the header cannot be read (Session::load then says what is wrong with the file).
bool peek_plan_precision(const std::string& path, std::string* precision);

// A plan carries its precision: `*precisions` becomes just that one, and a --precision on the
// command line (`given`) naming another is an error saying how to get it. No-op for a model.
Status plan_precisions(const std::string& path, bool given, std::vector<std::string>* precisions);

}  // namespace kiln::cli
