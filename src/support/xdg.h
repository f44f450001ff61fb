// The XDG base directories (XDG Base Directory Specification): where a tool keeps its cache and
// its state for the user.
#pragma once

#include <string>

namespace envdoctor::support {

// $VARIABLE when it is an absolute path, else $HOME/HOME_RELATIVE, else /tmp: xdg_base("XDG_CACHE_HOME",
// ".cache"), xdg_base("XDG_STATE_HOME", ".local/state").
std::string xdg_base(const char* variable, const char* home_relative);

}  // namespace envdoctor::support
