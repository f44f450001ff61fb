// The one engine that runs data/package_loads.json (docs/package-loads.md): what a package opens by
// itself, run in a Process of the environment's interpreter as the package would, never executing
// it. The import model runs a package's `import` rules inside `import P` (python_process.h), so the
// copies they open, RTLD_GLOBAL ones above all, are in the process that every check judges; the
// later moments (first use, first compile) run on the process an import left.
//
// Every copy opened records how it was found (the rule, the step, the place), and a rule that ends
// in the package's exception or fallback records its words; the checks turn that into findings
// (checks/package_load_findings.h) and advice into fixes, each tried on the model.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "environment/environment.h"
#include "environment/package_rules.h"
#include "imports/python_source.h"
#include "imports/rule_values.h"
#include "loader/process.h"

namespace envdoctor::imports {

using environment::Environment;
using environment::Moment;
using environment::PackageRule;
using environment::Place;
using python::Distribution;

// One library a step looked for, and what came of it.
struct OwnLoad {
  const environment::Step* step = nullptr;  // the step as the table has it (an `each` item's list step)
  std::string lib;
  std::string what;                // what the package is doing, as the step (or its group) says
  std::vector<std::string> names;  // the names tried, values put in
  // Where the copy was found: the place's index in the step, its kind, and in words ("sys.path entry
  // /v/lib/python3.11/site-packages: nvidia/cu13/lib", "CUDNN_HOME=/opt/cudnn", "ld.so.cache").
  int place = -1;
  Place::Kind place_kind = Place::Kind::kDlopen;
  std::string found_by;
  // A dlopen place: the rule of the loader's search that found the copy (found_by says it in words).
  std::optional<loader::Rule> loader_rule;
  std::string path;                       // the copy opened; "" when no place held one
  bool global = false;                    // RTLD_GLOBAL
  int object = -1;                        // the copy in the process, where it loaded
  std::vector<loader::LoadError> errors;  // its dlopen's errors, the first as dlerror says it
  std::vector<std::string> listed;        // an ldconfig place: the paths of the lines that held its text
  bool own_package = true;                // the copy is the opener's own package's (`own` steps)
};

// One rule run once: for a package, or for one opener file.
struct RuleRun {
  const PackageRule* rule = nullptr;
  const Distribution* dist = nullptr;  // the package (an opener rule: the opener's distribution, if any)
  std::string file;                    // what the rule is about: the opener, or the fingerprint's file
  std::vector<OwnLoad> loads;
  enum class End { kDone, kRaised, kFellBack };
  End end = End::kDone;
  std::string words;  // kRaised, kFallBack: the package's own words
  std::string to;     // kFellBack: what the package runs on instead
  int at = -1;        // kRaised, kFallBack: the load of `loads` that ended it
  // The rule's values that were asked for, each as its whole text ("cuda": "12"): a value named
  // `cuda` is the CUDA major the package was built for, which the fixes read.
  std::map<std::string, std::string> values;
  // false where a condition could not be decided (a value Python's int() refuses, which raises
  // ValueError before the loads): the rule gives no verdict, and has stopped there.
  bool decided = true;
};

// Whether `version` is in a rule's `releases` (a PEP 440 specifier; "" for every release): its
// public part, a pre-release or development release of X.Y counted as X.Y.
bool in_releases(const std::string& version, const std::string& specifier);

// Whether a load's error words name one of `items`' libraries: the part of a name before its first
// '.' is in the words (torch's is_cuda_lib_err).
bool names_a_library(const std::vector<environment::ListItem>& items, const std::string& words);

class PackageLoads {
 public:
  PackageLoads(const Environment& env, const environment::PackageRules& rules);

  // The rule of `dist` for `moment` that its release and fingerprint match: the first in the
  // table's order; nullptr where none (no verdict). `file` (may be null): the fingerprint's file.
  const PackageRule* rule_for(const Distribution& dist, Moment moment, std::string* file = nullptr) const;
  bool has_rules(const Distribution& dist) const;

  // Called after each dlopen a rule makes that opens a file (a bare name not found is not).
  using OpenFn = std::function<void(const std::string& path, const loader::Process::DlopenResult& result)>;

  // Runs `dist`'s rule for `moment` in `p`, the package's dlopen called from `caller` (the
  // interpreter, for ctypes). nullopt where no rule matches.
  std::optional<RuleRun> run(loader::Process& p, int caller, const Distribution& dist, Moment moment,
                             const OpenFn& on_open = {}) const;

  // The opener rules (cuDNN's shim, NVRTC): each run for the object `opener` of `p`, its dlopen
  // called from it. Empty where none names its SONAME.
  std::vector<RuleRun> run_opener(loader::Process& p, int opener, const OpenFn& on_open = {}) const;
  // Whether a rule names `soname` as its opener.
  bool opens(const std::string& soname) const;

  // The directories a rule of `dist` looks in: a file added or removed there changes what it loads
  // (the memo of a simulated change).
  std::vector<std::string> directories(const Distribution& dist) const;

  const environment::PackageRules& rules() const { return rules_; }

  // The process's variables as the rules read them, with `overrides` in their place (a fix tried
  // on the model sets one).
  void set_variables(std::vector<std::pair<std::string, std::string>> overrides) { overrides_ = std::move(overrides); }
  std::optional<std::string> variable(const std::string& name) const;

  // Whether the node has an NVIDIA GPU (the `gpu` condition): true where the run knows one (--gpu,
  // --node, this machine's detection), false where it knows none and no driver, nullopt where it
  // cannot say (a driver without a GPU listed); then neither `gpu` condition holds.
  void set_gpu(std::optional<bool> gpu) { gpu_ = gpu; }

 private:
  class Runner;
  bool fingerprint_holds(const PackageRule& rule, const Distribution& dist, std::string* file) const;
  const std::vector<std::string>& ldconfig_lines() const;
  std::vector<std::string> glob(const std::string& dir, const std::string& pattern, bool recursive) const;

  const Environment& env_;
  const environment::PackageRules& rules_;
  std::map<std::string, std::vector<const PackageRule*>> by_package_;
  std::map<std::string, std::vector<const PackageRule*>> by_opener_;
  // What a glob inside the environment finds: the ELF files of its index by directory, in the
  // index's order (a simulated install's files included).
  std::map<std::string, std::vector<std::string>> elf_names_by_dir_;
  std::vector<std::pair<std::string, std::string>> overrides_;
  std::optional<bool> gpu_;
  // Shared by the threads that check import contexts.
  mutable std::mutex listings_mutex_;
  mutable GlobListings listings_;
  mutable std::once_flag ldconfig_once_;
  mutable std::vector<std::string> ldconfig_;
};

}  // namespace envdoctor::imports
