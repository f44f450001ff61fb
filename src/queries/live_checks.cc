#include "queries/live_checks.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "advice/install.h"
#include "checks/cuda/cuda_checks.h"
#include "checks/cuda/inventory.h"
#include "checks/openmp.h"
#include "loader/object_store.h"
#include "loader/preload.h"
#include "python/metadata_file.h"

namespace envdoctor::queries {

using checks::check_loads;
using checks::Code;
using checks::cuda_major_of;
using checks::cuda_majors_loaded;
using checks::CudaLibrary;
using checks::Edge;
using checks::Finding;
using checks::LoadCheckResult;
using checks::openmp_runtime;
using checks::openmp_runtime_mix;
using checks::OpenmpRuntime;
using checks::Severity;
using checks::sort_and_dedupe;

using advice::shell_word;
using environment::ElfRecord;
using environment::Environment;
using environment::EnvironmentRequest;
using environment::Knowledge;
using environment::open_session;
using environment::Session;

namespace fs = std::filesystem;

namespace {

// The load model's edges the process can have followed: those whose consumer it has mapped (the
// model loads every package's extensions with their libraries; a process imports a few, and a
// NEEDED entry of a library it never mapped did not bring anything into it). /proc/PID/maps is the
// referee. An edge is found by the inode of the file it resolves to: the kernel prints the path the
// file was opened by after resolving symbolic links (/usr/lib/x86_64-linux-gnu/libc.so.6 where the
// model says /lib/x86_64-linux-gnu/libc.so.6), so paths do not match, identities do. A file
// replaced since it was mapped has another inode now, and is found by its path.
struct ModelEdges {
  std::map<ino_t, const Edge*> by_inode;
  std::map<std::string, const Edge*> by_path;
};

ModelEdges edges_of_mapped(const LoadCheckResult& loads, loader::ObjectStore& store,
                           const std::set<ino_t>& mapped_inodes, const std::set<std::string>& mapped_paths) {
  auto inode = [&](const std::string& path) -> std::optional<ino_t> {
    std::shared_ptr<const loader::OpenResult> opened = store.open(path);
    if (opened->status != loader::OpenResult::Status::kOk) return std::nullopt;
    return opened->id.ino;
  };
  ModelEdges out;
  std::map<std::string, bool> consumer_mapped;
  for (const Edge& e : loads.edges) {
    if (e.resolved.empty()) continue;
    auto [it, fresh] = consumer_mapped.try_emplace(e.consumer, false);
    if (fresh) {
      std::optional<ino_t> ino = inode(e.consumer);
      it->second = mapped_paths.count(e.consumer) || (ino && mapped_inodes.count(*ino));
    }
    if (!it->second || out.by_path.count(e.resolved)) continue;
    out.by_path.emplace(e.resolved, &e);
    if (std::optional<ino_t> ino = inode(e.resolved)) out.by_inode.try_emplace(*ino, &e);
  }
  return out;
}

// pip's stash of a directory it uninstalls (pip/_internal/req/req_uninstall.py,
// StashedUninstallPathSet; the name from utils/temp_dir.py, AdjacentTempDirectory._generate_names)
// sits beside it: NAME becomes "~" + NAME[1:], or when that is taken "~" + k characters of
// "-~.=%0123456789" + NAME[k+1:], or "~" + one of them + NAME. pip renames the directory there,
// installs the new files, then deletes the stash: a process that mapped a file of it sees the
// stash's path, deleted.
bool could_be_stash_of(std::string_view stash, std::string_view name) {
  constexpr std::string_view kLeading = "-~.=%0123456789";
  if (stash.size() < 2 || stash[0] != '~' || name.empty() || name[0] == '~') return false;
  if (stash.size() == name.size() + 2 && kLeading.find(stash[1]) != std::string_view::npos && stash.substr(2) == name)
    return true;
  if (stash.size() != name.size()) return false;
  for (size_t i = 1; i < stash.size(); ++i) {
    if (stash.substr(i) == name.substr(i)) return true;
    if (kLeading.find(stash[i]) == std::string_view::npos) return false;
  }
  return false;
}

// The path a file had before pip moved its directory to a stash: the same path with the stash
// directory's name put back, when a distribution of `env` owns that path. nullopt otherwise.
std::optional<std::string> unstashed(const std::string& path, const Environment& env) {
  fs::path p(path);
  fs::path dir;
  for (auto part = p.begin(); part != p.end(); ++part) {
    std::string name = part->string();
    if (name.size() > 1 && name[0] == '~') {
      fs::path rest;
      for (auto after = std::next(part); after != p.end(); ++after) rest /= *after;
      std::error_code ec;
      for (const fs::directory_entry& sibling : fs::directory_iterator(dir, ec)) {
        std::string original = sibling.path().filename().string();
        if (!could_be_stash_of(name, original)) continue;
        std::string candidate = (sibling.path() / rest).string();
        if (env.owner(candidate)) return candidate;
      }
    }
    dir /= *part;
  }
  return std::nullopt;
}

std::string edge_text(const Edge& e) {
  return "NEEDED " + e.needed + " of " + e.consumer + ": " + loader::rule_name(e.rule) +
         (e.source.empty() ? "" : " " + e.source);
}

// The value of the process's loader variable NAME as ld.so took it: rtld.c's process_envvars reads
// every entry of the environment in order, so a variable given twice is its last value. nullopt
// when it has none.
std::optional<std::string> variable_of(const live::LiveProcess& process, std::string_view name) {
  std::optional<std::string> value;
  for (const std::string& var : process.environ)
    if (var.size() > name.size() && var.starts_with(name) && var[name.size()] == '=')
      value = var.substr(name.size() + 1);
  return value;
}

// What the process's ld.so preloaded (loader/preload.h): its own LD_PRELOAD, then this machine's
// /etc/ld.so.preload, each name with ld.so's word for where it was given.
std::vector<loader::Preload> process_preloads(const live::LiveProcess& process) {
  std::vector<loader::Preload> out;
  if (std::optional<std::string> list = variable_of(process, "LD_PRELOAD"))
    for (std::string& name : loader::split_ld_preload(*list))
      out.push_back({std::move(name), loader::Preload::Source::kLdPreload});
  if (std::optional<std::string> file = python::read_bounded_file("/etc/ld.so.preload", 1 << 20, nullptr))
    for (std::string& name : loader::split_ld_so_preload(*file))
      out.push_back({std::move(name), loader::Preload::Source::kLdSoPreload});
  return out;
}

// The preload a mapped file is: a name with a '/' is the path ld.so opened; a bare name was
// searched, and the object loaded under it is the one whose file or SONAME is that name (ld.so
// loads nothing else of that name after it: a later NEEDED of it finds the preloaded object).
const loader::Preload* preload_of(const std::string& path, const std::optional<std::string>& soname,
                                  const std::vector<loader::Preload>& preloads) {
  std::string file = fs::path(path).filename().string();
  for (const loader::Preload& p : preloads)
    if (p.name.find('/') != std::string::npos ? fs::path(p.name).lexically_normal() == fs::path(path)
                                              : p.name == file || (soname && p.name == *soname))
      return &p;
  return nullptr;
}

std::string how_found(const std::string& path, const live::MappedFile& f, const Environment* env,
                      const ModelEdges& edges, ino_t exe_ino, const loader::Preload* preload) {
  if (f.ino == exe_ino) return "the program (/proc/PID/exe)";
  if (preload) return "preloaded (" + std::string(loader::preload_source_name(preload->source)) + ")";
  if (auto it = edges.by_inode.find(f.ino); it != edges.by_inode.end()) return edge_text(*it->second);
  if (auto it = edges.by_path.find(path); it != edges.by_path.end()) return edge_text(*it->second);
  if (env)
    if (const ElfRecord* r = env->elf(path); r && r->extension_module) return "imported (an extension module)";
  return "loaded at run time (dlopen by the program; not in the load model)";
}

// The command that restarts `p` as it was started: kill it, then its command line from its
// working directory, with the variables of its environment that decide what it loads and imports.
// Not the rest of its environment: it may hold secrets, and the report is printed and logged.
// "" when the command line cannot be known: no argv (a kernel thread, a zombie), argv[0] that no
// longer names the program, a working directory unreadable or deleted.
std::string restart_command(const live::LiveProcess& p) {
  std::string program = live::started_program(p);
  if (program.empty() || p.cwd.empty() || p.cwd[0] != '/' || p.cwd.ends_with(" (deleted)")) return "";
  std::string out = "kill " + std::to_string(p.pid) + " && cd " + shell_word(p.cwd) + " && ";
  std::string variables;
  for (const std::string& var : p.environ)
    for (std::string_view name : {"LD_LIBRARY_PATH=", "LD_PRELOAD=", "PYTHONPATH=", "PYTHONHOME="})
      if (var.starts_with(name)) variables.append(shell_word(var)).append(" ");
  if (!variables.empty()) out.append("env ").append(variables);
  out += shell_word(program);
  for (size_t i = 1; i < p.argv.size(); ++i) out.append(" ").append(shell_word(p.argv[i]));
  return out;
}

Finding replaced_finding(const LiveObject& o, const live::MappedFile& f, ino_t now, const live::LiveProcess& process,
                         const Environment* env) {
  Finding out;
  out.code = Code::kLibraryReplacedOnDisk;
  out.severity = Severity::kWarning;
  out.file = o.path;
  out.library = o.soname;
  const python::Distribution* owner = env ? env->owner(o.path) : nullptr;
  if (owner) out.package = owner->name;
  std::string pid = std::to_string(process.pid);
  if (o.deleted)
    out.message = o.path + " (deleted): process " + pid + " runs a file that was deleted after it was loaded (inode " +
                  std::to_string(f.ino) + ")";
  else
    out.message = o.path + ": the path now holds another file (inode " + std::to_string(now) + "); process " + pid +
                  " runs the one it loaded (inode " + std::to_string(f.ino) + ")";
  if (!o.mapped_as.empty())
    out.message += ", mapped as " + o.mapped_as + ", pip's copy of " + (owner ? owner->name : "the package") +
                   " during a reinstall, since deleted";
  out.fix_command = restart_command(process);
  out.hint = "the process keeps running the old code and the next process loads what is on disk now: restart process " +
             pid + " to run the installed files (a reinstall or upgrade under a running job does this); " +
             (out.fix_command.empty()
                  ? "its command line cannot be read from /proc/" + pid + ", so no command is given"
                  : "the command kills it and starts its command line again in the foreground, from its working "
                    "directory, with those of its variables that decide what loads (LD_LIBRARY_PATH, LD_PRELOAD, "
                    "PYTHONPATH, PYTHONHOME) and no others; restart a process that a service manager or a batch "
                    "scheduler started through that instead");
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

// Where check parts from the process: the model resolves this SONAME, never to this file.
std::optional<LiveDifference> difference_from_model(const LoadCheckResult& loads, loader::ObjectStore& store,
                                                    const LiveObject& o, ino_t mapped_ino) {
  auto it = loads.resolutions.find(*o.soname);
  if (it == loads.resolutions.end()) return std::nullopt;
  for (const auto& [path, consumers] : it->second) {
    std::shared_ptr<const loader::OpenResult> p = store.open(path);
    if (path == o.path || (p->status == loader::OpenResult::Status::kOk && p->id.ino == mapped_ino))
      return std::nullopt;
  }
  LiveDifference d{*o.soname, o.path, o.owner, {}, ""};
  for (const auto& [path, consumers] : it->second) d.predicted.push_back(path);
  if (const Edge* e = edge_to(loads, d.predicted.front())) d.predicted_by = edge_text(*e);
  return d;
}

// Copies of one SONAME mapped together: files of another identity each.
void add_duplicate_findings(LiveExamination& out, const Environment* env) {
  std::map<std::string, std::vector<const LiveObject*>> by_soname;
  for (const LiveObject& o : out.objects)
    if (o.soname) by_soname[*o.soname].push_back(&o);
  for (auto& [soname, copies] : by_soname)
    if (copies.size() > 1) {
      std::sort(copies.begin(), copies.end(),
                [](const LiveObject* a, const LiveObject* b) { return a->path < b->path; });
      out.findings.push_back(duplicate_finding(soname, copies, out.pid, env));
    }
}

}  // namespace

LiveExamination examine_process(const live::LiveProcess& process, const Environment* env, const LoadCheckResult* loads,
                                const Knowledge* knowledge, const std::string& python) {
  LiveExamination out;
  out.pid = process.pid;
  const std::vector<loader::Preload> preloads = process_preloads(process);
  out.exe = process.exe;
  out.python = python;
  if (env) out.python_version = env->python.version_info.full_str();
  out.ld_library_path = variable_of(process, "LD_LIBRARY_PATH");
  // The files are read as they are on disk now: the process's own view is gone for a deleted one.
  loader::ObjectStore local;
  loader::ObjectStore& store = env ? *env->store : local;
  // Each mapped file by the path it was installed at: a file of pip's stash by its own path.
  std::vector<std::string> paths;
  std::set<ino_t> mapped_inodes;
  std::set<std::string> mapped_paths;
  for (const live::MappedFile& f : process.files) {
    std::optional<std::string> original = f.deleted && env ? unstashed(f.path, *env) : std::nullopt;
    paths.push_back(original.value_or(f.path));
    mapped_inodes.insert(f.ino);
    mapped_paths.insert(paths.back());
  }
  ModelEdges edges;
  if (loads) edges = edges_of_mapped(*loads, store, mapped_inodes, mapped_paths);
  struct stat exe_st {};
  ino_t exe_ino = stat(process.exe.c_str(), &exe_st) == 0 ? exe_st.st_ino : 0;

  std::vector<OpenmpRuntime> openmp;
  std::vector<CudaLibrary> cuda;
  for (size_t i = 0; i < process.files.size(); ++i) {
    const live::MappedFile& f = process.files[i];
    const std::string& path = paths[i];
    // The kernel marks a mapping " (deleted)" when its inode lost its last link: an uninstall, and
    // also an install that renamed a new file over the path (what pip does). The path now tells
    // which. Inodes are compared, not devices: overlayfs shows the lower file system's device in
    // maps and its own in stat (fs/overlayfs/inode.c: ovl_getattr), for one and the same file.
    struct stat st {};
    bool exists = stat(path.c_str(), &st) == 0;
    ino_t now = exists ? st.st_ino : 0;
    std::shared_ptr<const loader::OpenResult> opened = exists ? store.open(path) : nullptr;
    bool elf_now = opened && opened->status == loader::OpenResult::Status::kOk;
    // A file is an ELF object when it is one on disk, or, gone or replaced, when it was mapped
    // executable (the loader maps an object's text r-x) under a library's or the program's name:
    // libffi's closures and JIT compilers map deleted temporary files and memfds executable too.
    bool named_as_object = fs::path(path).filename().string().find(".so") != std::string::npos || path == process.exe;
    if (!elf_now && !(f.executable && named_as_object)) continue;
    LiveObject o;
    o.path = path;
    if (path != f.path) o.mapped_as = f.path;
    o.replaced = exists && now != f.ino;
    o.deleted = f.deleted && !o.replaced;
    if (elf_now && opened->elf->soname) o.soname = std::string(*opened->elf->soname);
    if (env) o.owner = env->owner_label(path);
    o.found = how_found(path, f, env, edges, exe_ino, preload_of(path, o.soname, preloads));
    if (o.deleted || o.replaced) out.findings.push_back(replaced_finding(o, f, now, process, env));
    const python::Distribution* owner = env ? env->owner(path) : nullptr;
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
      if (loads)
        if (std::optional<LiveDifference> d = difference_from_model(*loads, store, o, f.ino))
          out.differences.push_back(std::move(*d));
    }
    out.objects.push_back(std::move(o));
  }
  std::string here = "are loaded in process " + std::to_string(process.pid);
  if (std::optional<Finding> f = openmp_runtime_mix(openmp, here)) out.findings.push_back(std::move(*f));
  if (std::optional<Finding> f = cuda_majors_loaded(cuda, process.pid)) out.findings.push_back(std::move(*f));
  std::sort(out.differences.begin(), out.differences.end(), [](const LiveDifference& a, const LiveDifference& b) {
    return std::tie(a.soname, a.loaded) < std::tie(b.soname, b.loaded);
  });

  add_duplicate_findings(out, env);
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
    // The process's own loader variables, as inherit_process_loader takes a shell's: what its
    // ld.so searched with, sized static TLS with, and preloaded.
    request.loader.ld_library_path = variable_of(*process, "LD_LIBRARY_PATH").value_or("");
    request.loader.glibc_tunables = variable_of(*process, "GLIBC_TUNABLES").value_or("");
    request.loader.ld_preload = variable_of(*process, "LD_PRELOAD").value_or("");
    session = open_session(request, error);
    if (!session) return std::nullopt;
    checks::CheckSettings settings;  // with the load graph's edges: how each mapped file was found
    loads = check_loads({*session->env, session->knowledge, session->tables, settings});
  }
  return examine_process(*process, session ? session->env.get() : nullptr, loads ? &*loads : nullptr,
                         session ? &session->knowledge : nullptr, python);
}

}  // namespace envdoctor::queries
