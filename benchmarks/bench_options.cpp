#include "bench_options.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "adaqp/common/cpu_features.h"
#include "adaqp/common/error.h"

namespace adaqp::bench {
namespace {

template <typename T>
std::string text_of(T value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Whether `text` is a decimal integer: CLI11 reads integers in any base ("010" is 8, "0x2" is 2).
bool decimal(const std::string& text) {
  const size_t digits = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > digits &&
         text.find_first_not_of("0123456789", digits) == std::string::npos &&
         (text[digits] != '0' || text.size() == digits + 1);
}

// Values within [min, max] (NaN is not), described as ">= MIN" when max is the type's largest.
template <typename T>
CLI::Validator bounds(T min, T max) {
  const std::string range = max == std::numeric_limits<T>::max()
                                ? ">= " + text_of(min)
                                : "in [" + text_of(min) + ", " + text_of(max) + "]";
  return CLI::Validator(
      [min, max, range](std::string& input) -> std::string {
        T value{};
        if ((std::is_integral_v<T> && !decimal(input)) || !CLI::detail::lexical_cast(input, value))
          return "'" + input + "' is not a " +
                 (std::is_integral_v<T> ? "decimal integer" : "number");
        if (!(value >= min && value <= max)) return "must be " + range + ", got " + input;
        return std::string();
      },
      range);
}

template <typename T>
CLI::Option* number(CLI::App& app, const std::string& flag, T* value, const std::string& help,
                    T min, T max) {
  return app.add_option(flag, *value, help)
      ->capture_default_str()
      ->check(bounds(min, max))
      ->take_last();
}

template <typename T>
CLI::Option* list(CLI::App& app, const std::string& flag, std::vector<T>* values,
                  const std::string& help) {
  return app.add_option(flag, *values, help)
      ->capture_default_str()
      ->delimiter(',')
      ->allow_extra_args(false);
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
  app_->add_option(flag, *value, help)->capture_default_str()->take_last();
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

void Options::fail(const std::string& message) const {
  std::fprintf(stderr, "%s: error: %s (%s --help)\n", name_.c_str(), message.c_str(),
               name_.c_str());
  std::exit(2);
}

void Options::parse(int argc, char** argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app_->help().c_str(), stdout);
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    fail(e.what());
  }
  // The kernels read ADAQP_MAX_CPU_ISA on first use, inside OpenMP regions where a throw ends the
  // process: a wrong value is reported here instead, as a wrong option is.
  try {
    cpu_isa();
  } catch (const ConfigError& e) {
    fail(e.what());
  }
}

}  // namespace adaqp::bench
