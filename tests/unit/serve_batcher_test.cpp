// The dynamic batcher through ModelServer on the CPU backend: merging, splitting, queue
// bound, deadlines, drain, and exactly one answer per request under many threads.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "serve_test_util.h"

namespace kiln::testing {
namespace {

using serve::ServeStatus;
using Code = ServeStatus::Code;

std::unique_ptr<serve::ModelServer> make_server(const serve::ServerOptions& o, std::shared_ptr<serve::Metrics> m) {
  std::unique_ptr<serve::ModelServer> s;
  Status st = serve::ModelServer::create(o, std::move(m), &s);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return s;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

// The outputs of `request` run alone (unbatched) on a plain session.
std::vector<Tensor> unbatched(const serve::ServerOptions& o, const serve::InferRequest& request) {
  std::unique_ptr<Session> s;
  EXPECT_TRUE(Session::load(o.models[0].path, o.session, &s).ok());
  std::map<std::string, Tensor> feeds;
  for (const auto& t : request.inputs) feeds[t.name] = t.data;
  std::vector<Tensor> outs;
  EXPECT_TRUE(s->run(feeds, &outs).ok());
  return outs;
}

// Holds the model's worker with one request (blocked in its callback), queues `requests`
// behind it, calls `meanwhile`, then lets the worker go and waits for every answer: what
// queued together is there together when the batcher forms its next batch.
void queue_behind_held(serve::ModelServer& s, const serve::InferRequest& held,
                       const std::vector<serve::InferRequest>& requests, Answers* answers,
                       const std::function<void()>& meanwhile = {}) {
  Gate gate;
  s.infer(held, gate.callback());
  gate.wait_entered();
  for (size_t i = 0; i < requests.size(); ++i) s.infer(requests[i], answers->slot(static_cast<int>(i)));
  if (meanwhile) meanwhile();
  gate.release();
  ASSERT_TRUE(answers->wait(requests.size()));
}

TEST(ServeBatcher, MergesConcurrentRequestsAndSplitsOutputsBack) {
  auto o = serve_options("add", kServeAddModel, {.max_batch = 8, .max_queue_delay_us = 20000});
  auto metrics = std::make_shared<serve::Metrics>();
  auto server = make_server(o, metrics);
  const int64_t rows[] = {1, 2, 1, 3};
  std::vector<serve::InferRequest> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(add_request("add", rows[i], float(i + 1), "r" + std::to_string(i)));
  Answers answers;
  queue_behind_held(*server, add_request("add", 1, 0), requests, &answers);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(answers.status(i).ok()) << answers.status(i).message();
    serve::InferResponse r = answers.response(i);
    EXPECT_EQ(r.id, "r" + std::to_string(i));
    auto want = unbatched(o, add_request("add", rows[i], float(i + 1)));
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_EQ(r.outputs[0].name, "s");
    EXPECT_EQ(r.outputs[1].name, "r");
    expect_same_tensor(r.outputs[0].data, want[0]);
    expect_same_tensor(r.outputs[1].data, want[1]);
  }
  const std::string text = metrics->prometheus_text();
  // The held request ran alone; the four queued behind it ran as one batch.
  EXPECT_TRUE(has_line(text, "kiln_batch_size_count{model=\"add\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "kiln_batch_size_sum{model=\"add\"} 5")) << text;
}

TEST(ServeBatcher, DifferentShapesAreNotMerged) {
  auto o = serve_options("add", kServeAddModel, {.max_batch = 8, .max_queue_delay_us = 1000});
  auto metrics = std::make_shared<serve::Metrics>();
  auto server = make_server(o, metrics);
  const int64_t cols[] = {3, 4, 3, 4};
  std::vector<serve::InferRequest> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(add_request("add", 1, float(i), "", cols[i]));
  Answers answers;
  queue_behind_held(*server, add_request("add", 1, 0), requests, &answers);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(answers.status(i).ok()) << answers.status(i).message();
    expect_same_tensor(answers.response(i).outputs[0].data, unbatched(o, add_request("add", 1, float(i), "", cols[i]))[0]);
  }
  // Runs: the held one, {3 columns} x2, {4 columns} x2.
  EXPECT_TRUE(has_line(metrics->prometheus_text(), "kiln_batch_size_count{model=\"add\"} 3"))
      << metrics->prometheus_text();
}

TEST(ServeBatcher, FixedShapeModelRunsRequestsOneByOne) {
  auto o = serve_options("fixed", kServeFixedModel, {.max_batch = 8, .max_queue_delay_us = 1000});
  auto metrics = std::make_shared<serve::Metrics>();
  auto server = make_server(o, metrics);
  serve::InferRequest f;
  f.model_name = "fixed";
  f.inputs.push_back({"x", rows_tensor({2, 3}, -3)});
  Answers answers;
  queue_behind_held(*server, f, {f, f, f}, &answers);
  for (int i = 0; i < 3; ++i) expect_same_tensor(answers.response(i).outputs[0].data, unbatched(o, f)[0]);
  EXPECT_TRUE(has_line(metrics->prometheus_text(), "kiln_batch_size_sum{model=\"fixed\"} 4"));
}

TEST(ServeBatcher, MaxBatchBoundsTheRows) {
  // max_batch bounds the rows of a run: a 3-row request does not join a batch of 2 rows.
  auto o = serve_options("add", kServeAddModel, {.max_batch = 4, .max_queue_delay_us = 1000});
  auto metrics = std::make_shared<serve::Metrics>();
  auto server = make_server(o, metrics);
  Answers answers;
  queue_behind_held(*server, add_request("add", 1, 0),
                    {add_request("add", 2, 1), add_request("add", 3, 2), add_request("add", 2, 3)}, &answers);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(answers.status(i).ok());
  // Runs: the held one, {2 rows + 2 rows}, {3 rows}.
  EXPECT_TRUE(has_line(metrics->prometheus_text(), "kiln_batch_size_count{model=\"add\"} 3"))
      << metrics->prometheus_text();
}

TEST(ServeBatcher, OutputWithoutBatchDimRunsRequestsAlone) {
  // t sums the whole of x: a merged run's t cannot be split by rows, so the batch is run
  // again request by request and each gets its own t.
  auto o = serve_options("total", R"(
    <ir_version: 8, opset_import: ["" : 13]>
    total (float[N,3] x) => (float[N,3] s, float t) {
      s = Relu(x)
      t = ReduceSum<keepdims = 0>(x)
    })", {.max_batch = 8, .max_queue_delay_us = 1000});
  auto server = make_server(o, nullptr);
  auto request = [](float first) {
    serve::InferRequest r;
    r.model_name = "total";
    r.inputs.push_back({"x", rows_tensor({1, 3}, first)});
    return r;
  };
  Answers answers;
  queue_behind_held(*server, request(0), {request(0), request(1), request(2)}, &answers);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(answers.status(i).ok()) << answers.status(i).message();
    expect_same_tensor(answers.response(i).outputs[1].data, unbatched(o, request(float(i)))[1]);
  }
}

TEST(ServeBatcher, RunErrorIsAnsweredAndServingGoesOn) {
  // x[N,A] + y[N,B] fails at run time unless A and B broadcast.
  auto o = serve_options("bcast", R"(
    <ir_version: 8, opset_import: ["" : 13]>
    bcast (float[N,A] x, float[N,B] y) => (float[N,A] s) {
      s = Add(x, y)
    })");
  auto server = make_server(o, nullptr);
  auto request = [](int64_t b) {
    serve::InferRequest r;
    r.model_name = "bcast";
    r.inputs.push_back({"x", rows_tensor({1, 3}, 1)});
    r.inputs.push_back({"y", rows_tensor({1, b}, 2)});
    return r;
  };
  Answers answers;
  server->infer(request(2), answers.slot(0));
  ASSERT_TRUE(answers.wait(1));
  EXPECT_EQ(answers.status(0).code(), ServeStatus::Code::kBadRequest) << answers.status(0).message();
  EXPECT_NE(answers.status(0).message().find("model 'bcast'"), std::string::npos) << answers.status(0).message();
  server->infer(request(1), answers.slot(1));
  ASSERT_TRUE(answers.wait(2));
  EXPECT_TRUE(answers.status(1).ok()) << answers.status(1).message();
}

TEST(ServeBatcher, FullQueueAnswersUnavailableAtOnce) {
  auto o = serve_options("add", kServeAddModel, {.max_batch = 1, .max_queue_delay_us = 0, .max_queue = 2});
  auto server = make_server(o, nullptr);
  Answers answers;
  std::vector<serve::InferRequest> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(add_request("add", 1, float(i)));
  queue_behind_held(*server, add_request("add", 1, 0), requests, &answers, [&] {
    // The two beyond the bound were answered already, from this thread.
    EXPECT_EQ(answers.calls(2), 1);
    EXPECT_EQ(answers.calls(3), 1);
    EXPECT_EQ(answers.status(3).code(), Code::kUnavailable);
    EXPECT_EQ(answers.status(3).http_status(), 503);
    EXPECT_EQ(answers.calls(0), 0);
  });
  EXPECT_TRUE(answers.status(0).ok());
  EXPECT_TRUE(answers.status(1).ok());
}

TEST(ServeBatcher, ExpiredRequestIsAnsweredDeadlineExceeded) {
  auto o = serve_options("add", kServeAddModel, {.max_batch = 4, .max_queue_delay_us = 100});
  auto server = make_server(o, nullptr);
  auto late = add_request("add", 1, 1);
  late.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  auto patient = add_request("add", 1, 2);
  patient.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  Answers answers;
  queue_behind_held(*server, add_request("add", 1, 0), {late, patient}, &answers,
                    [] { std::this_thread::sleep_for(std::chrono::milliseconds(10)); });
  EXPECT_EQ(answers.status(0).code(), Code::kDeadlineExceeded);
  EXPECT_EQ(answers.status(0).http_status(), 504);
  EXPECT_TRUE(answers.status(1).ok());
}

TEST(ServeBatcher, DrainAnswersEverythingThenRefuses) {
  auto o = serve_options("add", kServeAddModel, {.max_batch = 4, .max_queue_delay_us = 50000});
  auto server = make_server(o, nullptr);
  Answers answers;
  for (int i = 0; i < 10; ++i) server->infer(add_request("add", 1, float(i)), answers.slot(i));
  server->drain();  // does not wait the 50 ms queue delay per batch: draining sends batches now
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(answers.calls(i), 1) << i;
    EXPECT_TRUE(answers.status(i).ok()) << i;
  }
  EXPECT_FALSE(server->ready());
  server->infer(add_request("add", 1, 0), answers.slot(10));
  EXPECT_EQ(answers.status(10).code(), Code::kUnavailable);
}

TEST(ServeBatcher, ManyThreadsEveryRequestAnsweredOnce) {
  auto o = serve_options("add", kServeAddModel, {.max_batch = 8, .max_queue_delay_us = 200, .max_queue = 1000});
  auto metrics = std::make_shared<serve::Metrics>();
  auto server = make_server(o, metrics);
  Answers answers;
  constexpr int kThreads = 8, kEach = 50;
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      for (int k = 0; k < kEach; ++k) {
        const int i = t * kEach + k;
        server->infer(add_request("add", 1 + i % 2, float(i)), answers.slot(i));
      }
    });
  }
  for (auto& c : clients) c.join();
  ASSERT_TRUE(answers.wait(kThreads * kEach));
  server->drain();
  for (int i = 0; i < kThreads * kEach; ++i) {
    ASSERT_EQ(answers.calls(i), 1) << i;
    ASSERT_TRUE(answers.status(i).ok()) << answers.status(i).message();
    const float* r = answers.response(i).outputs[1].data.data_as<float>();
    // Row 0 of x is i, i+1, i+2 and of y 100 i, 100 i + 1, 100 i + 2: the row sum is 303 i + 6.
    EXPECT_FLOAT_EQ(r[0], 303.0f * float(i) + 6.0f) << i;
  }
  EXPECT_TRUE(has_line(metrics->prometheus_text(), "kiln_in_flight{model=\"add\"} 0"));
}

}  // namespace
}  // namespace kiln::testing
