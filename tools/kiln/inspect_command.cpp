#include "commands.h"

namespace kiln::cli {

void add_inspect_command(CLI::App& app) {}

}  // namespace kiln::cli
