// `envdoctor ps PID`: the verdicts on a running process, from the facts src/live reads.
//
// Each ELF object the process has mapped is listed with its SONAME, its owning package (when the
// process is a Python of an environment envdoctor can examine) and how the load model says it was
// found (the NEEDED edge that resolves to the same file, else "loaded at run time" - a dlopen the
// model cannot see, such as ctypes.CDLL). Two findings come from the process itself:
//  - library-replaced-on-disk: a mapped file whose path now holds another inode (a rename over
//    it, which maps also marks " (deleted)"), or whose maps line says " (deleted)" and nothing is
//    at the path any more. The process keeps running the code it mapped; the next one loads the
//    file on disk now.
//  - duplicate-library: two files with one SONAME mapped together. glibc reuses an object only
//    when a name matches its path or SONAME (elf/dl-load.c: _dl_map_object) or when the file is
//    the same device and inode (_dl_map_object_from_fd); dlopen of two different paths of one
//    SONAME maps both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/environment.h"
#include "checks/finding.h"
#include "checks/load_checks.h"
#include "live/proc.h"

namespace envdoctor::checks {

struct LiveObject {
  std::string path;
  std::optional<std::string> soname;
  std::string owner;      // Environment::owner_label, or "" without an environment
  std::string found;      // how it was found, for people
  bool deleted = false;   // maps says " (deleted)" and nothing is at the path now
  bool replaced = false;  // the path now holds another inode than the one mapped
};

struct LiveExamination {
  int pid = 0;
  std::string exe;
  std::string python;  // the interpreter whose environment was examined; "" for none
  std::vector<LiveObject> objects;
  std::vector<Finding> findings;  // sorted and de-duplicated
};

// `env` and `loads` are the process's Python environment and its load check, or nullptr.
LiveExamination examine_process(const live::LiveProcess& process, const Environment* env, const LoadCheckResult* loads,
                                const std::string& python);

}  // namespace envdoctor::checks
