#include "checks/live_checks.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

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

std::string how_found(const live::MappedFile& f, const Environment* env, const std::map<ino_t, const Edge*>& edges,
                      ino_t exe_ino) {
  if (f.ino == exe_ino) return "the program (/proc/PID/exe)";
  if (auto it = edges.find(f.ino); it != edges.end()) {
    const Edge& e = *it->second;
    return std::string("NEEDED ") + e.needed + " of " + e.consumer + ": " + loader::rule_name(e.rule) +
           (e.source.empty() ? "" : " " + e.source);
  }
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

}  // namespace

LiveExamination examine_process(const live::LiveProcess& process, const Environment* env, const LoadCheckResult* loads,
                                const std::string& python) {
  LiveExamination out;
  out.pid = process.pid;
  out.exe = process.exe;
  out.python = python;
  // The files are read as they are on disk now: the process's own view is gone for a deleted one.
  loader::ObjectStore local;
  loader::ObjectStore& store = env ? *env->store : local;
  std::map<ino_t, const Edge*> edges;
  if (loads) edges = edges_by_inode(*loads, store);
  struct stat exe_st {};
  ino_t exe_ino = stat(process.exe.c_str(), &exe_st) == 0 ? exe_st.st_ino : 0;

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
    out.objects.push_back(std::move(o));
  }

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

}  // namespace envdoctor::checks
