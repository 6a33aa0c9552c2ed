// The driver of a fuzz target in the ordinary build (gcc, no libFuzzer): runs the target on every
// file of its corpus directories, then on a fixed number of mutants of them (byte flips, random
// bytes, inserted, removed and repeated ranges, truncation, boundary values) drawn from a seeded
// generator, so that a ctest run is the same run every time. A crash (a signal, or an exception
// other than adaqp::Error escaping the target) ends it, as under libFuzzer. It then lists the
// distinct errors the inputs reached (fuzz_util.h note_error) and fails when one of the --expect
// texts is in none of them: a target whose inputs all stop at a checksum or at the first check
// never reaches the checks behind it.
//
// Usage: fuzz_replay_<target> [--mutants N] [--seed S] [--expect TEXT]... CORPUS_DIR...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Input = std::vector<uint8_t>;

struct Options {
  long mutants = 2000;
  uint64_t seed = 1;
  std::vector<std::string> expected;
  std::vector<std::string> corpus_dirs;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--mutants" && has_value) {
      o.mutants = std::stol(argv[++i]);
    } else if (arg == "--seed" && has_value) {
      o.seed = std::stoull(argv[++i]);
    } else if (arg == "--expect" && has_value) {
      o.expected.push_back(argv[++i]);
    } else if (!arg.empty() && arg[0] != '-') {
      o.corpus_dirs.push_back(arg);
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  if (o.corpus_dirs.empty()) throw std::invalid_argument("no corpus directory given");
  return o;
}

std::vector<Input> read_corpus(const std::vector<std::string>& dirs) {
  std::vector<std::filesystem::path> files;
  for (const auto& dir : dirs)
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());  // directory order is not stable
  std::vector<Input> corpus;
  for (const auto& f : files) {
    const std::string bytes = adaqp::fuzz::read_file(f);
    corpus.emplace_back(bytes.begin(), bytes.end());
  }
  if (corpus.empty()) throw std::invalid_argument("the corpus directories hold no file");
  return corpus;
}

// One to four random edits of `in`.
Input mutate(Input in, std::mt19937_64& rng) {
  auto below = [&rng](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  static constexpr uint8_t kBoundary[] = {0, 1, 0x7f, 0x80, 0xff, '0', '9', '-', ',', '\n'};
  const int edits = 1 + static_cast<int>(below(4));
  for (int e = 0; e < edits; ++e) {
    const size_t at = below(in.size() + 1);
    switch (below(7)) {
      case 0:  // flip a bit
        if (at < in.size()) in[at] ^= static_cast<uint8_t>(1u << below(8));
        break;
      case 1:  // a random byte
        if (at < in.size()) in[at] = static_cast<uint8_t>(rng());
        break;
      case 2:  // a boundary value
        if (at < in.size()) in[at] = kBoundary[below(sizeof(kBoundary))];
        break;
      case 3:  // insert random bytes
        for (size_t n = 1 + below(8); n > 0; --n)
          in.insert(in.begin() + static_cast<long>(at), static_cast<uint8_t>(rng()));
        break;
      case 4:  // remove a range
        in.erase(in.begin() + static_cast<long>(at),
                 in.begin() + static_cast<long>(std::min(in.size(), at + 1 + below(16))));
        break;
      case 5: {  // repeat a range
        const size_t end = std::min(in.size(), at + 1 + below(16));
        const Input range(in.begin() + static_cast<long>(at), in.begin() + static_cast<long>(end));
        in.insert(in.begin() + static_cast<long>(end), range.begin(), range.end());
        break;
      }
      case 6:  // truncate
        in.resize(at);
        break;
    }
  }
  return in;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::vector<Input> corpus = read_corpus(o.corpus_dirs);
  for (const Input& in : corpus) LLVMFuzzerTestOneInput(in.data(), in.size());
  std::mt19937_64 rng(o.seed);
  for (long i = 0; i < o.mutants; ++i) {
    const Input in = mutate(corpus[rng() % corpus.size()], rng);
    LLVMFuzzerTestOneInput(in.data(), in.size());
  }
  const auto& errors = adaqp::fuzz::errors_reached();
  std::printf("%zu corpus inputs and %ld mutants (seed %llu): no crash; %zu distinct errors:\n",
              corpus.size(), o.mutants, static_cast<unsigned long long>(o.seed), errors.size());
  for (const auto& [kind, count] : errors) std::printf("%8ld  %s\n", count, kind.c_str());
  int missing = 0;
  for (const std::string& text : o.expected) {
    bool reached = false;
    for (const auto& entry : errors)
      reached = reached || entry.first.find(text) != std::string::npos;
    if (!reached) {
      std::fprintf(stderr, "FAIL: no input reached an error containing '%s'\n", text.c_str());
      ++missing;
    }
  }
  if (missing == 0)
    std::printf("every one of the %zu expected errors was reached\n", o.expected.size());
  return missing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr,
                 "usage: %s [--mutants N] [--seed S] [--expect TEXT]... CORPUS_DIR...: %s\n",
                 argv[0], e.what());
    return 2;
  }
}
