// Fixes tried on the model before they are offered (issue 49, item 5). A `fix_command` that the
// model can carry out (uninstalling distributions of the environment, `unset LD_LIBRARY_PATH`,
// `export LD_LIBRARY_PATH=...`, or a chain of them joined by &&) is applied to an overlay of the
// environment (Environment::overlay: the environment itself is never changed) and every check runs
// again. It is offered only when the environment after it has
// fewer errors, no error it did not have, every extension module that loaded before still
// loading, and the file the finding is about still there (a fix that uninstalls the package whose
// module it fixes fixes nothing). Otherwise, or when the environment after it cannot be made, the
// command is withdrawn from every finding that carries it (a cause and its consequences share
// one) and the hint says why, so that a tired engineer is never handed a command that makes
// things worse. A command the model cannot carry out (an install from an index it cannot read) is
// left as advice gives it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks/run.h"
#include "environment/environment.h"
#include "environment/knowledge.h"

namespace envdoctor::scenarios {

// What a command does that the model can carry out; nullopt for any other command.
struct ModelledFix {
  std::vector<std::string> uninstall;          // distribution names
  std::optional<std::string> ld_library_path;  // the variable after it ("" unset)
};
std::optional<ModelledFix> model_fix_command(const environment::Environment& env, const std::string& command);

// Why `command` may not be offered, from the findings before it and after it on the model ("" when
// it may): `fixed` is the finding it was offered for.
std::string harm_of_fix(const environment::Environment& before_env, const std::vector<checks::Finding>& before,
                        const environment::Environment& after_env, const std::vector<checks::Finding>& after,
                        const checks::Finding& fixed);

// Tries every distinct modelled fix_command of `run` (check's findings on `env`) and withdraws each
// that harms, in every finding that carries it.
void try_fixes(const environment::Environment& env, const environment::Knowledge& knowledge,
               const cuda::CudaTables& tables, const checks::CheckSettings& settings, checks::CheckRun& run);

}  // namespace envdoctor::scenarios
