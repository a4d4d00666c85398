// Gemm, kiln.FusedGemm and MatMul through cuBLASLt (lt_matmul.cpp). The factories turn each
// node into one MatmulProblem: Gemm's C becomes the cuBLASLt bias epilogue when it is a row
// vector, the beta*C matrix term when it is a full [M,N] matrix; MatMul's batch dimensions
// become a strided batch, a folded M (when B has no batch), or one call per broadcast group.
#include <fmt/format.h>

#include <memory>

#include "backends/gpu/blas/lt_util.h"
#include "core/error.h"
#include "ops/activation.h"

namespace kiln::gpu::blas {
namespace {

class GemmLayer final : public Layer {
 public:
  GemmLayer(std::unique_ptr<LtMatmul> mm, DeviceBuffer own_b, DeviceBuffer own_c, bool c_is_bias)
      : mm_(std::move(mm)), own_b_(std::move(own_b)), own_c_(std::move(own_c)), c_is_bias_(c_is_bias) {}
  std::string tactic() const override { return mm_->tactic(); }
  size_t workspace_bytes() const override { return mm_->workspace_bytes(); }
  size_t weight_bytes() const override { return own_b_.bytes() + own_c_.bytes(); }
  bool reads_constant_input(size_t i) const override {
    return !((i == 1 && own_b_.data()) || (i == 2 && own_c_.data()));
  }
  void enqueue(const LaunchArgs& a) override {
    MatmulPointers p;
    p.a = a.inputs[0];
    p.b = own_b_.data() ? own_b_.data() : a.inputs[1];
    const void* c = own_c_.data() ? own_c_.data() : (a.inputs.size() > 2 ? a.inputs[2] : nullptr);
    (c_is_bias_ ? p.bias : p.c) = c;
    p.d = a.outputs[0];
    mm_->run(p, a.workspace, a.stream);
  }

 private:
  std::unique_ptr<LtMatmul> mm_;
  DeviceBuffer own_b_, own_c_;
  bool c_is_bias_;
};

DeviceBuffer upload(const Tensor& t) {
  DeviceBuffer b(t.nbytes());
  b.upload(t.data(), t.nbytes());
  return b;
}

Status check_dtypes(const LayerBuildContext& ctx) {
  const DType t = ctx.inputs[0].dtype;
  if (t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kBFloat16) {
    return unsupported("{}: cuBLASLt path takes fp32/fp16/bf16, not {}", ctx.node.describe(), dtype_name(t));
  }
  for (const TensorDesc& d : ctx.inputs) {
    if (d.present() && d.dtype != t) return unsupported("{}: mixed input dtypes", ctx.node.describe());
  }
  return Status::OK();
}

// C of Gemm, broadcast to [M, N] on the host (beta applied by the matmul).
Tensor expand_c(const Tensor& c, int64_t m, int64_t n) {
  const Tensor cf = c.to(DType::kFloat32);
  const int64_t cm = c.rank() == 2 ? c.dim(0) : 1, cn = c.rank() >= 1 ? c.dim(-1) : 1;
  Tensor out(DType::kFloat32, {m, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      out.data_as<float>()[i * n + j] = cf.data_as<float>()[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
    }
  }
  return out.to(c.dtype());
}

Status build_gemm(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx));
  const ir::Node& node = ctx.node;
  MatmulProblem p;
  p.dtype = ctx.inputs[0].dtype;
  p.trans_a = node.attr_i("transA", 0) != 0;
  p.trans_b = node.attr_i("transB", 0) != 0;
  p.alpha = node.attr_f("alpha", 1.0f);
  p.beta = node.attr_f("beta", 1.0f);
  const auto& as = ctx.inputs[0].shape;
  const auto& bs = ctx.inputs[1].shape;
  p.m = p.trans_a ? as[1] : as[0];
  p.k = p.trans_a ? as[0] : as[1];
  p.n = p.trans_b ? bs[0] : bs[1];
  p.call_a = p.call_b = p.call_d = {0};
  if (node.op_type == "FusedGemm") {
    ops::Activation act;
    KILN_RETURN_IF_ERROR(ops::activation_of(node, &act).with_context(node.describe()));
    p.activation = static_cast<int>(act.kind);
    p.act_p0 = act.p0;
    p.act_p1 = act.p1;
  }
  DeviceBuffer own_b, own_c;
  if (ctx.constants[1]) own_b = upload(*ctx.constants[1]);
  bool c_is_bias = false;
  const bool has_c = ctx.inputs.size() > 2 && ctx.inputs[2].present() && p.beta != 0.0f;
  if (has_c) {
    const auto& cs = ctx.inputs[2].shape;
    const int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
    const Tensor* c = ctx.constants[2];
    if (cm == 1 && cn == p.n && (c || p.beta == 1.0f)) {
      c_is_bias = true;
      p.has_bias = true;
      if (c) {
        Tensor scaled = c->to(DType::kFloat32).clone();
        for (int64_t i = 0; i < scaled.numel(); ++i) scaled.data_as<float>()[i] *= p.beta;
        own_c = upload(scaled.to(p.dtype));
      }
    } else if (cm == p.m && cn == p.n) {
      p.has_c = true;
    } else if (c) {
      p.has_c = true;
      own_c = upload(expand_c(*c, p.m, p.n));
    } else {
      return unsupported("{}: C of shape {} computed at run time (only [N] or [M,N] on the GPU)", node.describe(),
                         shape_to_string(cs));
    }
  }
  auto mm = std::make_unique<LtMatmul>(ctx.device, p, ctx.options, node.describe());
  *out = std::make_unique<GemmLayer>(std::move(mm), std::move(own_b), std::move(own_c), c_is_bias);
  return Status::OK();
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// Element offset of the matrix for output batch index `flat` in an operand whose batch dims
// (right-aligned against `out`) may be 1 (broadcast).
int64_t broadcast_offset(int64_t flat, const std::vector<int64_t>& out, const std::vector<int64_t>& dims, int64_t mat) {
  int64_t off = 0, stride = mat;
  for (int i = static_cast<int>(out.size()) - 1; i >= 0; --i) {
    const int64_t idx = flat % out[i];
    flat /= out[i];
    const int j = i - static_cast<int>(out.size() - dims.size());
    if (j >= 0) {
      if (dims[j] != 1) off += idx * stride;
      stride *= dims[j];
    }
  }
  return off;
}

Status build_matmul(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx));
  std::vector<int64_t> as = ctx.inputs[0].shape, bs = ctx.inputs[1].shape;
  if (as.empty() || bs.empty()) return unsupported("{}: scalar operand", ctx.node.describe());
  if (as.size() == 1) as.insert(as.begin(), 1);  // [K] -> [1, K]
  if (bs.size() == 1) bs.push_back(1);           // [K] -> [K, 1]
  MatmulProblem p;
  p.dtype = ctx.inputs[0].dtype;
  p.m = as[as.size() - 2];
  p.k = as.back();
  p.n = bs.back();
  const std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  std::vector<int64_t> ob(std::max(ab.size(), bb.size()), 1);
  for (size_t i = 0; i < ob.size(); ++i) {
    const int64_t a = i + ab.size() >= ob.size() ? ab[i + ab.size() - ob.size()] : 1;
    const int64_t b = i + bb.size() >= ob.size() ? bb[i + bb.size() - ob.size()] : 1;
    ob[i] = a == 1 ? b : a;
  }
  const int64_t nbatch = product(ob);
  if (product(bb) == 1) {
    p.m *= product(ab);  // B shared by every batch: one tall matmul
    p.call_a = p.call_b = p.call_d = {0};
  } else if (product(ab) == 1 || (product(ab) == nbatch && product(bb) == nbatch)) {
    p.batch = nbatch;
    p.stride_a = product(ab) == 1 ? 0 : p.m * p.k;
    p.stride_b = p.k * p.n;
    p.stride_d = p.m * p.n;
    p.call_a = p.call_b = p.call_d = {0};
  } else {
    for (int64_t i = 0; i < nbatch; ++i) {
      p.call_a.push_back(broadcast_offset(i, ob, ab, p.m * p.k));
      p.call_b.push_back(broadcast_offset(i, ob, bb, p.k * p.n));
      p.call_d.push_back(i * p.m * p.n);
    }
  }
  if (p.batch > INT32_MAX) return unsupported("{}: batch too large", ctx.node.describe());
  DeviceBuffer own_b;
  if (ctx.constants[1]) own_b = upload(*ctx.constants[1]);
  auto mm = std::make_unique<LtMatmul>(ctx.device, p, ctx.options, ctx.node.describe());
  *out = std::make_unique<GemmLayer>(std::move(mm), std::move(own_b), DeviceBuffer(), false);
  return Status::OK();
}

}  // namespace

void register_gemm_layers(LayerRegistry& r) {
  r.add("", "Gemm", build_gemm);
  r.add("kiln", "FusedGemm", build_gemm);
  r.add("", "MatMul", build_matmul);
}

}  // namespace kiln::gpu::blas
