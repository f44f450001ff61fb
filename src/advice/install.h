// Commands in the words of the installer that installed a distribution: pip and uv for this
// environment's interpreter, conda for its prefix, apt for Debian's packages; never pip for a
// distribution another installer manages.
#pragma once

#include <string>
#include <vector>

#include "advice/fix.h"
#include "environment/environment.h"
#include "python/distribution.h"

namespace envdoctor::advice {

using environment::Environment;

// A word for a POSIX shell: as it is when nothing in it is special, else single-quoted.
std::string shell_word(const std::string& s);

// The environment's interpreter as a path that works from any directory.
std::string environment_python(const environment::Environment& env);

// The interpreter's own pip, run for this environment: `<env>/bin/python -m pip` when the
// environment has pip, else `python3 -m pip --python <env>/bin/python`.
std::string pip_for(const environment::Environment& env);

// How to reinstall `dist` in this environment, in the words of the installer that installed it:
// `<env>/bin/python -m pip` (pip), `uv pip install --python <env python>` (uv), `conda install -p
// <prefix>` (conda), `apt-get install --reinstall` (Debian's package). pip and uv reinstall from
// the origin direct_url.json records (a wheel file, a VCS commit, a directory, a URL); only
// without one is an index assumed. The hint says where it installs from, or why there is no command.
Fix reinstall(const environment::Environment& env, const python::Distribution& dist);

// reinstall(), its hint preceded by `why` ("" for none).
Fix reinstall_because(const environment::Environment& env, const python::Distribution& dist, const std::string& why);

// A file the loader rejects (truncated, damaged): reinstall its owner, or replace it.
Fix invalid_file(const environment::Environment& env, const std::string& path);

// Two or more distributions list one file (`owners`), and uninstalling any of them deletes it for
// all: keep `keep` alone (uninstall the others, then reinstall it). `holder`, when known, is the
// one whose copy the file holds now.
Fix keep_only(const environment::Environment& env, const std::vector<const python::Distribution*>& owners,
              const python::Distribution& keep, const python::Distribution* holder);

// The command that uninstalls `dist` (pip or uv); "" for another installer.
std::string uninstall_command(const environment::Environment& env, const python::Distribution& dist);

// How to install a distribution nothing in the environment provides any more, as `consumer`
// requires it (its Requires-Dist line `requirement`), with the installer that installed
// `consumer`. An index is assumed only when `consumer` came from one.
Fix install_requirement(const environment::Environment& env, const python::Distribution& consumer,
                        const python::Requirement& requirement);

// The command that installs `spec` from an index with the installer that installed `by` (pip or
// uv; pip when `by` is null), `--upgrade` when asked; "" for another installer.
std::string index_install(const environment::Environment& env, const python::Distribution* by, const std::string& spec,
                          bool upgrade);

}  // namespace envdoctor::advice
