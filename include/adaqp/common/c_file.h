// A C stdio file, closed when its owner goes (for reads and for writes whose close is checked
// before release()).
#pragma once

#include <cstdio>
#include <memory>

namespace adaqp {

struct CFileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using CFile = std::unique_ptr<std::FILE, CFileCloser>;

}  // namespace adaqp
