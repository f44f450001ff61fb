#include "cli/session.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace envdoctor::cli {

namespace {

namespace fs = std::filesystem;

bool fail(const std::string& why) {
  std::cerr << "envdoctor: " << why << "\n";
  return false;
}

// The options make sense together, or say why not.
bool validate(const EnvironmentRequest& r) {
  if (!r.loader.root.empty()) {
    std::error_code ec;
    if (!fs::is_directory(r.loader.root, ec)) return fail("--root " + r.loader.root + ": not a directory");
    if (r.prefix.empty())
      return fail(
          "--root needs --prefix DIR, the environment's path inside the root "
          "(a container's interpreter cannot be run here)");
    if (!r.python.empty()) return fail("--root reads the environment without running it: use --prefix, not --python");
  }
  if (r.python.find('/') != std::string::npos) {  // a bare name is a file here or on PATH (python_argument)
    std::error_code ec;
    fs::file_status st = fs::status(r.python, ec);
    if (st.type() == fs::file_type::not_found) return fail("--python " + r.python + ": no such file");
    if (fs::is_directory(st))  // not an environment: python_argument took those
      return fail("--python " + r.python + " is a directory with no bin/python: use --prefix " + r.python +
                  " to read it without running anything");
  }
  if (r.no_exec && r.prefix.empty())
    return fail("--no-exec needs --prefix DIR (the environment to read without running it)");
  return true;
}

// --python as pip takes it (pip/_internal/cli/main_parser.py, identify_python_interpreter): a
// path that exists is used as it is, an environment's directory (a venv, a conda prefix) by its
// bin/python; a bare name that names no file here is looked up on PATH, as a shell would.
std::string python_argument(const std::string& python) {
  std::error_code ec;
  fs::file_status st = fs::status(python, ec);
  if (python.empty() || st.type() == fs::file_type::not_found) return python;
  if (fs::is_directory(st)) {
    std::string bin = (fs::path(python) / "bin" / "python").string();
    return fs::exists(bin, ec) ? bin : python;
  }
  return python.find('/') == std::string::npos ? "./" + python : python;
}

}  // namespace

// Colour on a terminal only, and never with TERM=dumb or a non-empty NO_COLOR (no-color.org).
bool use_color() {
  const char* no_color = std::getenv("NO_COLOR");
  if (!::isatty(STDOUT_FILENO) || (no_color && *no_color)) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

int tool_failure(const std::string& why) {
  fail(why);
  return 2;
}

std::optional<Session> open_session(EnvironmentRequest request) {
  request.python = python_argument(request.python);
  if (!validate(request)) return std::nullopt;
  support::FileRoot file_root(request.loader.root);
  std::string root = file_root.dir();
  checks::EnvironmentOptions options;
  options.python = request.python;
  options.prefix = file_root.inside(request.prefix);
  options.root = root;
  // Under --root, main.cc does not fold this machine's $LD_LIBRARY_PATH in: only the flag counts.
  options.ld_library_path = request.loader.ld_library_path;
  options.glibc_tunables = request.loader.glibc_tunables;
  std::string error;
  Session s;
  s.env = checks::build_environment(options, &error);
  if (!s.env) return fail(error), std::nullopt;
  auto knowledge = checks::Knowledge::load(cuda::default_data_dir(), &error);
  if (!knowledge) return fail(error), std::nullopt;
  auto tables = cuda::load_cuda_tables(cuda::default_data_dir(), &error);
  if (!tables) return fail(error), std::nullopt;
  s.knowledge = std::move(*knowledge);
  s.tables = std::move(*tables);
  return s;
}

}  // namespace envdoctor::cli
