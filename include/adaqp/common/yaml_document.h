// YAML text read as one document (job configurations, a partition's meta.yaml) without yaml-cpp's
// LoadAll, which never returns on some malformed input (0.7: a stray flow indicator at the top
// level, as in ",key:"), and without its Load's silence: Load reads such input as an empty
// document, and drops every document after the first.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace adaqp {

struct YamlDocument {
  YAML::Node root;    // Null for text of only blank lines, comments and document markers
  std::string error;  // empty when the text is one readable document; else what is wrong
};

// `text` as one YAML document: a second document ('---' after content, or content after '...'),
// text yaml-cpp cannot parse, and content it reads as nothing (but a null: null, ~) are errors.
YamlDocument parse_yaml_document(const std::string& text);

}  // namespace adaqp
