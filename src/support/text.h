// Lists in sentences: what the hints and notes are made of.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace envdoctor::support {

// `s` without its trailing newlines and spaces: a program's output as one message.
inline std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

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

// `text` broken at spaces into lines of at most `width` columns (a longer word stays whole), the
// lines after the first indented by `indent`: a hint read in a terminal.
inline std::string wrap(const std::string& text, size_t width, const std::string& indent) {
  std::string out, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t space = text.find(' ', pos);
    std::string word = text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
    pos = space == std::string::npos ? text.size() : space + 1;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

}  // namespace envdoctor::support
