#include "support/fixture.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

namespace envdoctor::test {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

CommandResult run(const std::string& command) {
  TempDir tmp;
  std::string out = tmp / "stdout", err = tmp / "stderr";
  std::string full = "(" + command + ") >" + quote(out) + " 2>" + quote(err) + " </dev/null";
  int raw = std::system(full.c_str());
  CommandResult r;
  if (WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  else if (WIFSIGNALED(raw)) r.status = 128 + WTERMSIG(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

bool have_tool(const std::string& name) {
  return std::system(("command -v " + quote(name) + " >/dev/null 2>&1").c_str()) == 0;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  fs::path base = fs::temp_directory_path();
  for (;;) {
    path_ = base / ("envdoctor-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
                    std::to_string(rd() % 100000));
    std::error_code ec;
    if (fs::create_directory(path_, ec)) break;
  }
}

TempDir::TempDir(const fs::path& path, Kept) : path_(path), remove_(false) { fs::create_directories(path_); }

std::unique_ptr<TempDir> TempDir::kept(const fs::path& path) {
  return std::unique_ptr<TempDir>(new TempDir(path, Kept{}));
}

TempDir::~TempDir() {
  if (!remove_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& rel, const std::string& text) const {
  fs::path p = path_ / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

static void build(const std::string& output, const std::string& c_source, const std::string& flags, const TempDir& tmp,
                  const std::string& kind, bool cxx = false) {
  static std::atomic<int> n{0};
  std::string src = tmp.write("src/unit" + std::to_string(n++) + (cxx ? ".cc" : ".c"), c_source);
  fs::create_directories(fs::path(output).parent_path());
  std::string cmd = std::string(cxx ? "g++ " : "gcc ") + kind + " -o " + quote(output) + " " + quote(src) + " " + flags;
  CommandResult r = run(cmd);
  ASSERT_EQ(r.status, 0) << cmd << "\n" << r.err;
}

void build_shared(const std::string& output, const std::string& c_source, const std::string& flags,
                  const TempDir& tmp) {
  build(output, c_source, flags, tmp, "-shared -fPIC");
}

void build_shared_cxx(const std::string& output, const std::string& cxx_source, const std::string& flags,
                      const TempDir& tmp) {
  build(output, cxx_source, flags, tmp, "-shared -fPIC", true);
}

void build_executable(const std::string& output, const std::string& c_source, const std::string& flags,
                      const TempDir& tmp) {
  build(output, c_source, flags, tmp, "");
}

std::string envdoctor() { return ENVDOCTOR_BINARY; }

}  // namespace envdoctor::test
