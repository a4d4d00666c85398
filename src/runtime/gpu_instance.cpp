#include "runtime/gpu_instance.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>

#include "backends/gpu/check.h"
#include "core/error.h"
#include "core/progress.h"
#include "runtime/gpu_host_fallback.h"
#include "runtime/shape_plan.h"

namespace kiln::runtime {
namespace {

gpu::TensorDesc desc_of(const ir::TensorType& t) { return {t.dtype, t.concrete()}; }

// The layer for one node: the registry's when it has one that accepts the node, else the host
// fallback (with the reason, so `describe()` says why).
Status build_layer(gpu::LayerBuildContext& ctx, std::unique_ptr<gpu::Layer>* layer, std::string* fallback_reason) {
  const gpu::LayerFactory* factory = gpu::LayerRegistry::instance().find(ctx.node.domain, ctx.node.op_type);
  if (!factory) {
    *fallback_reason = "no GPU layer for this op";
  } else {
    Status st;
    try {
      st = (*factory)(ctx, layer);
    } catch (const gpu::GpuError& e) {
      // A vendor library refusing a configuration should not stop the model: run it on the
      // host and say so loudly.
      st = Status(StatusCode::kUnsupported, e.what());
      std::fprintf(stderr, "kiln: warning: %s: GPU layer build failed, using the CPU: %s\n",
                   ctx.node.describe().c_str(), e.what());
    }
    if (st.code() == StatusCode::kUnsupported) {
      *fallback_reason = st.message();
      layer->reset();
    } else if (!st.ok()) {
      return st.with_context(ctx.node.describe());
    }
  }
  if (!*layer) *layer = make_host_fallback_layer(ctx, *fallback_reason);
  return Status::OK();
}

}  // namespace

const void* GpuConstantStore::get(const ir::Value* v) {
  auto it = buffers_.find(v);
  if (it != buffers_.end()) return it->second.data();
  const Tensor& t = *v->constant;
  gpu::DeviceBuffer buf(t.nbytes());
  buf.upload(t.data(), t.nbytes());
  bytes_ += t.nbytes();
  return buffers_.emplace(v, std::move(buf)).first->second.data();
}

Status GpuInstance::build(const ir::Graph& g, const std::vector<std::vector<int64_t>>& input_shapes,
                          const std::vector<const Tensor*>& shape_values, const GpuInstanceOptions& options,
                          gpu::Device& device, GpuConstantStore& constants, std::unique_ptr<GpuInstance>* out) {
  std::unique_ptr<GpuInstance> inst(new GpuInstance());
  inst->device_ = &device;
  inst->options_ = options;
  device.make_current();

  std::vector<ir::TensorType> in_types;
  for (size_t i = 0; i < g.inputs.size(); ++i) in_types.push_back(ir::TensorType::of(g.inputs[i]->type.dtype, input_shapes[i]));
  ConcreteTypes ct;
  KILN_RETURN_IF_ERROR(infer_concrete_types(g, in_types, shape_values, &ct));
  inst->planner_nodes_ = std::move(ct.synthetic);
  inst->folded_ = std::move(ct.folded);  // std::map keeps element addresses across the move
  auto host_value = [&](const ir::Value* v) -> const Tensor* {
    if (v->constant) return &*v->constant;
    auto it = inst->folded_.find(v);
    return it == inst->folded_.end() ? nullptr : &it->second;
  };

  // Arena tensors and their lifetimes: step 0 copies the inputs in, layer s runs at step s + 1,
  // the last step copies the outputs out.
  const int n = static_cast<int>(ct.nodes.size());
  std::map<const ir::Value*, int> index;
  auto add_tensor = [&](const ir::Value* v, int step) {
    index[v] = static_cast<int>(inst->plan_tensors_.size());
    inst->plan_tensors_.push_back({v->name, desc_of(ct.types.at(v)).bytes(), step, step});
  };
  for (const ir::Value* v : g.inputs) add_tensor(v, 0);
  for (int s = 0; s < n; ++s) {
    for (const ir::Value* o : ct.nodes[s]->outputs) {
      if (o) add_tensor(o, s + 1);
    }
  }
  for (int s = 0; s < n; ++s) {
    for (const ir::Value* v : ct.nodes[s]->inputs) {
      auto it = v ? index.find(v) : index.end();
      if (it != index.end()) inst->plan_tensors_[it->second].last = std::max(inst->plan_tensors_[it->second].last, s + 1);
    }
  }
  for (const ir::Value* v : g.outputs) {
    auto it = index.find(v);
    if (it != index.end()) inst->plan_tensors_[it->second].last = n + 1;
  }

  // Layers (tactics are chosen here, timed on the device).
  size_t workspace = 0;
  ProgressBar progress("building layers", options.layer.verbose ? 0 : n);
  for (int s = 0; s < n; ++s) {
    progress.update(s);
    const ir::Node& node = *ct.nodes[s];
    gpu::LayerBuildContext ctx{node, {}, {}, {}, device, inst->options_.layer};
    for (const ir::Value* v : node.inputs) {
      ctx.inputs.push_back(v ? desc_of(ct.types.at(v)) : gpu::TensorDesc{});
      ctx.constants.push_back(v ? host_value(v) : nullptr);
    }
    for (const ir::Value* o : node.outputs) ctx.outputs.push_back(o ? desc_of(ct.types.at(o)) : gpu::TensorDesc{});
    std::unique_ptr<gpu::Layer> layer;
    Step step{&node, ""};
    KILN_RETURN_IF_ERROR(build_layer(ctx, &layer, &step.fallback_reason));
    if (layer->aliases_input0() && node.input(0) && node.output(0) && index.count(node.input(0))) {
      inst->plan_tensors_[index.at(node.output(0))].may_alias = index.at(node.input(0));
    }
    workspace = std::max(workspace, layer->workspace_bytes());
    inst->all_capturable_ = inst->all_capturable_ && layer->capturable();
    inst->steps_.push_back(std::move(step));
    inst->layers_.push_back(std::move(layer));
  }

  inst->plan_ = plan_memory(inst->plan_tensors_);
  inst->arena_ = gpu::DeviceBuffer(inst->plan_.arena_bytes);
  inst->workspace_ = gpu::DeviceBuffer(workspace);
  auto slot = [&](const ir::Value* v) -> void* {
    return static_cast<char*>(inst->arena_.data()) + inst->plan_.offsets[index.at(v)];
  };

  for (int s = 0; s < n; ++s) {
    const ir::Node& node = *ct.nodes[s];
    gpu::LaunchArgs args;
    args.workspace = inst->workspace_.data();
    args.stream = device.stream();
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ir::Value* v = node.inputs[i];
      const void* p = nullptr;
      if (v && index.count(v)) {
        p = slot(v);
      } else if (v && inst->layers_[s]->reads_constant_input(i)) {
        if (v->constant) {
          p = constants.get(v);
        } else {
          const Tensor& t = inst->folded_.at(v);
          inst->folded_buffers_.emplace_back(t.nbytes());
          inst->folded_buffers_.back().upload(t.data(), t.nbytes());
          p = inst->folded_buffers_.back().data();
        }
      }
      args.inputs.push_back(p);
    }
    for (const ir::Value* o : node.outputs) args.outputs.push_back(o ? slot(o) : nullptr);
    inst->launches_.push_back(std::move(args));
  }
  for (const ir::Value* v : g.inputs) {
    inst->input_slots_.push_back(slot(v));
    inst->input_staging_.emplace_back(inst->plan_tensors_[index.at(v)].bytes);
  }
  for (const ir::Value* v : g.outputs) {
    Output o;
    o.desc = desc_of(ct.types.at(v));
    if (index.count(v)) {
      o.device = slot(v);
      o.staging = gpu::PinnedBuffer(o.desc.bytes());
    } else {
      const Tensor* t = host_value(v);
      KILN_ASSERT(t != nullptr, "graph output '{}' is neither computed nor known", v->name);
      o.host = *t;
    }
    inst->outputs_.push_back(std::move(o));
  }
  *out = std::move(inst);
  return Status::OK();
}

GpuInstance::~GpuInstance() {
  if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void GpuInstance::enqueue_layers() {
  for (size_t s = 0; s < layers_.size(); ++s) {
    try {
      layers_[s]->enqueue(launches_[s]);
    } catch (const gpu::GpuError& e) {
      throw gpu::GpuError(steps_[s].node->describe() + ": " + e.what());
    }
  }
}

// Records the layers once as a CUDA graph; a replay then costs one launch instead of one per
// layer. A failure here only costs the speed-up: the instance keeps running eagerly.
void GpuInstance::capture_graph() {
  const cudaStream_t stream = device_->stream();
  try {
    KILN_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue_layers();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream, &broken);
      if (broken) cudaGraphDestroy(broken);
      throw;
    }
    KILN_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    KILN_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
  } catch (const gpu::GpuError& e) {
    std::fprintf(stderr, "kiln: warning: CUDA graph capture failed, running layer by layer: %s\n", e.what());
    cudaGetLastError();
    if (graph_) cudaGraphDestroy(graph_);
    graph_ = nullptr;
    graph_exec_ = nullptr;
    all_capturable_ = false;
  }
}

Status GpuInstance::run(const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs) {
  device_->make_current();
  const cudaStream_t stream = device_->stream();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t bytes = inputs[i]->nbytes();
    if (bytes == 0) continue;
    std::memcpy(input_staging_[i].data(), inputs[i]->data(), bytes);
    KILN_CUDA_CHECK(cudaMemcpyAsync(input_slots_[i], input_staging_[i].data(), bytes, cudaMemcpyHostToDevice, stream));
  }
  if (graph_exec_) {
    KILN_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream));
  } else {
    enqueue_layers();
  }
  for (Output& o : outputs_) {
    if (o.device && o.desc.bytes() > 0) {
      KILN_CUDA_CHECK(cudaMemcpyAsync(o.staging.data(), o.device, o.desc.bytes(), cudaMemcpyDeviceToHost, stream));
    }
  }
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  outputs->clear();
  for (const Output& o : outputs_) {
    if (!o.device) {
      outputs->push_back(o.host.clone());
      continue;
    }
    Tensor t = Tensor::uninitialized(o.desc.dtype, o.desc.shape);
    if (t.nbytes() > 0) std::memcpy(t.data(), o.staging.data(), t.nbytes());
    outputs->push_back(std::move(t));
  }
  // Capture after a first eager run, so lazy initialization inside the libraries is done.
  if (++runs_ == 1 && options_.use_cuda_graph && all_capturable_ && !layers_.empty()) capture_graph();
  return Status::OK();
}

int GpuInstance::fallback_count() const {
  int n = 0;
  for (const Step& s : steps_) n += s.fallback_reason.empty() ? 0 : 1;
  return n;
}

std::string GpuInstance::describe() const {
  std::string out = fmt::format("{} layers ({} on the CPU), workspace {} bytes, CUDA graph: {}\n", layers_.size(),
                                fallback_count(), workspace_.bytes(),
                                graph_exec_ ? "captured" : (options_.use_cuda_graph && all_capturable_ ? "after the first run" : "off"));
  for (size_t s = 0; s < layers_.size(); ++s) {
    out += fmt::format("  {:<40} {}\n", steps_[s].node->describe(), layers_[s]->tactic());
  }
  return out + plan_.to_string(plan_tensors_);
}

}  // namespace kiln::runtime
