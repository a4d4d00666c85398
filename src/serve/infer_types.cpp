#include "serve/infer_types.h"

#include <utility>

namespace kiln::serve {
namespace {

const std::pair<DType, const char*> kDatatypes[] = {
    {DType::kBool, "BOOL"},     {DType::kUInt8, "UINT8"},     {DType::kUInt16, "UINT16"}, {DType::kUInt32, "UINT32"},
    {DType::kUInt64, "UINT64"}, {DType::kInt8, "INT8"},       {DType::kInt16, "INT16"},   {DType::kInt32, "INT32"},
    {DType::kInt64, "INT64"},   {DType::kFloat16, "FP16"},    {DType::kFloat32, "FP32"},  {DType::kFloat64, "FP64"},
    {DType::kBFloat16, "BF16"},
};

}  // namespace

std::string datatype_of(DType t) {
  for (const auto& [d, name] : kDatatypes) {
    if (d == t) return name;
  }
  return "BYTES";
}

DType dtype_of_datatype(const std::string& datatype) {
  for (const auto& [d, name] : kDatatypes) {
    if (datatype == name) return d;
  }
  return DType::kUndefined;
}

ServeStatus ServeStatus::from(const Status& st) {
  switch (st.code()) {
    case StatusCode::kOk: return OK();
    case StatusCode::kNotFound: return {Code::kNotFound, st.message()};
    case StatusCode::kInternal: return {Code::kInternal, st.message()};
    default: return {Code::kBadRequest, st.message()};
  }
}

int ServeStatus::http_status() const {
  switch (code_) {
    case Code::kOk: return 200;
    case Code::kBadRequest: return 400;
    case Code::kNotFound: return 404;
    case Code::kUnavailable: return 503;
    case Code::kDeadlineExceeded: return 504;
    case Code::kInternal: return 500;
  }
  return 500;
}

int ServeStatus::grpc_code() const {
  switch (code_) {
    case Code::kOk: return 0;                 // OK
    case Code::kBadRequest: return 3;         // INVALID_ARGUMENT
    case Code::kNotFound: return 5;           // NOT_FOUND
    case Code::kUnavailable: return 14;       // UNAVAILABLE
    case Code::kDeadlineExceeded: return 4;   // DEADLINE_EXCEEDED
    case Code::kInternal: return 13;          // INTERNAL
  }
  return 13;
}

}  // namespace kiln::serve
