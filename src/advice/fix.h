// A fix: what a tired engineer reads (why, and what to do) and the command that does it. Advice
// returns fixes and never writes a finding; the fix pass after the checks (checks/run.h) puts each
// into the finding that asked for it (advice/fix_request.h).
#pragma once

#include <string>

namespace envdoctor::advice {

struct Fix {
  // Why it fails and what to do, for people; where the command says it all, where it installs
  // from; "" when nothing is known.
  std::string hint;
  // Performs the fix for this environment when pasted from any directory with no environment
  // active (the environment is named in it); "" when no command can be given.
  std::string command;
};

}  // namespace envdoctor::advice
