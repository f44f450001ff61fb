#include "checks/load_checks.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "checks/hints.h"
#include "loader/process.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;
using loader::LoadError;
using loader::Process;

namespace {

// The object dlopen is called from: libpython when the interpreter links it (its RPATH joins
// the search of the module's dependencies), else the interpreter itself.
int python_caller(const Process& p, const python::PythonEnvironment& py) {
  for (size_t i = 0; i < p.objects().size(); ++i) {
    const auto& o = p.objects()[i];
    if (o.elf && o.elf->soname && !py.instsoname.empty() && *o.elf->soname == py.instsoname) return static_cast<int>(i);
  }
  return 0;
}

class LoadChecker {
 public:
  LoadChecker(const Environment& env, const Knowledge& knowledge, const ProgressFn& on_file)
      : env_(env), knowledge_(knowledge), on_file_(on_file) {
    for (const ElfRecord& r : env_.elf_files) {
      if (!r.extension_module) continue;
      for (const python::Distribution* d : r.owners) modules_[d].push_back(&r);
    }
  }

  LoadCheckResult run();

 private:
  Process base_process(std::vector<Finding>& findings);
  void import_package(Process& p, const python::Distribution& dist, int caller);
  void preload_torch(Process& p, const python::Distribution& torch, int caller);
  void check_file(const Process& context, int caller, const ElfRecord& file, std::vector<Finding>& findings);
  void record(const Process& p, const std::vector<LoadError>& errors, std::vector<Finding>& findings);
  void note_resolutions(const Process& p, const std::vector<int>& objects);

  const Environment& env_;
  const Knowledge& knowledge_;
  const ProgressFn& on_file_;
  std::atomic<size_t> files_done_{0};
  std::map<const python::Distribution*, std::vector<const ElfRecord*>> modules_;
  std::mutex mu_;
  ResolutionMap resolutions_;
  std::map<std::pair<std::string, std::string>, Edge> edges_;
  std::atomic<size_t> loads_{0};
};

Process LoadChecker::base_process(std::vector<Finding>& findings) {
  Process p(env_.loader, *env_.store);
  std::string exe = env_.python.real_executable.empty() ? env_.python.executable : env_.python.real_executable;
  ++loads_;
  if (p.load_main(exe)) {
    record(p, p.errors(), findings);
    std::vector<int> all(p.objects().size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    note_resolutions(p, all);
  } else {
    record(p, p.errors(), findings);
  }
  return p;
}

// What `import dist` leaves loaded: its extension modules, each dlopen'd RTLD_LOCAL. Their own
// failures are reported when their files are checked; here they only shape the context.
void LoadChecker::import_package(Process& p, const python::Distribution& dist, int caller) {
  if (dist.key() == "torch") preload_torch(p, dist, caller);
  auto it = modules_.find(&dist);
  if (it == modules_.end()) return;
  for (const ElfRecord* m : it->second) {
    ++loads_;
    p.dlopen(m->path, false, caller);
  }
}

// torch/__init__.py loads lib/libtorch_global_deps.so with RTLD_GLOBAL before its extension; if
// that fails for a missing CUDA library, it preloads every nvidia/*/lib library it can find on
// sys.path (RTLD_GLOBAL) and tries again.
void LoadChecker::preload_torch(Process& p, const python::Distribution& torch, int caller) {
  std::string deps;
  for (const python::RecordEntry& e : torch.record)
    if (e.resolved.filename() == "libtorch_global_deps.so") deps = e.resolved.string();
  if (deps.empty()) return;
  ++loads_;
  if (p.dlopen(deps, true, caller).object >= 0) return;
  for (const ElfRecord& r : env_.elf_files) {
    fs::path path(r.path);
    fs::path lib = path.parent_path();
    if (lib.filename() != "lib" || lib.parent_path().parent_path().filename() != "nvidia") continue;
    if (r.opened->status != loader::OpenResult::Status::kOk || !r.opened->elf->soname) continue;
    ++loads_;
    p.dlopen(r.path, true, caller);
  }
  ++loads_;
  p.dlopen(deps, true, caller);
}

void LoadChecker::note_resolutions(const Process& p, const std::vector<int>& objects) {
  std::lock_guard lock(mu_);
  for (int i : objects) {
    const auto& o = p.objects()[i];
    std::string consumer = normalize_path(o.path);
    for (const loader::Resolution& r : o.deps) {
      Edge edge{consumer, r.name, "", r.rule, r.source, r.attempts};
      if (r.object >= 0) {
        const auto& target = p.objects()[r.object];
        edge.resolved = normalize_path(target.path);
        // The rule that first found an object already loaded is the interesting one.
        if (r.rule == loader::Rule::kLoaded) edge.rule = target.rule;
        std::string soname = target.elf && target.elf->soname ? std::string(*target.elf->soname) : r.name;
        resolutions_[soname][edge.resolved].insert(consumer);
      }
      edges_.emplace(std::make_pair(consumer, r.name), std::move(edge));
    }
  }
}

void LoadChecker::record(const Process& p, const std::vector<LoadError>& errors, std::vector<Finding>& findings) {
  for (const LoadError& e : errors) {
    // A real load stops at the missing library; the symbols it would have provided are not a
    // second problem of the object that needed it.
    if (e.kind == LoadError::Kind::kUndefinedSymbol && e.object >= 0) {
      const auto& deps = p.objects()[e.object].deps;
      if (std::any_of(deps.begin(), deps.end(), [](const loader::Resolution& r) { return r.object < 0; })) continue;
    }
    findings.push_back(finding_for_load_error(env_, knowledge_, p, e));
  }
}

void LoadChecker::check_file(const Process& context, int caller, const ElfRecord& file, std::vector<Finding>& findings) {
  ++loads_;
  if (file.opened->status != loader::OpenResult::Status::kOk) {
    Finding f;
    f.code = "invalid-elf";
    f.severity = Severity::kError;
    f.file = file.path;
    if (const python::Distribution* d = env_.owner(file.path)) f.package = d->name;
    f.message = file.path + ": " + file.opened->error;
    f.hint = hint_for_invalid_file(env_, file.path);
    findings.push_back(std::move(f));
    return;
  }
  if (file.executable) {
    Process p(env_.loader, *env_.store);
    p.load_main(file.path);
    record(p, p.errors(), findings);
    std::vector<int> all(p.objects().size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    note_resolutions(p, all);
    return;
  }
  Process p = context;
  Process::DlopenResult r = p.dlopen(file.path, false, caller);
  record(p, r.errors, findings);
  note_resolutions(p, r.new_objects);
}

LoadCheckResult LoadChecker::run() {
  LoadCheckResult result;
  Process base = base_process(result.findings);
  int caller = python_caller(base, env_.python);

  // One import context per owning package; files nobody owns get the bare interpreter.
  std::map<const python::Distribution*, std::vector<const ElfRecord*>> groups;
  for (const ElfRecord& r : env_.elf_files) groups[r.owners.empty() ? nullptr : r.owners.front()].push_back(&r);
  std::vector<std::pair<const python::Distribution*, std::vector<const ElfRecord*>>> work(groups.begin(), groups.end());

  std::vector<std::vector<Finding>> found(work.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i; (i = next.fetch_add(1)) < work.size();) {
      Process context = base;
      if (const python::Distribution* dist = work[i].first) {
        for (const python::Distribution* dep : env_.requirement_closure(*dist)) import_package(context, *dep, caller);
        if (dist->key() == "torch") preload_torch(context, *dist, caller);
      }
      for (const ElfRecord* file : work[i].second) {
        check_file(context, caller, *file, found[i]);
        size_t done = ++files_done_;
        if (on_file_) on_file_(done, env_.elf_files.size());
      }
    }
  };
  size_t n = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), work.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();

  for (auto& f : found) result.findings.insert(result.findings.end(), f.begin(), f.end());
  result.resolutions = std::move(resolutions_);
  for (auto& [key, edge] : edges_) result.edges.push_back(std::move(edge));
  result.loads = loads_;
  return result;
}

}  // namespace

LoadCheckResult check_loads(const Environment& env, const Knowledge& knowledge, const ProgressFn& on_file) {
  LoadChecker checker(env, knowledge, on_file);
  return checker.run();
}

}  // namespace envdoctor::checks
