// The public API (include/kiln) as an embedding application sees it: Session::load errors,
// input checking in Session::run, tensor files. Only public headers besides the test helper.
#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include <kiln/tensor_io.h>

#include <filesystem>
#include <fstream>

#include "test_models.h"

namespace kiln {
namespace {

const char* kAddModel = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  add_graph (float[batch,3] a, float[batch,3] b) => (float[batch,3] c) {
    c = Add(a, b)
  })";

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "kiln_unit_tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

Tensor filled(DType t, std::vector<int64_t> shape, float start) {
  Tensor f(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < f.numel(); ++i) f.data_as<float>()[i] = start + static_cast<float>(i);
  return f.to(t);
}

std::unique_ptr<Session> load_ok(const std::string& path) {
  std::unique_ptr<Session> s;
  Status st = Session::load(path, {}, &s);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return s;
}

TEST(ApiLoad, MissingFileIsNotFoundAndNamesThePath) {
  std::unique_ptr<Session> s;
  Status st = Session::load("/no/such/dir/model.onnx", {}, &s);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("/no/such/dir/model.onnx"), std::string::npos) << st.message();
  EXPECT_EQ(s, nullptr);
}

TEST(ApiLoad, EmptyAndGarbageFilesAreInvalidModels) {
  const std::string empty = temp_path("api_empty.onnx");
  write_bytes(empty, "");
  const std::string garbage = temp_path("api_garbage.onnx");
  write_bytes(garbage, std::string("\xff\xfe this is not a protobuf \x01\x02\x03", 30));
  for (const std::string& path : {empty, garbage}) {
    std::unique_ptr<Session> s;
    Status st = Session::load(path, {}, &s);
    EXPECT_EQ(st.code(), StatusCode::kInvalidModel) << st.to_string();
    EXPECT_EQ(s, nullptr);
    EXPECT_EQ(st.to_string().find('\n'), std::string::npos);
  }
}

TEST(ApiLoad, UnsupportedOpNamesTheNode) {
  const std::string path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13, "com.example" : 1]>
    g (float[2] x) => (float[2] y) {
      y = com.example.Frobnicate(x)
    })", "api_unsupported");
  std::unique_ptr<Session> s;
  Status st = Session::load(path, {}, &s);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported) << st.to_string();
  EXPECT_NE(st.message().find("Frobnicate"), std::string::npos) << st.message();
}

TEST(ApiLoad, UnknownBackendIsInvalidArgument) {
  const std::string path = testing::write_text_model(kAddModel, "api_add");
  SessionOptions opt;
  opt.backend = "abacus";
  std::unique_ptr<Session> s;
  Status st = Session::load(path, opt, &s);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("abacus"), std::string::npos);
}

TEST(ApiSession, DescribesInputsWithSymbolicDims) {
  auto s = load_ok(testing::write_text_model(kAddModel, "api_add"));
  ASSERT_TRUE(s);
  ASSERT_EQ(s->inputs().size(), 2u);
  const TensorInfo& a = s->inputs()[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dtype, DType::kFloat32);
  EXPECT_TRUE(a.has_shape);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(a.dim_names.at(0), "batch");
  ASSERT_EQ(s->outputs().size(), 1u);
  EXPECT_EQ(s->outputs()[0].name, "c");
}

TEST(ApiSession, RunsWithAnyBatch) {
  auto s = load_ok(testing::write_text_model(kAddModel, "api_add"));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  Status st = s->run({{"a", filled(DType::kFloat32, {2, 3}, 0)}, {"b", filled(DType::kFloat32, {2, 3}, 10)}}, &out);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_FLOAT_EQ(out[0].data_as<float>()[5], 5.0f + 15.0f);
}

TEST(ApiSession, RunErrorsNameTheInput) {
  auto s = load_ok(testing::write_text_model(kAddModel, "api_add"));
  ASSERT_TRUE(s);
  const Tensor good = filled(DType::kFloat32, {2, 3}, 0);
  std::vector<Tensor> out;
  struct Case {
    std::map<std::string, Tensor> inputs;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{{"a", good}}, "'b'"},                                                    // missing input
      {{{"a", good}, {"b", good}, {"zzz", good}}, "'zzz'"},                      // unknown input
      {{{"a", filled(DType::kFloat64, {2, 3}, 0)}, {"b", good}}, "dtype"},       // wrong dtype
      {{{"a", filled(DType::kFloat32, {2, 3, 1}, 0)}, {"b", good}}, "rank"},     // wrong rank
      {{{"a", filled(DType::kFloat32, {2, 4}, 0)}, {"b", good}}, "dimension 1"}, // wrong fixed dim
  };
  for (const Case& c : cases) {
    Status st = s->run(c.inputs, &out);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << st.message();
  }
}

TEST(ApiSession, RunTimeShapeErrorNamesTheNode) {
  const std::string path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N,3] a, float[M,3] b) => (float[N,3] c) {
      c = Add(a, b)
    })", "api_dynamic_add");
  auto s = load_ok(path);
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  Status st = s->run({{"a", filled(DType::kFloat32, {2, 3}, 0)}, {"b", filled(DType::kFloat32, {4, 3}, 0)}}, &out);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("(Add)"), std::string::npos) << st.message();
}

TEST(ApiTensorIo, NpyAndPbRoundTrip) {
  const Tensor t = filled(DType::kInt32, {2, 3, 4}, -5);
  const std::string npy = temp_path("api_roundtrip.npy");
  const std::string pb = temp_path("api_roundtrip.pb");
  ASSERT_TRUE(write_npy(npy, t).ok());
  ASSERT_TRUE(write_pb(pb, t, "tensor_name").ok());
  for (const std::string& path : {npy, pb}) {
    Tensor back;
    std::string name;
    Status st = read_tensor_file(path, &back, &name);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(back.dtype(), DType::kInt32);
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(back.data_as<int32_t>()[23], 18);
    EXPECT_EQ(name, path == pb ? "tensor_name" : "");
  }
}

TEST(ApiTensorIo, BadFilesGiveStatusNotCrash) {
  const std::string npy = temp_path("api_roundtrip_full.npy");
  ASSERT_TRUE(write_npy(npy, filled(DType::kFloat32, {4, 4}, 0)).ok());
  std::ifstream in(npy, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = temp_path("api_truncated.npy");
  write_bytes(truncated, bytes.substr(0, bytes.size() - 3));
  const std::string header_only = temp_path("api_header_only.npy");
  write_bytes(header_only, bytes.substr(0, 12));
  const std::string garbage_pb = temp_path("api_garbage.pb");
  write_bytes(garbage_pb, std::string("\xff\xff\xff\xff\xff\xff\xff", 7));
  for (const std::string& path : {truncated, header_only, garbage_pb, temp_path("api_missing.npy"),
                                  temp_path("api_tensor.txt")}) {
    Tensor t;
    Status st = read_tensor_file(path, &t);
    EXPECT_FALSE(st.ok()) << path;
    EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace kiln
