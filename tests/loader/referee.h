// The referee for the loader tests: glibc's own ld.so in trace mode (what ldd runs), and a real
// dlopen(path, RTLD_NOW) for the failure message. Both outputs are reduced to what envdoctor
// prints: the " (0x...)" load addresses and the linux-vdso line are dropped.
#pragma once

#include <string>
#include <vector>

#include "support/fixture.h"

namespace envdoctor::test {

inline const char* kLdSo = "/lib64/ld-linux-x86-64.so.2";

// Removes " (0x...)" at the end of each line and the vdso line (which envdoctor never prints).
inline std::string strip_addresses(const std::string& listing) {
  std::string out;
  size_t start = 0;
  while (start < listing.size()) {
    size_t end = listing.find('\n', start);
    if (end == std::string::npos) end = listing.size();
    std::string line = listing.substr(start, end - start);
    start = end + 1;
    if (line.find("linux-vdso.so.1") != std::string::npos) continue;
    size_t paren = line.rfind(" (0x");
    if (paren != std::string::npos && !line.empty() && line.back() == ')') line.resize(paren);
    out += line + "\n";
  }
  return out;
}

// `LD_TRACE_LOADED_OBJECTS=1 ld.so FILE` (ldd's trace mode) in `cwd`, with LD_LIBRARY_PATH set
// only when `ld_library_path` is given.
inline CommandResult referee_list(const std::string& file, const std::string* ld_library_path = nullptr,
                                  const std::string& cwd = "") {
  // LD_WARN and LD_BIND_NOW are what `ldd -r` adds: every object is relocated, and unbound symbols
  // are reported on stderr, as envdoctor reports them.
  std::string env = "env -u LD_LIBRARY_PATH LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=yes ";
  if (ld_library_path) env += "LD_LIBRARY_PATH=" + quote(*ld_library_path) + " ";
  std::string cd = cwd.empty() ? "" : "cd " + quote(cwd) + " && ";
  CommandResult r = run(cd + env + kLdSo + " " + quote(file));
  r.out = strip_addresses(r.out);
  return r;
}

// `envdoctor ldd FILE`, with --ld-library-path only when given (and the environment's unset).
inline CommandResult envdoctor_ldd(const std::string& file, const std::string* ld_library_path = nullptr,
                                   const std::string& cwd = "") {
  std::string cmd = "env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " ldd ";
  if (ld_library_path) cmd += "--ld-library-path=" + quote(*ld_library_path) + " ";
  std::string cd = cwd.empty() ? "" : "cd " + quote(cwd) + " && ";
  return run(cd + cmd + quote(file));
}

// Builds (once per TempDir) a program that dlopens argv[1] with RTLD_NOW and prints "ok" or
// dlerror()'s text; returns its path.
inline std::string dlopen_probe(const TempDir& tmp) {
  std::string path = tmp / "dlopen-probe";
  if (!fs::exists(path)) {
    build_executable(path,
                     "#include <dlfcn.h>\n#include <stdio.h>\n"
                     "int main(int argc, char** argv) {\n"
                     "  void* h = dlopen(argv[1], RTLD_NOW);\n"
                     "  if (!h) { printf(\"%s\\n\", dlerror()); return 1; }\n"
                     "  printf(\"ok\\n\"); return 0;\n}\n",
                     "-ldl", tmp);
  }
  return path;
}

// What dlopen(file, RTLD_NOW) says: "ok" or dlerror()'s message, without the newline.
inline std::string referee_dlopen(const TempDir& tmp, const std::string& file,
                                  const std::string* ld_library_path = nullptr) {
  std::string env = "env -u LD_LIBRARY_PATH ";
  if (ld_library_path) env += "LD_LIBRARY_PATH=" + quote(*ld_library_path) + " ";
  CommandResult r = run(env + quote(dlopen_probe(tmp)) + " " + quote(file));
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace envdoctor::test
