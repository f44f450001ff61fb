#include "support/referees.h"

#include <cstdlib>
#include <filesystem>

namespace envdoctor::test {
namespace {

namespace fs = std::filesystem;

const char* kInstall = "scripts/install-deps.sh --test (scripts/install-test-tools.sh) installs them";

// PEP 503's normal form with wheel file names' separator: "nvidia-cudnn-cu12" -> "nvidia_cudnn_cu12".
std::string wheel_name(const std::string& distribution) {
  std::string out;
  for (char c : distribution) {
    bool separator = c == '-' || c == '_' || c == '.';
    if (separator) {
      if (out.empty() || out.back() != '_') out += '_';
    } else {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  return out;
}

const std::string kCache = [] {
  if (const char* set = std::getenv("ENVDOCTOR_TEST_CACHE"); set && *set) return std::string(set);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/envdoctor-tests";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/envdoctor-tests";
}();

}  // namespace

const std::string& test_cache_dir() { return kCache; }

std::string pinned_tool(const std::string& name, std::string* why) {
  std::string path = kCache + "/tools/bin/" + name;
  std::error_code ec;
  if (fs::exists(kCache + "/tools/requirements.sha256", ec) && fs::exists(path, ec)) return path;
  *why = "needs the tests' pinned tools (uv, auditwheel, mcp) in " + kCache + "/tools: " + kInstall;
  return "";
}

std::string corpus_dir() { return kCache + "/wheels"; }

std::string corpus_wheel(const std::string& distribution, std::string* why) {
  std::string prefix = wheel_name(distribution) + "-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(corpus_dir(), ec)) {
    std::string file = e.path().filename().string();
    std::string lower;
    for (char c : file) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower.starts_with(prefix) && lower.ends_with(".whl")) return e.path().string();
  }
  *why = "needs the corpus of real wheels (" + distribution + ") in " + corpus_dir() + ": " + kInstall;
  return "";
}

}  // namespace envdoctor::test
