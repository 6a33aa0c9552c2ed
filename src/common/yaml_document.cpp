#include "adaqp/common/yaml_document.h"

#include <fmt/format.h>

#include <cstddef>
#include <sstream>

namespace adaqp {
namespace {

// A line that is the document marker `marker` ("---" or "..."), alone or before a space.
bool is_marker(const std::string& line, const char* marker) {
  return line.compare(0, 3, marker) == 0 &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
}

}  // namespace

// YAML's spellings of null, which Load reads as a null node like the text it cannot read.
bool is_null_scalar(std::string line) {
  const size_t comment = line.find(" #");
  if (comment != std::string::npos) line.resize(comment);
  const size_t first = line.find_first_not_of(" \t\r");
  const size_t last = line.find_last_not_of(" \t\r");
  if (first == std::string::npos) return false;
  const std::string word = line.substr(first, last - first + 1);
  return word == "null" || word == "Null" || word == "NULL" || word == "~";
}

YamlDocument parse_yaml_document(const std::string& text) {
  YamlDocument doc;
  bool content = false, ended = false, marked = false;
  int content_lines = 0;
  std::string content_line;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (is_marker(line, "---")) {
      if (content || ended || marked) {
        doc.error = fmt::format("line {}: a second YAML document ('---'); one is read", number);
        return doc;
      }
      marked = true;
      // A document may start on its marker's line ("--- {a: 1}").
      const std::string rest = line.substr(3);
      const size_t first = rest.find_first_not_of(" \t\r");
      if (first != std::string::npos && rest[first] != '#') {
        content = true;
        ++content_lines;
        content_line = rest;
      }
      continue;
    }
    if (is_marker(line, "...")) {
      ended = ended || content;
      continue;
    }
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    if (ended) {
      doc.error = fmt::format("line {}: content after the document's end ('...')", number);
      return doc;
    }
    content = true;
    ++content_lines;
    content_line = line;
  }
  try {
    doc.root = YAML::Load(text);
    // yaml-cpp's Load reads a quote left open as a scalar running to the end of the text, when the
    // quote is the text's last character or only line breaks follow; a space after the last
    // non-blank character makes it the error it is (and changes nothing in a valid document).
    const size_t last = text.find_last_not_of(" \t\r\n");
    if (last != std::string::npos) YAML::Load(text.substr(0, last + 1) + " ");
  } catch (const YAML::Exception& e) {
    doc.error = std::string("not valid YAML: ") + e.what();
    return doc;
  }
  const bool null_text = content_lines == 1 && is_null_scalar(content_line);
  if (content && doc.root.IsNull() && !null_text)
    doc.error = "not valid YAML: nothing could be read from it";
  return doc;
}

}  // namespace adaqp
