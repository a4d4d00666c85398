// `kiln ops`: lists the op types kiln imports and runs (one per line).
#include <cstdio>

#include "commands.h"
#include "kiln/inspect.h"

namespace kiln::cli {

void add_ops_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("ops", "List the ONNX op types kiln supports");
  cmd->callback([] {
    for (const std::string& op : supported_op_types()) std::printf("%s\n", op.c_str());
  });
}

}  // namespace kiln::cli
