// The referee for the loader tests: glibc's own ld.so in trace mode (what ldd runs), and a real
// dlopen(path, RTLD_NOW) for the failure message. Both outputs are reduced to what envdoctor
// prints: the " (0x...)" load addresses and the linux-vdso line are dropped.
#pragma once

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "loader/object_store.h"
#include "loader/process.h"
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

// glibc's ldd in its two modes: plain `ldd` (trace mode alone: libraries and symbol versions) and
// `ldd -r` (LD_WARN and LD_BIND_NOW too: every object is relocated and unbound symbols are
// reported on stderr).
enum class LddMode { kPlain, kRelocate };

// `LD_TRACE_LOADED_OBJECTS=1 ld.so FILE` (ldd's trace mode) in `cwd`, with LD_LIBRARY_PATH set
// only when `ld_library_path` is given.
inline CommandResult referee_list(const std::string& file, const std::string* ld_library_path = nullptr,
                                  const std::string& cwd = "", LddMode mode = LddMode::kRelocate) {
  std::string env = "env -u LD_LIBRARY_PATH -u LD_WARN -u LD_BIND_NOW LD_TRACE_LOADED_OBJECTS=1 ";
  if (mode == LddMode::kRelocate) env += "LD_WARN=yes LD_BIND_NOW=yes ";
  if (ld_library_path) env += "LD_LIBRARY_PATH=" + quote(*ld_library_path) + " ";
  std::string cd = cwd.empty() ? "" : "cd " + quote(cwd) + " && ";
  CommandResult r = run(cd + env + kLdSo + " " + quote(file));
  r.out = strip_addresses(r.out);
  return r;
}

// `envdoctor ldd FILE` as the referee's mode: plain, or `-r --exact` (every unbound symbol named,
// as ld.so names it), with --ld-library-path only when given (and the environment's unset).
inline CommandResult envdoctor_ldd(const std::string& file, const std::string* ld_library_path = nullptr,
                                   const std::string& cwd = "", LddMode mode = LddMode::kRelocate) {
  std::string cmd = "env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " ldd ";
  if (mode == LddMode::kRelocate) cmd += "-r --exact ";
  if (ld_library_path) cmd += "--ld-library-path=" + quote(*ld_library_path) + " ";
  std::string cd = cwd.empty() ? "" : "cd " + quote(cwd) + " && ";
  return run(cd + cmd + quote(file));
}

// The dlopen referee: a program that, for each path on its stdin, calls dlopen(path, RTLD_NOW) in
// a forked child and prints one line: "PATH\tok", "PATH\terror\t<dlerror()>", "PATH\tdied\t<how>"
// or "PATH\thung". dlopen runs the library's constructors, which may print anything (libmfx's
// tracer prints "mfx_tracer: dll_init() +" on stdout), exit, abort or never return. So the child's
// stdin, stdout and stderr are /dev/null, and it reports on a pipe at a descriptor above 500 that
// no library has reason to know, in one write() shorter than PIPE_BUF (so whole or not at), then
// _exit()s. A child that ends without a whole report died; one still running after the time
// limit (argv[1], seconds) is killed with its process group, and hung.
inline const char* kDlopenProbeSource = R"(#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void child(const char* path, int report) {
  int null = open("/dev/null", O_RDWR);
  dup2(null, 0); dup2(null, 1); dup2(null, 2);
  void* h = dlopen(path, RTLD_NOW);
  const char* why = h ? NULL : dlerror();
  char msg[4000];
  int n = h ? snprintf(msg, sizeof msg, "ok\n") : snprintf(msg, sizeof msg, "error\t%s\n", why ? why : "");
  if (n >= (int)sizeof msg) n = sizeof msg - 1, msg[n - 1] = '\n';
  if (write(report, msg, n) != n) _exit(3);
  _exit(0);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* Runs one dlopen; returns its line without the path. */
static void probe(const char* path, double limit) {
  int fd[2];
  if (pipe2(fd, O_CLOEXEC) != 0) { printf("\tdied\tpipe failed\n"); return; }
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int report = fcntl(fd[1], F_DUPFD_CLOEXEC, 500);
    close(fd[0]); close(fd[1]);
    child(path, report);
  }
  setpgid(pid, pid);
  close(fd[1]);
  char buf[4096];
  size_t n = 0;
  int status = 0, ended = 0, eof = 0;
  double deadline = now() + limit;
  while (!ended && now() < deadline) {
    if (eof) {
      usleep(10000);
    } else {
      struct pollfd p = {fd[0], POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        ssize_t r = read(fd[0], buf + n, sizeof buf - 1 - n);
        if (r > 0) n += r;
        else eof = 1;
      }
    }
    ended = waitpid(pid, &status, WNOHANG) == pid;
  }
  /* A constructor's own children, and a child past its time, go with the process group. */
  kill(-pid, SIGKILL);
  if (!ended) {
    waitpid(pid, &status, 0);
    close(fd[0]);
    printf("\thung\n");
    return;
  }
  for (ssize_t r; !eof && n < sizeof buf - 1; n += r) {
    struct pollfd p = {fd[0], POLLIN, 0};
    if (poll(&p, 1, 0) <= 0 || (r = read(fd[0], buf + n, sizeof buf - 1 - n)) <= 0) break;
  }
  close(fd[0]);
  buf[n] = 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && n > 0 && buf[n - 1] == '\n')
    printf("\t%s", buf);
  else if (WIFSIGNALED(status))
    printf("\tdied\tsignal %d\n", WTERMSIG(status));
  else
    printf("\tdied\texit status %d\n", WEXITSTATUS(status));
}

int main(int argc, char** argv) {
  double limit = argc > 1 ? atof(argv[1]) : 20;
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    printf("%s", line);
    fflush(stdout);
    probe(line, limit);
    fflush(stdout);
  }
  return 0;
}
)";

// Builds (once per TempDir) the dlopen referee above; returns its path.
inline std::string dlopen_probe(const TempDir& tmp) {
  std::string path = tmp / "dlopen-probe";
  if (!fs::exists(path)) build_executable(path, kDlopenProbeSource, "-ldl", tmp);
  return path;
}

// What the referee found for one file.
struct DlopenVerdict {
  enum class Kind { kOk, kError, kDied, kHung } kind = Kind::kDied;
  std::string text;  // dlerror()'s message, or how the child died

  // "ok", the message, or "(died: how)" / "(hung)": what a test compares.
  std::string summary() const {
    switch (kind) {
      case Kind::kOk: return "ok";
      case Kind::kError: return text;
      case Kind::kDied: return "(died: " + text + ")";
      case Kind::kHung: return "(hung)";
    }
    return "";
  }
};

// Reads the probe's lines for `files` (in order) into `out`.
inline void parse_dlopen_verdicts(const std::string& probe_out, const std::vector<std::string>& files,
                                  DlopenVerdict* out) {
  std::istringstream in(probe_out);
  size_t i = 0;
  for (std::string line; i < files.size() && std::getline(in, line); ++i) {
    // PATH \t KIND [\t TEXT]; the path is the one asked (it has no tab or newline).
    EXPECT_EQ(line.compare(0, files[i].size() + 1, files[i] + "\t"), 0) << line;
    std::string rest = line.size() > files[i].size() ? line.substr(files[i].size() + 1) : "";
    size_t tab = rest.find('\t');
    std::string kind = rest.substr(0, tab);
    DlopenVerdict& v = out[i];
    v.text = tab == std::string::npos ? "" : rest.substr(tab + 1);
    if (kind == "ok") v.kind = DlopenVerdict::Kind::kOk;
    else if (kind == "error") v.kind = DlopenVerdict::Kind::kError;
    else if (kind == "hung") v.kind = DlopenVerdict::Kind::kHung;
    else v.kind = DlopenVerdict::Kind::kDied;
  }
  EXPECT_EQ(i, files.size()) << probe_out;
}

// dlopen(file, RTLD_NOW) for each of `files`, each in its own child with `limit_s` seconds, with
// LD_LIBRARY_PATH set only when `ld_library_path` is given. One verdict per file, in order. The
// files are shared among up to four probes at once, so that the time grows with the number of
// libraries installed divided by the cores.
inline std::vector<DlopenVerdict> referee_dlopen_each(const TempDir& tmp, const std::vector<std::string>& files,
                                                      double limit_s = 20,
                                                      const std::string* ld_library_path = nullptr) {
  static std::atomic<int> lists{0};
  std::string probe = dlopen_probe(tmp);
  std::string env = "env -u LD_LIBRARY_PATH -u LD_PRELOAD -u GLIBC_TUNABLES ";
  if (ld_library_path) env += "LD_LIBRARY_PATH=" + quote(*ld_library_path) + " ";
  std::vector<DlopenVerdict> out(files.size());
  size_t probes = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  size_t per = (files.size() + probes - 1) / probes;
  auto one = [&](size_t begin, size_t end) {
    std::vector<std::string> part(files.begin() + begin, files.begin() + end);
    std::string list = tmp / ("dlopen-list-" + std::to_string(lists++));
    {
      std::ofstream f(list);
      for (const std::string& p : part) f << p << "\n";
    }
    CommandResult r = run(env + quote(probe) + " " + std::to_string(limit_s) + " < " + quote(list));
    EXPECT_EQ(r.status, 0) << r.err;
    parse_dlopen_verdicts(r.out, part, out.data() + begin);
  };
  std::vector<std::thread> threads;
  for (size_t begin = 0; begin < files.size(); begin += per)
    threads.emplace_back(one, begin, std::min(files.size(), begin + per));
  for (std::thread& t : threads) t.join();
  return out;
}

// What dlopen(file, RTLD_NOW) says: "ok" or dlerror()'s message ("(died: ...)" or "(hung)" when
// the file's constructors kept it from answering).
inline std::string referee_dlopen(const TempDir& tmp, const std::string& file,
                                  const std::string* ld_library_path = nullptr) {
  return referee_dlopen_each(tmp, {file}, 20, ld_library_path).at(0).summary();
}

// The model's answer to the same question: envdoctor's dlopen(file, RTLD_NOW) from dlopen_probe,
// a program without RPATH, with LD_LIBRARY_PATH `ld_library_path` (none when null).
inline std::string model_dlopen(const TempDir& tmp, const std::string& file,
                                const std::string* ld_library_path = nullptr) {
  loader::LoaderConfig config = loader::LoaderConfig::for_host();
  config.ld_library_path = ld_library_path ? *ld_library_path : "";
  loader::ObjectStore store;
  loader::Process p(config, store);
  EXPECT_TRUE(p.load_main(dlopen_probe(tmp)));
  auto r = p.dlopen(file, /*global=*/false);
  return r.first ? r.first->message : "ok";
}

}  // namespace envdoctor::test
