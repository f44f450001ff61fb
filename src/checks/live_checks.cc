#include "checks/live_checks.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "checks/cuda_checks.h"
#include "checks/cuda_inventory.h"
#include "checks/openmp.h"
#include "loader/object_store.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;

namespace {

// What the load model says about a mapped file, by inode: the kernel prints the path the file was
// opened by after resolving symbolic links (/usr/lib/x86_64-linux-gnu/libc.so.6 where the model
// says /lib/x86_64-linux-gnu/libc.so.6), so paths do not match, identities do.
std::map<ino_t, const Edge*> edges_by_inode(const LoadCheckResult& loads, loader::ObjectStore& store) {
  std::map<ino_t, const Edge*> out;
  std::set<std::string> seen;
  for (const Edge& e : loads.edges) {
    if (e.resolved.empty() || !seen.insert(e.resolved).second) continue;
    std::shared_ptr<const loader::OpenResult> opened = store.open(e.resolved);
    if (opened->status == loader::OpenResult::Status::kOk) out.try_emplace(opened->id.ino, &e);
  }
  return out;
}

std::string edge_text(const Edge& e) {
  return "NEEDED " + e.needed + " of " + e.consumer + ": " + loader::rule_name(e.rule) +
         (e.source.empty() ? "" : " " + e.source);
}

std::string how_found(const live::MappedFile& f, const Environment* env, const std::map<ino_t, const Edge*>& edges,
                      ino_t exe_ino) {
  if (f.ino == exe_ino) return "the program (/proc/PID/exe)";
  if (auto it = edges.find(f.ino); it != edges.end()) return edge_text(*it->second);
  if (env)
    if (const ElfRecord* r = env->elf(f.path); r && r->extension_module) return "imported (an extension module)";
  return "loaded at run time (dlopen by the program; not in the load model)";
}

Finding replaced_finding(const LiveObject& o, const live::MappedFile& f, ino_t now, int pid, const Environment* env) {
  Finding out;
  out.code = Code::kLibraryReplacedOnDisk;
  out.severity = Severity::kWarning;
  out.file = o.path;
  out.library = o.soname;
  if (env)
    if (const python::Distribution* d = env->owner(o.path)) out.package = d->name;
  if (o.deleted)
    out.message = o.path + " (deleted): process " + std::to_string(pid) +
                  " runs a file that was deleted after it was loaded (inode " + std::to_string(f.ino) + ")";
  else
    out.message = o.path + ": the path now holds another file (inode " + std::to_string(now) + "); process " +
                  std::to_string(pid) + " runs the one it loaded (inode " + std::to_string(f.ino) + ")";
  out.hint = "the process keeps running the old code and the next process loads what is on disk now: restart process " +
             std::to_string(pid) + " to run the installed files (a reinstall or upgrade under a running job does this)";
  return out;
}

Finding duplicate_finding(const std::string& soname, const std::vector<const LiveObject*>& copies, int pid,
                          const Environment* env) {
  Finding out;
  out.code = Code::kDuplicateLibrary;
  out.severity = Severity::kWarning;
  out.library = soname;
  out.file = copies.front()->path;
  std::string list;
  for (const LiveObject* o : copies) {
    list += (list.empty() ? "" : ", ") + o->path + (o->owner.empty() ? "" : " (" + o->owner + ")");
    if (env)
      if (const python::Distribution* d = env->owner(o->path)) out.packages.push_back(d->name);
  }
  if (env)
    if (const python::Distribution* d = env->owner(out.file)) out.package = d->name;
  out.message = std::to_string(copies.size()) + " copies of " + soname + " loaded in process " + std::to_string(pid) +
                ": " + list;
  out.hint =
      "each copy was loaded by its own path (dlopen of a full path matches no SONAME), so each keeps its own "
      "symbols and state, and a later NEEDED " +
      soname + " gets the first one; keep one copy, loaded by SONAME";
  return out;
}

// The first edge of the load model that resolves to `path`.
const Edge* edge_to(const LoadCheckResult& loads, const std::string& path) {
  for (const Edge& e : loads.edges)
    if (e.resolved == path) return &e;
  return nullptr;
}

}  // namespace

LiveExamination examine_process(const live::LiveProcess& process, const Environment* env, const LoadCheckResult* loads,
                                const Knowledge* knowledge, const std::string& python) {
  LiveExamination out;
  out.pid = process.pid;
  out.exe = process.exe;
  out.python = python;
  if (env) out.python_version = env->python.version_info.full_str();
  for (const std::string& var : process.environ)
    if (var.rfind("LD_LIBRARY_PATH=", 0) == 0) out.ld_library_path = var.substr(16);
  // The files are read as they are on disk now: the process's own view is gone for a deleted one.
  loader::ObjectStore local;
  loader::ObjectStore& store = env ? *env->store : local;
  std::map<ino_t, const Edge*> edges;
  if (loads) edges = edges_by_inode(*loads, store);
  struct stat exe_st {};
  ino_t exe_ino = stat(process.exe.c_str(), &exe_st) == 0 ? exe_st.st_ino : 0;

  std::vector<OpenmpRuntime> openmp;
  std::vector<CudaLibrary> cuda;
  for (const live::MappedFile& f : process.files) {
    // The kernel marks a mapping " (deleted)" when its inode lost its last link: an uninstall, and
    // also an install that renamed a new file over the path (what pip does). The path now tells
    // which. Inodes are compared, not devices: overlayfs shows the lower file system's device in
    // maps and its own in stat (fs/overlayfs/inode.c: ovl_getattr), for one and the same file.
    struct stat st {};
    bool exists = stat(f.path.c_str(), &st) == 0;
    ino_t now = exists ? st.st_ino : 0;
    std::shared_ptr<const loader::OpenResult> opened = exists ? store.open(f.path) : nullptr;
    bool elf_now = opened && opened->status == loader::OpenResult::Status::kOk;
    // A file is an ELF object when it is one on disk, or, gone or replaced, when it was mapped
    // executable (the loader maps an object's text r-x) under a library's or the program's name:
    // libffi's closures and JIT compilers map deleted temporary files and memfds executable too.
    bool named_as_object =
        fs::path(f.path).filename().string().find(".so") != std::string::npos || f.path == process.exe;
    if (!elf_now && !(f.executable && named_as_object)) continue;
    LiveObject o;
    o.path = f.path;
    o.replaced = exists && now != f.ino;
    o.deleted = f.deleted && !o.replaced;
    if (elf_now && opened->elf->soname) o.soname = std::string(*opened->elf->soname);
    if (env) o.owner = env->owner_label(f.path);
    o.found = how_found(f, env, edges, exe_ino);
    if (o.deleted || o.replaced) out.findings.push_back(replaced_finding(o, f, now, process.pid, env));
    const python::Distribution* owner = env ? env->owner(f.path) : nullptr;
    if (elf_now && !o.replaced && o.soname) {
      // What check's verdicts say of the file: an OpenMP runtime, a CUDA library of some major.
      if (std::optional<std::string> kind = openmp_runtime(*opened->elf))
        openmp.push_back({o.path, *o.soname, *kind, o.owner, {}, owner ? owner->name : ""});
      std::string source;
      if (int major = cuda_major_of(knowledge, *o.soname, owner, o.path, &source); major > 0 && major < 32)
        cuda.push_back({o.path, *o.soname, major, source, owner,
                        owner             ? owner->name
                        : o.owner.empty() ? "system"
                                          : o.owner});
      // Where check parts from the process: the model resolves this SONAME, never to this file.
      if (loads)
        if (auto it = loads->resolutions.find(*o.soname); it != loads->resolutions.end()) {
          bool predicted = false;
          for (const auto& [path, consumers] : it->second) {
            std::shared_ptr<const loader::OpenResult> p = store.open(path);
            predicted |= path == o.path || (p->status == loader::OpenResult::Status::kOk && p->id.ino == f.ino);
          }
          if (!predicted) {
            LiveDifference d{*o.soname, o.path, o.owner, {}, ""};
            for (const auto& [path, consumers] : it->second) d.predicted.push_back(path);
            if (const Edge* e = edge_to(*loads, d.predicted.front())) d.predicted_by = edge_text(*e);
            out.differences.push_back(std::move(d));
          }
        }
    }
    out.objects.push_back(std::move(o));
  }
  std::string here = "are loaded in process " + std::to_string(process.pid);
  if (std::optional<Finding> f = openmp_runtime_mix(openmp, here)) out.findings.push_back(std::move(*f));
  if (std::optional<Finding> f = cuda_majors_loaded(cuda, process.pid)) out.findings.push_back(std::move(*f));
  std::sort(out.differences.begin(), out.differences.end(), [](const LiveDifference& a, const LiveDifference& b) {
    return std::tie(a.soname, a.loaded) < std::tie(b.soname, b.loaded);
  });

  // Copies of one SONAME mapped together: files of another identity each.
  std::map<std::string, std::vector<const LiveObject*>> by_soname;
  for (const LiveObject& o : out.objects)
    if (o.soname) by_soname[*o.soname].push_back(&o);
  for (auto& [soname, copies] : by_soname)
    if (copies.size() > 1) {
      std::sort(copies.begin(), copies.end(),
                [](const LiveObject* a, const LiveObject* b) { return a->path < b->path; });
      out.findings.push_back(duplicate_finding(soname, copies, process.pid, env));
    }
  sort_and_dedupe(out.findings);
  return out;
}

bool LiveExamination::errors() const {
  for (const Finding& f : findings)
    if (f.severity == Severity::kError) return true;
  return false;
}

std::optional<LiveExamination> examine_pid(const std::string& pid_text, std::string* error) {
  int pid = 0;
  size_t used = 0;
  try {
    pid = std::stoi(pid_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != pid_text.size() || pid <= 0) {
    *error = "ps: '" + pid_text + "' is not a process id";
    return std::nullopt;
  }
  std::optional<live::LiveProcess> process = live::read_process(pid, error);
  if (!process) return std::nullopt;
  std::string python = live::python_of(*process);
  std::optional<Session> session;
  std::optional<LoadCheckResult> loads;
  if (!python.empty()) {
    EnvironmentRequest request{python, "", false, {}};
    request.loader.ld_library_path = "";
    for (const std::string& var : process->environ)
      if (var.rfind("LD_LIBRARY_PATH=", 0) == 0) request.loader.ld_library_path = var.substr(16);
    session = open_session(request, error);
    if (!session) return std::nullopt;
    loads = check_loads(*session->env, session->knowledge);
  }
  return examine_process(*process, session ? session->env.get() : nullptr, loads ? &*loads : nullptr,
                         session ? &session->knowledge : nullptr, python);
}

}  // namespace envdoctor::checks
