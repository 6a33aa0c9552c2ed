#include "adaqp/config/choices.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

namespace {

constexpr std::array<std::pair<CommMode, const char*>, 4> kModes = {{
    {CommMode::kVanilla, "vanilla"},
    {CommMode::kQuant, "quant"},
    {CommMode::kOverlap, "overlap"},
    {CommMode::kAdaqp, "adaqp"},
}};
constexpr std::array<std::pair<BitScheme, const char*>, 3> kSchemes = {{
    {BitScheme::kAdaptive, "adaptive"},
    {BitScheme::kUniform, "uniform"},
    {BitScheme::kRandom, "random"},
}};

constexpr std::array<std::pair<Recompute, const char*>, 2> kRecompute = {{
    {Recompute::kNone, "none"},
    {Recompute::kAggregations, "aggregations"},
}};

template <typename E, size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  throw InvariantError("an enum value without a name");
}

template <typename E, size_t N>
E parse(const std::array<std::pair<E, const char*>, N>& table, const std::string& text) {
  std::string names;
  for (const auto& [v, name] : table) {
    if (text == name) return v;
    names += names.empty() ? name : std::string(", ") + name;
  }
  throw ConfigError(fmt::format("must be one of {}", names));
}

}  // namespace

const char* to_string(CommMode mode) {
  return name_of(kModes, mode);
}

const char* to_string(BitScheme scheme) {
  return name_of(kSchemes, scheme);
}

const char* to_string(Recompute recompute) {
  return name_of(kRecompute, recompute);
}

CommMode parse_comm_mode(const std::string& text) {
  return parse(kModes, text);
}

BitScheme parse_bit_scheme(const std::string& text) {
  return parse(kSchemes, text);
}

Recompute parse_recompute(const std::string& text) {
  return parse(kRecompute, text);
}

}  // namespace adaqp
