#include "checks/finding.h"

#include <algorithm>
#include <tuple>
#include <unordered_set>

namespace envdoctor::checks {

const char* severity_name(Severity s) { return s == Severity::kError ? "error" : "warning"; }

std::string Finding::key() const {
  return code + '\0' + file + '\0' + library.value_or("") + '\0' + symbol.value_or("") + '\0' +
         version.value_or("") + '\0' + arch.value_or("") + '\0' + (file.empty() ? package.value_or("") : "");
}

void sort_and_dedupe(std::vector<Finding>& findings) {
  std::unordered_set<std::string> seen;
  std::vector<Finding> unique;
  unique.reserve(findings.size());
  for (Finding& f : findings)
    if (seen.insert(f.key()).second) unique.push_back(std::move(f));
  std::stable_sort(unique.begin(), unique.end(), [](const Finding& a, const Finding& b) {
    return std::make_tuple(!a.is_new, a.severity != Severity::kError, a.package.value_or("\x7f"), a.file, a.code) <
           std::make_tuple(!b.is_new, b.severity != Severity::kError, b.package.value_or("\x7f"), b.file, b.code);
  });
  findings = std::move(unique);
}

}  // namespace envdoctor::checks
