// envdoctor's dlopen model against a real dlopen(path, RTLD_NOW) on every shared object of this
// machine (the files of ldd_differential_test.cc): both must succeed, or fail with the same
// dlerror() text. This is the path Python takes for an extension module.
//
// The real dlopen runs each file's constructors, so each one happens in a forked child with a
// time limit, and a child that dies or exits without answering (libasan's constructor exits
// when it is not loaded first) is skipped: that is a program's choice, not the loader's.
// "cannot allocate memory in static TLS block" (a DF_STATIC_TLS object whose PT_TLS does not
// fit the static TLS surplus, e.g. libtsan's 768 KiB) is not modelled yet: counted apart.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "loader/process.h"
#include "support/fixture.h"

namespace envdoctor::test {
namespace {

const char* kProbe = R"(#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/wait.h>
/* For each path on stdin: "PATH\tok", "PATH\t<dlerror()>", or "PATH\t" when the child died. */
int main(void) {
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    int fd[2];
    if (pipe(fd) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]); dup2(fd[1], 1); dup2(open("/dev/null", O_WRONLY), 2); alarm(5);
      void* h = dlopen(line, RTLD_NOW);
      printf("%s\n", h ? "ok" : dlerror()); fflush(stdout); _exit(0);
    }
    close(fd[1]);
    char buf[8192]; int n = 0, r;
    while (n < (int)sizeof buf - 1 && (r = read(fd[0], buf + n, sizeof buf - 1 - n)) > 0) n += r;
    buf[n] = 0; close(fd[0]);
    int st; waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) n = 0, buf[0] = 0;
    printf("%s\t%s%s", line, buf, n ? "" : "\n"); fflush(stdout);
  }
  return 0;
}
)";

std::vector<std::string> shared_objects() {
  std::vector<std::string> out;
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64"}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
      if (it->path().filename().string().find(".so") == std::string::npos) continue;
      char magic[4] = {};
      std::ifstream in(it->path(), std::ios::binary);
      if (in.read(magic, 4) && std::string(magic, 4) == "\x7f" "ELF") out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DlopenDifferential, SameOutcomeAsDlopenOnEveryLibrary) {
  if (!have_tool("gcc")) GTEST_SKIP() << "needs gcc";
  std::vector<std::string> files = shared_objects();
  if (files.empty()) GTEST_SKIP() << "no shared objects";
  TempDir tmp;
  std::string probe = tmp / "probe";
  build_executable(probe, kProbe, "-ldl", tmp);
  std::string list = tmp / "files";
  {
    std::ofstream out(list);
    for (const std::string& f : files) out << f << "\n";
  }
  CommandResult real = run("env -u LD_LIBRARY_PATH " + quote(probe) + " < " + quote(list));
  ASSERT_EQ(real.status, 0) << real.err;
  std::map<std::string, std::string> want;
  std::istringstream in(real.out);
  for (std::string line; std::getline(in, line);) {
    size_t tab = line.find('\t');
    if (tab != std::string::npos) want[line.substr(0, tab)] = line.substr(tab + 1);
  }

  // The model: the same probe as the main program, then dlopen(file), each in a fresh process.
  loader::LoaderConfig config = loader::LoaderConfig::for_host();
  config.ld_library_path.clear();
  loader::ObjectStore store;
  size_t compared = 0, agreed = 0, died = 0, static_tls = 0;
  std::string disagreements;
  for (const std::string& f : files) {
    const std::string& w = want[f];
    if (w.empty()) {
      ++died;
      continue;
    }
    if (w.find("cannot allocate memory in static TLS block") != std::string::npos) {
      ++static_tls;
      continue;
    }
    loader::Process p(config, store);
    ASSERT_TRUE(p.load_main(probe));
    auto r = p.dlopen(f, /*global=*/false);
    std::string got = r.first ? r.first->message : "ok";
    ++compared;
    if (got == w) ++agreed;
    else disagreements += f + "\n  dlopen:    " + w + "\n  envdoctor: " + got + "\n";
  }
  std::cout << "dlopen differential: " << files.size() << " files, " << compared << " compared, " << agreed
            << " agree, " << died << " skipped (constructor exited or died), " << static_tls
            << " skipped (static TLS, not modelled)\n";
  EXPECT_EQ(agreed, compared) << disagreements;
  EXPECT_GT(compared, 0u);
}

}  // namespace
}  // namespace envdoctor::test
