#include "cli/session.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace envdoctor::cli {

using environment::EnvironmentRequest;
using environment::open_session;
using environment::Session;

// Colour on a terminal only, and never with TERM=dumb or a non-empty NO_COLOR (no-color.org).
bool use_color() {
  const char* no_color = std::getenv("NO_COLOR");
  if (!::isatty(STDOUT_FILENO) || (no_color && *no_color)) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

int tool_failure(const std::string& why) {
  std::cerr << "envdoctor: " << why << "\n";
  return 2;
}

std::optional<Session> open_session(const EnvironmentRequest& request) {
  std::string error;
  std::optional<Session> s = environment::open_session(request, &error);
  if (!s) return tool_failure(error), std::nullopt;
  s->keep_until_exit = true;
  return s;
}

}  // namespace envdoctor::cli
