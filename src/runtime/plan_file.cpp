#include "runtime/plan_file.h"

#include <cstring>
#include <fstream>

#include "core/error.h"
#include "core/file_util.h"

namespace kiln::runtime {
namespace {

constexpr size_t kMagicSize = 8;

template <class T>
void put_le(std::string* out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads the container front to back; every read is checked against what is left.
class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}

  template <class T>
  Status read_le(const char* what, T* v) {
    if (left() < sizeof(T)) return truncated(what, sizeof(T));
    *v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) *v |= static_cast<T>(static_cast<uint8_t>(bytes_[pos_ + i])) << (8 * i);
    pos_ += sizeof(T);
    return Status::OK();
  }

  // A u64 length, then that many bytes: where they are.
  Status read_section(const char* what, size_t* offset, size_t* size) {
    uint64_t n = 0;
    KILN_RETURN_IF_ERROR(read_le(what, &n));
    if (n > left()) return truncated(what, n);
    *offset = pos_;
    *size = n;
    pos_ += n;
    return Status::OK();
  }

  size_t left() const { return bytes_.size() - pos_; }

 private:
  Status truncated(const char* what, uint64_t need) const {
    return invalid_model("truncated plan file: the {} needs {} bytes at offset {} but the file has {} left", what,
                         need, pos_, left());
  }
  const std::string& bytes_;
  size_t pos_ = kMagicSize;
};

// The keys every reader of the header relies on, with their JSON types.
Status check_header(const nlohmann::json& h) {
  if (!h.is_object()) return invalid_model("corrupt plan file: the header is not a JSON object");
  for (const char* key : {"backend", "precision", "kiln_version"}) {
    if (!h.contains(key) || !h[key].is_string()) {
      return invalid_model("corrupt plan file: the header has no '{}' string", key);
    }
  }
  const std::string backend = h["backend"];
  if (backend != "cpu" && backend != "cuda") {
    return invalid_model("corrupt plan file: unknown backend '{}' in the header", backend);
  }
  if (!h.contains("profiles") || !h["profiles"].is_array()) {
    return invalid_model("corrupt plan file: the header has no 'profiles' list");
  }
  if (backend == "cuda") {
    if (!h.contains("environment") || !h["environment"].is_object() || !h.contains("tactics") ||
        !h["tactics"].is_object() || !h.contains("shape_sets") || !h["shape_sets"].is_array()) {
      return invalid_model("corrupt plan file: a cuda plan's header needs 'environment', 'tactics' and 'shape_sets'");
    }
  }
  return Status::OK();
}

}  // namespace

bool is_plan_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[kMagicSize] = {};
  return f.read(magic, kMagicSize) && std::memcmp(magic, kPlanMagic, kMagicSize) == 0;
}

std::string serialize_plan(const PlanFile& plan) {
  const std::string header = plan.header.dump();
  std::string out(kPlanMagic, kMagicSize);
  put_le<uint32_t>(&out, kPlanFormatVersion);
  put_le<uint64_t>(&out, header.size());
  out += header;
  put_le<uint64_t>(&out, plan.graph_bytes.size());
  out += plan.graph_bytes;
  return out;
}

namespace {

// Checks the container and parses the header; the graph is bytes[*graph_offset, +*graph_size).
Status parse_sections(const std::string& bytes, nlohmann::json* header, size_t* graph_offset, size_t* graph_size) {
  if (bytes.size() < kMagicSize || std::memcmp(bytes.data(), kPlanMagic, kMagicSize) != 0) {
    return invalid_model("not a kiln plan file (it does not start with \"KILNPLAN\")");
  }
  Reader r(bytes);
  uint32_t version = 0;
  KILN_RETURN_IF_ERROR(r.read_le("format version", &version));
  if (version != kPlanFormatVersion) {
    return unsupported("plan file format version {}, but this kiln reads version {}: rebuild the plan with `kiln build`",
                       version, kPlanFormatVersion);
  }
  size_t header_offset = 0, header_size = 0;
  KILN_RETURN_IF_ERROR(r.read_section("JSON header", &header_offset, &header_size));
  *header = nlohmann::json::parse(bytes.begin() + static_cast<std::ptrdiff_t>(header_offset),
                                  bytes.begin() + static_cast<std::ptrdiff_t>(header_offset + header_size), nullptr,
                                  /*allow_exceptions=*/false);
  if (header->is_discarded()) return invalid_model("corrupt plan file: the header is not valid JSON");
  KILN_RETURN_IF_ERROR(check_header(*header));
  KILN_RETURN_IF_ERROR(r.read_section("graph", graph_offset, graph_size));
  if (*graph_size == 0) return invalid_model("corrupt plan file: the graph section is empty");
  if (r.left() != 0) return invalid_model("corrupt plan file: {} unexpected bytes after the graph", r.left());
  return Status::OK();
}

}  // namespace

Status parse_plan(const std::string& bytes, PlanFile* plan) {
  size_t offset = 0, size = 0;
  KILN_RETURN_IF_ERROR(parse_sections(bytes, &plan->header, &offset, &size));
  plan->graph_bytes.assign(bytes, offset, size);
  return Status::OK();
}

Status write_plan_file(const std::string& path, const PlanFile& plan, size_t* bytes_written) {
  const std::string bytes = serialize_plan(plan);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return invalid_argument("cannot write the plan file '{}'", path);
  if (bytes_written) *bytes_written = bytes.size();
  return Status::OK();
}

Status read_plan_file(const std::string& path, PlanFile* plan) {
  std::string bytes;
  KILN_RETURN_IF_ERROR(read_file_bytes(path, "plan file", &bytes));
  size_t offset = 0, size = 0;
  KILN_RETURN_IF_ERROR(parse_sections(bytes, &plan->header, &offset, &size).with_context(path));
  // The graph is most of the file: keep its bytes where they are rather than copy them.
  bytes.erase(0, offset);
  bytes.resize(size);
  plan->graph_bytes = std::move(bytes);
  return Status::OK();
}

}  // namespace kiln::runtime
