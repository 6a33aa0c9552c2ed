// adaqp: distributed full-graph GNN training with adaptive message quantization.
#include "adaqp/cli/command_line.h"

int main(int argc, char** argv) {
  return adaqp::cli::run(argc, argv);
}
