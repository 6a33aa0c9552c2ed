// adaqp: distributed full-graph GNN training with adaptive message quantization.
#include "adaqp/cli/command_line.h"

int main(int argc, char** argv) {
  adaqp::cli::exit_after_run(adaqp::cli::run(argc, argv));
}
