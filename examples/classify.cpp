// Example: classify with any ONNX image model through kiln's public API only.
//   kiln_example MODEL.onnx [INPUT.npy]
// Without an input file it feeds a deterministic pattern of the model's input shape
// (dynamic dimensions taken as 1) and prints the top-5 scores of the first output.
#include <kiln/kiln.h>
#include <kiln/tensor_io.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [INPUT.npy]\n", argv[0]);
    return 2;
  }
  std::unique_ptr<kiln::Session> session;
  kiln::Status st = kiln::Session::load(argv[1], {}, &session);
  if (!st.ok()) {
    std::fprintf(stderr, "error: %s\n", st.to_string().c_str());
    return 1;
  }
  const kiln::TensorInfo& in = session->inputs().at(0);
  kiln::Tensor input;
  if (argc > 2) {
    st = kiln::read_tensor_file(argv[2], &input);
  } else {
    std::vector<int64_t> shape = in.shape;
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    input = kiln::Tensor(kiln::DType::kFloat32, shape);
    float* p = input.data_as<float>();
    for (int64_t i = 0; i < input.numel(); ++i) p[i] = static_cast<float>((i * 7919) % 255) / 255.0f - 0.5f;
  }
  if (!st.ok()) {
    std::fprintf(stderr, "error: %s\n", st.to_string().c_str());
    return 1;
  }
  std::vector<kiln::Tensor> outputs;
  st = session->run({{in.name, input}}, &outputs);
  if (!st.ok()) {
    std::fprintf(stderr, "error: %s\n", st.to_string().c_str());
    return 1;
  }
  const kiln::Tensor scores = outputs.at(0).to(kiln::DType::kFloat32);
  const float* s = scores.data_as<float>();
  std::vector<int64_t> idx(static_cast<size_t>(scores.numel()));
  std::iota(idx.begin(), idx.end(), 0);
  const size_t k = std::min<size_t>(5, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<long>(k), idx.end(),
                    [&](int64_t a, int64_t b) { return s[a] > s[b]; });
  std::printf("backend %s, output '%s' %s\n", session->backend().c_str(), session->outputs()[0].name.c_str(),
              kiln::shape_to_string(scores.shape()).c_str());
  for (size_t i = 0; i < k; ++i) std::printf("  #%zu class %lld score %.5f\n", i + 1, static_cast<long long>(idx[i]), s[idx[i]]);
  return 0;
}
