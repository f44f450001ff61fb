#include "checks/finding.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <tuple>
#include <unordered_set>

#include "advice/fix_request.h"
#include "environment/environment.h"

namespace envdoctor::checks {

using environment::normalize_path;

const char* severity_name(Severity s) { return s == Severity::kError ? "error" : "warning"; }

const char* code_name(Code c) {
  auto i = static_cast<size_t>(c);
  return i < std::size(kCodeNames) ? kCodeNames[i] : "?";
}

std::optional<Code> code_from_name(std::string_view name) {
  for (Code c : kAllCodes)
    if (name == code_name(c)) return c;
  return std::nullopt;
}

std::optional<Code> nearest_code(std::string_view name) {
  if (name.size() >= 3)
    for (Code c : kAllCodes)
      if (std::string_view(code_name(c)).starts_with(name)) return c;
  std::optional<Code> best;
  size_t best_distance = name.size() / 2 + 1;
  for (Code c : kAllCodes) {
    std::string_view code = code_name(c);
    // One row of the edit-distance table at a time.
    std::vector<size_t> row(code.size() + 1);
    for (size_t j = 0; j <= code.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= name.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= code.size(); ++j) {
        size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (name[i - 1] == code[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    if (row[code.size()] < best_distance) {
      best_distance = row[code.size()];
      best = c;
    }
  }
  return best;
}

std::string Finding::key() const {
  return std::string(code_name(code)) + '\0' + file + '\0' + library.value_or("") + '\0' + symbol.value_or("") + '\0' +
         version.value_or("") + '\0' + arch.value_or("") + '\0' + (file.empty() ? package.value_or("") : "");
}

namespace {

// Paths as people read them: "/v/site-packages/consumer/../provlib/lib" as
// "/v/site-packages/provlib/lib", lexically (normalize_path), wherever a word of `text` is a path
// with "." or ".." components. The loader's own messages are not passed here: they quote the
// path as the loader spelt it.
std::string normalize_paths_in(const std::string& text) {
  if (text.find("/.") == std::string::npos) return text;
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find_first_of(" \t\n'\"(),;", i);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(i, end - i);
    if (word.find("/./") != std::string::npos || word.find("/../") != std::string::npos || word.ends_with("/..") ||
        word.ends_with("/.")) {
      word = word.front() == '/' ? normalize_path(word) : std::filesystem::path(word).lexically_normal().string();
    }
    out += word;
    if (end < text.size()) out += text[end];
    i = end + 1;
  }
  return out;
}

}  // namespace

void Finding::ask(advice::FixRequest request) {
  fix_command.clear();
  fix_request = std::make_shared<const advice::FixRequest>(std::move(request));
}

namespace {

// The request of `f`, to change: its own copy.
advice::FixRequest& changed_request(Finding& f) {
  auto copy = std::make_shared<advice::FixRequest>(*f.fix_request);
  advice::FixRequest& out = *copy;
  f.fix_request = std::move(copy);
  return out;
}

}  // namespace

void Finding::own_hint(std::string words) {
  hint = std::move(words);
  if (fix_request) changed_request(*this).offer_hint = false;
}

void Finding::put_first(const std::string& words) {
  if (hint.empty() && fix_request) changed_request(*this).joint = "; ";
  hint = words + (hint.empty() ? std::string() : "; " + hint);
}

void Finding::withhold_command() {
  fix_command.clear();
  if (fix_request) changed_request(*this).offer_command = false;
}

void sort_and_dedupe(std::vector<Finding>& findings) {
  for (Finding& f : findings) {
    f.file = normalize_paths_in(f.file);
    if (f.library) f.library = normalize_paths_in(*f.library);
    f.hint = normalize_paths_in(f.hint);
  }
  std::unordered_set<std::string> seen;
  std::vector<Finding> unique;
  unique.reserve(findings.size());
  for (Finding& f : findings)
    if (seen.insert(f.key()).second) unique.push_back(std::move(f));
  std::stable_sort(unique.begin(), unique.end(), [](const Finding& a, const Finding& b) {
    return std::make_tuple(!a.is_new, a.severity != Severity::kError, a.package.value_or("\x7f"), a.file,
                           std::string_view(code_name(a.code))) <
           std::make_tuple(!b.is_new, b.severity != Severity::kError, b.package.value_or("\x7f"), b.file,
                           std::string_view(code_name(b.code)));
  });
  findings = std::move(unique);
}

}  // namespace envdoctor::checks
