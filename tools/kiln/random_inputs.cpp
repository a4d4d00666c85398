#include "random_inputs.h"

#include <fmt/format.h>

#include "cli_util.h"

namespace kiln::cli {

const TensorInfo* find_info(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (const TensorInfo& i : infos) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

Tensor random_tensor(DType dtype, const std::vector<int64_t>& shape, std::mt19937& rng) {
  Tensor t(DType::kFloat64, shape);
  double* p = t.data_as<double>();
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small_int(0, 9);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype_is_float(dtype)) {
      p[i] = real(rng);
    } else if (dtype == DType::kBool) {
      p[i] = small_int(rng) % 2;
    } else {
      p[i] = small_int(rng);
    }
  }
  return t.to(dtype);
}

namespace {

// The shape to feed `in`: its --shape if given, else the declared one, with the batch rule.
Status shape_for(const TensorInfo& in, const std::map<std::string, std::vector<int64_t>>& given, int64_t batch,
                 std::vector<int64_t>* shape) {
  const auto it = given.find(in.name);
  if (it == given.end() && !in.has_shape) {
    return {StatusCode::kInvalidArgument,
            fmt::format("input '{}' has no declared shape; give one with --shape {}=d1,d2,...", in.name, in.name)};
  }
  *shape = it != given.end() ? it->second : in.shape;
  const bool dim0_dynamic = in.has_shape && !in.shape.empty() && in.shape[0] < 0;
  if (batch > 0 && dim0_dynamic && !shape->empty()) (*shape)[0] = batch;
  for (size_t i = 0; i < shape->size(); ++i) {
    if ((*shape)[i] >= 0) continue;
    if (batch > 0) {
      return {StatusCode::kInvalidArgument,
              fmt::format("input '{}' is {}: dimension {} is dynamic and not the batch; give it with --shape {}=d1,d2,...",
                          in.name, declared_type(in), i, in.name)};
    }
    (*shape)[i] = 1;
  }
  return Status::OK();
}

}  // namespace

Status fill_random_inputs(const Session& s, const RandomInputOptions& options, std::map<std::string, Tensor>* inputs) {
  std::map<std::string, std::vector<int64_t>> given;
  KILN_RETURN_IF_ERROR(parse_shape_options(options.shapes, &given));
  for (const auto& [name, dims] : given) {
    if (!find_info(s.inputs(), name)) {
      return {StatusCode::kInvalidArgument,
              fmt::format("--shape names '{}', but the model's inputs are {}", name, quoted_names(s.inputs()))};
    }
  }
  std::mt19937 rng(options.seed);
  for (const TensorInfo& in : s.inputs()) {
    if (inputs->count(in.name)) continue;
    std::vector<int64_t> shape;
    KILN_RETURN_IF_ERROR(shape_for(in, given, options.batch, &shape));
    (*inputs)[in.name] = random_tensor(in.dtype, shape, rng);
  }
  return Status::OK();
}

}  // namespace kiln::cli
