#include "bench_options.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

namespace adaqp::bench {
namespace {

template <typename T>
std::string text_of(T value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Values within [min, max], described as ">= MIN" when max is the type's largest.
template <typename T>
CLI::Validator bounds(T min, T max) {
  const std::string range = max == std::numeric_limits<T>::max()
                                ? ">= " + text_of(min)
                                : "in [" + text_of(min) + ", " + text_of(max) + "]";
  return CLI::Validator(
      [min, max, range](std::string& input) -> std::string {
        T value{};
        if (!CLI::detail::lexical_cast(input, value)) return "'" + input + "' is not a number";
        if (value < min || value > max) return "must be " + range + ", got " + input;
        return std::string();
      },
      range);
}

template <typename T>
CLI::Option* number(CLI::App& app, const std::string& flag, T* value, const std::string& help,
                    T min, T max) {
  return app.add_option(flag, *value, help)->capture_default_str()->check(bounds(min, max));
}

template <typename T>
CLI::Option* list(CLI::App& app, const std::string& flag, std::vector<T>* values,
                  const std::string& help) {
  return app.add_option(flag, *values, help)->capture_default_str()->delimiter(',');
}

}  // namespace

Options::Options(std::string name, const std::string& description)
    : name_(std::move(name)), app_(std::make_unique<CLI::App>(description, name_)) {}

Options::~Options() = default;

Options& Options::add(const std::string& flag, int64_t* value, const std::string& help, int64_t min,
                      int64_t max) {
  number(*app_, flag, value, help, min, max);
  return *this;
}

Options& Options::add(const std::string& flag, int* value, const std::string& help, int min,
                      int max) {
  number(*app_, flag, value, help, min, max);
  return *this;
}

Options& Options::add(const std::string& flag, double* value, const std::string& help, double min,
                      double max) {
  number(*app_, flag, value, help, min, max);
  return *this;
}

Options& Options::add(const std::string& flag, std::string* value, const std::string& help) {
  app_->add_option(flag, *value, help)->capture_default_str();
  return *this;
}

Options& Options::add(const std::string& flag, std::vector<int64_t>* values,
                      const std::string& help, int64_t min, int64_t max) {
  list(*app_, flag, values, help)->check(bounds(min, max));
  return *this;
}

Options& Options::add(const std::string& flag, std::vector<int>* values, const std::string& help,
                      int min, int max) {
  list(*app_, flag, values, help)->check(bounds(min, max));
  return *this;
}

Options& Options::add(const std::string& flag, std::vector<double>* values, const std::string& help,
                      double min, double max) {
  list(*app_, flag, values, help)->check(bounds(min, max));
  return *this;
}

Options& Options::add(const std::string& flag, std::vector<std::string>* values,
                      const std::string& help) {
  list(*app_, flag, values, help);
  return *this;
}

Options& Options::positional(const std::string& name, std::string* value, const std::string& help,
                             bool optional) {
  CLI::Option* option = app_->add_option(name, *value, help);
  if (!optional) option->required();
  return *this;
}

void Options::parse(int argc, char** argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app_->help().c_str(), stdout);
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: %s (%s --help)\n", name_.c_str(), e.what(), name_.c_str());
    std::exit(2);
  }
}

}  // namespace adaqp::bench
