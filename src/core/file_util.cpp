#include "core/file_util.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace kiln {

Status read_file_bytes(const std::string& path, const std::string& what, std::string* bytes) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return not_found("{} '{}' does not exist", what, path);
  if (std::filesystem::is_directory(path, ec)) return invalid_argument("{} '{}' is a folder, not a file", what, path);
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return not_found("{} '{}' cannot be opened", what, path);
  const std::streamoff size = f.tellg();
  if (size < 0) return not_found("{} '{}' cannot be read", what, path);
  bytes->resize(static_cast<size_t>(size));
  f.seekg(0);
  if (size > 0 && !f.read(bytes->data(), size)) return not_found("{} '{}' cannot be read", what, path);
  return Status::OK();
}

}  // namespace kiln
