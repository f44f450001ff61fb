#include "checks/load_checks.h"

#include "support/parallel.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include "advice/install.h"
#include "checks/load_findings.h"
#include "imports/extension_load.h"
#include "imports/python_process.h"
#include "loader/process.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;
using environment::normalize_path;
using python::is_python_c_api_symbol;

namespace fs = std::filesystem;
using loader::LoadError;
using loader::Process;

namespace {

// One NEEDED entry of one object, as resolved in one load: the consumer and the target by their
// parsed file and a hash of the path they were opened by, the dependency by its index, and the
// directory, rule and first loader that the edge would name.
struct NoteKey {
  const void* consumer_file;
  size_t consumer_path;
  size_t dep;
  const void* target_file;
  size_t target_path;
  size_t source;
  size_t first_loader_path;
  int rules;
  bool operator==(const NoteKey&) const = default;
  struct Hash {
    size_t operator()(const NoteKey& k) const {
      size_t h = k.consumer_path;
      for (size_t v : {reinterpret_cast<size_t>(k.consumer_file), k.dep, reinterpret_cast<size_t>(k.target_file),
                       k.target_path, k.source, k.first_loader_path, static_cast<size_t>(k.rules)})
        h = (h ^ v) * 0x100000001b3ULL + (h >> 29);
      return h;
    }
  };
};

class LoadChecker {
 public:
  LoadChecker(const Environment& env, const Knowledge& knowledge, const ProgressFn& on_file, LoadMemo* memo, bool edges)
      : env_(env), knowledge_(knowledge), model_(env), on_file_(on_file), memo_(memo), want_edges_(edges) {}

  LoadCheckResult run();

 private:
  // One import context: a package and its ELF files, with what checking it found and learnt.
  struct Context {
    const python::Distribution* dist;  // nullptr: files no package owns
    std::vector<const ElfRecord*> files;
    std::string key;  // the memo's key: the distribution's metadata directory
    std::vector<Finding> findings;
    LoadMemo::Context learnt;
    // The resolutions noted so far: the files of a package share most of their closure, and a
    // resolution seen once needs no second note.
    std::unordered_set<NoteKey, NoteKey::Hash> noted;
  };
  Process base_process(std::vector<Finding>& findings);
  void check_file(Process& context, int caller, const ElfRecord& file, Context& c);
  void record(const Process& p, const std::vector<LoadError>& errors, std::vector<Finding>& findings);
  bool scope_misses_driver_library(const Process& p, int object) const;
  Finding rejected_file(const ElfRecord& file, const loader::Verdict& verdict) const;
  Finding program_finding(const Process& p, const LoadError& e) const;
  std::string program_hint(const Finding& f, const LoadError& e) const;
  void note_resolutions(const Process& p, const std::vector<int>& objects, Context* c = nullptr);

  std::vector<Context> plan() const;
  bool reuse(Context& c);
  void load(const Process& base, int caller, Context& c);
  void remember(std::vector<Context>& contexts, std::set<std::string> base_dirs, size_t reused);

  const Environment& env_;
  const Knowledge& knowledge_;
  imports::ImportModel model_;
  const ProgressFn& on_file_;
  LoadMemo* memo_;
  bool want_edges_;
  bool no_interpreter_ = false;
  std::atomic<size_t> files_done_{0};
  std::mutex mu_;
  ResolutionMap resolutions_;
  // By (consumer, needed), asked with views: every noted resolution asks, few add.
  struct EdgeKeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      using Views = std::pair<std::string_view, std::string_view>;
      return Views(a.first, a.second) < Views(b.first, b.second);
    }
  };
  std::map<std::pair<std::string, std::string>, Edge, EdgeKeyLess> edges_;
  std::atomic<size_t> loads_{0};
  // Keeps the edge that `make` builds if it ranks before the one kept for (consumer, needed);
  // callers hold mu_.
  template <typename MakeEdge>
  void keep_edge(const std::string& consumer, const std::string& needed, const std::string& resolved, loader::Rule rule,
                 const std::string& source, MakeEdge make);
};

// One NEEDED entry met in several import contexts may resolve differently in each (already
// loaded in one, found by a search in another). Threads reach it in any order, so the edge kept
// is chosen by its content, never by arrival: a search that found the library, then a match with
// an already loaded object, then a failure; ties by path and directory. `why` and `snapshot` then
// say the same thing on every run.
template <typename MakeEdge>
void LoadChecker::keep_edge(const std::string& consumer, const std::string& needed, const std::string& resolved,
                            loader::Rule rule, const std::string& source, MakeEdge make) {
  auto rank = [](loader::Rule rule, const std::string& resolved, const std::string& source) {
    int kind = rule == loader::Rule::kNotFound ? 2 : rule == loader::Rule::kLoaded ? 1 : 0;
    return std::tuple<int, const std::string&, const std::string&>(kind, resolved, source);
  };
  auto it = edges_.find(std::pair<std::string_view, std::string_view>(consumer, needed));
  if (it == edges_.end()) {
    edges_.emplace(std::make_pair(consumer, needed), make());
  } else if (rank(rule, resolved, source) < rank(it->second.rule, it->second.resolved, it->second.source)) {
    it->second = make();
  }
}

Process LoadChecker::base_process(std::vector<Finding>& findings) {
  imports::ImportModel::Interpreter python = model_.start();
  if (!python.found) {  // no interpreter found (a root without one): modules load on their own
    no_interpreter_ = true;
    return std::move(python.process);
  }
  ++loads_;
  const Process& p = python.process;
  record(p, p.errors(), findings);
  if (python.loaded) {
    std::vector<int> all(p.objects().size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    note_resolutions(p, all);
  }
  return std::move(python.process);
}

// Every directory a process's loads opened a file in or searched, as spelled and resolved.
void footprint(const Process& p, std::set<std::string>& dirs) {
  auto add = [&](const std::string& path) {
    if (path.empty() || path[0] != '/') return;
    dirs.insert(fs::path(normalize_path(path)).parent_path().string());
  };
  for (const loader::LoadedObject& o : p.objects()) {
    add(o.path);
    for (const loader::Resolution& r : o.deps)
      for (const loader::Attempt& a : r.attempts) add(a.path);
  }
}

void LoadChecker::note_resolutions(const Process& p, const std::vector<int>& objects, Context* c) {
  // What each NEEDED entry resolved to, worked out outside the lock, which every thread takes for
  // each file it checks. A file's check notes its whole new closure, and the files of a package
  // share most of it: a resolution its context noted before is skipped, by a key made of what
  // decides the edge (hashes of the spellings, with the parsed files' identities), before any
  // path is normalised or any edge is built.
  struct Noted {
    const loader::Resolution* r;
    std::string consumer;
    std::string resolved;
    std::string source;
    std::string soname;  // of the library found; "" when not found
  };
  std::vector<Noted> noted;
  std::vector<size_t> path_hash(p.objects().size(), 0);
  auto hash_of = [&](int i) {
    if (!path_hash[i]) path_hash[i] = std::hash<std::string>{}(p.objects()[i].path) | 1;
    return path_hash[i];
  };
  // A library is the target of many NEEDED entries of one closure (libc of nearly all): its
  // path is normalised once.
  std::vector<std::optional<std::string>> normal(p.objects().size());
  auto normal_of = [&](int i) -> const std::string& {
    if (!normal[i]) normal[i] = normalize_path(p.objects()[i].path);
    return *normal[i];
  };
  for (int i : objects) {
    const auto& o = p.objects()[i];
    std::string consumer;
    for (size_t k = 0; k < o.deps.size(); ++k) {
      const loader::Resolution& r = o.deps[k];
      const loader::LoadedObject* target = r.object >= 0 ? &p.objects()[r.object] : nullptr;
      int first = target && r.rule == loader::Rule::kLoaded ? target->loader : -1;
      // Without edges only what resolves to a file is noted, and only by what it resolves to.
      if (!target && !want_edges_) continue;
      if (c) {
        NoteKey key{o.elf.get(),
                    hash_of(i),
                    k,
                    target ? target->elf.get() : nullptr,
                    target ? hash_of(r.object) : 0,
                    want_edges_ ? std::hash<std::string>{}(r.source) : 0,
                    want_edges_ && first >= 0 ? hash_of(first) : 0,
                    want_edges_ ? static_cast<int>(r.rule) * 256 + (target ? static_cast<int>(target->rule) : 0) : 0};
        if (!c->noted.insert(key).second) continue;
      }
      if (consumer.empty()) consumer = normal_of(i);
      Noted n{&r, consumer, "", r.source, ""};
      if (target) {
        n.resolved = normal_of(r.object);
        // Already loaded: say who loaded it first and how that search found it.
        if (first >= 0 && want_edges_)
          n.source = "(first loaded by " + normal_of(first) + ", found by " + loader::rule_name(target->rule) + ")";
        n.soname = target->elf && target->elf->soname ? std::string(*target->elf->soname) : r.name;
      }
      noted.push_back(std::move(n));
    }
  }
  if (noted.empty()) return;
  LoadMemo::Context* out = c && memo_ ? &c->learnt : nullptr;
  auto edge_of = [](const Noted& n) {
    return Edge{n.consumer, n.r->name, n.resolved, n.r->rule, n.source, n.r->attempts};
  };
  std::lock_guard lock(mu_);
  for (Noted& n : noted) {
    if (!n.soname.empty()) {
      resolutions_[n.soname][n.resolved].insert(n.consumer);
      if (out) out->resolutions[n.soname][n.resolved].insert(n.consumer);
    }
    if (!want_edges_) continue;
    if (out) out->edges.push_back(edge_of(n));
    keep_edge(n.consumer, n.r->name, n.resolved, n.r->rule, n.source, [&] { return edge_of(n); });
  }
}

void LoadChecker::record(const Process& p, const std::vector<LoadError>& errors, std::vector<Finding>& findings) {
  for (const LoadError& e : errors) {
    // Without an interpreter to load them into, the C API's symbols are not a module's problem.
    if (e.kind == LoadError::Kind::kUndefinedSymbol && no_interpreter_ && is_python_c_api_symbol(e.symbol)) continue;
    // A real load stops at the missing library; the symbols it would have provided are not a
    // second problem of the object that needed it.
    if (e.kind == LoadError::Kind::kUndefinedSymbol && e.object >= 0) {
      const auto& deps = p.objects()[e.object].deps;
      if (std::any_of(deps.begin(), deps.end(), [](const loader::Resolution& r) { return r.object < 0; })) continue;
      // The NVIDIA driver's libraries are missing only where the driver is (checks/cuda/driver_libraries.h):
      // a symbol that binds nowhere in a scope that lacks one would bind to it where it is there.
      if (scope_misses_driver_library(p, e.object)) continue;
    }
    findings.push_back(finding_for_load_error(env_, knowledge_, p, e));
  }
}

// Whether the lookup scope of object `object` (the global scope and its dlopen's local one, glibc
// elf/dl-open.c) lacks a library of the NVIDIA driver that one of its objects needs.
bool LoadChecker::scope_misses_driver_library(const Process& p, int object) const {
  const auto& objects = p.objects();
  auto misses = [&](int i) {
    return std::any_of(objects[i].deps.begin(), objects[i].deps.end(),
                       [&](const loader::Resolution& r) { return r.object < 0 && knowledge_.driver_library(r.name); });
  };
  for (size_t i = 0; i < objects.size(); ++i)
    if (objects[i].global && misses(static_cast<int>(i))) return true;
  int root = objects[object].local_root;
  if (root < 0) return false;
  return std::any_of(objects[root].searchlist.begin(), objects[root].searchlist.end(), misses);
}

// A file the loader refuses before it maps anything, as `import` (dlopen by path) reports it.
Finding LoadChecker::rejected_file(const ElfRecord& file, const loader::Verdict& verdict) const {
  Finding f;
  f.severity = Severity::kError;
  f.file = file.path;
  if (const python::Distribution* d = env_.owner(file.path)) f.package = d->name;
  switch (verdict.kind) {
    case loader::Verdict::Kind::kOtherClass:
      // elf/dl-load.c, _dl_map_object: the class the loader is not.
      f.code = Code::kWrongElfClass;
      f.message = file.path +
                  ": wrong ELF class: " + elf::elf_class_name(env_.host_class == ELFCLASS64 ? ELFCLASS32 : ELFCLASS64);
      f.take(advice::invalid_file(env_, file.path));
      f.hint =
          "a " + std::string(env_.host_class == ELFCLASS64 ? "32" : "64") + "-bit build cannot load here: " + f.hint;
      break;
    case loader::Verdict::Kind::kOtherMachine:
      // open_verify skips another machine's file silently; opened by path, nothing else is tried.
      f.code = Code::kWrongElfClass;
      f.message = file.path + ": cannot open shared object file: No such file or directory";
      f.take(advice::invalid_file(env_, file.path));
      f.hint = "a build for another machine cannot load here: " + f.hint;
      break;
    default:
      f.code = Code::kInvalidElf;
      f.message = file.path + ": " + verdict.message;
      f.take(advice::invalid_file(env_, file.path));
  }
  return f;
}

// A program shipped in the environment (torch/bin/test_jit) is not imported: its failure to start
// is a warning, in the words ld.so prints before it exits (elf/dl-error-skeleton.c fatal_error,
// elf/rtld.c print_missing_version). The run stops at the first fatal error, so one finding.
Finding LoadChecker::program_finding(const Process& p, const LoadError& e) const {
  Finding f = finding_for_load_error(env_, knowledge_, p, e);
  std::string program = p.objects().empty() ? e.path : p.objects()[0].path;
  f.code = Code::kProgramWillNotStart;
  f.severity = Severity::kWarning;
  f.file = normalize_path(program);
  if (const python::Distribution* d = env_.owner(f.file)) f.package = d->name;
  f.packages.clear();
  switch (e.kind) {
    case LoadError::Kind::kMissingVersion: f.message = program + ": " + e.message; break;
    case LoadError::Kind::kUndefinedSymbol: f.message = program + ": symbol lookup error: " + e.message; break;
    default: f.message = program + ": error while loading shared libraries: " + e.message;
  }
  f.hint = program_hint(f, e);
  return f;
}

// What a program's failure means for the environment (nothing for its imports) and what it lacks:
// "torch/bin/test_jit is a program, not a module: Python never loads it, so imports are
// unaffected; it will not start because libfoo.so is not shipped by torch".
std::string LoadChecker::program_hint(const Finding& f, const LoadError& e) const {
  std::string shown = f.file;
  for (const std::string& site : env_.inventory.site_dirs)
    if (f.file.starts_with(site + "/")) shown = f.file.substr(site.size() + 1);
  const python::Distribution* owner = env_.owner(f.file);
  std::string owner_name = owner ? owner->name : "any package";
  std::string because;
  bool reinstall_helps = true;  // reinstalling the owner brings back what it ships, never what it does not
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary: {
      bool shipped =
          owner && std::any_of(owner->record.begin(), owner->record.end(),
                               [&](const python::RecordEntry& r) { return r.resolved.filename() == e.library; });
      because = shipped ? e.library + ", which " + owner_name + " ships, is not on its search path"
                        : e.library + " is not shipped by " + owner_name;
      reinstall_helps = shipped;
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
  if (reinstall_helps && !f.hint.empty()) hint += "; " + f.hint;
  return hint;
}

// The file dlopen'ed into its context, which is then rolled back to where it was.
void LoadChecker::check_file(Process& context, int caller, const ElfRecord& file, Context& c) {
  std::vector<Finding>& findings = c.findings;
  LoadMemo::Context& out = c.learnt;
  ++out.loads;
  ++loads_;
  loader::Verdict verdict = loader::verify(*file.opened, env_.host_class, env_.host_data, env_.host_machine);
  if (verdict.kind != loader::Verdict::Kind::kAccept) {
    findings.push_back(rejected_file(file, verdict));
    return;
  }
  if (file.executable) {
    Process p(env_.loader, *env_.store);
    p.load_main(file.path);
    if (!p.errors().empty()) findings.push_back(program_finding(p, p.errors().front()));
    std::vector<int> all(p.objects().size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    note_resolutions(p, all, &c);
    if (memo_) footprint(p, out.dirs);
    return;
  }
  Process::Mark before = context.mark();
  Process::DlopenResult r = context.dlopen(file.path, false, caller);
  record(context, r.errors, findings);
  note_resolutions(context, r.new_objects, &c);
  if (memo_) footprint(context, out.dirs);
  context.rollback(std::move(before));
}

// The releases an import context loads: the package and what it requires.
std::set<python::Distribution::Id> context_dists(const Environment& env, const python::Distribution* dist) {
  std::set<python::Distribution::Id> out;
  if (!dist) return out;
  out.insert(dist->release());
  for (const python::Distribution* d : env.requirement_closure(*dist)) out.insert(d->release());
  return out;
}

// The import contexts: one per owning package, its files checked together; files nobody owns get
// the bare interpreter.
std::vector<LoadChecker::Context> LoadChecker::plan() const {
  std::map<const python::Distribution*, std::vector<const ElfRecord*>> groups;
  for (const ElfRecord& r : env_.elf_files) groups[r.owners.empty() ? nullptr : r.owners.front()].push_back(&r);
  std::vector<Context> out;
  for (auto& [dist, files] : groups) {
    Context c{dist, std::move(files), dist ? dist->metadata_dir.string() : "", {}, {}, {}};
    for (const ElfRecord* f : c.files) c.learnt.files.push_back(f->path);
    c.learnt.dists = context_dists(env_, dist);
    out.push_back(std::move(c));
  }
  return out;
}

// A context the memo saw clean, with the same files and distributions, in directories that the
// change does not reach, gives the same findings (none) and resolutions: take them as they were.
bool LoadChecker::reuse(Context& c) {
  auto it = memo_->contexts.find(c.key);
  if (it == memo_->contexts.end()) return false;
  const LoadMemo::Context& before = it->second;
  auto changed = [&](const python::Distribution::Id& id) { return memo_->changed_dists.count(id.key) != 0; };
  if (!before.clean || before.files != c.learnt.files || before.dists != c.learnt.dists ||
      std::any_of(c.learnt.dists.begin(), c.learnt.dists.end(), changed) || memo_->reaches(before.dirs))
    return false;
  {
    std::lock_guard lock(mu_);
    for (const Edge& e : before.edges) keep_edge(e.consumer, e.needed, e.resolved, e.rule, e.source, [&] { return e; });
    for (const auto& [soname, by_path] : before.resolutions)
      for (const auto& [path, consumers] : by_path)
        resolutions_[soname][path].insert(consumers.begin(), consumers.end());
  }
  loads_ += before.loads;
  c.learnt = before;
  size_t done = (files_done_ += c.learnt.files.size());
  if (on_file_) on_file_(done, env_.elf_files.size());
  return true;
}

// The package imported for real: what it requires first, torch's preload, the modules its
// __init__.py imports in order (each checked in the context of those before it, then joining it),
// then every other file of the package in that context.
void LoadChecker::load(const Process& base, int caller, Context& c) {
  Process context = base;
  std::vector<const ElfRecord*> first;
  if (c.dist) {
    loads_ += model_.import_requirements(context, caller, *c.dist);
    if (c.dist->key() == "torch") loads_ += model_.preload_torch(context, caller, *c.dist);
    first = model_.init_modules(*c.dist);
  }
  auto check = [&](const ElfRecord& file) {
    check_file(context, caller, file, c);
    size_t done = ++files_done_;
    if (on_file_) on_file_(done, env_.elf_files.size());
  };
  std::set<const ElfRecord*> checked;
  for (const ElfRecord* m : first) {
    if (checked.insert(m).second) check(*m);
    ++loads_;
    context.dlopen(m->path, false, caller);
  }
  for (const ElfRecord* file : c.files)
    if (!checked.count(file)) check(*file);
  if (memo_) {
    footprint(context, c.learnt.dirs);
    // torch's preload globs nvidia/*/lib on sys.path: a library added there changes the context.
    bool torch = std::any_of(c.learnt.dists.begin(), c.learnt.dists.end(),
                             [](const python::Distribution::Id& id) { return id.key == "torch"; });
    if (torch)
      for (const std::string& site : env_.inventory.site_dirs) c.learnt.dirs.insert(site + "/nvidia");
  }
  c.learnt.clean = c.findings.empty();
}

// What this run learnt, for the run after a simulated change: each context's directories, also
// under their resolved names, because a change may be spelled either way.
void LoadChecker::remember(std::vector<Context>& contexts, std::set<std::string> base_dirs, size_t reused) {
  std::map<std::string, std::string> canonical;
  auto both = [&](std::set<std::string>& dirs) {
    std::set<std::string> extra;
    for (const std::string& d : dirs) {
      auto [it, fresh] = canonical.try_emplace(d);
      if (fresh) {
        std::error_code ec;
        it->second = fs::weakly_canonical(env_.host(d), ec).string();
      }
      extra.insert(it->second);
    }
    dirs.insert(extra.begin(), extra.end());
  };
  memo_->contexts.clear();
  for (Context& c : contexts) {
    both(c.learnt.dirs);
    memo_->contexts[c.key] = std::move(c.learnt);
  }
  both(base_dirs);
  memo_->base_dirs = std::move(base_dirs);
  memo_->reused = reused;
  memo_->filled = true;
}

LoadCheckResult LoadChecker::run() {
  LoadCheckResult result;
  Process base = base_process(result.findings);
  // Python opens extension modules by path, so no caller's RPATH joins their search
  // (Process::dlopen); the interpreter stands for the caller.
  const int caller = base.objects().empty() ? -1 : 0;
  std::set<std::string> base_dirs;
  footprint(base, base_dirs);
  bool may_reuse = memo_ && memo_->filled && !memo_->reaches(base_dirs);

  std::vector<Context> contexts = plan();
  std::atomic<size_t> reused{0};
  support::parallel_for(contexts.size(), [&](size_t i) {
    if (may_reuse && reuse(contexts[i])) ++reused;
    else load(base, caller, contexts[i]);
  });

  for (Context& c : contexts) result.findings.insert(result.findings.end(), c.findings.begin(), c.findings.end());
  result.resolutions = std::move(resolutions_);
  for (auto& [key, edge] : edges_) result.edges.push_back(std::move(edge));
  result.loads = loads_;
  if (memo_) remember(contexts, std::move(base_dirs), reused);
  return result;
}

}  // namespace

bool LoadMemo::reaches(const std::set<std::string>& dirs) const {
  // A changed file matters to a directory it is in, or up to four levels below (glibc-hwcaps/
  // x86-64-v3/, tls/x86_64/x86_64/ are searched inside every directory).
  for (const std::string& changed : changed_paths) {
    fs::path dir = fs::path(changed).parent_path();
    for (int depth = 0; depth < 5 && !dir.empty(); ++depth, dir = dir.parent_path()) {
      if (dirs.count(dir.string())) return true;
      if (dir == dir.root_path()) break;
    }
  }
  return false;
}

LoadCheckResult check_loads(const Environment& env, const Knowledge& knowledge, const ProgressFn& on_file,
                            LoadMemo* memo, bool edges) {
  LoadChecker checker(env, knowledge, on_file, memo, edges);
  return checker.run();
}

}  // namespace envdoctor::checks
