#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "ir/verifier.h"
#include "kiln/session.h"
#include "onnx/importer.h"
#include "runtime/shape_inference.h"
#include "test_models.h"

namespace kiln {
namespace {

TEST(Importer, ImportsInputsOutputsAndSymbolicDims) {
  const auto path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N, 3] x) => (float[N, 3] y) { y = Identity(x) }
  )", "identity_sym");
  std::unique_ptr<ir::Graph> g;
  ASSERT_TRUE(onnx_io::import_model_file(path, &g).ok());
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->inputs[0]->type.to_string(), "float32[N,3]");
  EXPECT_EQ(g->nodes().size(), 1u);
  EXPECT_EQ(g->nodes()[0]->opset, 13);
  EXPECT_TRUE(ir::verify_graph(*g).ok());
}

TEST(Importer, ReportsUnsupportedOpWithNodeNameAndOpset) {
  const auto path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = NoSuchOp <alpha = 1.0> (x) }
  )", "unknown_op");
  std::unique_ptr<ir::Graph> g;
  Status s = onnx_io::import_model_file(path, &g);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("NoSuchOp"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("opset 17"), std::string::npos) << s.message();
}

TEST(Importer, ReportsUnsupportedAttribute) {
  const auto path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { y = Identity <bogus = 3> (x) }
  )", "bad_attr");
  std::unique_ptr<ir::Graph> g;
  Status s = onnx_io::import_model_file(path, &g);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("bogus"), std::string::npos) << s.message();
}

TEST(Importer, RejectsUndefinedValues) {
  const auto path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { y = Identity(nowhere) }
  )", "undefined_value");
  std::unique_ptr<ir::Graph> g;
  Status s = onnx_io::import_model_file(path, &g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("nowhere"), std::string::npos) << s.message();
}

TEST(Importer, AcceptsNodesOutOfTopologicalOrder) {
  const auto path = testing::write_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] z) { z = Identity(y)  y = Identity(x) }
  )", "unsorted");
  std::unique_ptr<ir::Graph> g;
  ASSERT_TRUE(onnx_io::import_model_file(path, &g).ok());
  EXPECT_EQ(g->nodes()[0]->outputs[0]->name, "y");
  ASSERT_TRUE(runtime::infer_graph_types(*g).ok());
  EXPECT_TRUE(ir::verify_graph(*g).ok());
}

TEST(Importer, RejectsGarbageAndMissingFiles) {
  std::unique_ptr<ir::Graph> g;
  EXPECT_EQ(onnx_io::import_model_file("/nonexistent/model.onnx", &g).code(), StatusCode::kNotFound);
  EXPECT_EQ(onnx_io::import_model_bytes("", ".", &g).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(onnx_io::import_model_bytes(std::string("\xff\xfe\x01garbage\x00\x13", 12), ".", &g).code(),
            StatusCode::kInvalidModel);
}

TEST(Importer, ReadsExternalData) {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / "kiln_unit_tests" / "external";
  fs::create_directories(dir);
  const float weights[3] = {1.5f, -2.0f, 4.0f};
  {
    std::ofstream w(dir / "weights.bin", std::ios::binary);
    w.write("padding!", 8);
    w.write(reinterpret_cast<const char*>(weights), sizeof weights);
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  auto* init = g->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(3);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_kv = [&](const char* k, const char* v) {
    auto* kv = init->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add_kv("location", "weights.bin");
  add_kv("offset", "8");
  add_kv("length", "12");
  auto* n = g->add_node();
  n->set_op_type("Identity");
  n->add_input("w");
  n->add_output("y");
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    m.SerializeToOstream(&f);
  }
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Session::load((dir / "model.onnx").string(), {}, &s).ok());
  std::vector<Tensor> outs;
  ASSERT_TRUE(s->run({}, &outs).ok());
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].data_as<float>()[2], 4.0f);

  // A length that disagrees with the shape is an error naming the tensor.
  init->mutable_external_data(2)->set_value("16");
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    m.SerializeToOstream(&f);
  }
  Status st = Session::load((dir / "model.onnx").string(), {}, &s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'w'"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace kiln
