#include "runtime/gpu_executor.h"

#include "backends/gpu/check.h"
#include "core/error.h"
#include "runtime/cpu_executor.h"
#include "runtime/shape_plan.h"

namespace kiln::runtime {

Status GpuExecutor::create(const ir::Graph& g, const GpuExecutorOptions& options, std::unique_ptr<GpuExecutor>* out) {
  std::string why;
  const int count = gpu::device_count(&why);
  if (count == 0) return unsupported("backend 'cuda': no usable GPU ({}); run `kiln doctor`", why);
  if (options.device_id < 0 || options.device_id >= count) {
    return invalid_argument("backend 'cuda': GPU {} does not exist (this machine has {})", options.device_id, count);
  }
  std::unique_ptr<GpuExecutor> ex(new GpuExecutor(g, options));
  try {
    ex->device_ = std::make_unique<gpu::Device>(options.device_id);
  } catch (const gpu::GpuError& e) {
    return unsupported("backend 'cuda': cannot open GPU {}: {}", options.device_id, e.what());
  }
  *out = std::move(ex);
  return Status::OK();
}

Status GpuExecutor::value_inputs_for(const std::vector<std::vector<int64_t>>& shapes,
                                     const std::vector<const Tensor*>& values, std::vector<bool>* needed) {
  needed->assign(graph_.inputs.size(), false);
  bool any = false;
  for (const Tensor* v : values) any = any || v != nullptr;
  if (!any) return Status::OK();  // not cached: prepare() knows no values, a later run() does
  auto it = value_inputs_.find(shapes);
  if (it == value_inputs_.end()) {
    std::vector<ir::TensorType> types;
    for (size_t i = 0; i < shapes.size(); ++i) types.push_back(ir::TensorType::of(graph_.inputs[i]->type.dtype, shapes[i]));
    KILN_RETURN_IF_ERROR(find_value_inputs(graph_, types, values, needed));
    if (value_inputs_.size() >= 64) value_inputs_.clear();  // a bound, not a policy: refinding is cheap
    it = value_inputs_.emplace(shapes, *needed).first;
  }
  *needed = it->second;
  return Status::OK();
}

Status GpuExecutor::instance_for(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& values,
                                 GpuInstance** out) {
  std::vector<bool> needed;
  KILN_RETURN_IF_ERROR(value_inputs_for(shapes, values, &needed));
  InstanceKey key{shapes, std::vector<std::string>(shapes.size())};
  std::vector<const Tensor*> known(shapes.size(), nullptr);
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!needed[i] || !values[i]) continue;
    known[i] = values[i];
    key.values[i].assign(static_cast<const char*>(values[i]->data()), values[i]->nbytes());
  }
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (it->first == key) {
      lru_.splice(lru_.begin(), lru_, it);
      *out = lru_.front().second.get();
      return Status::OK();
    }
  }
  std::unique_ptr<GpuInstance> inst;
  try {
    KILN_RETURN_IF_ERROR(GpuInstance::build(graph_, shapes, known, options_.instance, *device_, constants_, &inst));
  } catch (const gpu::GpuError& e) {
    return Status(StatusCode::kInternal, std::string("building the GPU plan: ") + e.what());
  }
  lru_.emplace_front(std::move(key), std::move(inst));
  while (lru_.size() > std::max<size_t>(options_.max_instances, 1)) lru_.pop_back();
  *out = lru_.front().second.get();
  return Status::OK();
}

Status GpuExecutor::prepare(const std::vector<std::vector<int64_t>>& input_shapes, bool* built) {
  if (built) *built = false;
  if (input_shapes.size() != graph_.inputs.size()) {
    return invalid_argument("{} input shapes for {} inputs", input_shapes.size(), graph_.inputs.size());
  }
  GpuInstance* inst = nullptr;
  const Status st = instance_for(input_shapes, std::vector<const Tensor*>(input_shapes.size(), nullptr), &inst);
  bool may_need_values = false;
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    may_need_values = may_need_values || is_shape_tensor_candidate(*graph_.inputs[i], graph_.inputs[i]->type.dtype,
                                                                   Tensor::numel_of(input_shapes[i]));
  }
  if (st.code() == StatusCode::kUnsupported && may_need_values) return Status::OK();  // planned at run()
  if (built) *built = st.ok();
  return st;
}

Status GpuExecutor::run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) {
  std::vector<const Tensor*> ordered;
  std::vector<std::vector<int64_t>> shapes;
  for (const ir::Value* in : graph_.inputs) {
    auto it = inputs.find(in->name);
    if (it == inputs.end()) return invalid_argument("input '{}' is missing", in->name);
    KILN_RETURN_IF_ERROR(check_input(*in, it->second));
    ordered.push_back(&it->second);
    shapes.push_back(it->second.shape());
  }
  for (const auto& [name, t] : inputs) {
    bool found = false;
    for (const ir::Value* in : graph_.inputs) found = found || in->name == name;
    if (!found) return invalid_argument("the model has no input named '{}'", name);
  }
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < ordered.size(); ++i) {
    const bool candidate = is_shape_tensor_candidate(*graph_.inputs[i], ordered[i]->dtype(), ordered[i]->numel());
    values.push_back(candidate ? ordered[i] : nullptr);
  }
  GpuInstance* inst = nullptr;
  KILN_RETURN_IF_ERROR(instance_for(shapes, values, &inst));
  try {
    return inst->run(ordered, outputs);
  } catch (const gpu::GpuError& e) {
    return Status(StatusCode::kInternal, e.what());
  }
}

}  // namespace kiln::runtime
