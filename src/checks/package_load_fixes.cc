#include "checks/package_load_fixes.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include "advice/fix_request.h"
#include "imports/python_process.h"
#include "imports/python_source.h"
#include "support/text.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;
using environment::Condition;
using environment::Environment;
using environment::Place;
using environment::Step;
using imports::OwnLoad;
using imports::RuleRun;

namespace {
// Named apart from the anonymous namespace: the unity build puts this file beside others.
namespace package_load_fixes {

using Variables = std::vector<std::pair<std::string, std::string>>;

// The directories searched for a program where PATH does not hold it: the usual ones, sbin first.
constexpr std::string_view kProgramDirs = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

void walk_steps(const std::vector<Step>& steps, std::vector<const Step*>& out) {
  for (const Step& s : steps) {
    out.push_back(&s);
    walk_steps(s.steps, out);
  }
}

void walk_conditions(const Condition& c, std::vector<const Condition*>& out) {
  out.push_back(&c);
  for (const Condition& part : c.parts) walk_conditions(part, out);
}

std::vector<const Condition*> conditions_of(const environment::PackageRule& rule) {
  std::vector<const Step*> steps;
  walk_steps(rule.steps, steps);
  std::vector<const Condition*> out;
  for (const Step* s : steps)
    if (s->when) walk_conditions(*s->when, out);
  return out;
}

std::string with_lib(std::string text, const std::string& lib) {
  for (size_t at = text.find("{lib}"); at != std::string::npos; at = text.find("{lib}", at + lib.size()))
    text.replace(at, 5, lib);
  return text;
}

// The names a place of a load looks for: its own, or the step's as the run filled them in.
std::vector<std::string> place_names(const Place& at, const OwnLoad& l) {
  if (at.names.empty()) return l.names;
  std::vector<std::string> out;
  for (const std::string& n : at.names) out.push_back(with_lib(n, l.lib));
  return out;
}

bool matches(const std::vector<std::string>& names, const std::string& file) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return ::fnmatch(n.c_str(), file.c_str(), FNM_PERIOD) == 0; });
}

// The directories of the environment's files that one of `names` matches, paths holding one of
// `exclude` left out; in path order.
std::vector<std::string> copies(const Environment& env, const std::vector<std::string>& names,
                                const std::vector<std::string>& exclude) {
  std::vector<std::string> out;
  for (const environment::ElfRecord& e : env.elf_files) {
    std::string dir = fs::path(e.path).parent_path().string();
    if (!matches(names, fs::path(e.path).filename().string()) ||
        std::any_of(exclude.begin(), exclude.end(),
                    [&](const std::string& x) { return e.path.find(x) != std::string::npos; }) ||
        std::find(out.begin(), out.end(), dir) != out.end())
      continue;
    out.push_back(dir);
  }
  return out;
}

// The rule of `run` run again on the model with `variables` set, after what the moment runs first.
std::optional<RuleRun> rerun(const Context& ctx, const RuleRun& run, Variables variables) {
  if (!run.dist) return std::nullopt;
  const imports::ImportModel& model = ctx.model();
  imports::PackageLoads loads(ctx.env, model.package_loads().rules());
  loads.set_variables(std::move(variables));
  imports::ImportModel::Interpreter python = model.start();
  if (!python.found) return std::nullopt;
  model.import_requirements(python.process, python.caller, *run.dist);
  if (run.rule->moment != environment::Moment::kImport) model.import(python.process, python.caller, *run.dist);
  return loads.run(python.process, python.caller, *run.dist, run.rule->moment);
}

// The variables worth trying, in the order the run read them: each variable place's variables set
// to each directory that holds a copy of what it looks for; then PATH with a program's directory.
Variables candidates(const Context& ctx, const RuleRun& run) {
  Variables out;
  auto add = [&](const std::string& name, const std::string& value) {
    std::pair<std::string, std::string> v{name, value};
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
  };
  for (const OwnLoad& l : run.loads) {
    if (!l.step) continue;
    for (const Place& at : l.step->places) {
      if (at.kind != Place::Kind::kVariable) continue;
      for (const std::string& dir : copies(ctx.env, place_names(at, l), at.exclude)) {
        // The value whose `below` is the directory.
        if (!at.below.empty() && !dir.ends_with("/" + at.below)) continue;
        std::string value = at.below.empty() ? dir : dir.substr(0, dir.size() - at.below.size() - 1);
        for (const std::string& name : at.variables) add(name, value);
      }
    }
  }
  std::string path = imports::process_variable(ctx.env, "PATH").value_or("/bin:/usr/bin");
  for (const Condition* c : conditions_of(*run.rule)) {
    if (c->kind != Condition::Kind::kOnPath) continue;
    std::optional<std::string> here = imports::find_on_path(ctx.env, path, c->name);
    std::optional<std::string> there = imports::find_on_path(ctx.env, kProgramDirs, c->name);
    if (here && here->empty() && there && !there->empty())
      add("PATH", path + ":" + fs::path(*there).parent_path().string());
  }
  return out;
}

// A copy of `path`'s SONAME that a package of the environment owns, where `path` is no package's.
const environment::ElfRecord* wheel_copy(const Environment& env, const std::string& path) {
  if (env.owner(environment::normalize_path(path))) return nullptr;
  std::shared_ptr<const loader::OpenResult> opened = env.store->open(path);
  if (!opened || !opened->elf || !opened->elf->soname) return nullptr;
  for (const environment::ElfRecord& e : env.elf_files)
    if (e.path != path && e.opened && e.opened->elf && e.opened->elf->soname == opened->elf->soname &&
        env.owner(e.path))
      return &e;
  return nullptr;
}

std::string who(const RuleRun& run) {
  if (!run.dist) return fs::path(run.file).filename().string();
  return run.dist->name + " " + run.dist->version +
         (run.rule->fingerprint_file.empty() ? "" : " (" + run.rule->fingerprint_file + ")");
}

std::string moment_words(const environment::PackageRule& rule) {
  return rule.moment == environment::Moment::kImport ? "at import" : "at " + rule.use;
}

// The packages of the environment (but `provider`) whose files name `soname` in a NEEDED entry:
// those a copy loaded with RTLD_GLOBAL serves.
std::string served_packages(const Environment& env, const std::string& soname, const python::Distribution* provider) {
  std::set<std::string> names;
  for (const environment::ElfRecord& r : env.elf_files) {
    const auto& elf = r.opened ? r.opened->elf : nullptr;
    if (!elf || std::find(elf->needed.begin(), elf->needed.end(), soname) == elf->needed.end()) continue;
    for (const python::Distribution* d : r.owners)
      if (d != provider) names.insert(d->name);
  }
  return support::join_some({names.begin(), names.end()});
}

// The warning for a copy `l` opened globally ahead of `wheel`, with the variable that makes the
// package take the wheel's copy instead, tried on the model.
Finding ahead_of_wheel(const Context& ctx, const RuleRun& run, const OwnLoad& l, const environment::ElfRecord& wheel) {
  const Environment& env = ctx.env;
  const python::Distribution* provider = env.owner(wheel.path);
  std::string soname(*wheel.opened->elf->soname);
  Finding f;
  f.code = Code::kRuntimeLibraryMissing;
  f.severity = Severity::kWarning;
  f.file = environment::normalize_path(run.file);
  if (run.dist) f.package = run.dist->name;
  f.library = soname;
  f.message = who(run) + " loads " + l.path + " (" + env.owner_label(l.path) + ", found by " + l.found_by +
              ") with RTLD_GLOBAL " + moment_words(*run.rule) + ", not " + provider->name + "'s " + wheel.path +
              ": every later need of " + soname + " in the process is served by it";
  std::string served = served_packages(env, soname, provider);
  std::string h =
      "the first copy of a SONAME loaded serves it to the whole process, and " + who(run) + " looks in " + l.found_by +
      " before the wheels, so every later user of " + soname + (served.empty() ? "" : " (" + served + "'s libraries)") +
      " gets that build, which may be another version than " + provider->name + " " + provider->version + "'s";
  std::string dir = fs::path(wheel.path).parent_path().string();
  for (const Place& at : l.step->places) {
    if (at.kind != Place::Kind::kVariable || !at.below.empty()) continue;
    for (const std::string& name : at.variables) {
      std::optional<RuleRun> again = rerun(ctx, run, {{name, dir}});
      if (!again || !again->decided || again->end != RuleRun::End::kDone) continue;
      auto same = std::find_if(again->loads.begin(), again->loads.end(),
                               [&](const OwnLoad& x) { return x.step == l.step && x.lib == l.lib && x.object >= 0; });
      if (same != again->loads.end() && environment::normalize_path(same->path) == wheel.path) {
        f.hint = h + "; set " + name + "=" + dir + " before starting Python, and it loads the wheel's copy";
        return f;
      }
    }
  }
  f.hint = h;
  return f;
}

}  // namespace package_load_fixes
}  // namespace

using namespace package_load_fixes;

bool reads_variables(const environment::PackageRule& rule) {
  std::vector<const Step*> steps;
  walk_steps(rule.steps, steps);
  for (const Step* s : steps)
    for (const Place& at : s->places)
      if (at.kind == Place::Kind::kVariable) return true;
  for (const Condition* c : conditions_of(rule))
    if (c->kind == Condition::Kind::kOnPath) return true;
  return false;
}

std::string passing_variable(const Context& ctx, const RuleRun& run) {
  for (const auto& [name, value] : candidates(ctx, run)) {
    std::optional<RuleRun> again = rerun(ctx, run, {{name, value}});
    if (again && again->decided && again->end == RuleRun::End::kDone) return name + "=" + value;
  }
  return "";
}

std::optional<Cause> missing_recorded_copy(const Context& ctx, const RuleRun& run) {
  if (run.at < 0) return std::nullopt;
  const Environment& env = ctx.env;
  const std::string& lib = run.loads[run.at].lib;
  for (int i = 0; i <= run.at; ++i) {
    const OwnLoad& l = run.loads[i];
    if (l.lib != lib || !l.path.empty() || !l.step) continue;
    for (const Place& at : l.step->places) {
      if (at.kind != Place::Kind::kSysPath) continue;
      std::vector<std::string> names = place_names(at, l);
      for (const std::string& site : env.inventory.site_dirs)
        for (const std::string& rel : at.dirs) {
          fs::path dir = fs::path(site) / with_lib(rel, lib);
          for (const python::Distribution& d : env.inventory.distributions)
            for (const python::RecordEntry& e : d.record)
              if (e.resolved.parent_path() == dir && matches(names, e.resolved.filename().string()) &&
                  !env.files.exists(e.resolved.string()))
                return Cause{Code::kRecordMissingFile, e.resolved.string(), std::nullopt, std::nullopt,
                             "it globs " + dir.string() + "/" + names.front() + ", where " + d.name + " " + d.version +
                                 "'s RECORD lists " + e.resolved.filename().string() + " but the file is missing"};
        }
    }
  }
  return std::nullopt;
}

std::string search_fix(const Context& ctx, const RuleRun& run, Finding& f) {
  if (run.at < 0 || !run.loads[run.at].step) return "";
  const Environment& env = ctx.env;
  const OwnLoad& l = run.loads[run.at];
  std::set<int> majors;  // of the CUDA wheels the environment has
  for (const environment::KnownLibrary& k : ctx.knowledge.libraries())
    if (k.cuda && env.inventory.find(k.package)) majors.insert(k.cuda);
  std::vector<std::string> wheels, variables;
  for (const Place& at : l.step->places) {
    for (const std::string& v : at.variables)
      if (std::find(variables.begin(), variables.end(), v) == variables.end()) variables.push_back(v);
    if (at.kind != Place::Kind::kSysPath) continue;
    std::vector<std::string> names = place_names(at, l);
    for (const environment::KnownLibrary& k : ctx.knowledge.libraries())
      for (const std::string& rel : at.dirs)
        if (with_lib(rel, l.lib) == k.folder && matches(names, k.soname) && (majors.empty() || majors.count(k.cuda)) &&
            std::find(wheels.begin(), wheels.end(), k.package) == wheels.end())
          wheels.push_back(k.package);
  }
  std::string out;
  auto list = [](const std::vector<std::string>& items, const std::string& join) {
    std::string text;
    for (size_t i = 0; i < items.size(); ++i) text += (i ? join : "") + items[i];
    return text;
  };
  if (!wheels.empty()) {
    f.ask({advice::IndexInstall{run.dist, wheels.front()}});
    return "install " + list(wheels, " or ") + ", whose folder it searches";
  }
  if (!variables.empty()) return "set " + list(variables, " or ") + " to a directory that holds " + l.names.front();
  return out;
}

std::vector<Finding> global_copy_findings(const Context& ctx, const RuleRun& run) {
  std::vector<Finding> out;
  if (run.end != RuleRun::End::kDone || !run.decided) return out;
  for (const OwnLoad& l : run.loads) {
    bool placed = l.place_kind == Place::Kind::kVariable || l.place_kind == Place::Kind::kPath ||
                  l.place_kind == Place::Kind::kLdconfig;
    if (!l.global || l.object < 0 || l.path.empty() || !l.step || !placed) continue;
    if (const environment::ElfRecord* wheel = wheel_copy(ctx.env, l.path))
      out.push_back(ahead_of_wheel(ctx, run, l, *wheel));
  }
  return out;
}

}  // namespace envdoctor::checks
