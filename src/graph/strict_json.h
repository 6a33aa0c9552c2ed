// JSON files of the dataset layouts read whole (GraphSAINT's role.json, the typed NumPy layout's
// node_types.json): what nlohmann::json::parse would let through silently or fail on.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <fstream>
#include <string>

namespace adaqp {

// The JSON file at `path`, opened to read; InputError naming it when it cannot be.
std::ifstream open_json(const std::string& path);

// Nesting a file may have: the layouts need 3 levels (node_types.json's relations); deeper input
// could only exhaust the stack of the recursive code that reads or prints a value.
constexpr int kMaxJsonDepth = 8;

// The file at `path` parsed, refusing (InputError naming the file) malformed JSON, nesting deeper
// than kMaxJsonDepth, and a key repeated in one object (the parser would keep its last value).
nlohmann::json parse_strict_json(const std::string& path);

// malformed_json's byte where the parser gives none (a number past a double's range).
constexpr size_t kNoByte = static_cast<size_t>(-1);
// InputError naming the file and byte (unless kNoByte) of a parse error, with nlohmann's message
// without its "[json.exception.parse_error.101] " prefix.
[[noreturn]] void malformed_json(const std::string& path, size_t byte, const std::string& what);

// A value as JSON for an error message: at most 60 characters (a long value cut, with "...").
std::string json_excerpt(const nlohmann::json& value);

}  // namespace adaqp
