// Every file the loader model opens, opened and parsed once, shared by all loads (one `ldd` of a
// thousand files resolves libc.so.6 a thousand times but reads it once). Safe to use from
// several threads.
//
// Paths are the loader's view: with a root file system set, "/usr/lib/x.so" is read from
// ROOT/usr/lib/x.so, and symbolic links are followed inside ROOT, as a chroot would.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "elf/elf_file.h"
#include "loader/symbols.h"
#include "support/root.h"

namespace envdoctor::loader {

struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};

// What opening one path gave: the parsed object, or why it failed, in the loader's terms.
struct OpenResult {
  enum class Status {
    kOk,
    kMissing,  // open() failed: errno text in `error` ("No such file or directory")
    kInvalid,  // open_verify's message in `error` ("file too short", ...)
  };
  Status status = Status::kMissing;
  std::string error;
  int errnum = 0;
  std::shared_ptr<const elf::ElfFile> elf;
  FileId id;
  // The raw identification of a file that has the ELF magic, whether or not it parsed: the
  // loader skips a candidate of another class or machine before it judges anything else.
  struct Ident {
    bool magic = false;  // 64 bytes or more, starting with \x7fELF
    u8 elf_class = 0;
    u8 data = 0;
    u16 machine = 0;  // e_machine as the loader reads it (in its own byte order)
  } ident;
  bool header_error = false;  // kInvalid: open_verify meets `error` before it compares the machine
};

// How glibc 2.36's loader judges an opened file (elf/dl-load.c: open_verify, then the program
// header checks of _dl_map_object_from_fd), for a loader of `host_class`, `host_data` and
// `host_machine`. A candidate of another class or machine is skipped in a search; any other
// complaint is fatal, in the words of `message`.
struct Verdict {
  enum class Kind { kAccept, kOtherClass, kOtherMachine, kReject };
  Kind kind = Kind::kAccept;
  std::string message;  // kReject: the loader's words ("file too short", ...)
  // kReject met while mapping, after open_verify: glibc names the object by the name asked for.
  bool mapping = false;
};
Verdict verify(const OpenResult& op, u8 host_class, u8 host_data, u16 host_machine);

class ObjectStore {
 public:
  explicit ObjectStore(const std::string& root = "") : root_(root) {}

  // A store for a what-if on top of `disk`, which it never changes: it reads and parses the disk's
  // files through `disk` (one parse for both), starts from `disk`'s links and what its bindings
  // learnt, and keeps the files a change lays in or takes away to itself.
  static std::shared_ptr<ObjectStore> layered(std::shared_ptr<ObjectStore> disk);

  // Opens and parses `path` (the loader's view) once; later calls return the same result.
  std::shared_ptr<const OpenResult> open(const std::string& path);

  // Registers an in-memory file (a wheel member) under `path`, shadowing the disk.
  void add_overlay(const std::string& path, std::shared_ptr<const MappedFile> file);
  // Makes `path` look absent (a file an uninstall would remove).
  void add_removal(const std::string& path);
  // `path` is a symbolic link to `target` (a name in the same directory, or an absolute in-root
  // path) whatever the disk says: a link that ldconfig makes when the cache is rebuilt
  // (ldconfig.h). Opening it opens the target.
  void add_link(const std::string& path, const std::string& target);

  // The path on this machine where the loader's `path` is read.
  std::string host_path(const std::string& path) const;

  const std::string& root() const { return root_.dir(); }
  const support::FileRoot& file_root() const { return root_; }

  // What earlier loads learnt about symbol binding (see BindingCache).
  BindingCache& bindings() { return bindings_; }

 private:
  std::shared_ptr<const OpenResult> open_uncached(const std::string& path, const std::string& key);
  std::string simulation_key(const std::string& path);  // callers hold mu_
  void retire(const std::string& key);                  // callers hold mu_
  std::shared_ptr<const OpenResult> open_disk(const std::string& host);
  std::shared_ptr<const OpenResult> read_disk(const std::string& host);
  static void parse(OpenResult& result, std::shared_ptr<const MappedFile> file);

  // A directory as stat() saw it: its identity, or missing (ENOENT), or neither (any other error).
  struct Directory {
    std::optional<FileId> id;
    bool missing = false;
  };
  Directory directory(const std::string& dir);
  // One directory entry: the directory's identity and the name in it.
  struct Entry {
    FileId dir;
    std::string name;
    bool operator==(const Entry&) const = default;
  };

  support::FileRoot root_;
  std::shared_ptr<ObjectStore> disk_;  // layered(): the store whose disk files this one reads
  BindingCache bindings_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const OpenResult>> cache_;  // by path as spelled
  // A simulated change, by simulation_key: files laid in, files taken away, and what opening
  // them gave.
  std::unordered_map<std::string, std::shared_ptr<const MappedFile>> overlays_;
  std::unordered_map<std::string, bool> removed_;
  std::unordered_map<std::string, std::shared_ptr<const OpenResult>> simulated_;
  std::unordered_map<std::string, std::string> keys_;   // path -> simulation_key
  std::unordered_map<std::string, std::string> links_;  // add_link: path -> target path
  std::vector<std::shared_ptr<const OpenResult>> retired_;
  struct FileIdHash {
    size_t operator()(const FileId& id) const { return std::hash<u64>{}(static_cast<u64>(id.ino) * 31 + id.dev); }
  };
  struct EntryHash {
    size_t operator()(const Entry& e) const { return FileIdHash{}(e.dir) ^ std::hash<std::string>{}(e.name); }
  };
  // Disk files: every directory asked about, what each directory entry gave, and each parsed
  // file by identity.
  std::unordered_map<std::string, Directory> directories_;
  std::unordered_map<Entry, std::shared_ptr<const OpenResult>, EntryHash> by_entry_;
  std::unordered_map<FileId, std::shared_ptr<const OpenResult>, FileIdHash> by_id_;
};

}  // namespace envdoctor::loader
