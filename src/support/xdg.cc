#include "support/xdg.h"

#include <cstdlib>

namespace envdoctor::support {

std::string xdg_base(const char* variable, const char* home_relative) {
  const char* xdg = std::getenv(variable);
  if (xdg && *xdg == '/') return xdg;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/" + home_relative;
  return "/tmp";
}

}  // namespace envdoctor::support
