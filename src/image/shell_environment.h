// Apptainer's environment, read without running it. Apptainer keeps a SIF image's environment as
// shell scripts that every action sources in name order (`for script in
// /.singularity.d/env/*.sh; do . "$script"; done`, apptainer internal/pkg/build/sources/*.sh):
// 10-docker2singularity.sh with the OCI configuration's Env (`export PATH="..."`, `export
// VAR="${VAR:-"value"}"`), 90-environment.sh with the definition file's %environment, and
// Apptainer's own 01-base.sh, 95-apps.sh, 99-base.sh and 99-runtimevars.sh. Images of Singularity
// 2 have one script, /environment.
//
// What is read: the assignments at the top level of a script (`VAR=value`, `export VAR=value`,
// several on one line), their values quoted as the shell quotes them ('...', "...", \x) and
// expanded from what the scripts set before ($VAR, ${VAR}, ${VAR:-word}, ${VAR-word}, ${VAR:+word},
// ${VAR+word}), and `unset VAR`. The scripts start from an empty environment, as `apptainer exec
// --cleanenv` does. What is not: anything inside if, case, loops or functions (so 99-base.sh's
// appending of /.singularity.d/libs, where `--nv` binds the host's driver libraries, to
// LD_LIBRARY_PATH), commands and their substitutions ($(...), `...`), sourced files, the host's
// environment that Apptainer passes in without --cleanenv, and APPTAINERENV_ variables. An
// assignment that needs what is not read is left out and said.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace envdoctor::image {

using Environment = std::vector<std::pair<std::string, std::string>>;

// `env` after the script `text` (named `name` in what is said) has run; each assignment left out
// goes into `skipped` as "NAME:LINE: why".
void apply_shell_environment(const std::string& name, const std::string& text, Environment& env,
                             std::vector<std::string>* skipped);

// The environment of a SIF image's root at `root` (on this machine): its /.singularity.d/env/*.sh
// in name order, else its /environment.
Environment read_singularity_environment(const std::string& root, std::vector<std::string>* skipped);

}  // namespace envdoctor::image
