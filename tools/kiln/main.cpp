// kiln: command-line front end. Uses only the public API (include/kiln).
#include <cstdio>
#include <exception>

#include "commands.h"

namespace kiln::cli {
int& exit_code() {
  static int code = 0;
  return code;
}
}  // namespace kiln::cli

int main(int argc, char** argv) {
  CLI::App app{"kiln: an inference engine for ONNX models on GPUs and CPUs"};
  app.require_subcommand(1);
  kiln::cli::add_check_command(app);
  kiln::cli::add_inspect_command(app);
  kiln::cli::add_run_command(app);
  kiln::cli::add_ops_command(app);
  kiln::cli::add_doctor_command(app);
  kiln::cli::add_build_command(app);
  kiln::cli::add_plan_info_command(app);
  kiln::cli::add_bench_command(app);
  kiln::cli::add_profile_command(app);
  kiln::cli::add_serve_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // A usage mistake is one line on stderr, like every other kiln error.
    std::fprintf(stderr, "kiln: error: %s (see kiln --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: error: %s\n", e.what());
    return 1;
  }
  return kiln::cli::exit_code();
}
