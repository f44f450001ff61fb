#include "loader/tunables.h"

#include <cstdint>

namespace envdoctor::loader {

void for_each_tunable(std::string_view text,
                      const std::function<void(std::string_view name, std::string_view value)>& item) {
  size_t p = 0;
  while (p < text.size()) {
    size_t len = 0;
    while (p + len < text.size() && text[p + len] != '=' && text[p + len] != ':') ++len;
    if (p + len == text.size()) return;  // a name without a value ends the string
    if (text[p + len] == ':') {
      p += len + 1;
      continue;
    }
    std::string_view name = text.substr(p, len);
    p += len + 1;
    size_t end = text.find(':', p);
    item(name, text.substr(p, end == std::string_view::npos ? std::string_view::npos : end - p));
    if (end == std::string_view::npos) return;
    p = end + 1;
  }
}

u64 dl_strtoul(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  bool positive = true;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) positive = s[i++] == '+';
  if (i >= s.size() || s[i] < '0' || s[i] > '9') return 0;
  u64 base = 10, max_digit = 9;
  if (s[i] == '0') {
    if (i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
      base = 16;
      i += 2;
    } else {
      base = 8;
      max_digit = 7;
    }
  }
  u64 result = 0;
  for (; i < s.size(); ++i) {
    u64 digit;
    char c = s[i];
    if (c >= '0' && c <= static_cast<char>('0' + max_digit)) digit = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else break;
    if (result >= (UINT64_MAX - digit) / base) return UINT64_MAX;
    result = result * base + digit;
  }
  return positive ? result : 0 - result;
}

}  // namespace envdoctor::loader
