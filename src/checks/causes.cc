#include "checks/causes.h"

#include <optional>
#include <string>
#include <unordered_map>

#include "environment/environment.h"

namespace envdoctor::checks {

using environment::normalize_path;

namespace {

std::string identity(Code code, const std::string& file, const std::optional<std::string>& library) {
  return std::string(code_name(code)) + '\0' + normalize_path(file) + '\0' + library.value_or("");
}

}  // namespace

void link_causes(std::vector<Finding>& findings) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < findings.size(); ++i)
    index.try_emplace(identity(findings[i].code, findings[i].file, findings[i].library), i);
  auto lookup = [&](const Cause& c) -> std::optional<size_t> {
    auto it = index.find(identity(c.code, c.file, c.library));
    return it == index.end() ? std::nullopt : std::optional<size_t>(it->second);
  };
  // Each consequence's root, followed through the causes as the checks named them; a chain is a
  // few links long, and one that comes back to where it started has no root.
  std::vector<std::optional<size_t>> roots(findings.size());
  for (size_t i = 0; i < findings.size(); ++i) {
    std::optional<size_t> at;
    size_t now = i;
    int depth = 0;
    for (; depth < 8 && findings[now].caused_by; ++depth) {
      std::optional<size_t> next = lookup(*findings[now].caused_by);
      if (!next || *next == i) break;
      at = now = *next;
    }
    bool cycle = depth == 8 || (findings[now].caused_by && lookup(*findings[now].caused_by) == i);
    if (at && !cycle) roots[i] = at;
  }
  for (size_t i = 0; i < findings.size(); ++i) {
    Finding& f = findings[i];
    if (!f.caused_by) continue;
    if (!roots[i]) {
      f.caused_by.reset();
      continue;
    }
    const Finding& root = findings[*roots[i]];
    std::string how = f.caused_by->how;
    f.caused_by = Cause{root.code, root.file, root.library, root.package, how};
    // Without words of its own on how it follows, the finding keeps its hint (which names the
    // cause already); the command is the cause's either way.
    if (!how.empty()) f.hint = root.hint.empty() ? how : how + "; " + root.hint;
    f.fix_command = root.fix_command;
  }
}

size_t count_causes(const std::vector<Finding>& findings) {
  size_t n = 0;
  for (const Finding& f : findings) n += !f.caused_by;
  return n;
}

}  // namespace envdoctor::checks
