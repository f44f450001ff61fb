// The load model: one simulated process, as glibc 2.36's ld.so would build it.
//
// A Process starts from a main program (`load_main`, what `ld.so FILE` does) and may then
// `dlopen` more objects (what Python does for an extension module). Each load maps NEEDED
// entries breadth-first (elf/dl-deps.c), resolving every name with glibc's search order
// (elf/dl-load.c: _dl_map_object), then checks symbol versions (elf/dl-version.c) and binds
// every undefined symbol over the object's scope (elf/dl-lookup.c).
//
// Nothing is mapped or executed: objects come from the ObjectStore's parsed files. Every
// resolution keeps the rule and directory that found it and, when it failed, every path tried,
// so the report can explain. Errors are collected the way ldd's trace mode does (a missing
// library is noted and the load goes on), and each load also names the one failure a real
// exec or dlopen would stop at.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "loader/load_error.h"
#include "loader/object_store.h"
#include "loader/preload.h"
#include "loader/search_paths.h"

namespace envdoctor::loader {

// How a library was found: libtree's vocabulary, plus glibc's own cases.
enum class Rule {
  kMain,           // the object being examined
  kInterpreter,    // ld.so itself, loaded before anything else
  kLoaded,         // already loaded, matched by name or SONAME
  kDirect,         // the name contains '/': opened as it is
  kRpath,          // DT_RPATH of the loader or of one of its loaders
  kLdLibraryPath,  // LD_LIBRARY_PATH
  kRunpath,        // DT_RUNPATH of the loader
  kLdSoCache,      // /etc/ld.so.cache
  kDefault,        // the system search path
  kNotFound,
};
const char* rule_name(Rule rule);

// One path the search tried, and why it was not used.
struct Attempt {
  // What the candidate was to the search.
  enum class Kind {
    kMissing,       // not there, or not openable: `outcome` is the errno's words
    kOtherClass,    // an ELF file of the other class: skipped, the search goes on
    kOtherMachine,  // an ELF file of another machine: skipped, the search goes on
    kRejected,      // a file open_verify refused: its error ends the search
    kNote,          // no file tried: what the cache had, or why the rest of a list is not searched
    kFatal,         // the error that ended the search, with no path: the last attempt, if any
  };
  std::string path;
  std::string outcome;  // "No such file or directory", "wrong ELF class: ELFCLASS32 (skipped)", ...
  Kind kind = Kind::kMissing;
  // For a path of an empty element of RPATH, LD_LIBRARY_PATH or RUNPATH (`$ORIGIN:`), that list's
  // rule: glibc keeps the element as "" (elf/dl-load.c, fillin_rpath), so the candidates are
  // relative paths, opened from the current working directory. kNotFound for any other path.
  Rule empty_element = Rule::kNotFound;
  int errnum = 0;  // kMissing: open's errno (ENOENT, EACCES, ...), which `outcome` words
};

struct Resolution {
  std::string name;  // the DT_NEEDED string
  Rule rule = Rule::kNotFound;
  std::string source;             // the directory list entry that found it, or the cache
  int rpath_owner = -1;           // for kRpath: the object whose DT_RPATH it was
  int object = -1;                // index into Process::objects(); -1 when not found
  std::vector<Attempt> attempts;  // every path tried, in order
  // Whether an error open_verify met ended the search (the last attempt says it, kFatal).
  bool ended_fatally() const { return !attempts.empty() && attempts.back().kind == Attempt::Kind::kFatal; }
  std::string rejected;  // a file open_verify rejected, which ended the search (kNotFound)
};

struct LoadedObject {
  std::string path;                // l_name: the path it was opened by
  std::vector<std::string> names;  // every name it answers to (requested names, SONAME)
  std::shared_ptr<const elf::ElfFile> elf;
  FileId id;
  int loader = -1;               // the object whose NEEDED (or dlopen) loaded it
  Rule rule = Rule::kMain;       // how it was found first
  std::string source;            // and where: the directory or the cache
  std::vector<Resolution> deps;  // one per DT_NEEDED, in order
  int local_root = -1;           // for a dlopen'd object and its deps: the dlopen'd object
  std::vector<int> searchlist;   // for a load root: itself and its deps, breadth-first
  bool is_interpreter = false;
  bool global = true;  // in the global scope (main's searchlist or RTLD_GLOBAL)
};

// A name ld.so could not preload (loader/preload.h): said on stderr, and the process goes on
// without it.
struct PreloadFailure {
  Preload preload;
  std::string reason;     // ld.so's error without the file's name: "cannot open shared object file"
  Resolution resolution;  // the search, with every path it tried
  std::string message() const { return preload_ignored_message(preload, reason); }
};

class Process {
 public:
  // Searches made by a process are kept for its copies (an import context copied for each file
  // it checks) and, when given one memo, for other processes of the same configuration (ldd's
  // files, each its own main program).
  struct SearchMemo;
  static std::shared_ptr<SearchMemo> new_search_memo();
  Process(const LoaderConfig& config, ObjectStore& store, std::shared_ptr<SearchMemo> searches = nullptr);

  // Loads `path` as the main program together with everything it needs, as `ld.so --list`
  // (trace mode) would. Returns false when the main program itself cannot be loaded. Without
  // `bind_symbols`, as plain `ldd` (no LD_WARN, no LD_BIND_NOW): libraries and symbol versions
  // only, no relocation (rtld.c relocates in trace mode only with LD_WARN).
  bool load_main(const std::string& path, bool bind_symbols = true);

  // What one dlopen call did.
  struct DlopenResult {
    int object = -1;                 // the loaded object, or -1
    std::vector<LoadError> errors;   // every error found (trace-mode style)
    std::optional<LoadError> first;  // what dlopen() would fail with
    std::vector<int> new_objects;    // objects this call added, in load order
  };
  // dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL)) called from `caller`. On
  // failure the objects it added stay listed (for the report) but leave no trace in later loads.
  DlopenResult dlopen(const std::string& path, bool global, int caller = 0);

  const std::vector<LoadedObject>& objects() const { return objects_; }
  // $ORIGIN of an object, as the loader expands it: the directory of its path.
  std::string origin(int object) const;
  // Whether objects()[i] is in the process: a failed dlopen's objects stay listed, unloaded.
  bool mapped(int i) const { return !dead_[i]; }
  // Errors of load_main, in the order ld.so meets them: missing libraries in load order,
  // then version errors, then undefined symbols (relocation order).
  const std::vector<LoadError>& errors() const { return errors_; }
  // What load_main preloaded (LD_PRELOAD, /etc/ld.so.preload), in order, and what it could not.
  const std::vector<int>& preloaded() const { return preloaded_; }
  const std::vector<PreloadFailure>& preload_failures() const { return preload_failures_; }

  // One line of `ldd`: a loaded object, or a library that was not found (trace mode lists a
  // missing library each time it is needed).
  struct ListEntry {
    int object = -1;
    std::string missing;  // the name, when object is -1
  };
  // The lines in ld.so's order: load order, with ld.so at its first place of need. Empty when
  // the load met a fatal error (a candidate that open_verify rejects): ld.so prints no list then.
  std::vector<ListEntry> list_order() const;

  const LoaderConfig& config() const { return *config_; }

  // An object that needs versions of a library whose loaded copy has no symbol versioning
  // (elf/dl-version.c: "no version information available", which ld.so says with LD_WARN, as
  // glibc's ldd runs it), in the order _dl_check_all_versions meets them.
  struct UnversionedNeed {
    int object = -1;
    int provider = -1;
  };
  std::vector<UnversionedNeed> unversioned_needs() const;

 private:
  struct Search;
  Resolution resolve(std::string_view name, int requester);
  void search(Search& s, int requester);
  std::string search_key(std::string_view name, int requester) const;
  void search_dirs(Search& s, const std::vector<std::string>& dirs, Rule rule, int rpath_owner);
  // `quiet_if_absent`: a candidate that does not exist leaves no attempt behind.
  bool try_path(Search& s, const std::string& path, Rule rule, const std::string& source, int rpath_owner,
                bool quiet_if_absent = false);
  int find_loaded(std::string_view name);
  void index_name(int object, std::string_view name);
  void add_name(int object, std::string_view name);
  void forget_dead();
  bool is_directory(const std::string& dir) const;
  // Shared by the files of the load model: whether an object answers to a name (process.cc), the
  // error a failed resolution gives (search.cc), the assertion that ends ld.so when an unversioned
  // copy of a versioned library is bound to (binding.cc).
  static bool answers_to(const LoadedObject& o, std::string_view name);
  static LoadError resolution_error(const Resolution& r, int obj, const std::string& requester, u8 host_class);
  static std::optional<LoadError> unversioned_abort(const std::vector<LoadedObject>& objects,
                                                    const std::vector<int>& order, const std::vector<int>& scope);
  int add_object(const std::string& path, std::shared_ptr<const OpenResult> opened, int loader, Rule rule);

  // `trace`: ldd's trace mode (load_main), in which a missing auxiliary object is listed.
  // `preloads` stand after `root` in its search list, before its first dependency.
  std::vector<int> map_deps(int root, std::vector<LoadError>& errors, bool trace,
                            const std::vector<int>& preloads = {});
  void preload(int main);
  struct DepsWalk;
  bool map_filtee(DepsWalk& w, int obj, const elf::ElfFile::Filtee& filtee, size_t& insert_at,
                  std::vector<LoadError>& errors, bool trace);
  bool map_needed(DepsWalk& w, int obj, std::string_view name, std::vector<LoadError>& errors);
  void stop_walk(int obj, Resolution r);
  void check_versions(int object, std::vector<LoadError>& errors);
  // A symbol lookup scope: the objects in lookup order, and the set of their files, sorted.
  struct Scope {
    std::vector<int> order;
    std::vector<const elf::ElfFile*> set;  // sorted
    bool contains(const elf::ElfFile* e) const { return std::binary_search(set.begin(), set.end(), e); }
  };
  Scope make_scope(std::vector<int> order) const;
  void bind_symbols(int object, const Scope& scope, std::vector<LoadError>& errors);
  std::vector<const elf::ElfFile*> providers_for(int object, const Scope& scope) const;
  void report_unbound(int object, std::vector<u32> unbound, std::vector<LoadError>& errors) const;
  std::vector<int> scope_of(int object) const;

  const LoaderConfig* config_;                      // the caller's, which outlives the process
  std::shared_ptr<const LoaderConfig> own_config_;  // when the main program needs another (i386)
  ObjectStore& store_;
  std::vector<ListEntry> chain_;  // creation order, as ld.so's l_next chain
  u8 host_class_ = ELFCLASS64;
  u8 host_data_ = ELFDATA2LSB;
  u16 host_machine_ = EM_X86_64;
  std::optional<std::vector<std::string>> ld_library_path_dirs_;
  std::vector<LoadedObject> objects_;
  std::vector<int> global_scope_;  // main's searchlist, then RTLD_GLOBAL objects
  std::vector<LoadError> errors_;
  std::vector<int> preloaded_;
  std::vector<PreloadFailure> preload_failures_;
  int interpreter_ = -1;
  std::vector<bool> dead_;
  // Every name an object answers to (path, requested names, SONAME), by hash, each match checked
  // against the object's own names. A process holds up to a few hundred names and is copied for
  // every file checked in a context: flat vectors copy at the cost of a memcpy, where a map of
  // strings would allocate for every node. `slots_` is an open-addressing index into `by_name_`
  // (-1: empty), at most half full.
  struct NameEntry {
    size_t hash;
    int object;
  };
  std::vector<NameEntry> by_name_;
  // Searches made by this process and its copies (search_key), shared between threads.
  std::shared_ptr<SearchMemo> searches_;
  std::vector<int> slots_;
  bool fatal_ = false;  // load_main met an error that ends ld.so even in trace mode

 public:
  // A point to come back to. Checking a file in an import context is a dlopen that must leave
  // no trace: `rollback` undoes everything done since `mark`, at the cost of what was added,
  // where a copy of the process would cost all of it.
  struct Mark {
    size_t objects = 0;
    std::vector<u32> names, deps;  // of each object then loaded: how many it had
    std::vector<ListEntry> chain;
    std::vector<int> global_scope;
    std::vector<NameEntry> by_name;
    std::vector<int> slots;
    bool fatal = false;
  };
  Mark mark() const;
  void rollback(Mark mark);
};

}  // namespace envdoctor::loader
