// `kiln check`: runs ONNX backend-test folders (model.onnx + test_data_set_*/input_N.pb,
// output_N.pb) and prints PASS/FAIL/SKIP per test. Each test runs in a child process, so a
// crash or hang in one test is reported as its failure and the run goes on.
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "kiln/kiln.h"
#include "kiln/tensor_io.h"
#include "cli_util.h"
#include "opt_flags.h"
#include "tensor_compare.h"

namespace fs = std::filesystem;

namespace kiln::cli {
namespace {

struct CheckOptions {
  std::string backend = "cpu";
  double rtol = 1e-3;
  double atol = 1e-5;
  int timeout_s = 120;
  OptimizerFlags optimizer;
  SessionOptions session;  // from the flags above, checked once before the tests run
};

enum class Outcome { kPass, kFail, kSkip };

struct TestResult {
  Outcome outcome;
  std::string why;
};

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  }
  // input_10 after input_9: order by the number after the prefix.
  std::sort(out.begin(), out.end(), [&](const fs::path& a, const fs::path& b) {
    auto num = [&](const fs::path& p) {
      try {
        return std::stoi(p.stem().string().substr(prefix.size()));
      } catch (...) {
        return 0;
      }
    };
    return num(a) < num(b);
  });
  return out;
}

TestResult run_data_set(Session& s, const fs::path& dir, const CheckOptions& opt) {
  std::map<std::string, Tensor> inputs;
  const auto input_files = sorted_files(dir, "input_");
  if (input_files.size() > s.inputs().size()) {
    return {Outcome::kFail, fmt::format("{} input files but the model has {} inputs", input_files.size(), s.inputs().size())};
  }
  for (size_t i = 0; i < input_files.size(); ++i) {
    Tensor t;
    std::string name;
    Status st = read_tensor_file(input_files[i].string(), &t, &name);
    if (!st.ok()) return {st.code() == StatusCode::kUnsupported ? Outcome::kSkip : Outcome::kFail, st.to_string()};
    // Test data names its tensor; older suites leave it empty and rely on input order.
    inputs[name.empty() ? s.inputs()[i].name : name] = std::move(t);
  }
  std::vector<Tensor> outputs;
  Status st = s.run(inputs, &outputs);
  if (!st.ok()) return {st.code() == StatusCode::kUnsupported ? Outcome::kSkip : Outcome::kFail, st.to_string()};
  const auto output_files = sorted_files(dir, "output_");
  for (size_t i = 0; i < output_files.size() && i < outputs.size(); ++i) {
    Tensor expected;
    st = read_tensor_file(output_files[i].string(), &expected);
    if (!st.ok()) return {st.code() == StatusCode::kUnsupported ? Outcome::kSkip : Outcome::kFail, st.to_string()};
    CompareResult c = compare_tensors(outputs[i], expected, opt.rtol, opt.atol);
    if (!c.ok) return {Outcome::kFail, fmt::format("output {} ('{}'): {}", i, s.outputs()[i].name, c.why)};
  }
  if (output_files.size() != outputs.size()) {
    return {Outcome::kFail, fmt::format("{} outputs but {} expected", outputs.size(), output_files.size())};
  }
  return {Outcome::kPass, ""};
}

TestResult run_test(const fs::path& dir, const CheckOptions& opt) {
  SessionOptions so = opt.session;
  so.backend = opt.backend;
  std::unique_ptr<Session> s;
  Status st = Session::load((dir / "model.onnx").string(), so, &s);
  if (!st.ok()) return {st.code() == StatusCode::kUnsupported ? Outcome::kSkip : Outcome::kFail, st.to_string()};
  auto sets = sorted_files(dir, "test_data_set_");
  if (sets.empty()) return {Outcome::kSkip, "no test_data_set_* folder"};
  for (const auto& set : sets) {
    TestResult r = run_data_set(*s, set, opt);
    if (r.outcome != Outcome::kPass) return r;
  }
  return {Outcome::kPass, ""};
}

// Runs one test in a child; the result travels back through a pipe as "<code> <why>".
TestResult run_isolated(const fs::path& dir, const CheckOptions& opt) {
  int fds[2];
  if (pipe(fds) != 0) return run_test(dir, opt);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return run_test(dir, opt);
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(opt.timeout_s));
    TestResult r = run_test(dir, opt);
    std::string msg = std::to_string(static_cast<int>(r.outcome)) + " " + r.why;
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    [[maybe_unused]] ssize_t n = write(fds[1], msg.data(), msg.size());
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    return {Outcome::kFail, sig == SIGALRM ? fmt::format("timed out after {} s", opt.timeout_s)
                                           : fmt::format("crashed with signal {} ({})", sig, strsignal(sig))};
  }
  if (msg.empty()) return {Outcome::kFail, fmt::format("test process exited with status {}", WEXITSTATUS(wstatus))};
  const auto space = msg.find(' ');
  return {static_cast<Outcome>(std::stoi(msg.substr(0, space))), space == std::string::npos ? "" : msg.substr(space + 1)};
}

std::vector<fs::path> collect_tests(const std::vector<std::string>& paths, std::vector<std::string>* missing) {
  std::vector<fs::path> tests;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::exists(fs::path(p) / "model.onnx", ec)) {
      tests.emplace_back(p);
    } else if (fs::is_directory(p, ec)) {
      std::vector<fs::path> sub;
      for (const auto& e : fs::directory_iterator(p)) {
        if (fs::exists(e.path() / "model.onnx", ec)) sub.push_back(e.path());
      }
      std::sort(sub.begin(), sub.end());
      tests.insert(tests.end(), sub.begin(), sub.end());
    } else {
      missing->push_back(p);
    }
  }
  return tests;
}

int run_check(const std::vector<std::string>& paths, const CheckOptions& opt) {
  std::vector<std::string> missing;
  const auto tests = collect_tests(paths, &missing);
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& m : missing) {
    std::printf("FAIL %s: no such test folder\n", fs::path(m).filename().c_str());
    ++failed;
  }
  for (const auto& t : tests) {
    const TestResult r = run_isolated(t, opt);
    const std::string name = t.filename().string();
    switch (r.outcome) {
      case Outcome::kPass: std::printf("PASS %s\n", name.c_str()); ++passed; break;
      case Outcome::kFail: std::printf("FAIL %s: %s\n", name.c_str(), r.why.c_str()); ++failed; break;
      case Outcome::kSkip: std::printf("SKIP %s: %s\n", name.c_str(), r.why.c_str()); ++skipped; break;
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto opt = std::make_shared<CheckOptions>();
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("check", "Run ONNX backend-test folders and compare with their expected outputs");
  cmd->add_option("--backend", opt->backend, "Backend to run on (cpu, cuda, auto)");
  cmd->add_option("--precision", opt->session.precision, "GPU precision: fp32 (strict), tf32, fp16, bf16")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd->add_option("--rtol", opt->rtol, "Relative tolerance");
  cmd->add_option("--atol", opt->atol, "Absolute tolerance");
  cmd->add_option("--timeout", opt->timeout_s, "Seconds one test may take before it counts as failed");
  cmd->add_option("paths", *paths, "Test folders, or folders of test folders")->required();
  add_optimizer_flags(cmd, &opt->optimizer);
  cmd->callback([opt, paths] {
    const Status st = apply_optimizer_flags(opt->optimizer, &opt->session);
    exit_code() = st.ok() ? run_check(*paths, *opt) : report_error(st);
  });
}

}  // namespace kiln::cli
