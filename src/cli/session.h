// What the subcommands share besides their session (environment/session.h's open_session): how
// the tool's failure is said, and how text is laid out for the terminal.
#pragma once

#include <cstddef>
#include <string>

#include "cli/commands.h"
#include "environment/session.h"

namespace envdoctor::cli {

using environment::EnvironmentRequest;
using environment::Session;

// The one shape of "the tool could not do its job" (DESIGN.md: exit status 2): a function that
// can fail returns nullopt (or false) and fills a `std::string* error` with a sentence that names
// the file or argument; the command prints it here, once, and exits 2.
int tool_failure(const std::string& why);

// The width text output keeps to: COLUMNS, else the terminal's (stdout), else report::kTextWidth.
size_t output_width();

// Colour on a terminal only, and never with TERM=dumb or a non-empty NO_COLOR (no-color.org).
bool use_color();

}  // namespace envdoctor::cli
