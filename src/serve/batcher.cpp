#include "serve/batcher.h"

#include <algorithm>
#include <map>

#include "serve/batch_tensors.h"
#include "serve/metrics.h"

namespace kiln::serve {
namespace {

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Every input has a known shape whose dim 0 is dynamic: requests can be stacked along it.
bool dim0_dynamic(const std::vector<TensorInfo>& inputs) {
  if (inputs.empty()) return false;
  for (const TensorInfo& in : inputs) {
    if (!in.has_shape || in.shape.empty() || in.shape[0] >= 0) return false;
  }
  return true;
}

// The response to `request` from the model's outputs (in outputs() order): the requested
// outputs in the order asked, or all of them.
InferResponse make_response(const InferRequest& request, const std::vector<TensorInfo>& infos,
                            std::vector<Tensor> values) {
  InferResponse r;
  r.model_name = request.model_name;
  r.model_version = request.model_version.empty() ? "1" : request.model_version;
  r.id = request.id;
  auto add = [&](size_t i, bool binary) {
    r.outputs.push_back({infos[i].name, std::move(values[i]), nlohmann::json::object()});
    r.binary.push_back(binary || request.binary_outputs);
  };
  if (request.outputs.empty()) {
    for (size_t i = 0; i < infos.size(); ++i) add(i, false);
    return r;
  }
  for (const RequestedOutput& want : request.outputs) {
    for (size_t i = 0; i < infos.size(); ++i) {
      if (infos[i].name == want.name) add(i, want.binary_data);
    }
  }
  return r;
}

std::map<std::string, Tensor> feeds_of(const InferRequest& request) {
  std::map<std::string, Tensor> feeds;
  for (const InferTensor& t : request.inputs) feeds[t.name] = t.data;
  return feeds;
}

}  // namespace

Batcher::Batcher(std::string model, std::vector<std::unique_ptr<Session>> replicas, const BatchingOptions& options,
                 std::shared_ptr<Metrics> metrics)
    : model_(std::move(model)), replicas_(std::move(replicas)), options_(options), metrics_(std::move(metrics)) {
  can_merge_ = options_.max_batch > 1 && dim0_dynamic(inputs());
  for (auto& r : replicas_) workers_.emplace_back([this, s = r.get()] { worker(s); });
}

Batcher::~Batcher() {
  drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

int Batcher::queue_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size());
}

void Batcher::submit(InferRequest request, InferCallback done) {
  Job job{std::move(request), std::move(done), Clock::now(), 1};
  const Tensor& first = job.request.inputs.empty() ? Tensor() : job.request.inputs.front().data;
  if (first.rank() > 0) job.rows = first.dim(0);
  const char* refusal = nullptr;
  int depth = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (draining_) {
      refusal = "the server is shutting down";
    } else if (static_cast<int>(queue_.size()) >= options_.max_queue) {
      refusal = "overloaded: the queue is full";
    } else {
      queue_.push_back(std::move(job));
      depth = static_cast<int>(queue_.size());
    }
  }
  if (refusal) {
    ServeStatus st(ServeStatus::Code::kUnavailable, "model '" + model_ + "': " + refusal);
    if (metrics_) metrics_->record_request(model_, st.http_status(), 0, 0, seconds_between(job.request.arrival, Clock::now()));
    job.done(st, InferResponse{});
    return;
  }
  if (metrics_) {
    metrics_->add_in_flight(model_, 1);
    metrics_->set_queue_depth(model_, depth);
  }
  work_cv_.notify_all();
}

void Batcher::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  draining_ = true;
  work_cv_.notify_all();  // a batch waiting for company goes now
  idle_cv_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
}

bool Batcher::compatible(const Job& a, const Job& b) const {
  const auto& x = a.request.inputs;
  const auto& y = b.request.inputs;
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    const Tensor& s = x[i].data;
    const Tensor& t = y[i].data;
    if (x[i].name != y[i].name || s.dtype() != t.dtype() || s.rank() != t.rank() || s.rank() == 0) return false;
    if (!std::equal(s.shape().begin() + 1, s.shape().end(), t.shape().begin() + 1)) return false;
  }
  return true;
}

bool Batcher::take_batch(std::list<Job>* batch, std::list<Job>* expired, Clock::time_point* wake) {
  const auto now = Clock::now();
  for (auto it = queue_.begin(); it != queue_.end();) {
    auto next = std::next(it);
    if (it->request.deadline && *it->request.deadline <= now) expired->splice(expired->end(), queue_, it);
    it = next;
  }
  if (queue_.empty()) return false;
  const Job& oldest = queue_.front();
  // The rows the oldest job's batch would have now, and whether it should go without waiting.
  int64_t rows = oldest.rows;
  std::vector<std::list<Job>::iterator> members{queue_.begin()};
  if (can_merge_) {
    for (auto it = std::next(queue_.begin()); it != queue_.end() && rows < options_.max_batch; ++it) {
      if (rows + it->rows <= options_.max_batch && compatible(oldest, *it)) {
        members.push_back(it);
        rows += it->rows;
      }
    }
  }
  const auto due = oldest.enqueued + std::chrono::microseconds(options_.max_queue_delay_us);
  if (can_merge_ && rows < options_.max_batch && now < due && !draining_) {
    *wake = due;
    for (const Job& j : queue_) {
      if (j.request.deadline) *wake = std::min(*wake, *j.request.deadline);
    }
    return false;
  }
  for (auto it : members) batch->splice(batch->end(), queue_, it);
  return true;
}

void Batcher::worker(Session* session) {
  for (;;) {
    std::list<Job> batch, expired;
    int depth = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        if (stopping_ && queue_.empty()) return;
        Clock::time_point wake = Clock::time_point::max();
        if (take_batch(&batch, &expired, &wake) || !expired.empty()) break;
        if (wake == Clock::time_point::max()) {
          work_cv_.wait(lock);
        } else {
          work_cv_.wait_until(lock, wake);
        }
      }
      running_ += static_cast<int>(batch.size() + expired.size());
      depth = static_cast<int>(queue_.size());
    }
    if (metrics_) metrics_->set_queue_depth(model_, depth);
    const auto start = Clock::now();
    for (Job& job : expired) {
      answer(job, ServeStatus(ServeStatus::Code::kDeadlineExceeded,
                              "model '" + model_ + "': the request's deadline passed before it ran"),
             InferResponse{}, start, 0);
    }
    if (!batch.empty()) run_batch(session, batch, start);
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ -= static_cast<int>(batch.size() + expired.size());
    }
    idle_cv_.notify_all();
    if (!batch.empty() && batch.size() > 1) work_cv_.notify_all();  // others may now fit a batch
  }
}

void Batcher::run_batch(Session* session, std::list<Job>& batch, Clock::time_point start) {
  if (batch.size() == 1) {
    run_alone(session, batch.front(), start);
    return;
  }
  std::vector<int64_t> rows;
  for (const Job& j : batch) rows.push_back(j.rows);
  std::map<std::string, Tensor> feeds;
  const auto& first_inputs = batch.front().request.inputs;
  for (size_t i = 0; i < first_inputs.size(); ++i) {
    std::vector<const Tensor*> parts;
    for (const Job& j : batch) parts.push_back(&j.request.inputs[i].data);
    feeds[first_inputs[i].name] = concat_rows(parts);
  }
  std::vector<Tensor> outs;
  const Status st = session->run(feeds, &outs);
  const double compute_s = seconds_between(start, Clock::now());
  // Split every output back by rows: per job, its outputs in outputs() order.
  std::vector<std::vector<Tensor>> per_job(batch.size());
  bool split = st.ok();
  for (size_t o = 0; split && o < outs.size(); ++o) {
    std::vector<Tensor> pieces;
    split = split_rows(outs[o], rows, &pieces);
    for (size_t k = 0; split && k < pieces.size(); ++k) per_job[k].push_back(std::move(pieces[k]));
  }
  if (!split) {  // answer each request from its own run (and with its own error)
    for (Job& job : batch) run_alone(session, job, Clock::now());
    return;
  }
  if (metrics_) metrics_->record_batch(model_, static_cast<int>(batch.size()));  // requests merged
  size_t k = 0;
  for (Job& job : batch) {
    InferResponse r = make_response(job.request, outputs(), std::move(per_job[k++]));
    answer(job, ServeStatus::OK(), std::move(r), start, compute_s);
  }
}

void Batcher::run_alone(Session* session, Job& job, Clock::time_point start) {
  std::vector<Tensor> outs;
  const Status st = session->run(feeds_of(job.request), &outs);
  const double compute_s = seconds_between(start, Clock::now());
  if (!st.ok()) {
    answer(job, ServeStatus::from(st.with_context("model '" + model_ + "'")), InferResponse{}, start, compute_s);
    return;
  }
  if (metrics_) metrics_->record_batch(model_, 1);
  answer(job, ServeStatus::OK(), make_response(job.request, outputs(), std::move(outs)), start, compute_s);
}

void Batcher::answer(Job& job, ServeStatus status, InferResponse response, Clock::time_point start,
                     double compute_s) {
  if (metrics_) {
    const auto now = Clock::now();
    metrics_->record_request(model_, status.http_status(), seconds_between(job.request.arrival, start), compute_s,
                             seconds_between(job.request.arrival, now));
    metrics_->add_in_flight(model_, -1);
  }
  try {
    job.done(std::move(status), std::move(response));
  } catch (...) {
    // A frontend's callback must not take the worker down; the request is answered already
    // as far as the batcher is concerned.
  }
}

}  // namespace kiln::serve
