// `why NAME`: the load model's reasons about one library, file or package, gathered once.
//
// A SONAME (or file name): every copy the environment could reach and who owns it, every ELF
// file that needs it, where each one's need resolves, by which rule, and which copies that
// shadows. A path: the same for the library at that path. A package: what its ELF files need
// and where that resolves, and in reverse which files of other packages need its files.
// src/report/why.cc renders the answer.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checks/load_checks.h"
#include "checks/run.h"
#include "cuda/tables.h"
#include "environment/environment.h"
#include "environment/session.h"

namespace envdoctor::queries {

struct OwnedPath {
  std::string path;
  std::string owner;  // Environment::owner_label: "numpy 1.26.4", "Debian package libc6 2.36", ...
};

struct WhyLibrary {
  std::string name;                     // the SONAME (or file name) asked about
  std::optional<OwnedPath> asked_path;  // when the question was a path: that file
  std::vector<OwnedPath> copies;        // every copy the environment can reach
  struct Need {
    OwnedPath consumer;
    checks::Edge edge;
    std::vector<OwnedPath> shadowed;  // the other copies, when the need resolved
  };
  std::vector<Need> needed_by;
};

struct WhyPackage {
  std::string name, version, metadata_dir;
  struct File {
    std::string path;
    std::vector<checks::Edge> needs;
  };
  std::vector<File> files;                                   // its ELF files, by path
  std::map<std::string, std::vector<checks::Edge>> used_by;  // another package's label -> its edges into these files
};

// A distribution that is not installed but that installed ones require (Requires-Dist).
struct WhyAbsent {
  std::string name;                      // as asked
  std::vector<std::string> required_by;  // "consumer 1.0 (provlib>=1.0)"
};

struct WhyAnswer {
  std::optional<WhyPackage> package;
  std::optional<WhyLibrary> library;
  std::optional<WhyAbsent> absent;
  // The findings about what was asked: a package's own (its files, its records), a library's
  // (it is missing, lacks a version or symbol, or its file is damaged), or, for an absent
  // package, its requirers' load failures.
  std::vector<checks::Finding> findings;
  // Whether an error says it will not load (or, absent, that what requires it does not): `why`
  // exits 1.
  bool will_not_load() const;
};

// `findings` are the environment's (check's, sorted). nullopt with `error` set when NAME is no
// package, library or file of the environment, no package an installed one requires, or a path
// that cannot be opened.
std::optional<WhyAnswer> explain_why(const environment::Environment& env, const std::vector<checks::Edge>& edges,
                                     const std::vector<checks::Finding>& findings, const std::string& name,
                                     std::string* error);

// What `check` does to its run before it reports it (scenarios::try_fixes: every fix tried on the
// model), done to `why`'s run too, so that the two never disagree.
using VetRun = std::function<void(const checks::CheckSettings& settings, checks::CheckRun& run)>;

// `why NAME` on the session's environment: every check `check` runs (for the session's node),
// then explain_why on their findings.
std::optional<WhyAnswer> answer_why(const environment::Session& session, const std::string& name, std::string* error,
                                    const VetRun& vet = {});

// Every file the environment could load under `name`: its own ELF files with that SONAME or file
// name, and what the system's search would find (ld.so.cache, LD_LIBRARY_PATH, the default
// directories), read through the environment (its root, its simulated changes). One file under
// several names (/lib is /usr/lib on a merged system) is one copy.
std::set<std::string> reachable_copies(const environment::Environment& env, const std::string& name);

}  // namespace envdoctor::queries
