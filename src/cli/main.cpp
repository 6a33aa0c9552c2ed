// adaqp: distributed full-graph GNN training with adaptive message quantization.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "adaqp/common/error.h"
#include "adaqp/common/log.h"
#include "adaqp/config.h"
#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"adaqp " ADAQP_VERSION
               ": distributed full-graph GNN training with adaptive message quantization"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ADAQP_VERSION " (libtorch " ADAQP_TORCH_VERSION ")");
  adaqp::cli::add_generate_command(app);
  adaqp::cli::add_partition_command(app);
  adaqp::cli::add_info_command(app);
  adaqp::cli::add_train_command(app);
  try {
    adaqp::setup_logging(0);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const adaqp::Error& e) {
    std::fprintf(stderr, "adaqp: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adaqp: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
