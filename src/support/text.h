// Lists in sentences: what the hints and notes are made of.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/types.h"

namespace envdoctor::support {

// Bytes as lowercase hexadecimal, two digits each: a digest as sha256sum and RECORD spell it.
inline std::string hex(const std::vector<u8>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (u8 b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

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
// lines after the first indented by `indent`: a hint read in a terminal. A command quoted in
// backticks is one word: never broken across lines, so that it can be copied as it is.
inline std::string wrap(const std::string& text, size_t width, const std::string& indent) {
  std::string out, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t space = text.find(' ', pos);
    // A space inside `...` does not end the word (an unclosed quote runs to the end).
    for (size_t tick = text.find('`', pos); tick != std::string::npos && tick < space;) {
      size_t close = text.find('`', tick + 1);
      if (close == std::string::npos) {
        space = std::string::npos;
        break;
      }
      if (close > space) space = text.find(' ', close);
      tick = text.find('`', close + 1);
    }
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

// `text` broken at spaces only (no quoting respected: ld.so's `NAME' quotes are not pairs) into
// lines of at most `width` columns, a longer word (a path) whole on a line of its own, the lines
// after the first indented by `indent`.
inline std::string wrap_words(const std::string& text, size_t width, const std::string& indent) {
  std::string out, line;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t space = text.find(' ', pos);
    std::string word = text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    if (space == std::string::npos) break;
    pos = space + 1;
  }
  return out + line;
}

// The width output lines keep to: COLUMNS when it is a number, else `fallback` (the tty's width,
// or the reports' own width where the output is no terminal).
inline size_t output_width(const char* columns, size_t fallback) {
  if (columns && *columns) {
    size_t n = 0;
    for (const char* c = columns; *c; ++c) {
      if (*c < '0' || *c > '9' || n > 100000) return fallback;
      n = n * 10 + static_cast<size_t>(*c - '0');
    }
    if (n >= 40) return n;
  }
  return fallback;
}

// The candidate nearest to `word` that a typing slip explains: at most two edits (a letter
// inserted, deleted, replaced, or two neighbours swapped), and fewer than half the word's
// letters; ties go to the first candidate. nullopt when none is that near, or `word` is one.
inline std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto distance = [](std::string_view a, std::string_view b) {
    // Optimal string alignment: Levenshtein plus adjacent transpositions.
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  std::optional<std::string> best;
  size_t best_distance = 3;
  for (const std::string& c : candidates) {
    if (c == word) return std::nullopt;
    size_t dist = distance(word, c);
    if (dist < best_distance && dist * 2 < word.size()) best = c, best_distance = dist;
  }
  return best;
}

}  // namespace envdoctor::support
