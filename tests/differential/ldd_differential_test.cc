// `envdoctor ldd` against glibc's ld.so in trace mode (what ldd runs) on every shared object of
// this machine: /usr/lib/x86_64-linux-gnu and, when present, /usr/local/cuda/lib64. For each
// regular ELF file named *.so* the two must print the same lines ("name => path", "name => not
// found", "statically linked", ld.so's own line), in the same order, addresses and the vdso line
// aside. Files the
// referee itself cannot list (ld.so refuses them, e.g. ld.so itself or objects without a
// dynamic section) are skipped and counted.
//
// The errors `ldd -r` prints (unbound symbols, missing versions) must agree too, as sets of
// lines over all compared files.
//
// The referee runs two at a time; envdoctor runs over all files, as a user would run it, in as
// few processes as the command line allows. Set ENVDOCTOR_DIFFERENTIAL_DIRS (':'-separated) to
// compare other directories.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <thread>

#include "differential/machine_libraries.h"
#include "loader/referee.h"

namespace envdoctor::test {
namespace {

// The lines of a listing, tab-stripped, in order. (The brief asks for the same set of lines;
// the order, ld.so's load order, agrees too, so the test holds envdoctor to it.)
std::vector<std::string> lines_of(const std::string& listing) {
  std::vector<std::string> out;
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '\t') line.erase(0, 1);
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// Splits `envdoctor ldd A B ...`'s stdout at its "FILE:" headers. Like ldd, envdoctor prints no
// header for a single file: then all of it is that file's.
std::map<std::string, std::string> split_by_header(const std::string& out, const std::vector<std::string>& files) {
  std::map<std::string, std::string> by_file;
  if (files.size() == 1) {
    by_file[files[0]] = out;
    return by_file;
  }
  std::vector<std::string> sorted = files;
  std::sort(sorted.begin(), sorted.end());
  std::string current;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '\t' && line.back() == ':' &&
        std::binary_search(sorted.begin(), sorted.end(), line.substr(0, line.size() - 1))) {
      current = line.substr(0, line.size() - 1);
      by_file[current];
      continue;
    }
    by_file[current] += line + "\n";
  }
  return by_file;
}

// `envdoctor ldd` over all `files`, their listings by file and all its stderr. One sh -c command
// line is one argument, at most 128 KiB (MAX_ARG_STRLEN): with many packages installed the files
// take several runs, and each run is split on its own, since a run of one file has no header.
std::pair<std::map<std::string, std::string>, std::string> envdoctor_ldd_all(const std::vector<std::string>& files) {
  std::map<std::string, std::string> by_file;
  std::string err;
  const size_t kMaxCommand = 100000;
  for (size_t i = 0; i < files.size();) {
    std::vector<std::string> chunk;
    std::string cmd = "env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " ldd --exact";
    for (; i < files.size() && (chunk.empty() || cmd.size() + files[i].size() + 3 < kMaxCommand); ++i) {
      chunk.push_back(files[i]);
      cmd.append(" ").append(quote(files[i]));
    }
    CommandResult got = run(cmd);
    by_file.merge(split_by_header(got.out, chunk));
    err += got.err;
  }
  return {by_file, err};
}

TEST(LddDifferential, SameLinesAsLdSoOnEveryLibrary) {
  if (access(kLdSo, X_OK) != 0) GTEST_SKIP() << "no " << kLdSo;
  std::vector<std::string> dirs = differential_directories();
  LibrarySnapshot before = LibrarySnapshot::take(dirs);
  size_t not_elf = 0;
  std::vector<std::string> files = shared_objects(dirs, &not_elf);
  if (files.empty()) GTEST_SKIP() << "no shared objects to compare";
  auto start = std::chrono::steady_clock::now();

  // The referee, two at a time.
  std::vector<CommandResult> want(files.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i; (i = next.fetch_add(1)) < files.size();) want[i] = referee_list(files[i]);
  };
  std::thread other(worker);
  worker();
  other.join();

  // envdoctor, over everything.
  auto [by_file, got_err] = envdoctor_ldd_all(files);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  size_t compared = 0, agreed = 0, skipped = 0;
  std::string disagreements;
  for (size_t i = 0; i < files.size(); ++i) {
    if (want[i].status != 0 || want[i].out.empty()) {
      ++skipped;
      continue;
    }
    ++compared;
    auto w = lines_of(want[i].out), g = lines_of(by_file[files[i]]);
    if (w == g) {
      ++agreed;
      continue;
    }
    if (disagreements.size() < 20000) {
      disagreements += files[i] + "\n  ld.so:";
      for (const auto& l : w) disagreements += "\n    " + l;
      disagreements += "\n  envdoctor:";
      for (const auto& l : g) disagreements += "\n    " + l;
      disagreements += "\n";
    }
  }
  std::cout << "differential: " << files.size() << " ELF files named *.so* (and " << not_elf << " that are not ELF), "
            << compared << " compared, " << agreed << " agree, " << skipped << " skipped (ld.so cannot list them), "
            << seconds << " s\n";
  RecordProperty("compared", static_cast<int>(compared));
  RecordProperty("agreed", static_cast<int>(agreed));
  RecordProperty("skipped", static_cast<int>(skipped));

  // The errors `ldd -r` reports (the referee runs with LD_WARN and LD_BIND_NOW): unbound
  // symbols, "undefined symbol: NAME\t(OBJECT)", and missing versions, "FILE: PROVIDER: version
  // `V' not found (required by X)". envdoctor prints them for all files on one stderr, so the
  // comparison is of the two sets of lines over the compared files. Sets, not multisets: ld.so
  // prints an unbound symbol once per run of relocations that miss its one-entry lookup cache
  // (RESOLVE_MAP: same symbol, same type class), so a symbol with an R_X86_64_64 and a
  // JUMP_SLOT relocation is printed twice (libsystemd-core-252.so's config_parse_path); envdoctor
  // names each unbound symbol of an object once.
  auto error_lines = [](const std::string& text, std::vector<std::string>& out) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("undefined symbol: ", 0) == 0 ||
          (line.find(": version `") != std::string::npos && line.find("weak version `") == std::string::npos))
        out.push_back(line);
  };
  std::vector<std::string> want_errors, got_errors;
  for (size_t i = 0; i < files.size(); ++i)
    if (want[i].status == 0 && !want[i].out.empty()) error_lines(want[i].err, want_errors);
  error_lines(got_err, got_errors);
  for (auto* v : {&want_errors, &got_errors}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  std::vector<std::string> only_want, only_got;
  std::set_difference(want_errors.begin(), want_errors.end(), got_errors.begin(), got_errors.end(),
                      std::back_inserter(only_want));
  std::set_difference(got_errors.begin(), got_errors.end(), want_errors.begin(), want_errors.end(),
                      std::back_inserter(only_got));
  std::cout << "differential: " << want_errors.size() << " distinct error lines from ld.so (ldd -r), "
            << got_errors.size() << " from envdoctor\n";
  std::string diff;
  for (size_t k = 0; k < only_want.size() && k < 20; ++k) diff += "  only ld.so:     " + only_want[k] + "\n";
  for (size_t k = 0; k < only_got.size() && k < 20; ++k) diff += "  only envdoctor: " + only_got[k] + "\n";
  // A package installed, removed or upgraded while the test ran changes what either side saw:
  // its disagreements say nothing about the model.
  std::vector<std::string> changed = LibrarySnapshot::changes(before, LibrarySnapshot::take(dirs));
  if (!changed.empty() && (agreed != compared || !only_want.empty() || !only_got.empty()))
    GTEST_SKIP() << "the machine's libraries changed during the run (packages being installed?); "
                 << "disagreements not held against the model:\n"
                 << disagreements << diff << "changed:\n"
                 << first_paths(changed);
  EXPECT_EQ(agreed, compared) << disagreements;
  EXPECT_TRUE(only_want.empty() && only_got.empty()) << diff;
  EXPECT_GT(compared, 0u);
}

}  // namespace
}  // namespace envdoctor::test
