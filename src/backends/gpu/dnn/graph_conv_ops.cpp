#include "backends/gpu/dnn/graph_conv_ops.h"

#include <cctype>
#include <cfloat>

#include "ops/activation.h"

namespace kiln::gpu::dnn {
namespace {

using ops::ActivationKind;

// The convolution as the legacy descriptors of ConvSetup hold it, in the backend API's int64.
struct Geometry {
  cudnnDataType_t dt = CUDNN_DATA_FLOAT;
  bool channels_last = false;
  std::vector<int64_t> xd, xs, yd, ys, wd, ws, pads, strides, dils;
};

int tensor_rank(cudnnTensorDescriptor_t d) {
  cudnnDataType_t dt;
  int nb = 0, dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
  KILN_CUDNN_CHECK(cudnnGetTensorNdDescriptor(d, CUDNN_DIM_MAX, &dt, &nb, dims, strides));
  return nb;
}

void read_tensor(cudnnTensorDescriptor_t d, cudnnDataType_t* dt, std::vector<int64_t>* dims,
                 std::vector<int64_t>* strides) {
  int nb = 0, di[CUDNN_DIM_MAX], st[CUDNN_DIM_MAX];
  KILN_CUDNN_CHECK(cudnnGetTensorNdDescriptor(d, CUDNN_DIM_MAX, dt, &nb, di, st));
  dims->assign(di, di + nb);
  strides->assign(st, st + nb);
}

Geometry read_geometry(const ConvSetup& s) {
  Geometry g;
  cudnnDataType_t dt;
  read_tensor(s.x_desc, &g.dt, &g.xd, &g.xs);
  read_tensor(s.y_desc, &dt, &g.yd, &g.ys);
  cudnnTensorFormat_t format;
  int nb = 0, wd[CUDNN_DIM_MAX];
  KILN_CUDNN_CHECK(cudnnGetFilterNdDescriptor(s.w_desc, CUDNN_DIM_MAX, &dt, &format, &nb, wd));
  g.wd.assign(wd, wd + nb);
  g.channels_last = format == CUDNN_TENSOR_NHWC;
  // Packed filter strides: K, C, spatial... (KCRS) or K, spatial..., C (KRSC).
  g.ws.assign(nb, 1);
  int64_t step = 1;
  if (g.channels_last) {
    g.ws[1] = 1;
    step = g.wd[1];
    for (int i = nb - 1; i >= 2; --i) g.ws[i] = step, step *= g.wd[i];
    g.ws[0] = step;
  } else {
    for (int i = nb - 1; i >= 0; --i) g.ws[i] = step, step *= g.wd[i];
  }
  const int nsp = nb - 2;
  int pads[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX], dils[CUDNN_DIM_MAX], len = 0;
  cudnnConvolutionMode_t mode;
  cudnnDataType_t compute;
  KILN_CUDNN_CHECK(
      cudnnGetConvolutionNdDescriptor(s.conv_desc, nsp, &len, pads, strides, dils, &mode, &compute));
  g.pads.assign(pads, pads + len);
  g.strides.assign(strides, strides + len);
  g.dils.assign(dils, dils + len);
  return g;
}

BackendDesc tensor(int64_t uid, cudnnDataType_t dt, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& strides, bool is_virtual) {
  BackendDesc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const bool v = is_virtual;
  t.set_dtype(CUDNN_ATTR_TENSOR_DATA_TYPE, dt)
      .set_i64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims)
      .set_i64s(CUDNN_ATTR_TENSOR_STRIDES, strides)
      .set_i64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
      .set_i64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16)  // kiln's arena and cudaMalloc align to 256
      .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v);
  t.finalize();
  return t;
}

BackendDesc pointwise_desc(cudnnPointwiseMode_t mode) {
  BackendDesc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
      .set_dtype(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_DATA_FLOAT);
  return pw;
}

// cuDNN's pointwise form of kiln's activation. RELU_FWD clips to [lower, upper] with a slope
// below `lower`; with lower = 0 every reading of its formula gives Relu, LeakyRelu and Clip
// [0, max] (ReLU6) exactly, so Clip with another minimum stays on kiln's epilogue. The others
// are the textbook functions (SWISH with beta 1 is SiLU). False when cuDNN has no exact form.
bool pointwise_activation(const ConvSetup& s, BackendDesc* out, std::string* name) {
  const auto kind = static_cast<ActivationKind>(s.act.kind);
  const float p0 = s.epilogue.p0, p1 = s.epilogue.p1;
  auto relu = [&](double lower, double upper, double slope) {
    BackendDesc pw = pointwise_desc(CUDNN_POINTWISE_RELU_FWD);
    pw.set_double(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, lower)
        .set_double(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, upper)
        .set_double(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, slope);
    return pw;
  };
  switch (kind) {
    case ActivationKind::kRelu:
      *out = relu(0.0, FLT_MAX, 0.0);
      break;
    case ActivationKind::kLeakyRelu:
      *out = relu(0.0, FLT_MAX, p0);
      break;
    case ActivationKind::kClip:
      if (p0 != 0.0f || !(p1 >= 0.0f)) return false;
      *out = relu(0.0, p1, 0.0);
      break;
    case ActivationKind::kSigmoid:
      *out = pointwise_desc(CUDNN_POINTWISE_SIGMOID_FWD);
      break;
    case ActivationKind::kTanh:
      *out = pointwise_desc(CUDNN_POINTWISE_TANH_FWD);
      break;
    case ActivationKind::kGelu:
      *out = pointwise_desc(p0 != 0 ? CUDNN_POINTWISE_GELU_APPROX_TANH_FWD : CUDNN_POINTWISE_GELU_FWD);
      break;
    case ActivationKind::kSilu:
      *out = pointwise_desc(CUDNN_POINTWISE_SWISH_FWD);
      out->set_double(CUDNN_ATTR_POINTWISE_SWISH_BETA, 1.0);
      break;
    default:
      return false;  // kNone is handled by the caller; HardSigmoid/HardSwish have no form
  }
  *name = ops::activation_name(kind);
  for (char& c : *name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return true;
}

}  // namespace

std::string graph_conv_unsupported(const ConvSetup& s) {
  if (s.strict_fp32) return "strict fp32 stays on the legacy API (TF32, FFT and Winograd excluded there)";
  if (tensor_rank(s.x_desc) != 4) return "3-D convolutions go through the legacy API";
  return "";
}

bool graph_can_fuse_epilogue(const ConvSetup& s) {
  if (static_cast<ActivationKind>(s.act.kind) == ActivationKind::kNone) return true;
  BackendDesc pw;
  std::string name;
  return pointwise_activation(s, &pw, &name);
}

std::unique_ptr<ConvOpGraph> build_conv_op_graph(const ConvSetup& s, bool fuse) {
  const Geometry g = read_geometry(s);
  auto og = std::make_unique<ConvOpGraph>();
  og->fused = fuse;
  // The descriptors move into og->parts; the raw handles stay valid and are what ops refer to.
  auto keep = [&](BackendDesc d) {
    og->parts.push_back(std::move(d));
    return og->parts.back().get();
  };
  BackendDesc act;
  std::string act_name;
  const bool has_b = fuse && s.has_bias_input, has_z = fuse && s.has_z;
  const bool has_act = fuse && static_cast<ActivationKind>(s.act.kind) != ActivationKind::kNone;
  if (has_act && !pointwise_activation(s, &act, &act_name))
    throw GpuError("cuDNN graph: activation not expressible");

  // Each op writes a float virtual tensor, except the last, which writes Y.
  int ops_after = static_cast<int>(has_b) + static_cast<int>(has_z) + static_cast<int>(has_act);
  int64_t next_virtual = kUidFirstVirtual;
  auto output = [&] {
    if (ops_after-- > 0) return keep(tensor(next_virtual++, CUDNN_DATA_FLOAT, g.yd, g.ys, true));
    return keep(tensor(kUidY, g.dt, g.yd, g.ys, false));
  };
  std::vector<cudnnBackendDescriptor_t> ops;

  BackendDesc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  conv.set_dtype(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
      .set_i64(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, static_cast<int64_t>(g.pads.size()))
      .set_i64s(CUDNN_ATTR_CONVOLUTION_DILATIONS, g.dils)
      .set_i64s(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, g.strides)
      .set_i64s(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, g.pads)
      .set_i64s(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, g.pads);
  conv.finalize();
  const cudnnBackendDescriptor_t conv_desc = keep(std::move(conv));
  const cudnnBackendDescriptor_t x = keep(tensor(kUidX, g.dt, g.xd, g.xs, false));
  const cudnnBackendDescriptor_t w = keep(tensor(kUidW, g.dt, g.wd, g.ws, false));
  cudnnBackendDescriptor_t t = output();
  BackendDesc conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  conv_op.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
      .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
      .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, t)
      .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv_desc)
      .set_float(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, 1.0f)
      .set_float(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, 0.0f);
  conv_op.finalize();
  ops.push_back(keep(std::move(conv_op)));
  og->uids = {kUidX, kUidW};
  og->ops = "conv";

  // t = pw(t [, b]): one pointwise op reading the previous result.
  auto pointwise = [&](BackendDesc pw, cudnnBackendDescriptor_t b) {
    pw.finalize();
    const cudnnBackendDescriptor_t pw_desc = keep(std::move(pw));
    const cudnnBackendDescriptor_t y = output();
    BackendDesc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw_desc)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, t);
    if (b) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    op.finalize();
    ops.push_back(keep(std::move(op)));
    t = y;
  };
  if (has_b) {
    const int64_t k = g.yd[1];
    // 1xKx1x1; the strides of the size-1 dims follow Y's layout.
    const std::vector<int64_t> bs =
        g.channels_last ? std::vector<int64_t>{k, 1, k, k} : std::vector<int64_t>{k, 1, 1, 1};
    pointwise(pointwise_desc(CUDNN_POINTWISE_ADD), keep(tensor(kUidB, g.dt, {1, k, 1, 1}, bs, false)));
    og->uids.push_back(kUidB);
    og->ops += "+bias";
  }
  if (has_z) {
    pointwise(pointwise_desc(CUDNN_POINTWISE_ADD), keep(tensor(kUidZ, g.dt, g.yd, g.ys, false)));
    og->uids.push_back(kUidZ);
    og->ops += "+add";
  }
  if (has_act) {
    pointwise(std::move(act), nullptr);
    og->ops += "+" + act_name;
  }
  og->uids.push_back(kUidY);

  og->graph = BackendDesc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  og->graph.set_handle(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, s.handle)
      .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops.size()),
           ops.data());
  og->graph.finalize();
  return og;
}

}  // namespace kiln::gpu::dnn
