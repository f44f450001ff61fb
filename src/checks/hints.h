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

std::string hint_for_invalid_file(const Environment& env, const std::string& path);

// The command that reinstalls `dist` in this environment, in the words of the installer that
// installed it: pip, uv (for this interpreter), conda (for this prefix), apt-get (Debian's
// package). Never pip for a distribution another installer manages.
std::string reinstall_command(const Environment& env, const python::Distribution& dist);

// The C++ name of a mangled symbol, or the symbol itself.
std::string demangle(const std::string& symbol);

}  // namespace envdoctor::checks
