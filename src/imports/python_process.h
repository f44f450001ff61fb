// The one model of a Python process of the environment: the interpreter started as the main
// program, and what `import P` loads into it. Every check that asks what a process holds (the
// load checks, the import-order and static-TLS checks, the CUDA checks, the advice that loads a
// consumer again) asks this model, so they judge the same process.
//
// What `import P` does to the address space, as CPython and the packages do it:
// - Python opens an extension module by path with dlopen(RTLD_NOW | RTLD_LOCAL) from libpython,
//   so no caller's RPATH joins the search; the interpreter stands for the caller.
// - A module is P's when P owns it; a file two distributions own is a module of each of them.
// - The distributions P requires (Requires-Dist, transitively, as this interpreter's markers
//   select them) are imported before P, since P's modules import them first.
// - Importing any module of a package runs its __init__.py first: the extension modules
//   __init__.py imports load first, in its order; the rest of P's modules after them.
// - torch/__init__.py loads lib/libtorch_global_deps.so with RTLD_GLOBAL before its extension
//   module, and the CUDA wheels' libraries by path, as its release does (torch_preload.h,
//   docs/torch.md): after a failure that names one of them, or after libcudart loaded.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "environment/environment.h"
#include "imports/torch_preload.h"
#include "loader/process.h"
#include "python/distribution.h"

namespace envdoctor::imports {

using environment::ElfRecord;
using environment::Environment;
using python::Distribution;

// The names a package's __init__.py imports from the package itself ("from . import _C",
// "from .ops import x", "import torch._C", "from torch._C import *"), in order. Read as text,
// line by line: enough for the import statements extension packages use, never executed.
std::vector<std::string> init_imports(const std::string& package, const std::string& text);

class ImportModel {
 public:
  explicit ImportModel(const Environment& env);

  const Environment& env() const { return env_; }

  // The interpreter's process as `python` starts it: its program (PythonEnvironment::program())
  // loaded as the main program under `config`.
  struct Interpreter {
    loader::Process process;
    bool found = false;   // the environment has an interpreter (a root may have none)
    bool loaded = false;  // it loaded without a fatal error
    int caller = -1;      // what a module's dlopen is called from: the interpreter (0), or none
  };
  Interpreter start(const loader::LoaderConfig& config) const;
  Interpreter start() const { return start(env_.loader); }

  // `dist`'s extension modules, by path; empty when it has none.
  const std::vector<const ElfRecord*>& modules(const Distribution& dist) const;
  // Every distribution's extension modules.
  const std::map<const Distribution*, std::vector<const ElfRecord*>>& modules_by_distribution() const {
    return modules_;
  }
  // Those its top-level packages' __init__.py import, in that order.
  std::vector<const ElfRecord*> init_modules(const Distribution& dist) const;
  // The distributions with extension modules in the order an import of every package loads
  // them: by name, each after what it requires.
  std::vector<const Distribution*> import_order() const;

  // Called after each dlopen an import makes, with what it did: `module` is the extension module
  // opened, or null for a library torch preloads (`path`).
  using LoadFn = std::function<void(const ElfRecord* module, const std::string& path,
                                    const loader::Process::DlopenResult& result)>;

  // What `import dist` leaves loaded in `p`, what it requires excluded: torch's preload, then its
  // modules, those of __init__.py first. Returns the number of dlopen calls.
  // `stop` (may be null): as preload_torch's, when `dist` is torch.
  size_t import(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load = {},
                TorchPreloadStop* stop = nullptr) const;
  // What `dist` requires, each imported as above, before `dist`. Returns the dlopen calls.
  // `stop` (may be null) is set where a required torch's import raises its preload's ValueError.
  size_t import_requirements(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load = {},
                             TorchPreloadStop* stop = nullptr) const;
  // torch/__init__.py's loads before its extension module, as the release installed makes them
  // (torch_preload.h). Returns the dlopen calls.
  // `stop` (may be null) is set where the recovery stopped at a library no wheel holds.
  size_t preload_torch(loader::Process& p, int caller, const Distribution& torch, const LoadFn& on_load = {},
                       TorchPreloadStop* stop = nullptr) const;
  // The directories torch's preload globs in: a file added or removed there changes what it loads.
  std::vector<std::string> torch_preload_dirs(const Distribution& torch) const;

 private:
  std::string find_preloaded(const TorchPreload& how, std::optional<int> cuda, const TorchPreload::Library& lib) const;

  const Environment& env_;
  std::map<const Distribution*, std::vector<const ElfRecord*>> modules_;
  std::map<std::string, std::vector<std::string>> elf_names_by_dir_;
};

}  // namespace envdoctor::imports
