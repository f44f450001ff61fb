// Turning a load failure into a finding a tired engineer can act on: the file and package to
// blame, the loader's words, and the command that fixes it. Hints use what only envdoctor
// knows together: the records (a file a package lists but lost), the ELF index (a copy that
// exists but is not on the search path), and the knowledge table (which wheel ships a SONAME).
#pragma once

#include <string>

#include "checks/environment.h"
#include "checks/finding.h"
#include "checks/knowledge.h"
#include "loader/process.h"

namespace envdoctor::checks {

Finding finding_for_load_error(const Environment& env, const Knowledge& knowledge, const loader::Process& process,
                               const loader::LoadError& error);

// `f`'s hint and fix for a file the loader rejects: reinstall its owner.
void advise_invalid_file(Finding& f, const Environment& env, const std::string& path);

// A fix: `command` performs it for this environment when pasted from any directory with no
// environment active (the environment is named in it); `note` says where it installs from, or
// why there is no command.
struct Fix {
  std::string command;  // "" when no command can be given
  std::string note;     // "" when the command says it all
};

// How to reinstall `dist` in this environment, in the words of the installer that installed it:
// `<env>/bin/python -m pip` (pip), `uv pip install --python <env python>` (uv), `conda install -p
// <prefix>` (conda), `apt-get install --reinstall` (Debian's package); never pip for a
// distribution another installer manages. pip and uv reinstall from the origin direct_url.json
// records (a wheel file, a VCS commit, a directory, a URL); only without one is an index assumed.
Fix reinstall(const Environment& env, const python::Distribution& dist);

// The command that uninstalls `dist` (pip or uv); "" for another installer.
std::string uninstall_command(const Environment& env, const python::Distribution& dist);

// `f`'s hint becomes `why` followed by what reinstall() says, and its fix_command reinstall's command.
void advise_reinstall(Finding& f, const Environment& env, const python::Distribution& dist, const std::string& why);

// How to install a distribution nothing in the environment provides any more, as `consumer`
// requires it (its Requires-Dist line `requirement`), with the installer that installed
// `consumer`. An index is assumed only when `consumer` came from one.
Fix install_requirement(const Environment& env, const python::Distribution& consumer,
                        const python::Requirement& requirement);

// The interpreter's own pip, run for this environment: `<env>/bin/python -m pip` when the
// environment has pip, else `python3 -m pip --python <env>/bin/python`.
std::string pip_for(const Environment& env);

// A word for a POSIX shell: as it is when nothing in it is special, else single-quoted.
std::string shell_word(const std::string& s);

// The C++ name of a mangled symbol, or the symbol itself.
std::string demangle(const std::string& symbol);

}  // namespace envdoctor::checks
