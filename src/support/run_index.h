// The persistent index: a run's answer (its output and exit status) kept under everything that
// decides it, so that the same question about an unchanged environment is answered without
// reading the environment again.
//
// An entry is found by its key, the whole question: the command and its arguments, the working
// directory, the process's environment variables, the terminal, the user, this machine (its kernel,
// its CPU's hwcaps, its NVIDIA driver and GPUs, read live) and the envdoctor binary itself (which
// carries the tables). It holds the identity of every path the run read (support/input_log.h): the
// device, inode, type and permissions, size, and the modification and change times in
// nanoseconds, of the path itself and, for a link, of what it points to. A directory's times
// change when a name in it is added, removed or renamed, so a listing is covered by its
// directory's identity, and a path that was missing is kept as missing. The entry answers only
// while every identity is what it was; any change, even a touch, and the run is done again.
//
// A change that keeps all of a file's identity (the same size, the modification time set back,
// and a change time the kernel did not move, which takes a clock set back or a file system that
// does not keep it) is not seen: only --verify-hashes, which reads every byte and never uses the
// index, catches it. A run is not kept when one of its inputs changed less than a second before it
// started, or while it ran (the change time says so), nor when it read something the log cannot
// name (a child process's reads).
//
// Entries live in their own files below $XDG_CACHE_HOME/envdoctor/index-v1, written beside and
// renamed into place; the least recently used are removed beyond ENVDOCTOR_INDEX_MAX bytes. A
// damaged entry (cut short, altered, not an entry) is said in a note and replaced by the run it
// could not answer.
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "support/input_log.h"
#include "support/types.h"

namespace envdoctor::support {

// What lstat (or stat, following links) says of a path: its error, or who and what it is.
struct Identity {
  int error = 0;  // errno of the call; 0 when the path is there
  u32 mode = 0;
  u64 dev = 0, ino = 0, size = 0;
  i64 mtime_ns = 0, ctime_ns = 0;
  bool operator==(const Identity&) const = default;
};
Identity identity_of(const std::string& path, bool follow);

struct IndexInput {
  std::string path;
  Identity self;                   // lstat
  std::optional<Identity> target;  // stat, for a link
  // Whether the times are part of the identity: always for a file; for a directory only when it
  // was listed (opened), since a directory passed through or looked up answers by what it is,
  // not by what it holds (/tmp changes every second).
  bool times = true;
  bool operator==(const IndexInput&) const = default;
};

// A run of bytes written to stdout or to stderr.
struct OutputRun {
  bool err = false;
  u64 size = 0;
  bool operator==(const OutputRun&) const = default;
};

struct IndexEntry {
  std::string key;
  i64 recorded_ns = 0;  // when the run was kept (CLOCK_REALTIME)
  int status = 0;
  std::string out, err;
  std::vector<IndexInput> inputs;
  // The order stdout and stderr were written in, run by run; their sizes add up to out's and
  // err's (an MCP tool's answer has one run of stdout).
  std::vector<OutputRun> order;
};

// The entry's bytes, and back; nullopt with `why` set when they are not an entry whole.
std::string encode_entry(const IndexEntry& entry);
std::optional<IndexEntry> decode_entry(std::string_view bytes, std::string* why);

// The first input whose identity changed, or nullopt when none did.
std::optional<std::string> changed_input(const IndexEntry& entry);

// The inputs' identities now, for a run that started at `started_ns`; nullopt with `why` set when
// one of them changed too recently to be trusted.
std::optional<std::vector<IndexInput>> identify_inputs(const std::vector<InputScope::Noted>& paths, i64 started_ns,
                                                       std::string* why);

i64 realtime_ns();

class RunIndex {
 public:
  // `dir` holds the entries; `max_bytes` bounds them. `in_memory`: entries found or kept are also
  // held in this process (the MCP server), and found there first.
  RunIndex(std::string dir, u64 max_bytes, bool in_memory = false);
  // $XDG_CACHE_HOME/envdoctor/index-v1, and ENVDOCTOR_INDEX_MAX (default 256 MiB).
  static RunIndex standard(bool in_memory = false) { return RunIndex(standard_dir(), standard_max(), in_memory); }
  static std::string standard_dir();
  static u64 standard_max();

  // The entry for `key` whose inputs are all unchanged. A stored entry that is damaged is
  // removed and said in `note`; one that is stale names the first input that changed in `stale`.
  std::optional<IndexEntry> find(const std::string& key, std::string* note, std::string* stale = nullptr);
  // Keeps `entry` (its inputs identified) and removes the least recently used beyond the bound.
  void keep(const IndexEntry& entry);

  const std::string& dir() const { return dir_; }
  std::string file_for(const std::string& key) const;

 private:
  void bound();
  void hold(const IndexEntry& entry);

  std::string dir_;
  u64 max_bytes_;
  bool in_memory_;
  std::mutex mu_;
  std::unordered_map<std::string, IndexEntry> held_;
  std::deque<std::string> held_order_;  // the keys of held_, oldest first
};

}  // namespace envdoctor::support
