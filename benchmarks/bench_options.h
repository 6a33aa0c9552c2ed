// The benchmarks' command lines, on CLI11 as adaqp's own: `--flag VALUE` options within bounds,
// comma-separated lists, positional arguments and --help. CLI11 is a large header-only library:
// it is compiled once, in bench_options.cpp, not in every benchmark's unit.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace adaqp::bench {

class Options {
 public:
  // NAME: the program, in usage and errors; DESCRIPTION: the first line of --help.
  Options(std::string name, const std::string& description);
  ~Options();
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;

  // An option's default is its variable's value before parse(); numbers must lie in [min, max].
  Options& add(const std::string& flag, int64_t* value, const std::string& help, int64_t min = 1,
               int64_t max = std::numeric_limits<int64_t>::max());
  Options& add(const std::string& flag, int* value, const std::string& help, int min = 1,
               int max = std::numeric_limits<int>::max());
  Options& add(const std::string& flag, double* value, const std::string& help, double min,
               double max);
  Options& add(const std::string& flag, std::string* value, const std::string& help);
  // Comma-separated lists, each entry within [min, max] (empty entries are dropped); given, they
  // replace the default list.
  Options& add(const std::string& flag, std::vector<int64_t>* values, const std::string& help,
               int64_t min = 1, int64_t max = std::numeric_limits<int64_t>::max());
  Options& add(const std::string& flag, std::vector<int>* values, const std::string& help,
               int min = 1, int max = std::numeric_limits<int>::max());
  Options& add(const std::string& flag, std::vector<double>* values, const std::string& help,
               double min, double max);
  Options& add(const std::string& flag, std::vector<std::string>* values, const std::string& help);
  // A positional argument, required unless `optional`.
  Options& positional(const std::string& name, std::string* value, const std::string& help,
                      bool optional = false);

  // Parses the command line. --help prints the usage and exits 0; a bad command line prints one
  // line, "NAME: error: ..." naming the option, and exits 2. A repeated option takes its last
  // value; a repeated list option joins its lists.
  void parse(int argc, char** argv);

  // Ends the program as parse() does, for a check across options.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  std::string name_;
  std::unique_ptr<CLI::App> app_;
};

}  // namespace adaqp::bench
