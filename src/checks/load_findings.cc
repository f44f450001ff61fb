#include "checks/load_findings.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <utility>

#include "advice/fix_request.h"
#include "python/extension_module.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;
using environment::normalize_path;
using loader::LoadError;
using loader::Resolution;

namespace {

// Whether the lookup scope of object `object` (the global scope and its dlopen's local one, glibc
// elf/dl-open.c) lacks a library of the NVIDIA driver that one of its objects needs.
bool scope_misses_driver_library(const environment::Knowledge& knowledge, const loader::Process& p, int object) {
  const auto& objects = p.objects();
  auto misses = [&](int i) {
    return std::any_of(objects[i].deps.begin(), objects[i].deps.end(),
                       [&](const loader::Resolution& r) { return r.object < 0 && knowledge.driver_library(r.name); });
  };
  for (size_t i = 0; i < objects.size(); ++i)
    if (objects[i].global && misses(static_cast<int>(i))) return true;
  int root = objects[object].local_root;
  if (root < 0) return false;
  return std::any_of(objects[root].searchlist.begin(), objects[root].searchlist.end(), misses);
}

// What a program's failure means for the environment (nothing for its imports) and what it lacks:
// "torch/bin/test_jit is a program, not a module: Python never loads it, so imports are
// unaffected; it will not start because libfoo.so is not shipped by torch".
// `load_hint` is the load error's own fix; `reinstall_helps` is set to whether the load error's fix
// is worth offering for the program.
std::string program_hint(const environment::Environment& env, const std::string& program, const LoadError& e,
                         const std::string& load_hint, bool* reinstall_helps) {
  std::string shown = program;
  for (const std::string& site : env.inventory.site_dirs)
    if (program.starts_with(site + "/")) shown = program.substr(site.size() + 1);
  const python::Distribution* owner = env.owner(program);
  std::string owner_name = owner ? owner->name : "any package";
  std::string because;
  *reinstall_helps = true;  // reinstalling the owner brings back what it ships, never what it does not
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary: {
      bool shipped =
          owner && std::any_of(owner->record.begin(), owner->record.end(),
                               [&](const python::RecordEntry& r) { return r.resolved.filename() == e.library; });
      because = shipped ? e.library + ", which " + owner_name + " ships, is not on its search path"
                        : e.library + " is not shipped by " + owner_name;
      *reinstall_helps = shipped;
      break;
    }
    case LoadError::Kind::kMissingVersion:
      because = "version " + e.version + " is missing from " + fs::path(e.library).filename().string();
      break;
    case LoadError::Kind::kUndefinedSymbol: because = "none of its libraries defines " + e.symbol; break;
    default: because = e.reason();
  }
  std::string hint = shown + " is a program, not a module: Python never loads it, so imports are unaffected; " +
                     "it will not start because " + because;
  if (*reinstall_helps && !load_hint.empty()) hint += "; " + load_hint;
  return hint;
}

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
    if (owners.empty() || env.files.exists(path)) continue;
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
      // A copy the search tried and could not open for this user (mode 000): open_path goes on,
      // and the search ends in "No such file or directory"; the unreadable copy is the cause.
      for (const loader::Attempt& a : r.attempts)
        if (a.kind == loader::Attempt::Kind::kMissing && a.errnum == EACCES && !a.path.empty())
          return Cause{Code::kInvalidElf, normalize_path(a.path), std::nullopt, std::nullopt,
                       "the loader found " + r.name + " at " + normalize_path(a.path) + " (needed by " + consumer_name +
                           ") but cannot open it, and found no other copy"};
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
  if (!e.waiting_for.empty()) {
    std::string waited = e.waiting_for.substr(0, e.waiting_for.find(' '));
    for (const loader::LoadedObject& o : p.objects())
      for (const Resolution& r : o.deps)
        if (r.object < 0 && r.name == waited)
          return Cause{Code::kMissingLibrary, normalize_path(o.path), r.name, std::nullopt,
                       e.symbol + " would come from " + r.name + ", which " + fs::path(o.path).filename().string() +
                           " needs and the loader does not find"};
    return std::nullopt;
  }
  // An unversioned reference of an object whose own libraries were all found: ld.so stops at
  // the first library of the same load it cannot map, before it binds anything, so the symbol is
  // that library's consequence (and may well be its).
  if (!e.version.empty()) return std::nullopt;
  for (const loader::LoadedObject& o : p.objects()) {
    if (o.local_root != consumer.local_root) continue;
    for (const Resolution& r : o.deps)
      if (r.object < 0)
        return Cause{Code::kMissingLibrary, normalize_path(o.path), r.name, std::nullopt,
                     "ld.so stops at " + r.name + " (needed by " + fs::path(o.path).filename().string() +
                         "), which it does not find, before it binds " + e.symbol + ", which " + r.name +
                         " may define"};
  }
  return std::nullopt;
}

// The fix for a load error and the finding it follows from, the same whether the error is reported
// on the object that has it or on the program that would not start. The fix is asked of advice
// (made after the checks); for an unversioned copy, it is the check's own words, with no command.
struct LoadErrorFix {
  std::optional<advice::FixRequest> request;
  std::string own_hint;
  std::optional<Cause> cause;
};

// ld.so's assertion on a versioned reference met by a copy of its library without symbol
// versioning (loader::LoadError::aborts): the process dies, Python with it. Nothing a version
// upgrade does helps; the copy that wins has to be the versioned build its users were linked
// against. Where two packages write that path (file-owned-twice), that is the cause.
void unversioned_copy(const environment::Environment& env, const LoadError& e, LoadErrorFix& f) {
  std::string lib = fs::path(e.library).filename().string();
  std::string user = fs::path(e.path).filename().string();
  f.own_hint = "the copy of " + lib + " the loader takes (" + e.library + ", " + env.owner_label(e.library) +
               ") has no symbol versioning, while " + user + " was linked against a versioned " + lib +
               " and needs version " + e.version +
               ": ld.so warns \"no version information available\" and aborts the " +
               "process (exit 127, Python with it) when it binds " + e.symbol + "; install the versioned build of " +
               lib + " in its place";
  if (!f.cause)
    f.cause = Cause{Code::kFileOwnedTwice, normalize_path(e.library), std::nullopt, std::nullopt,
                    "two packages write " + e.library + ", and the copy that won has no symbol versioning"};
}

// What `e` names beside the file it is about: the library, the version, the symbol.
void name_what_failed(const LoadError& e, Finding& f) {
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
}

LoadErrorFix load_error_fix(const Context& ctx, const loader::Process& p, const LoadError& e) {
  const environment::Environment& env = ctx.env;
  LoadErrorFix f;
  f.cause = cause_of(env, p, e);
  if (e.aborts) unversioned_copy(env, e, f);
  else f.request = advice::FixRequest{advice::load_failure(p, e)};
  // A copy the loader rejects (or dies of) while it loads another object's NEEDED entry: the
  // file's own finding, from its own load, is the cause.
  if (e.kind == LoadError::Kind::kInvalidElf && e.object >= 0 && !f.cause &&
      normalize_path(p.objects()[e.object].path) != normalize_path(e.path))
    f.cause = Cause{Code::kInvalidElf, normalize_path(e.path), std::nullopt, std::nullopt,
                    fs::path(p.objects()[e.object].path).filename().string() + " needs " + e.library +
                        ", and the loader stops at this copy of it"};
  return f;
}

}  // namespace

Finding finding_for_load_error(const Context& ctx, const loader::Process& p, const LoadError& e) {
  LoadErrorFix fix = load_error_fix(ctx, p, e);
  Finding f;
  f.code = code_for(e.kind);
  f.severity = Severity::kError;
  f.file = normalize_path(e.path);
  const auto& owners = ctx.env.owners(f.file);
  if (!owners.empty()) f.package = owners.front()->name;
  if (owners.size() > 1)
    for (const python::Distribution* d : owners) f.packages.push_back(d->name);
  f.message = e.message;
  name_what_failed(e, f);
  if (fix.request) f.ask(std::move(*fix.request));
  else f.hint = fix.own_hint;
  f.caused_by = std::move(fix.cause);
  return f;
}

namespace {

// A load stops at its first error (elf/dl-open.c: _dl_map_object_deps, then
// _dl_check_map_versions, then relocation, each signalling the first failure it meets), so a later
// error of the same load that depends on the first one is what ld.so never reached:
// - after a version it did not find, a version missing from the same library, and an undefined
//   symbol of that version (nothing of it can bind);
// - after a library it did not find or could not load, an undefined symbol that library may
//   define: an unversioned one (the library's definitions would be in the scope), or one whose
//   version names it.
// Anything else (another library not found, a version of another library, a symbol of a version
// its loaded library lacks) is a failure of its own, which ld.so reports once the first is fixed.
bool follows_from(const LoadError& first, const LoadError& e) {
  using Kind = LoadError::Kind;
  if (first.kind == Kind::kUndefinedSymbol) return false;
  if (first.kind == Kind::kMissingVersion) {
    if (e.kind == Kind::kMissingVersion) return normalize_path(e.library) == normalize_path(first.library);
    return e.kind == Kind::kUndefinedSymbol && e.version == first.version;
  }
  if (e.kind != Kind::kUndefinedSymbol) return false;
  std::string missing = fs::path(first.library).filename().string();
  return e.version.empty() || (!missing.empty() && e.waiting_for.find(missing) != std::string::npos);
}

std::string stops_at(const LoadError& first, const LoadError& e) {
  std::string what = e.kind == LoadError::Kind::kUndefinedSymbol ? "before it binds " + e.symbol
                                                                 : "before it checks version " + e.version;
  switch (first.kind) {
    case LoadError::Kind::kMissingVersion:
      return "ld.so stops at the first version it does not find (version " + first.version + " of " +
             fs::path(first.library).filename().string() + ", required by " + fs::path(first.path).filename().string() +
             ") " + what;
    case LoadError::Kind::kMissingLibrary:
      return "ld.so stops at " + first.library + ", which it does not find, " + what;
    default: return "ld.so stops at " + first.library + ", which it cannot load, " + what;
  }
}

}  // namespace

std::vector<Finding> findings_for_load_errors(const Context& ctx, const loader::Process& p,
                                              const std::vector<LoadError>& errors, bool no_interpreter) {
  std::vector<Finding> out;
  std::optional<std::pair<LoadError, size_t>> first;  // the error the real load stops at, and its finding
  for (const LoadError& e : errors) {
    if (e.kind == LoadError::Kind::kUndefinedSymbol && no_interpreter && python::is_python_c_api_symbol(e.symbol))
      continue;
    if (e.kind == LoadError::Kind::kUndefinedSymbol && e.object >= 0) {
      const auto& deps = p.objects()[e.object].deps;
      if (std::any_of(deps.begin(), deps.end(), [](const Resolution& r) { return r.object < 0; })) continue;
      // checks/cuda/driver_libraries.h: the driver's libraries are missing only where it is.
      if (scope_misses_driver_library(ctx.knowledge, p, e.object)) continue;
    }
    Finding f = finding_for_load_error(ctx, p, e);
    if (first && !f.caused_by && follows_from(first->first, e)) {
      const Finding& cause = out[first->second];
      f.caused_by = Cause{cause.code, cause.file, cause.library, std::nullopt, stops_at(first->first, e)};
    }
    if (!first) first.emplace(e, out.size());
    out.push_back(std::move(f));
  }
  return out;
}

Finding rejected_file(const Context& ctx, const environment::ElfRecord& file, const loader::Verdict& verdict) {
  const environment::Environment& env = ctx.env;
  Finding f;
  f.severity = Severity::kError;
  f.file = file.path;
  if (const python::Distribution* d = env.owner(file.path)) f.package = d->name;
  switch (verdict.kind) {
    case loader::Verdict::Kind::kOtherClass:
      // elf/dl-load.c, _dl_map_object: the class the loader is not.
      f.code = Code::kWrongElfClass;
      f.message = file.path +
                  ": wrong ELF class: " + elf::elf_class_name(env.host_class == ELFCLASS64 ? ELFCLASS32 : ELFCLASS64);
      f.ask(advice::FixRequest{advice::InvalidFile{file.path}, ": "});
      f.hint = "a " + std::string(env.host_class == ELFCLASS64 ? "32" : "64") + "-bit build cannot load here";
      break;
    case loader::Verdict::Kind::kOtherMachine:
      // open_verify skips another machine's file silently; opened by path, nothing else is tried.
      f.code = Code::kWrongElfClass;
      f.message = file.path + ": cannot open shared object file: No such file or directory";
      f.ask(advice::FixRequest{advice::InvalidFile{file.path}, ": "});
      f.hint = "a build for another machine cannot load here";
      break;
    default:
      f.code = Code::kInvalidElf;
      f.message = file.path + ": " + verdict.message;
      if (file.opened->status == loader::OpenResult::Status::kMissing) {
        // open() itself failed (a mode-000 file for a user who may not read it): the file may well
        // be whole, and the loader says why it could not open it, not that it is damaged.
        f.message = file.path + ": cannot open shared object file: " + verdict.message;
        f.hint = "the loader cannot open " + file.path + " (" + verdict.message +
                 ") as this user: make it readable to whoever runs Python (ls -l it; chmod a+r)";
        if (file.opened->errnum != EACCES && file.opened->errnum != EPERM)
          f.hint = "the loader cannot open " + file.path + " (" + verdict.message + ")";
        break;
      }
      f.ask(advice::FixRequest{advice::InvalidFile{file.path}});
  }
  return f;
}

// In the words ld.so prints before it exits (elf/dl-error-skeleton.c fatal_error, elf/rtld.c
// print_missing_version).
Finding program_will_not_start(const Context& ctx, const loader::Process& p, const LoadError& e) {
  std::string program = p.objects().empty() ? e.path : p.objects()[0].path;
  LoadErrorFix fix = load_error_fix(ctx, p, e);
  Finding f;
  f.code = Code::kProgramWillNotStart;
  f.severity = Severity::kWarning;
  f.load_error = e.kind;
  f.file = normalize_path(program);
  if (const python::Distribution* d = ctx.env.owner(f.file)) f.package = d->name;
  switch (e.kind) {
    case LoadError::Kind::kMissingVersion: f.message = program + ": " + e.message; break;
    case LoadError::Kind::kUndefinedSymbol: f.message = program + ": symbol lookup error: " + e.message; break;
    default: f.message = program + ": error while loading shared libraries: " + e.message;
  }
  name_what_failed(e, f);
  bool reinstall_helps = true;
  std::string hint = program_hint(ctx.env, f.file, e, fix.own_hint, &reinstall_helps);
  if (fix.request) {
    fix.request->offer_hint = reinstall_helps;
    f.ask(std::move(*fix.request));
  }
  f.hint = hint;
  f.caused_by = std::move(fix.cause);
  return f;
}

}  // namespace envdoctor::checks
