// `envdoctor ps PID`: the verdicts on a running process, from the facts src/live reads.
//
// Each ELF object the process has mapped is listed with its SONAME, its owning package (when the
// process is a Python of an environment envdoctor can examine) and how the load model says it was
// found (the NEEDED edge that resolves to the same file, else "loaded at run time" - a dlopen the
// model cannot see, such as ctypes.CDLL); only an edge whose consumer the process has mapped
// counts. Two findings come from the process itself:
//  - library-replaced-on-disk: a mapped file whose path now holds another inode (a rename over
//    it, which maps also marks " (deleted)"), or whose maps line says " (deleted)" and nothing is
//    at the path any more. The process keeps running the code it mapped; the next one loads the
//    file on disk now. A reinstall by pip moves the package's directory to a stash beside it
//    (provlib/ to ~rovlib/), installs, and deletes the stash: maps then names the stash's path,
//    deleted, and the file is said replaced at the path it was loaded from, which its package owns.
//    The fix_command restarts the process from its command line, when /proc tells it.
//  - duplicate-library: two files with one SONAME mapped together. glibc reuses an object only
//    when a name matches its path or SONAME (elf/dl-load.c: _dl_map_object) or when the file is
//    the same device and inode (_dl_map_object_from_fd); dlopen of two different paths of one
//    SONAME maps both.
//  - openmp-runtime-mix and cuda-major-mix: two OpenMP runtimes, or CUDA libraries of two majors,
//    mapped together, judged by check's own verdicts (openmp.h, cuda_checks.h) on what is mapped
//    rather than on what could load.
// And, for a Python, where the process and `check` part: a mapped object whose SONAME the load
// model resolves to other files (a copy loaded first by ctypes or by another package's RPATH,
// matched by SONAME afterwards; an LD_LIBRARY_PATH the process was started with that the check
// did not model).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "checks/load_checks.h"
#include "environment/environment.h"
#include "environment/knowledge.h"
#include "environment/session.h"
#include "live/proc.h"

namespace envdoctor::queries {

struct LiveObject {
  std::string path;       // the path it was loaded from (a file of pip's stash: the path pip moved it from)
  std::string mapped_as;  // maps' path when it is another (pip's stash, deleted); "" otherwise
  std::optional<std::string> soname;
  std::string owner;      // Environment::owner_label, or "" without an environment
  std::string found;      // how it was found, for people
  bool deleted = false;   // maps says " (deleted)" and nothing is at the path now
  bool replaced = false;  // the path now holds another inode than the one mapped
};

// A mapped object the static check resolves to another file: what `check` predicts for its
// SONAME, and what the process really loaded.
struct LiveDifference {
  std::string soname;
  std::string loaded;                  // the mapped file
  std::string loaded_owner;            // its owner label ("" without an environment)
  std::vector<std::string> predicted;  // the files the load model resolves the SONAME to
  std::string predicted_by;            // the first NEEDED edge to predicted[0]: "NEEDED X of F: RUNPATH D"
};

struct LiveExamination {
  int pid = 0;
  std::string exe;
  std::string python;                          // the interpreter whose environment was examined; "" for none
  std::string python_version;                  // "3.11.2"; "" for none
  std::optional<std::string> ld_library_path;  // the process's, from /proc/PID/environ; nullopt when unset
  std::vector<LiveObject> objects;
  std::vector<LiveDifference> differences;  // by SONAME, then loaded path
  std::vector<checks::Finding> findings;    // sorted and de-duplicated

  // Whether a finding is an error: `ps` exits 1.
  bool errors() const;
};

// `env` and `loads` are the process's Python environment and its load check, or nullptr;
// `knowledge` tells CUDA libraries' majors (nullptr: only a runtime's SONAME tells).
LiveExamination examine_process(const live::LiveProcess& process, const environment::Environment* env,
                                const checks::LoadCheckResult* loads, const environment::Knowledge* knowledge,
                                const std::string& python);

// `ps PID`: the process read from /proc (live::read_process), then, for a Python, the environment
// it runs in with the LD_LIBRARY_PATH it runs with (none when it has none) and its load check,
// then examine_process. nullopt with `error` when PID is no process id, the process cannot be
// read, or its environment cannot be.
std::optional<LiveExamination> examine_pid(const std::string& pid, std::string* error);

}  // namespace envdoctor::queries
