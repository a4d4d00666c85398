// Helpers for the serving unit tests: small CPU models served by a ModelServer, requests
// from values, and a collector of asynchronous answers.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "serve/metrics.h"
#include "serve/model_server.h"
#include "test_models.h"

namespace kiln::testing {

// s = x + y and r = the row sums of s; dim 0 dynamic, so requests can be merged (those with
// the same C).
inline const char* kServeAddModel = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  add_rows (float[N,C] x, float[N,C] y) => (float[N,C] s, float[N] r) {
    s = Add(x, y)
    axes = Constant<value = int64[1] {1}>()
    r = ReduceSum<keepdims = 0>(s, axes)
  })";

// A fixed shape: nothing to merge.
inline const char* kServeFixedModel = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  fixed (float[2,3] x) => (float[2,3] y) {
    y = Relu(x)
  })";

inline serve::ServerOptions serve_options(const std::string& name, const char* text, serve::BatchingOptions b = {}) {
  serve::ServerOptions o;
  o.models.push_back({name, write_text_model(text, "serve_" + name)});
  o.session.backend = "cpu";
  o.batching = b;
  return o;
}

inline Tensor rows_tensor(std::vector<int64_t> shape, float first) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = first + static_cast<float>(i);
  return t;
}

inline serve::InferRequest add_request(const std::string& model, int64_t rows, float first, std::string id = "",
                                       int64_t cols = 3) {
  serve::InferRequest r;
  r.model_name = model;
  r.id = std::move(id);
  r.inputs.push_back({"x", rows_tensor({rows, cols}, first)});
  r.inputs.push_back({"y", rows_tensor({rows, cols}, 100 * first)});
  return r;
}

// Collects answers by request index; wait() until `n` arrived.
class Answers {
 public:
  serve::InferCallback slot(int i) {
    return [this, i](serve::ServeStatus st, serve::InferResponse r) {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_[i];
      status_[i] = std::move(st);
      response_[i] = std::move(r);
      cv_.notify_all();
    };
  }
  bool wait(size_t n, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return calls_.size() >= n; });
  }
  int calls(int i) {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_.count(i) ? calls_[i] : 0;
  }
  serve::ServeStatus status(int i) {
    std::lock_guard<std::mutex> lock(mu_);
    return status_[i];
  }
  serve::InferResponse response(int i) {
    std::lock_guard<std::mutex> lock(mu_);
    return response_[i];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, int> calls_;
  std::map<int, serve::ServeStatus> status_;
  std::map<int, serve::InferResponse> response_;
};

// A callback that holds its worker until release(): queues requests up behind it.
class Gate {
 public:
  serve::InferCallback callback() {
    return [this](serve::ServeStatus, serve::InferResponse) {
      std::unique_lock<std::mutex> lock(mu_);
      entered_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    };
  }
  void wait_entered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false, released_ = false;
};

inline void expect_same_tensor(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.data_as<float>()[i], b.data_as<float>()[i]) << i;
}

}  // namespace kiln::testing
