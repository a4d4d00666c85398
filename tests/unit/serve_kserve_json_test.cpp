// The KServe v2 REST codec: every JSON datatype path, the binary extension both ways, and bad
// bodies answered with kBadRequest naming the tensor.
#include <gtest/gtest.h>

#include <cstring>

#include "serve/kserve_json.h"

namespace kiln::serve {
namespace {

using json = nlohmann::json;

ServeStatus parse(const std::string& body, InferRequest* r, std::optional<size_t> json_length = std::nullopt) {
  return parse_infer_request(body, json_length, "m", "", r);
}

std::string one_input(const std::string& datatype, const std::string& shape, const std::string& data) {
  return R"({"id":"7","inputs":[{"name":"x","datatype":")" + datatype + R"(","shape":)" + shape + R"(,"data":)" + data + "}]}";
}

TEST(ServeKserveJson, ParsesEachDatatypeFlatOrNested) {
  InferRequest r;
  ASSERT_TRUE(parse(one_input("INT64", "[2,2]", "[[1,-2],[3,4000000000]]"), &r).ok());
  EXPECT_EQ(r.id, "7");
  ASSERT_EQ(r.inputs.size(), 1u);
  const Tensor& t = r.inputs[0].data;
  EXPECT_EQ(t.dtype(), DType::kInt64);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.data_as<int64_t>()[3], 4000000000);

  InferRequest b;
  ASSERT_TRUE(parse(one_input("BOOL", "[3]", "[true,false,1]"), &b).ok());
  EXPECT_EQ(b.inputs[0].data.data_as<bool>()[2], true);

  InferRequest h;
  ASSERT_TRUE(parse(one_input("FP16", "[2]", "[0.5,-3]"), &h).ok());
  EXPECT_EQ(h.inputs[0].data.dtype(), DType::kFloat16);
  EXPECT_EQ(h.inputs[0].data.to(DType::kFloat32).data_as<float>()[1], -3.0f);
}

TEST(ServeKserveJson, RefusesValuesTheDatatypeCannotHold) {
  for (const auto& [dt, data] : std::vector<std::pair<std::string, std::string>>{
           {"UINT8", "[256]"}, {"UINT8", "[-1]"}, {"INT32", "[1.5]"}, {"FP32", "[\"a\"]"}, {"BOOL", "[2]"}}) {
    InferRequest r;
    const ServeStatus st = parse(one_input(dt, "[1]", data), &r);
    EXPECT_EQ(st.code(), ServeStatus::Code::kBadRequest) << dt << " " << data;
    EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.message();
  }
}

TEST(ServeKserveJson, BadBodies) {
  const std::vector<std::string> bodies = {
      "{",  "[]", R"({"inputs":[]})", one_input("BYTES", "[1]", "[1]"), one_input("FP32", "[2]", "[1]"),
      one_input("FP32", "[-1]", "[]"), R"({"inputs":[{"datatype":"FP32","shape":[1],"data":[1]}]})",
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],"parameters":{"timeout":-5}})"};
  for (const std::string& body : bodies) {
    InferRequest r;
    EXPECT_EQ(parse(body, &r).code(), ServeStatus::Code::kBadRequest) << body;
  }
}

TEST(ServeKserveJson, BinaryExtensionBothWays) {
  const std::string header =
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}],)"
      R"("outputs":[{"name":"y","parameters":{"binary_data":true}},{"name":"z"}],"parameters":{"timeout":1000000}})";
  const float values[2] = {1.5f, -2.0f};
  std::string body = header + std::string(reinterpret_cast<const char*>(values), sizeof values);
  InferRequest r;
  ASSERT_TRUE(parse(body, &r, header.size()).ok());
  EXPECT_EQ(r.inputs[0].data.data_as<float>()[1], -2.0f);
  EXPECT_TRUE(r.deadline.has_value());
  EXPECT_TRUE(wants_binary_output(r, "y"));
  EXPECT_FALSE(wants_binary_output(r, "z"));
  // Bytes no input claims, or fewer than claimed, are errors.
  InferRequest extra, short_body;
  EXPECT_EQ(parse(body + "xx", &extra, header.size()).code(), ServeStatus::Code::kBadRequest);
  EXPECT_EQ(parse(body.substr(0, body.size() - 1), &short_body, header.size()).code(), ServeStatus::Code::kBadRequest);

  InferResponse resp;
  resp.model_name = "m";
  resp.id = "9";
  resp.outputs.push_back({"y", r.inputs[0].data});
  Tensor z(DType::kInt32, {1});
  z.data_as<int32_t>()[0] = 42;
  resp.outputs.push_back({"z", z});
  const EncodedResponse enc = encode_infer_response(r, resp);
  ASSERT_TRUE(enc.json_length.has_value());
  const json j = json::parse(enc.body.substr(0, *enc.json_length));
  EXPECT_EQ(j["id"], "9");
  EXPECT_EQ(j["outputs"][0]["parameters"]["binary_data_size"], 8);
  EXPECT_EQ(j["outputs"][1]["data"], json::array({42}));
  ASSERT_EQ(enc.body.size(), *enc.json_length + 8);
  EXPECT_EQ(std::memcmp(enc.body.data() + *enc.json_length, values, 8), 0);
}

TEST(ServeKserveJson, JsonOnlyResponseAndErrorBody) {
  InferRequest r;
  InferResponse resp;
  resp.model_name = "m";
  resp.outputs.push_back({"h", Tensor(DType::kFloat32, {1}).to(DType::kFloat16)});
  const EncodedResponse enc = encode_infer_response(r, resp);
  EXPECT_FALSE(enc.json_length.has_value());
  EXPECT_EQ(json::parse(enc.body)["outputs"][0]["datatype"], "FP16");
  EXPECT_EQ(json::parse(error_body("bad \xff byte"))["error"].get<std::string>().substr(0, 4), "bad ");
}

}  // namespace
}  // namespace kiln::serve
