// PEP 440 versions and version specifiers, as far as marker evaluation and requirement
// filtering need them: parsing with the spec's normalizations ("1.0-alpha1" == "1.0a1",
// "v1.0", "1.0.post-1"), total ordering (epoch, release with trailing zeros insignificant,
// then dev < pre < final < post, local last), and the comparison operators of a specifier
// clause, including "==1.2.*", "~=" and the exclusive-ordering rules of "<" and ">".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/mapped_file.h"

namespace envdoctor::python {

struct Version {
  u64 epoch = 0;
  std::vector<u64> release;
  // Pre-release: 'a', 'b' or 'c' (rc) with its number; 0 when none.
  char pre_kind = 0;
  u64 pre = 0;
  std::optional<u64> post;
  std::optional<u64> dev;
  // Local segments, lowercased, split on '.', '-' and '_'.
  std::vector<std::string> local;

  static std::optional<Version> parse(std::string_view text);

  bool is_prerelease() const { return pre_kind != 0 || dev.has_value(); }
  bool is_postrelease() const { return post.has_value(); }
  // The version without its local part.
  Version public_version() const;
  // The normalized text ("1.0rc1.post2.dev3+abc.5").
  std::string str() const;
};

// <0, 0, >0 as PEP 440 orders `a` and `b`.
int compare(const Version& a, const Version& b);

// One clause of a specifier: "~=", "==", "!=", "<=", ">=", "<", ">", "===".
struct SpecifierClause {
  std::string op;
  std::string version;  // as written, possibly with ".*"
};

// Parses "~=1.0, !=1.3.*" (the clauses of a PEP 508 version specifier, without parentheses).
// nullopt on an unknown operator or a malformed version.
std::optional<std::vector<SpecifierClause>> parse_specifier(std::string_view text);

// Whether `candidate` satisfies `clause` (pre-releases admitted, as markers do). "===" compares
// strings; the other operators need a version that parses, else false.
bool satisfies(std::string_view candidate, const SpecifierClause& clause);

}  // namespace envdoctor::python
