// Lists in sentences: what the hints and notes are made of.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace envdoctor::support {

// "a, b, c" (or with another separator).
inline std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The first `limit` items and a count of the rest: "a, b, c and 4 more".
inline std::string join_some(const std::vector<std::string>& items, size_t limit = 3) {
  std::vector<std::string> shown(items.begin(), items.begin() + std::min(limit, items.size()));
  std::string out = join(shown);
  if (items.size() > limit) out += " and " + std::to_string(items.size() - limit) + " more";
  return out;
}

}  // namespace envdoctor::support
