// What a run read from the file system: every path it opened, listed, stat'ed, resolved or
// searched for, whether or not the path was there. The persistent index (run_index.h) keeps a
// run's answer under these paths' identities, and answers again only while every one of them is
// unchanged, so a path the log misses is an input the index cannot see change: a wrong all-clear.
//
// The log is filled from below, not by the code that reads: the envdoctor executable interposes
// the C library's file functions (cli/interpose.cc: open, fopen, stat and its kin, access,
// readlink, realpath, opendir, glob) and notes each path they are given while a scope is open.
// Code added later reads through the same functions and is logged without knowing it. What the
// interposition cannot see is said here instead:
// - a child process's reads (support/subprocess.h): a run that starts one is not kept, unless its
//   caller notes what the child reads and says so (ChildInputsNoted: the interpreter's probe);
// - what the dynamic loader opens for dlopen (NVML, libcrypto): the node's facts are read on
//   every run and are part of the key instead, and libcrypto is the tool's own;
// - /proc, /sys and /dev, which are not files with identities: never noted.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace envdoctor::support {

// Notes one path: absolute, or relative to the working directory. Cheap when no scope is open.
// `opened`: the path was opened (a file read, a directory listed), not only looked up (stat,
// access): a directory's listing is then an input, and its times with it.
void note_input(const char* path, bool opened = false);
// A path relative to the directory open as `dirfd` (AT_FDCWD: the working directory).
void note_input_at(int dirfd, const char* path, bool opened = false);
// Every directory the name resolution of `path` passes, and every link on the way with where it
// points, so that a link re-pointed anywhere along the way is seen (realpath's inputs).
void note_resolution(const char* path);
// glob(3)'s inputs for `pattern`: the directories it lists at each level that holds a wildcard.
void note_glob(const char* pattern);
// A read the log cannot name: the run is not kept.
void note_opaque_input(const std::string& why);
// A write to stdout or stderr (fd 1 or 2) other than through std::cout and std::cerr, which the
// index captures (cli/indexed.h): an answer it would keep without it, so the run is not kept.
void note_direct_output(int fd);

// Whether this executable logs its reads (the interposer is linked in and installed); without
// it there is no index.
bool input_log_installed();
void mark_input_log_installed();

// While a child process runs on this thread, whether its caller has noted what it reads.
bool child_inputs_noted();
class ChildInputsNoted {
 public:
  ChildInputsNoted();
  ~ChildInputsNoted();
  ChildInputsNoted(const ChildInputsNoted&) = delete;
  ChildInputsNoted& operator=(const ChildInputsNoted&) = delete;

 private:
  bool before_;
};

// Records every path noted from its construction to its destruction, by any thread (several
// scopes open at once each get every path: more inputs than a run read never make a stale
// answer, only a missed one). Paths below `ignored` (the index's own directory) are not kept.
class InputScope {
 public:
  explicit InputScope(std::string ignored = "");
  ~InputScope();
  InputScope(const InputScope&) = delete;
  InputScope& operator=(const InputScope&) = delete;

  // The paths noted, sorted, each once, and whether each was opened.
  struct Noted {
    std::string path;
    bool opened = false;
  };
  std::vector<Noted> paths() const;
  // Why the run cannot be kept; "" when it can.
  std::string opaque() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace envdoctor::support
