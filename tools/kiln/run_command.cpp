#include "commands.h"

namespace kiln::cli {

void add_run_command(CLI::App& app) {}

}  // namespace kiln::cli
