// Subcommands of the adaqp CLI; each registers itself on the app and runs from its callback.
#pragma once

#include <CLI/CLI.hpp>

#include "adaqp/cli/command_line.h"

namespace adaqp::cli {

void add_generate_command(CLI::App& app);
void add_partition_command(CLI::App& app);
void add_info_command(CLI::App& app);
// Training jobs run over wrap_transport(their transport) when it is set (adaqp/cli/command_line.h).
void add_train_command(CLI::App& app, const TransportWrapper& wrap_transport);

}  // namespace adaqp::cli
