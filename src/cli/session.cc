#include "cli/session.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "report/report.h"
#include "support/text.h"

namespace envdoctor::cli {

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

size_t output_width() {
  size_t fallback = report::kTextWidth;
  winsize ws{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) fallback = ws.ws_col;
  return support::output_width(std::getenv("COLUMNS"), fallback);
}

}  // namespace envdoctor::cli
