// Builds the register program of a kiln.FusedElementwise node. The body (graph attribute
// "body", see ops/fused_elementwise.h) maps node input i to body input i and body output o to
// node output o; its nodes are elementwise ops, in topological order; scalar constants of the
// body become immediates. Registers are reused once the value they hold is dead.
#include <map>

#include "backends/gpu/kernels/ew_build.h"
#include "backends/gpu/kernels/fused.h"
#include "backends/gpu/kernels/layer_util.h"
#include "backends/gpu/kernels/registry.h"
#include "core/dispatch.h"

namespace kiln::gpu::kern {
namespace {

class ProgramBuilder {
 public:
  ProgramBuilder(const ir::Graph& body, FusedProgram* prog) : body_(body), prog_(prog) {}

  Status build() {
    const int num_in = static_cast<int>(body_.inputs.size());
    if (num_in > kFusedMaxInputs) return unsupported("{} inputs (max {})", num_in, kFusedMaxInputs);
    if (body_.outputs.size() > static_cast<size_t>(kFusedMaxOutputs)) return unsupported("too many outputs");
    prog_->num_inputs = num_in;
    for (int i = 0; i < num_in; ++i) reg_[body_.inputs[i]] = take_reg();
    count_uses();
    // Immediates take the registers right after the inputs, before any result does.
    for (const auto& node : body_.nodes()) {
      for (const ir::Value* v : node->inputs) {
        if (v != nullptr && v->is_constant() && v->constant->numel() == 1 && reg_of(v) < 0) {
          return unsupported("more than {} scalar constants", kFusedMaxImms);
        }
      }
    }
    for (const auto& node : body_.nodes()) KILN_RETURN_IF_ERROR(add(*node));
    prog_->num_outputs = static_cast<int>(body_.outputs.size());
    for (int o = 0; o < prog_->num_outputs; ++o) {
      const int r = reg_of(body_.outputs[o]);
      if (r < 0) return unsupported("body output {} is not computed", body_.outputs[o]->name);
      prog_->out_reg[o] = static_cast<uint8_t>(r);
    }
    return Status::OK();
  }

 private:
  int take_reg() {
    for (int r = 0; r < kFusedMaxRegs; ++r) {
      if (!busy_[r]) {
        busy_[r] = true;
        return r;
      }
    }
    return -1;
  }

  // Uses per value, so a register is freed after its last reader (outputs are never freed).
  void count_uses() {
    for (const auto& node : body_.nodes()) {
      for (const ir::Value* v : node->inputs) {
        if (v != nullptr) ++uses_[v];
      }
    }
    for (const ir::Value* v : body_.outputs) uses_[v] += 1 << 20;
  }

  int reg_of(const ir::Value* v) {
    auto it = reg_.find(v);
    if (it != reg_.end()) return it->second;
    if (v == nullptr || !v->is_constant() || v->constant->numel() != 1) return -1;
    if (prog_->num_imms >= kFusedMaxImms) return -1;
    // Constants load once per thread, before the element loop: registers after the inputs.
    double d = 0;
    dispatch<AllTypes>(v->constant->dtype(),
                           [&](auto tag) { d = convert<double>(*v->constant->data_as<typename decltype(tag)::type>()); });
    const int r = take_reg();
    if (r != prog_->num_inputs + prog_->num_imms) return -1;  // immediates must sit right after the inputs
    prog_->imms[prog_->num_imms++] = static_cast<float>(d);
    reg_[v] = r;
    uses_[v] += 1 << 20;  // immediates are loaded once: never free them
    return r;
  }

  Status add(const ir::Node& n) {
    if (prog_->num_instrs >= kFusedMaxInstrs) return unsupported("more than {} body ops", kFusedMaxInstrs);
    FusedInstr& in = prog_->code[prog_->num_instrs];
    in.extra = FusedExtra::kNone;
    EwKind kind = EwKind::kOther;
    int arity = 3;
    if (n.op_type == "Where" && n.domain.empty()) {
      in.op = EwOp::kWhere;
    } else if (n.op_type == "Cast" || n.op_type == "IsNaN") {
      arity = 1;
      in.op = EwOp::kIdentity;
      in.extra = FusedExtra::kIsNaN;
      if (n.op_type == "Cast") {
        const DType to = dtype_from_onnx(static_cast<int>(n.attr_i("to", 0)));
        if (to == DType::kFloat32) in.extra = FusedExtra::kCopy;
        else if (to == DType::kFloat16) in.extra = FusedExtra::kRoundHalf;
        else if (to == DType::kBFloat16) in.extra = FusedExtra::kRoundBf16;
        else return unsupported("body Cast to {}", dtype_name(to));
      }
    } else if (!ew_op_of(n, &in.op, &kind)) {
      return unsupported("body op {} has no GPU interpreter code", n.op_type);
    } else {
      arity = in.op == EwOp::kClip ? 1 : ew_arity(kind);
      EwParams p;
      auto const_of = [&](size_t i) { return n.input(i) && n.input(i)->is_constant() ? &*n.input(i)->constant : nullptr; };
      const DType t = n.input(0) != nullptr ? n.input(0)->type.dtype : DType::kFloat32;
      KILN_RETURN_IF_ERROR(ew_params_of(n, in.op, t, const_of(1), const_of(2), n.input(1) != nullptr,
                                        n.input(2) != nullptr, &p));
      in.p0 = static_cast<float>(p.p0);
      in.p1 = static_cast<float>(p.p1);
    }
    int src[3] = {0, 0, 0};
    for (int k = 0; k < arity; ++k) {
      src[k] = reg_of(n.input(k));
      if (src[k] < 0) return unsupported("body op {} reads a value that is neither computed nor a scalar", n.op_type);
    }
    // Free the sources read for the last time, then take the destination (it may reuse one).
    for (int k = 0; k < arity; ++k) {
      if (--uses_[n.input(k)] == 0) busy_[src[k]] = false;
    }
    const ir::Value* y = n.output(0);
    if (y == nullptr || n.outputs.size() != 1) return unsupported("body op {} must have one output", n.op_type);
    const int dst = take_reg();
    if (dst < 0) return unsupported("body needs more than {} registers", kFusedMaxRegs);
    if (uses_[y] == 0) busy_[dst] = false;  // dead result
    reg_[y] = dst;
    in.dst = static_cast<uint8_t>(dst);
    in.a = static_cast<uint8_t>(src[0]);
    in.b = static_cast<uint8_t>(src[1]);
    in.c = static_cast<uint8_t>(src[2]);
    ++prog_->num_instrs;
    return Status::OK();
  }

  const ir::Graph& body_;
  FusedProgram* prog_;
  std::map<const ir::Value*, int> reg_;
  std::map<const ir::Value*, int> uses_;
  bool busy_[kFusedMaxRegs] = {};
};

Status build_fused(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  const ir::Graph* body = ctx.node.attr_g("body");
  if (body == nullptr) return reject(ctx, "no body graph");
  if (ctx.inputs.size() != body->inputs.size() || ctx.outputs.size() != body->outputs.size()) {
    return reject(ctx, "node and body disagree on inputs/outputs");
  }
  FusedProgram prog;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!fused_type_of(ctx.inputs[i].dtype, &prog.in_type[i])) return reject(ctx, "input of {}", dtype_name(ctx.inputs[i].dtype));
  }
  const std::vector<int64_t>& shape = ctx.outputs[0].shape;
  for (const TensorDesc& d : ctx.outputs) {
    if (d.dtype != ctx.outputs[0].dtype || d.shape != shape) return reject(ctx, "outputs differ in dtype or shape");
  }
  if (!fused_type_of(ctx.outputs[0].dtype, &prog.out_type)) return reject(ctx, "output of {}", dtype_name(ctx.outputs[0].dtype));
  const Status st = ProgramBuilder(*body, &prog).build();
  if (!st.ok()) return st.with_context(ctx.node.describe());
  const int64_t n = ctx.outputs[0].numel();
  std::array<std::vector<int64_t>, kFusedMaxInputs> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const int64_t m = ctx.inputs[i].numel();
    prog.step[i] = m == n ? 1 : 0;
    if (m != n && m != 1) prog.contiguous = false;
    shapes[i] = ctx.inputs[i].shape;
  }
  if (!prog.contiguous && !make_broadcast<kFusedMaxInputs>(shape, shapes, &prog.bc)) return reject(ctx, "rank over 8");
  const std::string tactic = "kiln fused-eltwise " + std::to_string(prog.num_instrs) + " ops " +
                             (prog.contiguous ? "contiguous" : "broadcast");
  return make_layer(out, tactic, [prog, n](const LaunchArgs& a) {
    FusedPointers p{};
    for (int i = 0; i < prog.num_inputs; ++i) p.in[i] = a.inputs[i];
    for (int o = 0; o < prog.num_outputs; ++o) p.out[o] = a.outputs[o];
    launch_fused(prog, p, n, a.stream);
  });
}

}  // namespace

void register_fused_layers(LayerRegistry& r) { r.add("kiln", "FusedElementwise", build_fused); }

}  // namespace kiln::gpu::kern
