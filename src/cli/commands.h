// Subcommands of the adaqp CLI; each registers itself on the app and runs from its callback.
#pragma once

#include <CLI/CLI.hpp>

namespace adaqp::cli {

void add_generate_command(CLI::App& app);
void add_partition_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_train_command(CLI::App& app);

}  // namespace adaqp::cli
