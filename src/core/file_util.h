// Reading whole files into memory in one read (models are hundreds of MB: no stream copies).
#pragma once
#include <string>

#include "kiln/status.h"

namespace kiln {

// Fills `bytes` with the file's contents; `what` names the file in errors ("model file").
Status read_file_bytes(const std::string& path, const std::string& what, std::string* bytes);

}  // namespace kiln
