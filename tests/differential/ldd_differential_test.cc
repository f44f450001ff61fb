// `envdoctor ldd` against glibc's ld.so in trace mode (what ldd runs) on every shared object of
// this machine: /usr/lib/x86_64-linux-gnu and, when present, /usr/local/cuda/lib64, in both of
// ldd's modes: plain `ldd` (trace mode alone) against `envdoctor ldd`, and `ldd -r` (LD_WARN and
// LD_BIND_NOW) against `envdoctor ldd -r --exact`. For each regular ELF file named *.so* the two
// must print the same lines ("name => path", "name => not found", "statically linked", ld.so's
// own line), in the same order, addresses and the vdso line aside. Files the referee itself
// cannot list (ld.so refuses them, e.g. ld.so itself or objects without a dynamic section) are
// skipped and counted.
//
// The errors must agree too, as sets of lines over all compared files: missing versions in both
// modes, unbound symbols with -r only. And `envdoctor ldd -r` (no --exact), which counts the
// symbols that wait for a missing library instead of naming them, must name only symbols ld.so
// names, and account for every other one with a count for its object.
//
// The referee runs two at a time; envdoctor runs over all files, as a user would run it, in as
// few processes as the command line allows. Set ENVDOCTOR_DIFFERENTIAL_DIRS (':'-separated) to
// compare other directories.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <set>
#include <thread>

#include "fixtures/loader_referee.h"
#include "fixtures/machine_libraries.h"

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
std::pair<std::map<std::string, std::string>, std::string> envdoctor_ldd_all(const std::vector<std::string>& files,
                                                                             const std::string& flags) {
  std::map<std::string, std::string> by_file;
  std::string err;
  const size_t kMaxCommand = 100000;
  for (size_t i = 0; i < files.size();) {
    std::vector<std::string> chunk;
    std::string cmd = "env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " ldd" + flags;
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

// The error lines of a stderr: unbound symbols, "undefined symbol: NAME\t(OBJECT)", and missing
// versions, "FILE: PROVIDER: version `V' not found (required by X)"; with `waiting`, also
// envdoctor's counts, "N undefined symbols wait for LIB, which is not found\t(OBJECT)".
void error_lines(const std::string& text, std::vector<std::string>& out, bool waiting = false) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("undefined symbol: ", 0) == 0 ||
        (line.find(": version `") != std::string::npos && line.find("weak version `") == std::string::npos) ||
        (waiting && line.find(" wait") != std::string::npos && line.find(", which ") != std::string::npos))
      out.push_back(line);
}

// Sorted and without repeats. Sets, not multisets: ld.so prints an unbound symbol once per run of
// relocations that miss its one-entry lookup cache (RESOLVE_MAP: same symbol, same type class), so
// a symbol with an R_X86_64_64 and a JUMP_SLOT relocation is printed twice
// (libsystemd-core-252.so's config_parse_path); envdoctor names each unbound symbol of an object
// once.
std::vector<std::string> distinct(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The "(OBJECT)" a symbol or count line ends with.
std::string object_of(const std::string& line) {
  size_t open = line.rfind("\t(");
  return open == std::string::npos || line.back() != ')' ? "" : line.substr(open + 2, line.size() - open - 3);
}

// One mode of the comparison: the referee's output for every file, and envdoctor's.
struct ModeResult {
  size_t compared = 0, agreed = 0, skipped = 0;
  std::string disagreements;  // listings that differ
  std::vector<std::string> want_errors, got_errors, only_want, only_got;
};

ModeResult compare_mode(const std::vector<std::string>& files, const std::vector<CommandResult>& want,
                        const std::map<std::string, std::string>& by_file, const std::string& got_err) {
  ModeResult m;
  for (size_t i = 0; i < files.size(); ++i) {
    if (want[i].status != 0 || want[i].out.empty()) {
      ++m.skipped;
      continue;
    }
    ++m.compared;
    auto it = by_file.find(files[i]);
    auto w = lines_of(want[i].out), g = lines_of(it == by_file.end() ? "" : it->second);
    error_lines(want[i].err, m.want_errors);
    if (w == g) {
      ++m.agreed;
      continue;
    }
    if (m.disagreements.size() < 20000) {
      m.disagreements += files[i] + "\n  ld.so:";
      for (const auto& l : w) m.disagreements += "\n    " + l;
      m.disagreements += "\n  envdoctor:";
      for (const auto& l : g) m.disagreements += "\n    " + l;
      m.disagreements += "\n";
    }
  }
  error_lines(got_err, m.got_errors);
  m.want_errors = distinct(std::move(m.want_errors));
  m.got_errors = distinct(std::move(m.got_errors));
  std::set_difference(m.want_errors.begin(), m.want_errors.end(), m.got_errors.begin(), m.got_errors.end(),
                      std::back_inserter(m.only_want));
  std::set_difference(m.got_errors.begin(), m.got_errors.end(), m.want_errors.begin(), m.want_errors.end(),
                      std::back_inserter(m.only_got));
  return m;
}

std::string error_diff(const ModeResult& m) {
  std::string diff;
  for (size_t k = 0; k < m.only_want.size() && k < 20; ++k) diff += "  only ld.so:     " + m.only_want[k] + "\n";
  for (size_t k = 0; k < m.only_got.size() && k < 20; ++k) diff += "  only envdoctor: " + m.only_got[k] + "\n";
  return diff;
}

// How many symbols `envdoctor ldd -r` says the interpreter bound in an extension module, from the
// module's listing ("\tN symbols of the Python C API bound by PYTHON, as at import"); 0 for others.
size_t bound_by_interpreter(const std::string& listing) {
  const std::string words = " symbols of the Python C API bound by ";
  size_t at = listing.find(words);
  if (at == std::string::npos) return 0;
  size_t start = listing.rfind('\t', at);
  return std::stoul(listing.substr(start == std::string::npos ? 0 : start + 1));
}

// `envdoctor ldd -r` against ld.so's `ldd -r` lines (`want`, distinct): the symbols it names are
// ld.so's, and every symbol ld.so names that it does not is accounted for by a count: of a library
// it is missing, or, for an extension module loaded into its interpreter as at import, the
// interpreter's count in the module's listing (`listings`, envdoctor's stdout by file), which must
// be exactly the number of distinct symbols ld.so leaves unbound in that file's run (`runs`, by
// file, as `files`) and envdoctor does not name (the module's, and its libraries').
std::string check_counted(const std::vector<std::string>& want, const std::string& got_err,
                          const std::vector<std::string>& files, const std::vector<CommandResult>& runs,
                          const std::map<std::string, std::string>& listings) {
  std::vector<std::string> got;
  error_lines(got_err, got, /*waiting=*/true);
  got = distinct(std::move(got));
  std::set<std::string> counted;  // objects with a count
  std::vector<std::string> named;
  for (const std::string& l : got) {
    if (l.rfind("undefined symbol: ", 0) == 0 || l.find(": version `") != std::string::npos) named.push_back(l);
    else counted.insert(object_of(l));
  }
  auto accounted = [&](const std::string& l) {
    return std::binary_search(named.begin(), named.end(), l) || counted.count(object_of(l));
  };
  std::string problems;
  std::set<std::string> left_to_interpreter;
  for (size_t i = 0; i < files.size(); ++i) {
    auto listing = listings.find(files[i]);
    size_t bound = listing == listings.end() ? 0 : bound_by_interpreter(listing->second);
    if (bound == 0) continue;
    // What envdoctor names and counts in this file's run alone (a line another file's run names
    // may be bound by the interpreter in this one): every symbol ld.so leaves unbound in the run is
    // named, or one of a count of symbols waiting for a missing library, or bound by the interpreter.
    std::vector<std::string> here, lines, left;
    error_lines(envdoctor_ldd_all({files[i]}, " -r").second, here, /*waiting=*/true);
    std::set<std::string> named_here;
    size_t waiting = 0;
    for (const std::string& l : here) {
      if (l.find(" wait") != std::string::npos && l.find(", which ") != std::string::npos) waiting += std::stoul(l);
      else named_here.insert(l);
    }
    error_lines(runs[i].err, lines);
    for (const std::string& l : distinct(std::move(lines)))
      if (l.rfind("undefined symbol: ", 0) == 0 && !named_here.count(l)) left.push_back(l);
    // Of those, the Python C API's are the interpreter's to bind, and the others wait for a library.
    size_t python_api = std::count_if(left.begin(), left.end(), [](const std::string& l) {
      std::string symbol = l.substr(std::string("undefined symbol: ").size());
      return symbol.starts_with("Py") || symbol.starts_with("_Py");
    });
    if (python_api != bound || left.size() - python_api != waiting)
      problems += "  the interpreter binds " + std::to_string(bound) + " symbols and " + std::to_string(waiting) +
                  " wait for a missing library; ld.so leaves " + std::to_string(python_api) +
                  " of the Python C API and " + std::to_string(left.size() - python_api) +
                  " others unbound and unnamed: " + files[i] + "\n";
    left_to_interpreter.insert(left.begin(), left.end());
  }
  for (const std::string& l : named)
    if (!std::binary_search(want.begin(), want.end(), l)) problems += "  named, not by ld.so: " + l + "\n";
  for (const std::string& l : want)
    if (!accounted(l) && !left_to_interpreter.count(l)) problems += "  neither named nor counted: " + l + "\n";
  for (const std::string& object : counted) {
    bool ld_so_names_one = std::any_of(want.begin(), want.end(), [&](const std::string& l) {
      return l.rfind("undefined symbol: ", 0) == 0 && object_of(l) == object;
    });
    if (!ld_so_names_one) problems += "  counted, but ld.so leaves nothing unbound in " + object + "\n";
  }
  return problems.size() > 20000 ? problems.substr(0, 20000) + "...\n" : problems;
}

TEST(LddDifferential, SameLinesAsLdSoOnEveryLibrary) {
  if (access(kLdSo, X_OK) != 0) GTEST_SKIP() << "no " << kLdSo;
  std::vector<std::string> dirs = differential_directories();
  LibrarySnapshot before = LibrarySnapshot::take(dirs);
  size_t not_elf = 0;
  std::vector<std::string> files = shared_objects(dirs, &not_elf);
  if (files.empty()) GTEST_SKIP() << "no shared objects to compare";
  auto start = std::chrono::steady_clock::now();

  // The referee, two at a time, in both modes.
  std::vector<CommandResult> want_plain(files.size()), want_r(files.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i; (i = next.fetch_add(1)) < files.size();) {
      want_plain[i] = referee_list(files[i], nullptr, "", LddMode::kPlain);
      want_r[i] = referee_list(files[i], nullptr, "", LddMode::kRelocate);
    }
  };
  std::thread other(worker);
  worker();
  other.join();

  // envdoctor, over everything, in each mode.
  auto [plain_by_file, plain_err] = envdoctor_ldd_all(files, "");
  auto [r_by_file, r_err] = envdoctor_ldd_all(files, " -r --exact");
  auto [counted_by_file, counted_err] = envdoctor_ldd_all(files, " -r");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  ModeResult plain = compare_mode(files, want_plain, plain_by_file, plain_err);
  ModeResult relocate = compare_mode(files, want_r, r_by_file, r_err);
  std::string counted = check_counted(relocate.want_errors, counted_err, files, want_r, counted_by_file);
  std::cout << "differential: " << files.size() << " ELF files named *.so* (and " << not_elf << " that are not ELF), "
            << relocate.compared << " compared, " << relocate.agreed << " agree with ldd -r and " << plain.agreed
            << " with ldd, " << relocate.skipped << " skipped (ld.so cannot list them), " << seconds << " s\n";
  std::cout << "differential: " << plain.want_errors.size() << " distinct error lines from ld.so (ldd), "
            << plain.got_errors.size() << " from envdoctor; " << relocate.want_errors.size() << " from ld.so (ldd -r), "
            << relocate.got_errors.size() << " from envdoctor\n";
  RecordProperty("compared", static_cast<int>(relocate.compared));
  RecordProperty("agreed", static_cast<int>(relocate.agreed));
  RecordProperty("skipped", static_cast<int>(relocate.skipped));

  // A package installed, removed or upgraded while the test ran changes what either side saw:
  // its disagreements say nothing about the model.
  bool disagree = false;
  for (const ModeResult* m : {&plain, &relocate})
    disagree = disagree || m->agreed != m->compared || !m->only_want.empty() || !m->only_got.empty();
  std::vector<std::string> changed = LibrarySnapshot::changes(before, LibrarySnapshot::take(dirs));
  if (!changed.empty() && (disagree || !counted.empty()))
    GTEST_SKIP() << "the machine's libraries changed during the run (packages being installed?); "
                 << "disagreements not held against the model:\n"
                 << plain.disagreements << relocate.disagreements << error_diff(plain) << error_diff(relocate)
                 << counted << "changed:\n"
                 << first_paths(changed);
  EXPECT_EQ(plain.agreed, plain.compared) << "ldd:\n" << plain.disagreements;
  EXPECT_TRUE(plain.only_want.empty() && plain.only_got.empty()) << "ldd:\n" << error_diff(plain);
  EXPECT_EQ(relocate.agreed, relocate.compared) << "ldd -r:\n" << relocate.disagreements;
  EXPECT_TRUE(relocate.only_want.empty() && relocate.only_got.empty()) << "ldd -r:\n" << error_diff(relocate);
  EXPECT_EQ(counted, "") << "ldd -r without --exact:\n" << counted;
  // Plain ldd binds nothing: no unbound symbol on either side.
  for (const std::string& l : plain.want_errors) EXPECT_NE(l.rfind("undefined symbol: ", 0), 0u) << l;
  for (const std::string& l : plain.got_errors) EXPECT_NE(l.rfind("undefined symbol: ", 0), 0u) << l;
  EXPECT_GT(relocate.compared, 0u);
}

}  // namespace
}  // namespace envdoctor::test
