#include "checks/package_load_findings.h"

#include "checks/package_load_fixes.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "loader/process.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;
using environment::Environment;
using environment::Place;
using imports::OwnLoad;
using imports::RuleRun;

namespace {

bool name_matches(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0;
}

// The wheels NVIDIA ships a name of `load` in (data/sonames.json), those of the CUDA major the
// rule's values name first where one does.
std::vector<std::string> wheels_for(const Context& ctx, const OwnLoad& load, const std::string& cuda) {
  std::vector<std::string> out, other;
  for (const environment::KnownLibrary& k : ctx.knowledge.libraries())
    for (const std::string& name : load.names) {
      if (!name_matches(name, k.soname)) continue;
      std::vector<std::string>& into = cuda.empty() || std::to_string(k.cuda) == cuda ? out : other;
      if (std::find(into.begin(), into.end(), k.package) == into.end()) into.push_back(k.package);
    }
  return out.empty() ? other : out;
}

// `text` with {lib} and the run's values put in.
std::string filled(std::string text, const RuleRun& run, const OwnLoad& load) {
  std::map<std::string, std::string> known = run.values;
  known["lib"] = load.lib;
  for (const auto& [key, value] : known)
    for (size_t at = text.find("{" + key + "}"); at != std::string::npos; at = text.find("{" + key + "}", at))
      text.replace(at, key.size() + 2, value);
  return text;
}

// The places a load was looked for, in words.
std::string places_words(const RuleRun& run, const OwnLoad& load) {
  std::string out;
  for (const Place& at : load.step->places) {
    std::string one;
    switch (at.kind) {
      case Place::Kind::kSysPath:
        for (const std::string& d : at.dirs) one += (one.empty() ? "" : ", ") + filled(d, run, load);
        one = "each sys.path entry's " + one;
        break;
      case Place::Kind::kPackage:
        one = at.dirs.front() == "." ? "the package's own directory" : "the package's " + at.dirs.front();
        break;
      case Place::Kind::kVariable:
        for (const std::string& v : at.variables) one += (one.empty() ? "$" : ", $") + v;
        if (at.fallback) one += ", else " + *at.fallback;
        if (!at.below.empty()) one = at.below + " of " + one;
        break;
      case Place::Kind::kPath: one = at.dirs.front(); break;
      case Place::Kind::kLdconfig: one = "the directories of the `ldconfig -p` lines naming " + at.text; break;
      case Place::Kind::kLdLibraryPath: one = "LD_LIBRARY_PATH"; break;
      case Place::Kind::kDlopen: one = "dlopen's own search"; break;
    }
    out += (out.empty() ? "" : "; ") + one;
  }
  return out;
}

// The steps from the rule's top down to `target`: its groups, then itself; empty where it is none of
// `steps`.
std::vector<const environment::Step*> enclosing(const std::vector<environment::Step>& steps,
                                                const environment::Step* target) {
  for (const environment::Step& s : steps) {
    if (&s == target) return {&s};
    std::vector<const environment::Step*> inner = enclosing(s.steps, target);
    if (inner.empty()) continue;
    inner.insert(inner.begin(), &s);
    return inner;
  }
  return {};
}

// The variables whose being set skips the load (a `when` of its step or of a group around it that
// holds where one is unset, alone or in an `all`): the package takes the variable's value instead
// of its search.
std::vector<std::string> skipping_variables(const RuleRun& run, const OwnLoad& load) {
  using environment::Condition;
  std::vector<std::string> out;
  std::vector<const Condition*> conditions;
  for (const environment::Step* s : enclosing(run.rule->steps, load.step))
    if (s->when) conditions.push_back(&*s->when);
  while (!conditions.empty()) {
    const Condition* c = conditions.back();
    conditions.pop_back();
    if (c->kind == Condition::Kind::kVariable && !c->set) out.push_back(c->name);
    if (c->kind == Condition::Kind::kAll)
      for (const Condition& part : c->parts) conditions.push_back(&part);
  }
  return out;
}

// What fixes a load that the directories of the `ldconfig -p` lines did not hold. A copy that an
// earlier step opened (the loader's own search found it) under the very name comes into the cache
// with ldconfig; one that is a versioned file of the name (libcuda.so.1 for libcuda.so) needs the
// link name beside it first. A variable that skips the search is offered too, set to the copy's
// directory.
std::string ldconfig_fix(const Context& ctx, const RuleRun& run, const OwnLoad& load) {
  const std::string& name = load.names.front();
  const OwnLoad* copy = nullptr;
  for (int i = 0; i < run.at && !copy; ++i) {
    const OwnLoad& l = run.loads[i];
    std::string base = fs::path(l.path).filename().string();
    if (l.object >= 0 && (base == name || base.rfind(name + ".", 0) == 0)) copy = &l;
  }
  std::string out;
  if (!load.listed.empty()) {
    std::string listed;
    for (const std::string& p : load.listed) listed += (listed.empty() ? "" : ", ") + p;
    out = "ld.so.cache names " + listed + "; ";
  }
  if (!copy) return out + "run ldconfig as root to bring ld.so.cache up to date";
  std::string dir = fs::path(copy->path).parent_path().string();
  std::string base = fs::path(copy->path).filename().string();
  out += "the loader finds " + copy->path + " (" + copy->found_by + "): ";
  bool link = base != name && !imports::path_exists(ctx.env, dir + "/" + name);
  if (link) out += "create the link " + dir + "/" + name + " -> " + base + " and ";
  // ldconfig caches the directories of ld.so.conf and the default ones, not LD_LIBRARY_PATH's.
  if (copy->loader_rule == loader::Rule::kLdSoCache || copy->loader_rule == loader::Rule::kDefault)
    out += link ? "run ldconfig as root" : "run ldconfig as root to bring ld.so.cache up to date";
  else out += "add " + dir + ", where ldconfig does not look, to a file of /etc/ld.so.conf.d and run ldconfig as root";
  for (const std::string& variable : skipping_variables(run, load)) out += ", or set " + variable + "=" + dir;
  return out;
}

// What fixes a load no place held, by the kind of place the package looks in first.
std::string missing_fix(const Context& ctx, const RuleRun& run, const OwnLoad& load) {
  auto cuda = run.values.find("cuda");
  for (const Place& at : load.step->places) {
    if (at.kind == Place::Kind::kSysPath || at.kind == Place::Kind::kPackage) {
      std::vector<std::string> wheels = wheels_for(ctx, load, cuda == run.values.end() ? "" : cuda->second);
      if (wheels.empty()) continue;
      std::string list;
      for (const std::string& w : wheels) list += (list.empty() ? "" : " or ") + w;
      return "install the wheel that ships it (" + list + ")";
    }
    if (at.kind == Place::Kind::kLdconfig) return ldconfig_fix(ctx, run, load);
  }
  return "";
}

// The directories the DT_RUNPATH (or DT_RPATH) of `e`, the file at `path`, names, $ORIGIN put in.
std::vector<std::string> runpath_dirs(const elf::ElfFile* e, const std::string& path) {
  std::vector<std::string> out;
  if (!e) return out;
  std::optional<std::string_view> list = e->runpath ? e->runpath : e->rpath;
  if (!list) return out;
  std::string origin = fs::path(path).parent_path().string();
  for (std::string_view rest = *list;;) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    for (std::string key : {"${ORIGIN}", "$ORIGIN"})
      for (size_t at = dir.find(key); at != std::string::npos; at = dir.find(key)) dir.replace(at, key.size(), origin);
    if (!dir.empty()) out.push_back(environment::normalize_path(dir));
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  return out;
}

// Why a copy the package found does not load, where the loader does not find what it needs, and
// what makes it load: a copy the environment has, or the wheel that ships the name
// (data/sonames.json), in a directory the search from the file that needs it reaches (its own
// RUNPATH), or else on LD_LIBRARY_PATH; a library of the NVIDIA driver comes with the driver.
std::string unreached_fix(const Context& ctx, const RuleRun& run, const OwnLoad& load) {
  const Environment& env = ctx.env;
  std::string site = env.inventory.site_dirs.empty() ? "" : env.inventory.site_dirs.front();
  for (const std::string& s : env.inventory.site_dirs)
    if (load.path.rfind(s + "/", 0) == 0) site = s;
  auto cuda = run.values.find("cuda");
  std::vector<std::string> names, wheels, dirs, driver;
  std::vector<std::pair<std::string, std::vector<std::string>>> present;  // a directory, the owners of copies there
  auto add = [](std::vector<std::string>& to, const std::string& s) {
    if (std::find(to.begin(), to.end(), s) == to.end()) to.push_back(s);
  };
  for (const loader::LoadError& e : load.errors) {
    if (e.kind != loader::LoadError::Kind::kMissingLibrary || e.library.empty()) continue;
    if (std::find(names.begin(), names.end(), e.library) != names.end()) continue;
    names.push_back(e.library);
    const environment::ElfRecord* needing = env.elf(e.path);
    std::vector<std::string> reached = needing && needing->opened
                                           ? runpath_dirs(needing->opened->elf.get(), needing->path)
                                           : std::vector<std::string>{};
    auto reaches = [&](const std::string& dir) {
      return std::find(reached.begin(), reached.end(), dir) != reached.end();
    };
    const environment::ElfRecord* copy = nullptr;
    for (const environment::ElfRecord& r : env.elf_files)
      if (fs::path(r.path).filename() == e.library) copy = copy ? copy : &r;
    if (copy) {
      std::string dir = fs::path(copy->path).parent_path().string();
      auto in = std::find_if(present.begin(), present.end(), [&](const auto& d) { return d.first == dir; });
      if (in == present.end()) in = present.insert(present.end(), {dir, {}});
      add(in->second, env.owner_label(copy->path));
      if (!reaches(dir)) add(dirs, dir);
      continue;
    }
    if (ctx.knowledge.driver_library(e.library)) {
      add(driver, e.library);
      continue;
    }
    OwnLoad one;
    one.names = {e.library};
    for (const std::string& w : wheels_for(ctx, one, cuda == run.values.end() ? "" : cuda->second)) {
      add(wheels, w);
      for (const environment::KnownLibrary& k : ctx.knowledge.libraries())
        if (k.package == w && k.soname == e.library && !site.empty() && !reaches(site + "/" + k.folder))
          add(dirs, site + "/" + k.folder);
    }
  }
  if (names.empty()) return "";
  auto listed = [](const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
    return out;
  };
  std::string h = load.path + " (found in " + load.found_by + ") needs " + listed(names) +
                  ", which the loader's search from it does not find";
  for (const auto& [dir, owners] : present) h += "; the environment has copies in " + dir + " (" + listed(owners) + ")";
  if (!wheels.empty()) h += "; install " + listed(wheels) + ", which ship" + (wheels.size() == 1 ? "s" : "") + " them";
  if (!dirs.empty()) h += std::string(wheels.empty() ? "; put " : ", and put ") + listed(dirs) + " on LD_LIBRARY_PATH";
  if (!driver.empty()) h += "; " + listed(driver) + " comes with the NVIDIA driver, on a machine with a GPU";
  return h;
}

// The file of the package's own RECORD that a package place of `load` would have held, and that is
// missing (record-missing-file): nullptr where none.
const python::RecordEntry* recorded_but_missing(const Context& ctx, const RuleRun& run, const OwnLoad& load) {
  if (!run.dist || std::none_of(load.step->places.begin(), load.step->places.end(),
                                [](const Place& at) { return at.kind == Place::Kind::kPackage; }))
    return nullptr;
  for (const python::RecordEntry& e : run.dist->record)
    if (std::find(load.names.begin(), load.names.end(), e.resolved.filename().string()) != load.names.end() &&
        !ctx.env.files.exists(e.resolved.string()))
      return &e;
  return nullptr;
}

Finding base_finding(const RuleRun& run, const OwnLoad& load) {
  Finding f;
  f.code = Code::kRuntimeLibraryMissing;
  f.severity = run.end == RuleRun::End::kFellBack ? Severity::kWarning : Severity::kError;
  f.file = environment::normalize_path(run.file);
  if (run.dist) f.package = run.dist->name;
  if (!load.names.empty()) f.library = load.names.front();
  f.message = run.words;
  return f;
}

// The directories the opener's own DT_RUNPATH (or DT_RPATH) names, $ORIGIN put in.
std::vector<std::string> own_dirs(const loader::LoadedObject& opener) {
  return runpath_dirs(opener.elf.get(), opener.path);
}

// What a library that opens others by name (cuDNN's shim, NVRTC) met, in its own words: a name none
// of whose copies the dlopen from it finds, or an `own` copy found outside its package.
class OpenerFindings {
 public:
  OpenerFindings(const Environment& env, const RuleRun& run, const loader::LoadedObject& opener)
      : env_(env), run_(run), opener_(opener), owner_(run.dist) {}

  void add(std::vector<Finding>& out) const {
    for (size_t i = 0; i < run_.loads.size(); ++i) {
      const OwnLoad& l = run_.loads[i];
      // A copy found that does not load is no better to the opener than none: it tries the next
      // name, and says the same words when none loads.
      if (static_cast<int>(i) == run_.at && run_.end != RuleRun::End::kDone && l.object < 0) {
        out.push_back(missing(l));
      } else if (l.step->own && !l.path.empty() && l.object >= 0 && owner_ &&
                 env_.owner(environment::normalize_path(l.path)) != owner_) {
        out.push_back(elsewhere(l));
      }
    }
  }

 private:
  Finding finding(const OwnLoad& l) const {
    Finding f;
    f.code = Code::kRuntimeLibraryMissing;
    f.severity = run_.end == RuleRun::End::kRaised ? Severity::kError : Severity::kWarning;
    f.file = environment::normalize_path(run_.file);
    if (owner_) f.package = owner_->name;
    f.library = l.names.front();
    return f;
  }

  // The file a RECORD puts where the opener's own search looks, and that is missing: the cause.
  std::optional<Cause> lost_copy(const std::vector<std::string>& tried) const {
    for (const std::string& dir : own_dirs(opener_))
      for (const std::string& name : tried) {
        std::string path = dir + "/" + name;
        const auto& owners = env_.owners(path);
        if (owners.empty() || env_.files.exists(path)) continue;
        return Cause{Code::kRecordMissingFile, path, std::nullopt, std::nullopt,
                     fs::path(opener_.path).filename().string() + " opens " + name + " at run time from " + dir +
                         ", where " + owners.front()->name + " " + owners.front()->version +
                         "'s RECORD lists it but the file is missing"};
      }
    return std::nullopt;
  }

  // Whether the owner's RECORD puts one of `tried` where the opener's own search looks.
  bool ships(const std::vector<std::string>& tried) const {
    for (const std::string& dir : own_dirs(opener_))
      for (const std::string& name : tried)
        for (const python::Distribution* d : env_.owners(dir + "/" + name))
          if (d == owner_) return true;
    return false;
  }

  std::string searched() const {
    std::string dirs;
    for (const std::string& d : own_dirs(opener_)) dirs += (dirs.empty() ? "" : ", ") + d;
    return "as glibc's dlopen called from " + fs::path(opener_.path).filename().string() + " searches: " +
           (dirs.empty() ? ""
                         : "its " + std::string(opener_.elf && opener_.elf->runpath ? "RUNPATH" : "RPATH") + " (" +
                               dirs + "), ") +
           "LD_LIBRARY_PATH, ld.so.cache and the default directories";
  }

  Finding missing(const OwnLoad& l) const {
    const std::vector<std::string>& tried = l.names;
    Finding f = finding(l);
    f.message = run_.words;
    std::string file = fs::path(run_.file).filename().string();
    bool needed = run_.end == RuleRun::End::kRaised;
    std::string who = owner_ ? owner_->name + " " + owner_->version : file;
    std::string h = file + " (" + env_.owner_label(run_.file) + ") opens " + tried.front() + " at run time (" +
                    run_.rule->what + "), " + searched() + ", and none of " + std::to_string(tried.size()) +
                    (tried.size() == 1 ? " name" : " names") + " is found: " + who +
                    (needed ? " fails at first use" : " works without it, with less");
    // A copy in the opener's directory: the very name asked for, where this dlopen does not look
    // (NVRTC 13's wheel: no RUNPATH), or another version (the name asked for is the opener's own).
    std::string stem = tried.front().substr(0, tried.front().find(".so") + 3);
    const environment::ElfRecord* same = nullptr;
    bool beside = false;
    for (const environment::ElfRecord& other : env_.elf_files) {
      std::string name = fs::path(other.path).filename().string();
      if (fs::path(other.path).parent_path() != fs::path(run_.file).parent_path() || name.rfind(stem, 0) != 0) continue;
      bool exact = std::find(tried.begin(), tried.end(), name) != tried.end();
      if (!same || (exact && !beside)) same = &other;
      beside |= exact;
    }
    if (same)
      h += "; " + same->path + " (" + env_.owner_label(same->path) + ") " +
           (beside ? "is the copy it asks for, in its own directory, where this search does not look; it loads "
                     "where that directory is on LD_LIBRARY_PATH or in ld.so.cache"
                   : "is another version than the one " + file + " asks for");
    f.caused_by = lost_copy(tried);
    if (f.caused_by) f.caused_by->how = h + "; " + f.caused_by->how;
    else if (owner_ && !beside)
      h += "; install a build of " + owner_->name + " that ships " + tried.front() + " beside " + file;
    f.hint = h;
    return f;
  }

  Finding elsewhere(const OwnLoad& l) const {
    const std::vector<std::string>& tried = l.names;
    Finding f = finding(l);
    f.severity = Severity::kWarning;
    std::string opener_name = fs::path(run_.file).filename().string();
    f.message = opener_name + " opens " + fs::path(l.path).filename().string() + " at run time from " + l.path + " (" +
                env_.owner_label(l.path) + ", found by " + l.found_by + "), not " + owner_->name + "'s own copy";
    f.hint = opener_name + " (" + owner_->name + " " + owner_->version + ") opens " + tried.front() + " at run time (" +
             run_.rule->what + "), " + searched() + "; ";
    f.caused_by = lost_copy(tried);
    if (f.caused_by) {
      f.hint += owner_->name +
                "'s own copy is missing, so another build of it serves the process, which may be another "
                "version: reinstall " +
                owner_->name + " so that its copy is there";
      f.caused_by->how = f.hint + "; " + f.caused_by->how;
    } else if (ships(tried)) {
      // Its copy is there: the search finds the other one first, and a reinstall changes nothing.
      f.hint += "the copy found by " + l.found_by + " comes before " + owner_->name +
                "'s own, so another build of it serves the process, which may be another version: remove that "
                "copy from the search (" +
                fs::path(l.path).parent_path().string() + ")";
    } else {
      // Reinstalling would bring back nothing: the package never shipped it.
      f.hint += owner_->name + " " + owner_->version + " ships none of " + std::to_string(tried.size()) +
                (tried.size() == 1 ? " name" : " names") +
                " where its search looks, so another build serves the process, which may be another version: "
                "install a build of " +
                owner_->name + " that ships " + tried.front() + " beside " + opener_name;
    }
    return f;
  }

  const Environment& env_;
  const RuleRun& run_;
  const loader::LoadedObject& opener_;
  const python::Distribution* owner_;
};

}  // namespace

const environment::PackageRule* falls_back_without(const Context& ctx, const environment::ElfRecord& file) {
  std::string base = fs::path(file.path).filename().string();
  for (const environment::PackageRule& rule : ctx.knowledge.package_rules().rules) {
    if (std::none_of(file.owners.begin(), file.owners.end(), [&](const python::Distribution* d) {
          return std::find(rule.packages.begin(), rule.packages.end(), d->key()) != rule.packages.end();
        }))
      continue;
    auto falls_back = [&](const environment::Step& s) {
      if (s.failing.kind != environment::Outcome::Kind::kFallBack) return false;
      // A name with a value ("libbitsandbytes_cuda{bnb}.so"): the part before it begins the file's
      // name, as opened_at_run_time (load_checks.cc) reads it.
      return std::any_of(s.names.begin(), s.names.end(), [&](const std::string& name) {
        size_t value = name.find('{');
        return value == std::string::npos ? name_matches(name, base) : base.rfind(name.substr(0, value), 0) == 0;
      });
    };
    if (environment::any_step(rule.steps, falls_back)) return &rule;
  }
  return nullptr;
}

std::vector<Finding> opener_findings(const Context& ctx, const RuleRun& run, const loader::LoadedObject& opener) {
  std::vector<Finding> out;
  OpenerFindings(ctx.env, run, opener).add(out);
  return out;
}

// The first error of a copy's load that the NVIDIA driver does not answer: a missing driver library
// (libcuda.so.1), or a symbol waiting for one, is there wherever the driver is, and the load checks
// account for it (checks/cuda/driver_libraries.h); nullptr where every error is of that kind.
const loader::LoadError* first_without_driver(const Context& ctx, const OwnLoad& load) {
  auto driver = [&](const std::string& name) {
    return !name.empty() && ctx.knowledge.driver_library(fs::path(name).filename().string()) != nullptr;
  };
  for (const loader::LoadError& e : load.errors) {
    bool ours = (e.kind == loader::LoadError::Kind::kMissingLibrary && driver(e.library)) ||
                (e.kind == loader::LoadError::Kind::kUndefinedSymbol && driver(e.waiting_for));
    if (!ours) return &e;
  }
  return nullptr;
}

std::optional<Finding> package_load_finding(const Context& ctx, const RuleRun& run) {
  if (run.end == RuleRun::End::kDone || run.at < 0) return std::nullopt;
  const OwnLoad& load = run.loads[run.at];
  bool found = !load.path.empty();
  // A copy that fails only for the NVIDIA driver's libraries loads wherever the driver is; with
  // other errors besides, the package meets the first of those there.
  const loader::LoadError* beyond_driver = found && !load.errors.empty() ? first_without_driver(ctx, load) : nullptr;
  if (found && !load.errors.empty() && !beyond_driver) return std::nullopt;
  // A copy of the environment that does not load: its own load check says why, in the words the
  // package raises.
  if (found && run.end == RuleRun::End::kRaised && ctx.env.elf(load.path)) return std::nullopt;
  Finding f = base_finding(run, load);
  if (run.end == RuleRun::End::kFellBack) f.code = Code::kSilentFallback;
  if (beyond_driver && beyond_driver != &load.errors.front())
    if (size_t at = f.message.find(load.errors.front().message); at != std::string::npos)
      f.message.replace(at, load.errors.front().message.size(), beyond_driver->message);
  std::string who = run.dist ? run.dist->name : fs::path(run.file).filename().string();
  const environment::PackageRule& rule = *run.rule;
  std::string moment = rule.moment == environment::Moment::kImport ? "import " + who
                       : rule.use.empty()                          ? "its first use"
                                                                   : rule.use;
  std::string h;
  if (run.end == RuleRun::End::kRaised)
    h = moment + " fails with " + who + "'s own error: " + (load.what.empty() ? rule.what : load.what);
  else h = who + " goes on without it and runs on " + run.to + " (" + (load.what.empty() ? rule.what : load.what) + ")";
  if (found) {
    std::string fix = unreached_fix(ctx, run, load);
    if (!fix.empty()) h += "; " + fix;
    else
      h += "; it found " + load.path + " (" + load.found_by +
           "), which does not load: " + (load.errors.empty() ? "" : load.errors.front().message);
    // The silent fallback is about the copy that does not load, as its own load check is, and
    // follows from the library that check finds missing first: the loader's words come first.
    if (run.end == RuleRun::End::kFellBack && ctx.env.elf(load.path)) {
      f.file = environment::normalize_path(load.path);
      if (beyond_driver && beyond_driver->kind == loader::LoadError::Kind::kMissingLibrary)
        f.caused_by = Cause{Code::kMissingLibrary, environment::normalize_path(beyond_driver->path),
                            beyond_driver->library, std::nullopt, ""};
    }
  } else if (!load.step->outcome) {  // a step with an outcome looked nowhere: its `what` says what failed
    h += "; none of " + places_words(run, load) + " holds " + load.names.front();
    if (const python::RecordEntry* lost = recorded_but_missing(ctx, run, load)) {
      h += "; " + run.dist->name + " " + run.dist->version + "'s RECORD lists " + lost->path +
           ", but the file is missing: reinstall " + run.dist->name;
      if (run.end == RuleRun::End::kFellBack) f.file = environment::normalize_path(lost->resolved.string());
    } else if (std::string fix = reads_variables(rule) ? "" : missing_fix(ctx, run, load); !fix.empty()) {
      h += "; " + fix;
    }
  }
  // A search that reads the process's variables: the file its wheel lost, or the variable that
  // makes it pass, tried on the model (package_load_fixes.h).
  if (reads_variables(rule)) {
    f.caused_by = missing_recorded_copy(ctx, run);
    if (f.caused_by) f.caused_by->how = h + "; " + f.caused_by->how;
    else if (std::string fix = passing_variable(ctx, run); !fix.empty())
      h += "; set " + fix + " before starting Python, and " + moment + " passes";
    else if (std::string other = found ? "" : search_fix(ctx, run, f); !other.empty()) h += "; " + other;
  }
  f.hint = h;
  return f;
}

Finding requirement_raised(const Context& ctx, const RuleRun& run, const python::Distribution& dist,
                           const environment::ElfRecord& first) {
  std::optional<Finding> cause = package_load_finding(ctx, run);
  const OwnLoad& load = run.loads[run.at];
  Finding f = cause ? *cause : base_finding(run, load);
  f.file = environment::normalize_path(first.path);
  f.package = dist.name;
  std::string who = run.dist ? run.dist->name : "";
  std::string error = run.words.substr(0, run.words.find(':'));
  f.caused_by = Cause{Code::kRuntimeLibraryMissing, environment::normalize_path(run.file), f.library, std::nullopt,
                      dist.name + " requires " + who + ", whose import raises this " + error +
                          " before any module of " + dist.name + " loads"};
  return f;
}

}  // namespace envdoctor::checks
