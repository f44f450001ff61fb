#include "checks/load_checks.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "checks/load_findings.h"
#include "checks/package_load_findings.h"
#include "checks/package_load_fixes.h"
#include "imports/python_process.h"
#include "loader/process.h"
#include "support/parallel.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using imports::footprint;
using imports::LoadGraph;
using loader::Process;

namespace {

// One import context: a package and its ELF files, with what checking it found and learnt.
struct ImportContext {
  const python::Distribution* dist;  // nullptr: files no package owns
  std::vector<const ElfRecord*> files;
  std::string key;  // the memo's key: the distribution's metadata directory
  std::vector<Finding> findings;
  // Which of `findings` a file's own load gave about that file (check_file): the ones that a
  // library nothing loads makes warnings (mark_unloaded_libraries).
  std::vector<size_t> own_loads;
  std::vector<std::string> imported;  // what the import's own steps loaded (preload, __init__ modules)
  LoadMemo::Context learnt;
  LoadGraph::Seen seen;
  std::optional<Process> process;  // what `import dist` left, where dist has rules of its own
};

// The interpreter as the main program, the base every import context starts from.
struct Base {
  Process process;
  int caller = -1;  // who opens the modules: the interpreter, by path (Process::dlopen)
  std::set<std::string> dirs;
};

// The steps of one run of the load checks, and what they share.
class LoadRun {
 public:
  explicit LoadRun(const Context& ctx) : ctx_(ctx), model_(ctx.model()), graph_(ctx.settings.edges) {}

  Base start_interpreter(std::vector<Finding>& findings);
  std::vector<ImportContext> plan_contexts() const;
  size_t reuse_or_import_each(const Base& base, std::vector<ImportContext>& contexts);
  LoadCheckResult merge(std::vector<Finding> findings, const std::vector<ImportContext>& contexts);
  void remember(const Base& base, std::vector<ImportContext>& contexts, size_t reused);
  // Which of merge()'s findings a file's own load gave about that file.
  const std::vector<size_t>& own_loads() const { return own_loads_; }
  // What the imports' own steps loaded (torch's preload, the modules of an __init__.py).
  const std::set<std::string>& imported() const { return imported_; }

 private:
  bool reuse(ImportContext& c);
  void import(const Base& base, ImportContext& c);
  void check_file(Process& context, int caller, const ElfRecord& file, ImportContext& c);
  void note(const Process& p, const std::vector<int>& objects, ImportContext* c);
  void file_done(size_t files);

  const Context& ctx_;
  LoadMemo* memo() const { return ctx_.settings.memo; }
  const imports::ImportModel& model_;
  LoadGraph graph_;
  bool no_interpreter_ = false;
  std::atomic<size_t> files_done_{0};
  std::atomic<size_t> loads_{0};
  std::vector<size_t> own_loads_;
  std::set<std::string> imported_;
};

std::vector<int> all_objects(const Process& p) {
  std::vector<int> all(p.objects().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return all;
}

Base LoadRun::start_interpreter(std::vector<Finding>& findings) {
  imports::ImportModel::Interpreter python = model_.start();
  Base base{std::move(python.process), -1, {}};
  const Process& p = base.process;
  no_interpreter_ = !python.found;  // none found (a root without one): modules load on their own
  if (python.found) {
    ++loads_;
    for (Finding& f : findings_for_load_errors(ctx_, p, p.errors(), false)) findings.push_back(std::move(f));
    if (python.loaded) note(p, all_objects(p), nullptr);
  }
  base.caller = p.objects().empty() ? -1 : 0;
  footprint(p, base.dirs);
  return base;
}

void LoadRun::note(const Process& p, const std::vector<int>& objects, ImportContext* c) {
  graph_.note(p, objects, c ? &c->seen : nullptr, c && memo() ? &c->learnt.noted : nullptr);
}

void LoadRun::file_done(size_t files) {
  size_t done = (files_done_ += files);
  if (ctx_.settings.on_file) ctx_.settings.on_file(done, ctx_.env.elf_files.size());
}

// The file dlopen'd into its context, which is then rolled back to where it was; a program is
// started as a main program of its own.
void LoadRun::check_file(Process& context, int caller, const ElfRecord& file, ImportContext& c) {
  ++c.learnt.loads;
  ++loads_;
  const environment::Environment& env = ctx_.env;
  loader::Verdict verdict = loader::verify(*file.opened, env.host_class, env.host_data, env.host_machine);
  if (verdict.kind != loader::Verdict::Kind::kAccept) {
    c.findings.push_back(rejected_file(ctx_, file, verdict));
    return;
  }
  if (file.executable) {
    Process p(env.loader, *env.store);
    p.load_main(file.path);
    if (!p.errors().empty()) c.findings.push_back(program_will_not_start(ctx_, p, p.errors().front()));
    note(p, all_objects(p), &c);
    if (memo()) footprint(p, c.learnt.dirs);
    return;
  }
  Process::Mark before = context.mark();
  Process::DlopenResult r = context.dlopen(file.path, false, caller);
  for (Finding& f : findings_for_load_errors(ctx_, context, r.errors, no_interpreter_)) {
    if (f.file == file.path) c.own_loads.push_back(c.findings.size());
    c.findings.push_back(std::move(f));
  }
  note(context, r.new_objects, &c);
  if (memo()) footprint(context, c.learnt.dirs);
  context.rollback(std::move(before));
}

// The releases an import context loads: the package and what it requires.
std::set<python::Distribution::Id> context_dists(const environment::Environment& env,
                                                 const python::Distribution* dist) {
  std::set<python::Distribution::Id> out;
  if (!dist) return out;
  out.insert(dist->release());
  for (const python::Distribution* d : env.requirement_closure(*dist)) out.insert(d->release());
  return out;
}

// One context per owning package, its files checked together; files nobody owns get the bare
// interpreter.
std::vector<ImportContext> LoadRun::plan_contexts() const {
  std::map<const python::Distribution*, std::vector<const ElfRecord*>> groups;
  for (const ElfRecord& r : ctx_.env.elf_files) groups[r.owners.empty() ? nullptr : r.owners.front()].push_back(&r);
  // A package whose import opens libraries itself is imported even where it has no file of its own.
  for (const python::Distribution& d : ctx_.env.inventory.distributions)
    if (!groups.count(&d) && model_.package_loads().rule_for(d, environment::Moment::kImport)) groups[&d];
  std::vector<ImportContext> out;
  for (auto& [dist, files] : groups) {
    ImportContext c{dist, std::move(files), dist ? dist->metadata_dir.string() : "", {}, {}, {}, {}, {}};
    for (const ElfRecord* f : c.files) c.learnt.files.push_back(f->path);
    if (memo()) c.learnt.dists = context_dists(ctx_.env, dist);  // only a simulation's memo asks
    out.push_back(std::move(c));
  }
  return out;
}

// A context the memo saw clean, with the same files and distributions, in directories that the
// change does not reach, gives the same findings (none) and resolutions: take them as they were.
bool LoadRun::reuse(ImportContext& c) {
  auto it = memo()->contexts.find(c.key);
  if (it == memo()->contexts.end() || !memo()->still_holds(it->second, c.learnt)) return false;
  graph_.add(it->second.noted);
  loads_ += it->second.loads;
  c.learnt = it->second;
  file_done(c.learnt.files.size());
  return true;
}

// The package imported for real (imports/python_process.h): what it requires first, what it
// opens itself at import (data/package_loads.json), the modules its __init__.py imports in order
// (each checked in the context of those before it, then joining it), then every other file of
// the package in that context.
void LoadRun::import(const Base& base, ImportContext& c) {
  Process context = base.process;
  std::vector<const ElfRecord*> first;
  std::vector<imports::RuleRun> own, required;
  std::set<const ElfRecord*> checked;
  if (c.dist) {
    loads_ += model_.import_requirements(context, base.caller, *c.dist, {}, &required);
    loads_ += model_.import_init(
        context, base.caller, *c.dist,
        [&](const ElfRecord& m) {
          first.push_back(&m);
          checked.insert(&m);
          check_file(context, base.caller, m, c);
          file_done(1);
        },
        &own);
  }
  for (const loader::LoadedObject& o : context.objects()) c.imported.push_back(o.path);
  for (const ElfRecord* file : c.files)
    if (!checked.count(file)) {
      check_file(context, base.caller, *file, c);
      file_done(1);
    }
  for (const imports::RuleRun& run : own) {
    if (std::optional<Finding> f = package_load_finding(ctx_, run)) c.findings.push_back(std::move(*f));
    for (Finding& w : global_copy_findings(ctx_, run)) c.findings.push_back(std::move(w));
  }
  // A requirement whose import raises: this package's import fails with it, before its modules.
  for (const imports::RuleRun& run : required)
    if (run.end == imports::RuleRun::End::kRaised && c.dist && !(first.empty() && c.files.empty())) {
      c.findings.push_back(requirement_raised(ctx_, run, *c.dist, first.empty() ? *c.files.front() : *first.front()));
      break;
    }
  if (memo()) {
    footprint(context, c.learnt.dirs);
    // A package's own loads glob directories on sys.path: a library added there changes the context.
    for (const python::Distribution::Id& id : c.learnt.dists)
      if (const python::Distribution* d = ctx_.env.inventory.find(id.key))
        for (const std::string& dir : model_.package_loads().directories(*d)) c.learnt.dirs.insert(dir);
  }
  c.learnt.clean = c.findings.empty();
  if (c.dist && model_.package_loads().has_rules(*c.dist)) c.process.emplace(std::move(context));
}

// In parallel, on every core; a context is reused only when the memo's run left nothing the
// change can reach in the interpreter's own loads.
size_t LoadRun::reuse_or_import_each(const Base& base, std::vector<ImportContext>& contexts) {
  bool may_reuse = memo() && memo()->filled && !memo()->reaches(base.dirs);
  std::atomic<size_t> reused{0};
  support::parallel_for(contexts.size(), [&](size_t i) {
    if (may_reuse && reuse(contexts[i])) ++reused;
    else import(base, contexts[i]);
  });
  return reused;
}

LoadCheckResult LoadRun::merge(std::vector<Finding> findings, const std::vector<ImportContext>& contexts) {
  LoadCheckResult result;
  result.findings = std::move(findings);
  for (const ImportContext& c : contexts) {
    for (size_t i : c.own_loads) own_loads_.push_back(result.findings.size() + i);
    imported_.insert(c.imported.begin(), c.imported.end());
    result.findings.insert(result.findings.end(), c.findings.begin(), c.findings.end());
  }
  result.resolutions = graph_.take_resolutions();
  result.edges = graph_.take_edges();
  result.loads = loads_;
  return result;
}

// What this run learnt, for the run after a simulated change.
void LoadRun::remember(const Base& base, std::vector<ImportContext>& contexts, size_t reused) {
  if (!memo()) return;
  std::map<std::string, LoadMemo::Context> learnt;
  for (ImportContext& c : contexts) learnt[c.key] = std::move(c.learnt);
  memo()->remember(ctx_.env, std::move(learnt), base.dirs, reused);
}

// The file behind `path` as the disk has it (a NEEDED entry often resolves to a link, the ELF
// index holds the file it names).
std::string identity(const environment::Environment& env, const std::string& path) {
  if (env.root.empty() && env.ownership) return env.ownership->canonical(path);  // a directory resolved once
  std::error_code ec;
  std::filesystem::path real = std::filesystem::weakly_canonical(env.host(path), ec);
  return ec ? env.host(path) : real.string();
}

// Whether a step opens `file`: a name it tries (a place's own, or the step's, its {lib} put in)
// `opens` it; a name that says no more than "lib" (TransformerEngine's lib*.so.*[0-9]) only in the
// directories of the step's sys_path places.
bool step_opens(const environment::Step& s, const std::string& file,
                const std::function<bool(const std::string&)>& opens) {
  auto filled = [&](std::string text) {
    for (size_t at = text.find("{lib}"); at != std::string::npos; at = text.find("{lib}", at + s.lib.size()))
      text.replace(at, 5, s.lib);
    return text;
  };
  std::string dir = std::filesystem::path(file).parent_path().string();
  auto in_places = [&]() {
    for (const environment::Place& at : s.places)
      if (at.kind == environment::Place::Kind::kSysPath)
        for (const std::string& rel : at.dirs)
          if (dir.ends_with("/" + filled(rel))) return true;
    return false;
  };
  auto name_opens = [&](const std::string& name) {
    std::string n = filled(name);
    return n.find_first_of("{*?[") > 3 ? opens(n) : opens(n) && in_places();
  };
  if (std::any_of(s.names.begin(), s.names.end(), name_opens)) return true;
  for (const environment::Place& at : s.places)
    if (std::any_of(at.names.begin(), at.names.end(), name_opens)) return true;
  return false;
}

// Whether a library a package of the environment opens by itself (data/package_loads.json's
// rules of an installed package, and every opener rule) could be `file`: a name it tries, {lib} put
// in, up to its first other value or glob character, begins the file's name (step_opens).
bool opened_at_run_time(const Context& ctx, const std::string& file) {
  std::string base = std::filesystem::path(file).filename().string();
  auto opens = [&](const std::string& name) { return base.starts_with(name.substr(0, name.find_first_of("{*?["))); };
  for (const environment::PackageRule& rule : ctx.knowledge.package_rules().rules) {
    bool installed =
        rule.packages.empty() || std::any_of(rule.packages.begin(), rule.packages.end(),
                                             [&](const std::string& p) { return ctx.env.inventory.find(p); });
    if (!installed) continue;
    for (const auto& [list, items] : rule.lists)
      for (const environment::ListItem& item : items)
        for (std::string name : item.names) {
          for (size_t at = name.find("{lib}"); at != std::string::npos; at = name.find("{lib}"))
            name.replace(at, 5, item.lib);
          if (opens(name)) return true;
        }
    if (environment::any_step(rule.steps, [&](const environment::Step& s) { return step_opens(s, file, opens); }))
      return true;
  }
  return false;
}

// The errors a shared library's own load gives about it (`own_loads`: dlopen'd alone, not in an
// import model's step such as torch's preload) fail no import or program of this environment when
// no rule of data/package_loads.json opens it, Python imports no module from it, and
// either everything that loads it does so without an error about it (scipy's vendored
// libgfortran, loaded after the libquadmath it cannot find alone), or nothing loads it and
// data/plugins.json says only a request opens it (cuFile's RDMA plugin, NVSHMEM's bootstraps), or a
// rule of data/package_loads.json that falls back without it (ONNX Runtime's CUDA provider). A
// library nothing loads that no row names keeps its errors: its package may open it itself at
// import (ctypes), which the model cannot see. They are warnings, in the loader's words, for
// whoever opens the library, with no command to run.
void mark_unloaded_libraries(const Context& ctx, const imports::ResolutionMap& resolutions,
                             const std::set<std::string>& imported, const std::vector<size_t>& own_loads,
                             std::vector<Finding>& findings) {
  const environment::Environment& env = ctx.env;
  // The candidates first, from what each finding and file say: in a clean environment there are
  // none, and no path is made canonical.
  std::vector<std::pair<size_t, const ElfRecord*>> candidates;
  for (size_t i : own_loads) {
    const Finding& f = findings[i];
    if (f.severity != Severity::kError ||
        (f.code != Code::kMissingLibrary && f.code != Code::kMissingVersion && f.code != Code::kUndefinedSymbol))
      continue;
    auto record = std::lower_bound(env.elf_files.begin(), env.elf_files.end(), f.file,
                                   [](const ElfRecord& r, const std::string& p) { return r.path < p; });
    if (record != env.elf_files.end() && record->path == f.file && !record->extension_module && !record->executable &&
        (!opened_at_run_time(ctx, f.file) || falls_back_without(ctx, *record)))
      candidates.emplace_back(i, &*record);
  }
  if (candidates.empty()) return;
  std::set<std::string> loaded, failing;
  for (const std::string& path : imported) loaded.insert(identity(env, path));
  for (const auto& [soname, paths] : resolutions)
    for (const auto& [path, consumers] : paths) loaded.insert(identity(env, path));
  std::set<size_t> own(own_loads.begin(), own_loads.end());
  for (size_t i = 0; i < findings.size(); ++i)
    if (!own.count(i) && findings[i].severity == Severity::kError && !findings[i].file.empty())
      failing.insert(identity(env, findings[i].file));
  for (const auto& [i, record] : candidates) {
    Finding& f = findings[i];
    std::string id = identity(env, f.file);
    if (failing.count(id)) continue;
    std::string name = std::filesystem::path(f.file).filename().string();
    std::string why;
    if (loaded.count(id)) {
      why = "what loads " + name + " here loads it without this error (what " + name +
            " needs is loaded first); loaded on its own, it fails with these words";
    } else if (const environment::PackageRule* rule = falls_back_without(ctx, *record)) {
      const std::string& who = record->owners.front()->name;
      why = "nothing in this environment loads " + name +
            " unasked: " + (rule->use.empty() ? "import " + who : rule->use) + " opens it, and " + who +
            " goes on without it where it does not load (silent-fallback)";
    } else if (const environment::Plugin* plugin =
                   record->owners.empty() ? nullptr : ctx.knowledge.plugin(record->owners.front()->key(), f.file)) {
      why = "nothing in this environment loads " + name + " unasked: " + plugin->why +
            "; where that is asked for, it fails with these words";
    } else {
      continue;
    }
    f.severity = Severity::kWarning;
    f.put_first(why);
    // Nothing here fails for it: no command is offered (installing what a plugin for another CUDA
    // needs would add that CUDA's runtime to the environment); the hint says what would provide it.
    f.withhold_command();
  }
}

}  // namespace

LoadCheckResult check_loads(const Context& ctx) {
  LoadRun run(ctx);
  std::vector<Finding> findings;
  Base base = run.start_interpreter(findings);
  std::vector<ImportContext> contexts = run.plan_contexts();
  size_t reused = run.reuse_or_import_each(base, contexts);
  LoadCheckResult result = run.merge(std::move(findings), contexts);
  for (ImportContext& c : contexts)
    if (c.process) result.processes.emplace(c.dist, std::move(*c.process));
  mark_unloaded_libraries(ctx, result.resolutions, run.imported(), run.own_loads(), result.findings);
  run.remember(base, contexts, reused);
  return result;
}

}  // namespace envdoctor::checks
