#include "loader/preload.h"

#include <algorithm>

namespace envdoctor::loader {

namespace {

// rtld.c: SECURE_PATH_LIMIT (PATH_MAX) bounds a name of LD_PRELOAD; SECURE_NAME_LIMIT (NAME_MAX)
// one of a secure program.
constexpr size_t kSecurePathLimit = 4096;
constexpr size_t kSecureNameLimit = 255;

std::vector<std::string> split_at(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= s.size();) {
    size_t end = s.find_first_of(separators, at);
    if (end == std::string_view::npos) end = s.size();
    if (end > at) out.emplace_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> split_ld_preload(std::string_view list, bool secure) {
  std::vector<std::string> out;
  for (std::string& name : split_at(list, " :")) {
    if (name.size() >= kSecurePathLimit) continue;  // fname[0] = '\0': skipped
    // dso_name_valid_for_suid
    if (secure && (name.size() >= kSecureNameLimit || name.find('/') != std::string::npos)) continue;
    out.push_back(std::move(name));
  }
  return out;
}

std::vector<std::string> split_ld_so_preload(std::string_view file) {
  std::string text(file);
  // "Eliminate comments", as rtld.c does it: from a '#' to the end of its line the bytes become
  // spaces, but every later search starts again at the file's first byte and looks at as many
  // bytes as are left after the comment, so a comment further on than that is read as names.
  for (size_t rest = text.size(); rest > 0;) {
    size_t comment = std::string_view(text).substr(0, rest).find('#');
    if (comment == std::string::npos) break;
    rest -= comment;
    do text[comment] = ' ';
    while (--rest > 0 && text[++comment] != '\n');
  }
  // A last name that no separator ends is taken apart (rtld.c's "problematic case"), as far as
  // a NUL byte; the rest is read by strsep (&runp, ": \t\n") as a C string, to its first NUL.
  auto separator = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == ':'; };
  std::string last;
  if (!text.empty() && !separator(text.back())) {
    size_t start = text.size();
    while (start > 0 && !separator(text[start - 1])) --start;
    last = text.substr(start);
    last.resize(std::min(last.size(), last.find('\0')));
    text.resize(start);
  }
  text.resize(std::min(text.size(), text.find('\0')));
  std::vector<std::string> out = split_at(text, ": \t\n");
  if (!last.empty()) out.push_back(std::move(last));
  return out;
}

const char* preload_source_name(Preload::Source source) {
  switch (source) {
    case Preload::Source::kLdPreload: return "LD_PRELOAD";
    case Preload::Source::kLdSoPreload: return "/etc/ld.so.preload";
  }
  return "";
}

std::vector<Preload> preloads(const LoaderConfig& config) {
  std::vector<Preload> out;
  for (std::string& name : split_ld_preload(config.ld_preload))
    out.push_back({std::move(name), Preload::Source::kLdPreload});
  if (config.ld_so_preload)
    for (std::string& name : split_ld_so_preload(*config.ld_so_preload))
      out.push_back({std::move(name), Preload::Source::kLdSoPreload});
  return out;
}

std::string preload_ignored_message(const Preload& preload, std::string_view reason) {
  // rtld.c, do_preload: _dl_error_printf's format, err_str being the message without its object.
  return "ERROR: ld.so: object '" + preload.name + "' from " + preload_source_name(preload.source) +
         " cannot be preloaded (" + std::string(reason) + "): ignored.";
}

}  // namespace envdoctor::loader
