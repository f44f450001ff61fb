#include "checks/load_findings.h"

#include <filesystem>

#include "advice/load_error.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;
using environment::normalize_path;
using loader::LoadError;
using loader::Resolution;

namespace {

Code code_for(LoadError::Kind kind) {
  switch (kind) {
    case LoadError::Kind::kMissingLibrary: return Code::kMissingLibrary;
    case LoadError::Kind::kMissingVersion: return Code::kMissingVersion;
    case LoadError::Kind::kUndefinedSymbol: return Code::kUndefinedSymbol;
    case LoadError::Kind::kWrongElfClass: return Code::kWrongElfClass;
    case LoadError::Kind::kInvalidElf: return Code::kInvalidElf;
  }
  return Code::kInvalidElf;
}

// The search that found `r`'s object: a match with an object already loaded searched nothing,
// so the resolution that loaded it first (its loader's NEEDED entry) is the one that did.
const Resolution& searched_resolution(const loader::Process& p, const Resolution& r) {
  if (r.rule != loader::Rule::kLoaded || r.object < 0) return r;
  const loader::LoadedObject& target = p.objects()[r.object];
  if (target.loader < 0) return r;
  for (const Resolution& first : p.objects()[target.loader].deps)
    if (first.object == r.object && first.rule != loader::Rule::kLoaded) return first;
  return r;
}

// A path the search tried where a package's RECORD lists the file and the file is missing: the
// copy the search would have taken, had it been there.
struct LostFile {
  std::string path;  // normalized
  const python::Distribution* owner = nullptr;
};
std::optional<LostFile> lost_on_the_way(const environment::Environment& env, const Resolution& r) {
  for (const loader::Attempt& a : r.attempts) {
    if (a.kind != loader::Attempt::Kind::kMissing || a.path.empty()) continue;
    std::string path = normalize_path(a.path);
    const auto& owners = env.owners(path);
    if (owners.empty() || env.files.stat(path)) continue;
    return LostFile{path, owners.front()};
  }
  return std::nullopt;
}

std::string where(const LostFile& lost) {
  return fs::path(lost.path).parent_path().string() + ", where " + lost.owner->name + " " + lost.owner->version +
         "'s RECORD lists it but the file is missing";
}

// What `e` follows from, in the load model's facts: a library not found because its file is
// missing from where a RECORD puts it and the search tried; a symbol undefined because the
// search for a library it comes from fell through such a missing file to another copy, or
// because the library its version names was not found.
std::optional<Cause> cause_of(const environment::Environment& env, const loader::Process& p, const LoadError& e) {
  if (e.object < 0) return std::nullopt;
  const loader::LoadedObject& consumer = p.objects()[e.object];
  std::string consumer_name = fs::path(consumer.path).filename().string();
  if (e.kind == LoadError::Kind::kMissingLibrary) {
    for (const Resolution& r : consumer.deps) {
      if (r.object >= 0 || r.name != e.library) continue;
      // The advice already says which package lists the file and how to bring it back.
      if (auto lost = lost_on_the_way(env, r))
        return Cause{Code::kRecordMissingFile, lost->path, std::nullopt, std::nullopt, ""};
    }
    return std::nullopt;
  }
  if (e.kind != LoadError::Kind::kUndefinedSymbol) return std::nullopt;
  for (const Resolution& dep : consumer.deps) {
    if (dep.object < 0) continue;
    auto lost = lost_on_the_way(env, searched_resolution(p, dep));
    if (!lost) continue;
    const loader::LoadedObject& taken = p.objects()[dep.object];
    return Cause{Code::kRecordMissingFile, lost->path, std::nullopt, std::nullopt,
                 "the loader looked for " + dep.name + " (needed by " + consumer_name + ") in " + where(*lost) +
                     ", so the search went on to " + taken.path + " (" + env.owner_label(taken.path) + ", found by " +
                     loader::rule_name(taken.rule) + "), which does not define " + e.symbol};
  }
  if (e.waiting_for.empty()) return std::nullopt;
  std::string waited = e.waiting_for.substr(0, e.waiting_for.find(' '));
  for (const loader::LoadedObject& o : p.objects())
    for (const Resolution& r : o.deps)
      if (r.object < 0 && r.name == waited)
        return Cause{Code::kMissingLibrary, normalize_path(o.path), r.name, std::nullopt,
                     e.symbol + " would come from " + r.name + ", which " + fs::path(o.path).filename().string() +
                         " needs and the loader does not find"};
  return std::nullopt;
}

}  // namespace

Finding finding_for_load_error(const environment::Environment& env, const environment::Knowledge& knowledge,
                               const loader::Process& p, const LoadError& e) {
  Finding f;
  f.code = code_for(e.kind);
  f.severity = Severity::kError;
  f.message = e.message;
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary:
    case LoadError::Kind::kWrongElfClass:
    case LoadError::Kind::kInvalidElf: f.library = e.library; break;
    case LoadError::Kind::kMissingVersion:
      f.library = fs::path(e.library).filename().string();
      f.version = e.version;
      break;
    case LoadError::Kind::kUndefinedSymbol:
      f.symbol = e.symbol;
      if (!e.version.empty()) f.version = e.version;
      break;
  }
  f.take(advice::fix_for_load_error(env, knowledge, p, e));
  f.caused_by = cause_of(env, p, e);
  f.file = normalize_path(e.path);
  const auto& owners = env.owners(f.file);
  if (!owners.empty()) f.package = owners.front()->name;
  if (owners.size() > 1)
    for (const python::Distribution* d : owners) f.packages.push_back(d->name);
  return f;
}

}  // namespace envdoctor::checks
