#include "cli/session.h"

#include <filesystem>
#include <iostream>

namespace envdoctor::cli {

namespace {

namespace fs = std::filesystem;

// --root DIR made absolute and normal, without a trailing slash ("" for "/": this machine's own).
std::string normal_root(const std::string& root) {
  std::error_code ec;
  std::string out = fs::absolute(root, ec).lexically_normal().string();
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

// --prefix under --root: the container's own path; a path on this machine below the root is
// taken as the path inside it (as ldd --root takes its files).
std::string prefix_in_root(const std::string& root, const std::string& prefix) {
  if (prefix.size() > root.size() && prefix.compare(0, root.size(), root) == 0 && prefix[root.size()] == '/')
    return prefix.substr(root.size());
  return prefix;
}

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
      return fail("--root needs --prefix DIR, the environment's path inside the root "
                  "(a container's interpreter cannot be run here)");
    if (!r.python.empty())
      return fail("--root reads the environment without running it: use --prefix, not --python");
  }
  if (r.no_exec && r.prefix.empty()) return fail("--no-exec needs --prefix DIR (the environment to read without running it)");
  return true;
}

}  // namespace

std::optional<Session> open_session(const EnvironmentRequest& request) {
  if (!validate(request)) return std::nullopt;
  std::string root = request.loader.root.empty() ? "" : normal_root(request.loader.root);
  checks::EnvironmentOptions options;
  options.python = request.python;
  options.prefix = root.empty() ? request.prefix : prefix_in_root(root, request.prefix);
  options.root = root;
  // Under --root, main.cc does not fold this machine's $LD_LIBRARY_PATH in: only the flag counts.
  options.ld_library_path = request.loader.ld_library_path;
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
