// A finding: one thing that is wrong, with a stable code (DESIGN.md, "Findings"), the file and
// package it is about, the loader's own words, and a hint that fixes it. Checks produce them;
// renderers print them; nothing else changes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace envdoctor::checks {

enum class Severity { kWarning, kError };
const char* severity_name(Severity s);

struct Finding {
  std::string code;  // "missing-library", ...
  Severity severity = Severity::kError;
  std::string file;                    // absolute path ("" when the finding is about a package)
  std::optional<std::string> package;  // owner as METADATA spells it
  std::optional<std::string> library;
  std::optional<std::string> symbol;
  std::optional<std::string> version;
  std::optional<std::string> arch;
  std::vector<std::string> packages;   // all owners, when several
  std::string message;
  std::string hint;
  bool is_new = false;                 // introduced by --with/--without

  // Identity for de-duplication: the same failure seen from several loads is one finding.
  std::string key() const;
};

// Sorts findings for people and programs alike: new first, then errors before warnings, then by
// package, file and code; and drops duplicates.
void sort_and_dedupe(std::vector<Finding>& findings);

}  // namespace envdoctor::checks
