#include "queries/why.h"

#include <algorithm>
#include <filesystem>

#include "checks/run.h"
#include "environment/knowledge.h"
#include "python/metadata_file.h"

namespace envdoctor::queries {

using checks::CheckRun;
using checks::CheckSettings;
using checks::Code;
using checks::Edge;
using checks::Finding;
using checks::run_checks;
using checks::Severity;

using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;
using environment::normalize_path;

namespace fs = std::filesystem;

namespace {

OwnedPath owned(const Environment& env, const std::string& path) { return {path, env.owner_label(path)}; }

bool names(const std::string& needed, const std::string& name) {
  return needed == name || fs::path(needed).filename() == name;
}

// Whether two paths are one file (a link and its target, /lib and /usr/lib): by the store's identity.
bool same_file(const Environment& env, const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (a.empty() || b.empty()) return false;
  auto x = env.store->open(a), y = env.store->open(b);
  return x->id != loader::FileId{} && x->id.dev == y->id.dev && x->id.ino == y->id.ino;
}

// Whether the need `e` is a need of what was asked: of the name, or (a path asked) resolved to
// that very file under whatever name (a symlink libcudart.so.12 -> libcudart.so.13 asked by path).
bool asks_for(const Environment& env, const Edge& e, const std::string& name, const std::optional<OwnedPath>& asked) {
  return names(e.needed, name) || (asked && !e.resolved.empty() && same_file(env, e.resolved, asked->path));
}

WhyLibrary explain_library(const Environment& env, const std::vector<Edge>& edges, const std::string& name,
                           const std::optional<OwnedPath>& asked) {
  WhyLibrary out;
  out.name = name;
  out.asked_path = asked;
  std::set<std::string> copies = reachable_copies(env, name);
  // Where a need of it resolves is a copy the environment reaches, whatever its SONAME or the
  // search that found it (a RUNPATH into another package).
  for (const Edge& e : edges)
    if (names(e.needed, name) && !e.resolved.empty() &&
        std::none_of(copies.begin(), copies.end(), [&](const std::string& c) { return same_file(env, c, e.resolved); }))
      copies.insert(normalize_path(e.resolved));
  for (const std::string& c : copies) out.copies.push_back(owned(env, c));
  for (const Edge& e : edges) {
    if (!asks_for(env, e, name, asked)) continue;
    WhyLibrary::Need need{owned(env, e.consumer), e, {}};
    if (!e.resolved.empty())
      for (const std::string& c : copies)
        if (!same_file(env, c, e.resolved)) need.shadowed.push_back(owned(env, c));
    out.needed_by.push_back(std::move(need));
  }
  return out;
}

WhyPackage explain_package(const Environment& env, const std::vector<Edge>& edges, const python::Distribution& dist) {
  WhyPackage out{dist.name, dist.version, dist.metadata_dir.string(), {}, {}};
  std::set<std::string> own;
  for (const ElfRecord& r : env.elf_files)
    for (const python::Distribution* d : r.owners)
      if (d == &dist) own.insert(r.path);
  for (const std::string& f : own) {
    WhyPackage::File file{f, {}};
    for (const Edge& e : edges)
      if (e.consumer == f) file.needs.push_back(e);
    out.files.push_back(std::move(file));
  }
  for (const Edge& e : edges)
    if (own.count(e.resolved) && !own.count(e.consumer)) out.used_by[env.owner_label(e.consumer)].push_back(e);
  return out;
}

bool about_package(const Finding& f, const python::Distribution& dist) {
  if (f.package && python::normalize_name(*f.package) == dist.key()) return true;
  for (const std::string& p : f.packages)
    if (python::normalize_name(p) == dist.key()) return true;
  return false;
}

bool about_library(const Finding& f, const std::string& name, const std::optional<OwnedPath>& asked) {
  if (f.library && (*f.library == name || fs::path(*f.library).filename() == name)) return true;
  return asked && f.file == asked->path;
}

// A finding about a need `why` lists: its consumer's, about the library under the name that
// consumer asked for (the file asked by path, loaded as libcudart.so.12 where its SONAME says
// libcudart.so.13). What check reports as failing on it, why reports: they never disagree.
bool about_need(const Finding& f, const WhyLibrary& lib) {
  if (!f.library) return false;
  std::string asked_name = fs::path(*f.library).filename().string();
  return std::any_of(lib.needed_by.begin(), lib.needed_by.end(), [&](const WhyLibrary::Need& n) {
    return f.file == n.consumer.path && fs::path(n.edge.needed).filename() == asked_name;
  });
}

// The installed distributions whose requirements name `name`, which is not installed.
std::vector<std::string> requirers(const Environment& env, const std::string& name,
                                   std::vector<const python::Distribution*>* dists) {
  std::vector<std::string> out;
  std::string key = python::normalize_name(name);
  for (const python::Distribution& d : env.inventory.distributions)
    for (const python::Requirement& r : d.requirements_for(env.python.markers))
      if (python::normalize_name(r.name) == key) {
        out.push_back(d.name + " " + d.version + " (" + r.name + r.specifier + ")");
        dists->push_back(&d);
      }
  return out;
}

}  // namespace

bool WhyAnswer::will_not_load() const {
  for (const Finding& f : findings)
    if (f.severity == Severity::kError) return true;
  return false;
}

std::set<std::string> reachable_copies(const Environment& env, const std::string& name) {
  std::set<std::string> out;
  for (const ElfRecord& r : env.elf_files) {
    bool soname = r.opened->elf && r.opened->elf->soname && *r.opened->elf->soname == name;
    if (soname || fs::path(r.path).filename() == name) out.insert(r.path);
  }
  if (env.loader.cache) {
    auto flags = loader::cache_flags_for_machine(env.host_machine, env.host_class == ELFCLASS64);
    if (flags)
      if (auto hit = env.loader.cache->lookup(name, *flags, env.loader.hwcaps, env.loader.cache_hwcaps))
        out.insert(normalize_path(std::string(*hit)));
  }
  std::vector<std::string> dirs = loader::split_search_path(env.loader.ld_library_path, ":;", std::nullopt, env.loader);
  dirs.insert(dirs.end(), env.loader.default_dirs.begin(), env.loader.default_dirs.end());
  for (const std::string& d : dirs) {
    if (d.empty()) continue;
    // Through the store, which reads below --root and knows what a simulation removed.
    std::string p = loader::join_path(d, name);
    if (env.store->open(p)->status != loader::OpenResult::Status::kMissing) out.insert(normalize_path(p));
  }
  std::set<std::pair<dev_t, ino_t>> seen;
  std::set<std::string> unique;
  for (const std::string& path : out) {
    auto op = env.store->open(path);
    if (op->id == loader::FileId{} || seen.insert({op->id.dev, op->id.ino}).second) unique.insert(path);
  }
  return unique;
}

std::optional<WhyAnswer> explain_why(const Environment& env, const std::vector<Edge>& edges,
                                     const std::vector<Finding>& findings, const std::string& name,
                                     std::string* error) {
  WhyAnswer answer;
  if (const python::Distribution* dist = env.inventory.find(name)) {
    answer.package = explain_package(env, edges, *dist);
    for (const Finding& f : findings)
      if (about_package(f, *dist)) answer.findings.push_back(f);
    return answer;
  }
  std::vector<const python::Distribution*> requiring;
  if (std::vector<std::string> by = requirers(env, name, &requiring); !by.empty()) {
    answer.absent = WhyAbsent{name, std::move(by)};
    // What its absence breaks: the requirers' failures to find a library.
    for (const Finding& f : findings)
      for (const python::Distribution* d : requiring)
        if (f.code == Code::kMissingLibrary && about_package(f, *d)) answer.findings.push_back(f);
    return answer;
  }
  std::string library = name;
  std::optional<OwnedPath> asked;
  if (name.find('/') != std::string::npos) {
    std::string path = normalize_path(name);
    auto op = env.store->open(path);
    if (op->status != loader::OpenResult::Status::kOk) {
      *error = name + ": " + op->error;
      return std::nullopt;
    }
    library = op->elf->soname ? std::string(*op->elf->soname) : fs::path(path).filename().string();
    asked = owned(env, path);
  }
  answer.library = explain_library(env, edges, library, asked);
  // A name only findings know is still asked about: a library opened at run time that no file
  // provides (runtime-library-missing), a Debian package that owns a file a finding is about.
  std::vector<Finding> named;
  for (const Finding& f : findings)
    if (about_library(f, library, asked) ||
        (f.package && python::normalize_name(*f.package) == python::normalize_name(name)))
      named.push_back(f);
  if (answer.library->copies.empty() && answer.library->needed_by.empty() && !named.empty()) {
    answer.findings = std::move(named);
    return answer;
  }
  if (answer.library->copies.empty() && answer.library->needed_by.empty()) {
    *error = name + ": no package, library or file of that name in this environment";
    if (auto near = env.inventory.nearest_name(name)) *error += "; did you mean " + *near + "?";
    return std::nullopt;
  }
  for (const Finding& f : findings)
    if (about_library(f, library, asked) || about_need(f, *answer.library)) answer.findings.push_back(f);
  return answer;
}

std::optional<WhyAnswer> answer_why(const environment::Session& session, const std::string& name, std::string* error,
                                    const VetRun& vet) {
  // The same run of every check that `check` makes, so that `why` and `check` never disagree
  // about what will not load.
  CheckSettings settings;
  settings.gpu = session.node;
  CheckRun run = run_checks({*session.env, session.knowledge, session.tables, settings});
  if (vet) vet(settings, run);
  return explain_why(*session.env, run.edges, run.findings, name, error);
}

}  // namespace envdoctor::queries
