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
// - What a package opens by itself at import (torch/__init__.py's lib/libtorch_global_deps.so with
//   RTLD_GLOBAL and the CUDA wheels' libraries by path, as its release does) is data
//   (data/package_loads.json, docs/package-loads.md), run by package_loads.h before the package's
//   extension modules.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "environment/environment.h"
#include "imports/package_loads.h"
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
  ImportModel(const Environment& env, const environment::PackageRules& rules);

  const Environment& env() const { return env_; }
  const PackageLoads& package_loads() const { return loads_; }
  // The node's GPU, as the rules' `gpu` condition reads it (PackageLoads::set_gpu).
  void set_gpu(std::optional<bool> gpu) { loads_.set_gpu(gpu); }

  // The interpreter's process as `python` starts it: its program (PythonEnvironment::program())
  // loaded as the main program under `config`.
  struct Interpreter {
    loader::Process process;
    bool found = false;   // the environment has an interpreter (a root may have none)
    bool loaded = false;  // it loaded without a fatal error
    int caller = -1;      // what a module's dlopen is called from: the interpreter (0), or none
  };
  Interpreter start(const loader::LoaderConfig& config) const { return start_in(env_, config); }
  Interpreter start() const { return start(env_.loader); }
  // The same, for a question about the interpreter alone (no import).
  static Interpreter start_in(const Environment& env, const loader::LoaderConfig& config);

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
  // opened, or null for a library the package opens itself (`path`).
  using LoadFn = std::function<void(const ElfRecord* module, const std::string& path,
                                    const loader::Process::DlopenResult& result)>;

  // What `import dist` leaves loaded in `p`, what it requires excluded: its own loads at import
  // (package_loads.h), then its modules, those of __init__.py first. Returns the number of dlopen
  // calls. `runs` (may be null) gets the run of its import rule, where one matches.
  size_t import(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load = {},
                std::vector<RuleRun>* runs = nullptr) const;
  // The same sequence for `import dist` alone, as the load checks walk it: its own loads, then
  // only the modules its __init__.py imports, `before` called with each (once) before it joins `p`.
  using BeforeFn = std::function<void(const ElfRecord& module)>;
  size_t import_init(loader::Process& p, int caller, const Distribution& dist, const BeforeFn& before,
                     std::vector<RuleRun>* runs = nullptr) const;
  // What `dist` requires, each imported as above, before `dist`. Returns the dlopen calls.
  size_t import_requirements(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load = {},
                             std::vector<RuleRun>* runs = nullptr) const;
  // `dist`'s own loads at import alone (package_loads.h), before its modules. Returns the dlopen
  // calls; `runs` as above.
  size_t import_own_loads(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load = {},
                          std::vector<RuleRun>* runs = nullptr) const;

 private:
  const Environment& env_;
  PackageLoads loads_;
  std::map<const Distribution*, std::vector<const ElfRecord*>> modules_;
};

}  // namespace envdoctor::imports
