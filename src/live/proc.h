// A running process as /proc shows it, read-only and without ptrace: the files it has mapped
// (/proc/PID/maps), its environment (/proc/PID/environ), its program (/proc/PID/exe) and its
// command line. A source of facts, like discover: `ps` judges them in src/queries/live_checks.
//
// Linux fs/proc/task_mmu.c (show_map_vma) writes each mapping as
//   start-end perms offset major:minor inode path
// with the device in hex and " (deleted)" appended to the path when the file's last link is gone
// (d_path of an unlinked dentry). The inode and device are those of the file that was mapped,
// which is what tells a file replaced on disk (same path, another inode) from the one still
// running. Reading maps needs PTRACE_MODE_READ (fs/proc/base.c: proc_maps_open ->
// proc_mem_open): another user's process gives EACCES, and that is the tool's failure, not a
// finding.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "support/types.h"

namespace envdoctor::live {

// One file mapped into the process, its mappings merged.
struct MappedFile {
  std::string path;  // as maps spells it, " (deleted)" removed
  dev_t dev = 0;     // makedev(major, minor) of the maps line
  ino_t ino = 0;
  bool deleted = false;     // maps said " (deleted)"
  bool executable = false;  // some mapping of it is r-x
  u64 start = 0;            // its lowest address
};

// One line of /proc/PID/maps parsed; nullopt for a line without a file (anonymous, [heap], ...)
// or one that does not parse.
std::optional<MappedFile> parse_maps_line(const std::string& line);

struct LiveProcess {
  int pid = 0;
  std::string exe;                   // readlink /proc/PID/exe (" (deleted)" kept off)
  std::vector<std::string> argv;     // /proc/PID/cmdline
  std::string cwd;                   // readlink /proc/PID/cwd, "" when not readable
  std::vector<std::string> environ;  // NAME=VALUE, as the process started with
  std::vector<MappedFile> files;     // every file with an inode, by lowest address
};

// Reads /proc/PID (`proc` is the procfs mount, for tests). nullopt with `error` set ("process 4242:
// permission denied reading /proc/4242/maps (another user's process: run as that user or root)",
// "no process 4242") when the process cannot be read.
std::optional<LiveProcess> read_process(int pid, std::string* error, const std::string& proc = "/proc");

// The program as it was started, as an absolute path that names the same file as /proc/PID/exe:
// argv[0] when absolute, joined to the working directory when relative, else found on the PATH the
// process started with. "" when none of these is the running program (argv[0] set by the program,
// a PATH entry that no longer holds it).
std::string started_program(const LiveProcess& p);

// The interpreter to examine the process's environment with, when the process is a Python:
// the program as it was started (argv[0], which keeps a venv's bin/python that /proc/PID/exe
// resolves away), else $VIRTUAL_ENV/bin/python from its environment, else the bin/python of the
// prefix of a site-packages directory it mapped a file from; each only when it is the same file
// as /proc/PID/exe. "" when the program is no Python (its name does not start with "python").
std::string python_of(const LiveProcess& p);

}  // namespace envdoctor::live
