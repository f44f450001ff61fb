// A finding: one thing that is wrong, with a stable code (docs/findings.md), the file and
// package it is about, the loader's own words, and a hint that fixes it. Checks produce them,
// each with what its fix is to be made from; the fix pass after the checks (run.h) puts the fix
// in; renderers print them; nothing else changes them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advice/fix.h"
#include "checks/finding_codes.h"
#include "loader/load_error.h"

namespace envdoctor::advice {
struct FixRequest;  // advice/fix_request.h
}

namespace envdoctor::checks {

enum class Severity { kWarning, kError };
const char* severity_name(Severity s);

// checks::Code, kAllCodes and each code's spelling are generated at build time from the one
// table of finding codes, docs/findings.md (scripts/findings.py): a code is added there, and a
// misspelt one does not compile. code_name() spells each as the JSON and the text report do.
const char* code_name(Code c);
std::optional<Code> code_from_name(std::string_view name);
// For "did you mean": the first code that `name` (three characters or more) begins, else the
// code whose name is fewest edits (Levenshtein) from `name`; nullopt when even the nearest needs
// more edits than half of `name`'s length.
std::optional<Code> nearest_code(std::string_view name);

// The finding another one follows from (checks/causes.h): a RECORD-missing file that made the
// loader's search fall through to another copy, a missing library that leaves the symbols it
// would define unbound. Named by what identifies the cause's finding.
struct Cause {
  Code code = Code::kRecordMissingFile;
  std::string file;
  std::optional<std::string> library;
  std::optional<std::string> package;  // the cause's package, filled in when it is linked
  // How the consequence follows from the cause, in the load model's facts ("the loader looked for
  // libcudnn.so.9 in DIR, where ... lists it, and took /usr/.../libcudnn.so.9 instead"); the
  // cause's own hint and command follow it once linked. Empty: the finding's own hint already
  // names the cause, and only the command is the cause's.
  std::string how;
};

struct Finding {
  Code code = Code::kMissingLibrary;
  Severity severity = Severity::kError;
  std::string file;                    // absolute path ("" when the finding is about a package)
  std::optional<std::string> package;  // owner as METADATA spells it
  std::optional<std::string> library;
  std::optional<std::string> symbol;
  std::optional<std::string> version;
  std::optional<std::string> arch;
  std::vector<std::string> packages;     // all owners, when several
  std::optional<std::string> installer;  // who installed `package`: "pip", "uv", "conda", "debian", ...
  std::string message;
  std::string hint;         // why, and what to do, for people
  std::string fix_command;  // a shell command that performs the fix for this environment; "" when none
  // What advice is to make this finding's fix from, kept by the check that found it; the fix pass
  // after the checks (checks/run.h) puts the fix into `hint` and `fix_command` and drops it.
  std::shared_ptr<const advice::FixRequest> fix_request;
  bool is_new = false;  // introduced by --with/--without
  // Set when this finding is a consequence of another one (the root of the chain): its fix is
  // the cause's fix. Absent for a cause, and for a finding that follows from nothing reported.
  std::optional<Cause> caused_by;
  // program-will-not-start: the kind of the loader's error the program dies of (a library not
  // found, a version, a symbol, a rejected file), for what judges it by kind, not by its words.
  std::optional<loader::LoadError::Kind> load_error;

  // Asks for the fix `request` says: its hint follows the check's own words, its command replaces
  // any so far.
  void ask(advice::FixRequest request);
  // The check's own words replace the hint; the command asked for stays.
  void own_hint(std::string words);
  // `words` come first in the hint, then what it says (the check's words and the fix's), joined by
  // "; ".
  void put_first(const std::string& words);
  // No command is offered, whatever the fix asked for says.
  void withhold_command();

  // Identity for de-duplication: the same failure seen from several loads is one finding.
  std::string key() const;
};

// Sorts findings for people and programs alike: new first, then errors before warnings, then by
// package, file and code; and drops duplicates. Paths in `file`, `library` and `hint` are made
// lexically normal first ("consumer/../provlib/lib" is "provlib/lib"); `message` keeps the
// loader's spelling.
void sort_and_dedupe(std::vector<Finding>& findings);

}  // namespace envdoctor::checks
