// The environment under examination, assembled once by the first three stages of the pipeline:
// discover (the interpreter, its sys.path, the loader's facts), inventory (distributions, their
// records, who owns which file) and the ELF index (every ELF file under sys.path, parsed once,
// in parallel, from read-only mappings). The checks read it and never change it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/fatbin.h"
#include "environment/file_view.h"
#include "image/gpu_container.h"
#include "image/image.h"
#include "loader/object_store.h"
#include "loader/search_paths.h"
#include "python/distribution.h"
#include "python/dpkg.h"
#include "python/interpreter.h"
#include "python/ownership.h"
#include "python/site_environments.h"

namespace envdoctor::environment {

struct EnvironmentOptions {
  std::string python;  // --python EXE ("" for the default order)
  std::string prefix;  // --prefix DIR: read the layout, run nothing
  // --root DIR: a container's root file system. `prefix` is then the container's own path of
  // the environment, and nothing runs (the container's interpreter cannot run here).
  std::string root;
  std::optional<std::string> ld_library_path;
  std::string glibc_tunables;  // GLIBC_TUNABLES, for the static TLS block's size
  std::string ld_preload;      // LD_PRELOAD (loader/preload.h)
  // Under --root: the node driver of a GPU container, whose start rebuilds the root's
  // ld.so.cache (image/gpu_container.h); nullopt for the root as it is.
  std::optional<cuda::DriverVersion> gpu_container_driver;
  // --image: the image whose composed root `root` is (image/image.h).
  std::optional<image::ImageFacts> image;
};

// What starting the root as a GPU container changed for the loader.
struct GpuContainerFacts {
  std::string driver;                          // the node's, as given
  std::optional<image::CompatLibcuda> compat;  // cuda-compat's libcuda and the hook's verdict
  image::DriverCapabilities capabilities;      // whose driver libraries the toolkit mounts
  size_t entries = 0;                          // of the rebuilt cache
  // SONAMEs the rebuilt cache resolves otherwise than the image's own: name, before ("" none), after.
  struct Change {
    std::string soname, before, after;
  };
  std::vector<Change> changed;
};

struct ElfRecord {
  std::string path;  // absolute, as found under sys.path
  std::shared_ptr<const loader::OpenResult> opened;
  std::vector<const python::Distribution*> owners;
  bool extension_module = false;  // defines PyInit_<module>
  bool executable = false;        // a program, loaded as a main program rather than dlopen'd
};

// What an environment is, as values: what a what-if copies whole when it derives one environment
// from another (Environment::overlay).
struct EnvironmentFacts {
  python::PythonEnvironment python;
  python::Inventory inventory;
  loader::LoaderConfig loader;
  std::vector<ElfRecord> elf_files;  // sorted by path
  size_t foreign_elf_files = 0;      // other machines' or classes' objects (cubins, cross builds)
  std::vector<std::string> problems;
  // What a simulation changed, for hints and the what-if summary: the distributions it
  // uninstalled (--without, and the old version a --with replaced), as they were, and the
  // distributions it installed ("tinypure 0.1").
  std::vector<python::Distribution> removed;
  std::vector<std::string> added;
  FileView files;  // the disk, as a simulation changes it
  // The container's root file system (--root), empty for this machine's. Every path above is
  // the container's own; host() says where this machine reads it.
  support::FileRoot root;
  // --image: the image whose composed root `root` is, its configuration's environment and the
  // interpreter chosen from it.
  std::optional<image::ImageFacts> image;
  std::optional<GpuContainerFacts> gpu_container;
  // Under a root or image: its other Python environments, not checked (python/site_environments.h).
  std::vector<python::OtherEnvironment> other_environments;
  // Who manages the environment itself: conda (a conda-meta directory), uv or pip (a virtual
  // environment, by its pyvenv.cfg), Debian (the distribution's own interpreter); nullopt when
  // none of these.
  std::optional<python::Distribution::Tool> installer;

  u8 host_class = ELFCLASS64;  // the interpreter's: objects of another class or machine are never loaded
  u8 host_data = ELFDATA2LSB;
  u16 host_machine = EM_X86_64;
};

// The environment: its facts, the indexes built from them, and the parsed files, which a what-if's
// overlay shares with the environment it is derived from.
class Environment : public EnvironmentFacts {
 public:
  std::unique_ptr<python::OwnershipIndex> ownership;
  std::shared_ptr<loader::ObjectStore> store;
  std::string host(const std::string& path) const { return root.host(path); }

  // The environment as a change will leave it, before the change: a copy of this one's facts, its
  // files read through this one's store and its fatbinary listings reused, that a simulation then
  // changes (scenarios/simulation.h). This environment is never changed by it.
  std::unique_ptr<Environment> overlay() const;

  // The distributions whose records list `path` (lexically normalized first); for a file no
  // record lists, the Debian-managed distribution of the package whose dpkg list has it.
  const std::vector<const python::Distribution*>& owners(const std::string& path) const;
  const std::vector<const python::Distribution*>& owners_of_file(const std::string& normal_path) const;
  const python::Distribution* owner(const std::string& path) const;
  // The Debian package whose file list holds `path`; nullopt when none, or without a dpkg
  // database (build_environment reads it while the interpreter answers its probe).
  std::optional<python::DpkgPackage> debian_owner(const std::string& path) const;
  // After the inventory changed: which Debian package answers for which distribution.
  void index_installers();
  // Who owns `path`, for people: "torch 2.9.0", "Debian package libstdc++6 12.2.0-14", or
  // "no package".
  std::string owner_label(const std::string& path) const;
  std::shared_ptr<const python::DpkgIndex> dpkg;  // system packages, read on first question
  const ElfRecord* elf(const std::string& path) const;

  // The installed distributions that `dist` requires, transitively, dependencies before their
  // users (the order imports load them), without `dist` itself. Each distribution's own
  // requirements are resolved once per inventory, so a closure costs its size.
  std::vector<const python::Distribution*> requirement_closure(const python::Distribution& dist) const;
  // The installed distributions `dist` requires directly, in its Requires-Dist order.
  const std::vector<const python::Distribution*>& requirements(const python::Distribution& dist) const;

  // Adds a parsed file to the ELF index (files of another class or machine are only counted).
  void add_elf_file(const std::string& path, std::shared_ptr<const loader::OpenResult> opened);
  // After the inventory or the file view changed: rebuilds ownership, drops removed files.
  void refresh();
  void index_elf_files();  // fills by_path_ after elf_files changes

  // The fatbinary listing of a parsed file, read once per run and kept: a simulation's second
  // check reads no header twice. Parsed files live as long as the store, so the key is stable.
  const cuda::FatbinInfo& fatbins(const elf::ElfFile& file) const;

 private:
  std::unordered_map<std::string, size_t> by_path_;
  void build_requirements() const;  // fills requires_, under requires_mu_
  std::unordered_map<std::string, std::vector<const python::Distribution*>> debian_;  // dpkg package -> distribution
  // Each distribution's installed requirements, built on first question, dropped by refresh().
  mutable std::mutex requires_mu_;
  mutable std::atomic<bool> requires_built_{false};
  mutable std::unordered_map<const python::Distribution*, std::vector<const python::Distribution*>> requires_;
  mutable std::mutex fatbin_mu_;
  mutable std::unordered_map<const elf::ElfFile*, std::shared_ptr<const cuda::FatbinInfo>> fatbins_;
};

// Runs discover, inventory and the ELF index, and says what lies beside the environment (its
// root's other environments, the site code not run: surroundings.h): the environment whole, which
// nothing changes after. nullptr with `error` set when the environment cannot be examined at all
// (no interpreter, unreadable prefix): exit status 2. The options are those open_session
// (session.h) has validated: a root comes with a prefix inside it.
std::unique_ptr<Environment> build_environment(EnvironmentOptions options, std::string* error);

// Every regular file under `dirs` that starts with the ELF magic and may be loaded (named *.so*
// or executable), not descending into __pycache__ or into another site directory. Under a
// root, `dirs` and the result are in-root paths and the walk reads below the root. `listing`
// (may be null) receives every entry the walk read, for the file view. Below the directories of
// `import_only` (an editable project's roots), only directories named as packages are walked.
std::vector<std::string> find_elf_files(const std::vector<std::string>& dirs, const support::FileRoot& root = {},
                                        Listing* listing = nullptr, const std::set<std::string>& import_only = {});

// The glibc release of a root file system ("2.36"), from its libc.so.6: the file name of old
// releases (libc-2.31.so), else the version banner gnu_get_libc_version's string sits in, else
// the highest GLIBC_2.N version the library defines. "" when there is no readable libc.so.6.
std::string root_glibc_version(loader::ObjectStore& store, const loader::LoaderConfig& config);

// Whether the file at `path` (on this machine) starts with the ELF magic; false when unreadable.
bool has_elf_magic(const std::string& path);

// Whether `import` could open `path` as an extension module: its name ends in ".so" (the last of
// importlib.machinery.EXTENSION_SUFFIXES, which covers the others) after an identifier.
bool named_as_extension_module(const std::string& path);

// `path` made absolute and lexically normal ("/a/b/../c" -> "/a/c").
std::string normalize_path(const std::string& path);

}  // namespace envdoctor::environment
