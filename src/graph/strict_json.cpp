#include "strict_json.h"

#include <algorithm>
#include <fstream>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp {

void malformed_json(const std::string& path, size_t byte, const std::string& what) {
  const size_t prefix = what.find("] ");
  throw InputError(
      path, byte == kNoByte ? "" : "byte " + std::to_string(byte),
      "malformed JSON: " + (prefix == std::string::npos ? what : what.substr(prefix + 2)));
}

std::string json_excerpt(const nlohmann::json& value) {
  constexpr size_t kMax = 60;
  const std::string text = value.dump();
  return text.size() <= kMax ? text : text.substr(0, kMax - 3) + "...";
}

std::ifstream open_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open");
  return in;
}

nlohmann::json parse_strict_json(const std::string& path) {
  using json = nlohmann::json;
  std::ifstream in = open_json(path);
  std::vector<std::vector<std::string>> keys;  // the keys of each object being read
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth)
      throw InputError(path, "", "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end) keys.pop_back();
    if (event == json::parse_event_t::key) {
      const std::string key = parsed.get<std::string>();
      if (std::find(keys.back().begin(), keys.back().end(), key) != keys.back().end())
        throw InputError(path, "key '" + key + "'", "appears twice in one object");
      keys.back().push_back(key);
    }
    return true;
  };
  try {
    return json::parse(in, check);
  } catch (const json::parse_error& e) {
    malformed_json(path, e.byte, e.what());
  } catch (const json::out_of_range& e) {
    malformed_json(path, kNoByte, e.what());  // a number past a double's range: no position
  }
}

}  // namespace adaqp
