// A fix asked for, as data. A check that finds a failure keeps, with its finding, what the fix is
// to be made from (the load error with what advice reads of its process, the distribution to
// reinstall, the file the loader rejects); it never calls advice itself. After the checks, one
// pass (checks/run.h) makes every fix from its request and puts it into the finding; `check`
// then tries each fix on the model before it is offered (scenarios/fix_trial.h).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "advice/fix.h"
#include "advice/load_failure.h"
#include "environment/environment.h"
#include "environment/knowledge.h"
#include "python/distribution.h"

namespace envdoctor::advice {

// A file the loader rejects (install.h's invalid_file).
struct InvalidFile {
  std::string path;
};

// Reinstall `dist`, the hint preceded by `why` (install.h's reinstall_because).
struct Reinstall {
  const python::Distribution* dist = nullptr;
  std::string why;
};

// Keep one of the distributions that list one file (install.h's keep_only).
struct KeepOnly {
  std::vector<const python::Distribution*> owners;
  const python::Distribution* keep = nullptr;
  const python::Distribution* holder = nullptr;
};

// Install `spec` from an index with the installer of `by`: a command, no hint (install.h's
// index_install).
struct IndexInstall {
  const python::Distribution* by = nullptr;
  std::string spec;
};

struct FixRequest {
  std::variant<LoadFailure, InvalidFile, Reinstall, KeepOnly, IndexInstall> what;
  // How the fix joins the finding: its hint after the words the check wrote itself (`joint`
  // between them, none when the check wrote none), and whether its hint and its command are
  // offered at all.
  std::string joint = "; ";
  bool offer_hint = true;
  bool offer_command = true;
};

// The fix `request` asks for, in this environment. Pointers in a request are into `env`.
Fix make_fix(const environment::Environment& env, const environment::Knowledge& knowledge, const FixRequest& request);

// `fix` put into a finding's `hint` (the check's own words so far) and `command`, as `request`
// says.
void attach(const FixRequest& request, const Fix& fix, std::string& hint, std::string& command);

}  // namespace envdoctor::advice
