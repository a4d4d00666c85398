// The dynamic batcher of one served model: a bounded queue of validated requests and one
// worker thread per replica (the model loaded once per device). Workers pull from the shared
// queue, so a request always goes to a replica that is free: the least-loaded one.
//
// When every model input's dim 0 is dynamic, a worker merges queued requests whose inputs
// agree in every dim but dim 0 (same dtypes), up to max_batch rows in all or until the oldest
// has waited max_queue_delay_us, concatenates them along dim 0, runs once and splits the
// outputs back by rows. A batch whose outputs cannot be split that way (an output without the
// batch dim) or whose run fails is run again request by request, so that every request gets
// its own answer and its own error.
#pragma once
#include <chrono>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/session.h"
#include "serve/model_server.h"

namespace kiln::serve {

class Batcher {
 public:
  // `replicas` (at least one) are sessions of the same model; their inputs()/outputs() agree.
  Batcher(std::string model, std::vector<std::unique_ptr<Session>> replicas, const BatchingOptions& options,
          std::shared_ptr<Metrics> metrics);
  ~Batcher();  // drains, then joins the workers
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues a request already validated against the model (its inputs in the model's input
  // order, every requested output known). Answers kUnavailable at once, from this thread, when
  // the queue is full or the batcher is draining; otherwise `done` is called exactly once from
  // a worker.
  void submit(InferRequest request, InferCallback done);

  // Stops accepting, waits until everything queued or running is answered. Idempotent.
  void drain();

  int queue_depth() const;
  bool can_merge() const { return can_merge_; }
  const std::vector<TensorInfo>& inputs() const { return replicas_.front()->inputs(); }
  const std::vector<TensorInfo>& outputs() const { return replicas_.front()->outputs(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    InferRequest request;
    InferCallback done;
    Clock::time_point enqueued;
    int64_t rows = 1;  // dim 0 of the inputs (1 for rank-0 inputs)
  };

  void worker(Session* session);
  // Under the lock: answers expired jobs (moved to `expired`), then takes the batch the oldest
  // job heads when it is due; returns false (and sets `*wake`) when the batch should wait.
  bool take_batch(std::list<Job>* batch, std::list<Job>* expired, Clock::time_point* wake);
  bool compatible(const Job& a, const Job& b) const;
  void run_batch(Session* session, std::list<Job>& batch, Clock::time_point start);
  void run_alone(Session* session, Job& job, Clock::time_point start);
  void answer(Job& job, ServeStatus status, InferResponse response, Clock::time_point start,
              double compute_s);

  const std::string model_;
  std::vector<std::unique_ptr<Session>> replicas_;
  const BatchingOptions options_;
  std::shared_ptr<Metrics> metrics_;
  bool can_merge_ = false;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // a job arrived, or stopping
  std::condition_variable idle_cv_;  // a job was answered (drain waits on it)
  std::list<Job> queue_;
  int running_ = 0;  // jobs taken by workers and not yet answered
  bool draining_ = false;
  bool stopping_ = false;  // workers exit once the queue is empty
  std::vector<std::thread> workers_;
};

}  // namespace kiln::serve
