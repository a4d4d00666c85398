// `kiln doctor`: says whether kiln can use this machine's GPU, and how to fix it when not.
// Exits 0 when the GPU backend is usable, 1 otherwise.
#include <cstdio>

#include "commands.h"
#include "kiln/doctor.h"

namespace kiln::cli {

void add_doctor_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("doctor", "Check the GPU, driver, CUDA, cuDNN and cuBLAS versions");
  cmd->callback([] {
    const DoctorReport report = run_doctor();
    std::fputs(format_doctor_report(report).c_str(), stdout);
    exit_code() = report.gpu_usable() ? 0 : 1;
  });
}

}  // namespace kiln::cli
