// Each `kiln` subcommand lives in its own file and registers itself on the app here.
#pragma once
#include <CLI/CLI.hpp>

namespace kiln::cli {

// Exit status of the subcommand that ran (set by its callback).
int& exit_code();

void add_check_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_ops_command(CLI::App& app);
void add_doctor_command(CLI::App& app);
void add_build_command(CLI::App& app);      // build_command.cpp
void add_plan_info_command(CLI::App& app);  // build_command.cpp
void add_bench_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_serve_command(CLI::App& app);  // serve_command.cpp

}  // namespace kiln::cli
