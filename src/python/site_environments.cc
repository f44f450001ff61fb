#include "python/site_environments.h"

#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "python/interpreter.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

namespace {

bool is_file_in(const support::FileRoot& root, const std::string& path) {
  struct stat st;
  return ::stat(root.host(path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_dir_in(const support::FileRoot& root, const std::string& path) {
  struct stat st;
  return ::stat(root.host(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "/" + name, without a doubled slash at the root.
std::string child(const std::string& dir, const std::string& name) { return (dir == "/" ? "" : dir) + "/" + name; }

std::vector<std::string> children(const support::FileRoot& root, const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(root.host(dir), ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    out.push_back(child(dir, it->path().filename().string()));
  std::sort(out.begin(), out.end());
  return out;
}

bool is_environment(const support::FileRoot& root, const std::string& dir) {
  return is_file_in(root, dir + "/pyvenv.cfg") || is_dir_in(root, dir + "/conda-meta");
}

// The environment of an interpreter at `exe`: a venv when its bin/ directory's parent has
// pyvenv.cfg (PEP 405), else the prefix of the file it resolves to (/usr/bin/python3 ->
// python3.11: /usr).
std::string prefix_of_interpreter(const support::FileRoot& root, const std::string& exe) {
  std::string venv = fs::path(exe).parent_path().parent_path().string();
  if (is_file_in(root, child(venv, "pyvenv.cfg"))) return venv;
  return fs::path(root.canonical(exe)).parent_path().parent_path().string();
}

// The candidates, in the order found: PATH's interpreters first, then the conventional places.
std::vector<std::string> candidates(const support::FileRoot& root, const std::string& path) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos <= path.size();) {
    size_t colon = std::min(path.find(':', pos), path.size());
    std::string dir = path.substr(pos, colon - pos);
    pos = colon + 1;
    if (dir.empty() || dir[0] != '/') continue;
    for (const char* name : {"python3", "python"})
      if (is_file_in(root, child(dir, name))) out.push_back(prefix_of_interpreter(root, child(dir, name)));
  }
  for (const char* system : {"/usr", "/usr/local"})
    if (is_file_in(root, std::string(system) + "/bin/python3")) out.push_back(system);
  std::vector<std::string> holders = {"/", "/opt", "/root", "/app", "/srv", "/workspace"};
  for (const std::string& home : children(root, "/home")) holders.push_back(home);
  for (const std::string& holder : holders) {
    std::vector<std::string> dirs = children(root, holder);
    for (const char* hidden : {".venv", "venv"}) dirs.push_back(child(holder, hidden));
    for (const std::string& dir : dirs) {
      if (!is_dir_in(root, dir)) continue;
      if (is_environment(root, dir)) out.push_back(dir);
      for (const char* inner : {".venv", "venv"})
        if (is_environment(root, child(dir, inner))) out.push_back(child(dir, inner));
      if (is_dir_in(root, dir + "/conda-meta"))  // conda's base: its envs
        for (const std::string& env : children(root, dir + "/envs"))
          if (is_environment(root, env)) out.push_back(env);
    }
  }
  return out;
}

size_t count_distributions(const PythonEnvironment& py, const support::FileRoot& root) {
  size_t n = 0;
  std::set<std::string> seen;
  for (const std::string& dir : py.sys_path) {
    if (dir.empty() || !seen.insert(root.canonical(dir)).second) continue;
    for (const std::string& entry : children(root, dir))
      if (entry.ends_with(".dist-info") || entry.ends_with(".egg-info")) ++n;
  }
  return n;
}

}  // namespace

std::vector<OtherEnvironment> find_other_environments(const support::FileRoot& root, const std::string& path,
                                                      const std::string& chosen) {
  std::vector<OtherEnvironment> out;
  std::set<std::string> seen = {root.canonical(chosen)};
  for (const std::string& prefix : candidates(root, path)) {
    if (!seen.insert(root.canonical(prefix)).second) continue;
    OtherEnvironment other;
    other.prefix = prefix;
    std::string error;
    std::optional<PythonEnvironment> py = environment_from_prefix(prefix, &error, root);
    if (!py) {
      other.problem = error;
      out.push_back(std::move(other));
      continue;
    }
    other.python = py->executable;
    other.version = py->version_info.full_str();
    other.packages = count_distributions(*py, root);
    out.push_back(std::move(other));
  }
  return out;
}

std::string shell_quoted(const std::string& word) {
  bool plain = !word.empty() && word.find_first_not_of(
                                    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789@%+=:,./_-") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace envdoctor::python
