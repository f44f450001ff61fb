// The persistent index (support/run_index.h, cli/indexed.h) against its referees: an answer from
// the index must be the answer of a fresh run (`--no-cache`) and of a real `import`, after every
// way of changing a file; and strace, which sees every path the run touched, against the inputs
// the index keeps.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include "fixtures/fixture.h"
#include "fixtures/venv.h"
#include "support/run_index.h"

namespace envdoctor::test {
namespace {

// The run a change is made after: an input changed less than a second before a run starts is
// not trusted, and that run is not kept (run_index.h).
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(1100)); }

class IndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    venv_ = std::make_unique<Venv>(tmp_, "venv");
    site_ = venv_->site();
    fs::create_directories(site_ + "/pkg/libs");
    fs::create_directories(site_ + "/pkg/first");
    lib_ = site_ + "/pkg/libs/libdep.so";
    build_shared(lib_, "int dep_value(void) { return 7; }", "-Wl,-soname,libdep.so", tmp_);
    build_shared(tmp_ / "bad.so", "int other_value(void) { return 8; }", "-Wl,-soname,libdep.so", tmp_);
    build_shared(site_ + "/pkg/ext" + ext_suffix(), extension_source("ext", "int dep_value(void);", "dep_value()"),
                 "-I" + python_include() + " -L" + site_ + "/pkg/libs -ldep -Wl,--enable-new-dtags," +
                     "-rpath,'$ORIGIN/first:$ORIGIN/libs'",
                 tmp_);
    tmp_.write(fs::relative(site_, tmp_.path()).string() + "/pkg/__init__.py", "");
    settle();
  }

  // `envdoctor COMMAND --python VENV ARGS`, for a node given on the command line (this
  // machine's driver is read live, outside the index, on every run).
  CommandResult envdoctor_run(const std::string& command, const std::string& args = "",
                              const std::string& variables = "") const {
    std::string node = command == "why" ? "" : " --gpu sm_90 --driver 580.65.06";
    return run("env XDG_CACHE_HOME=" + quote(cache_) + " " + variables + " " + quote(envdoctor()) + " " + command +
               " --python " + quote(venv_->python()) + node + " " + args);
  }
  CommandResult check(const std::string& args = "", const std::string& variables = "") const {
    return envdoctor_run("check", args, variables);
  }
  std::string index_dir() const { return cache_ + "/envdoctor/index-v1"; }
  std::vector<std::string> entry_files() const {
    std::vector<std::string> out;
    if (fs::is_directory(index_dir()))
      for (const auto& e : fs::directory_iterator(index_dir()))
        if (e.path().extension() == ".entry") out.push_back(e.path().string());
    return out;
  }
  // The one entry kept (the tests ask one question at a time).
  std::optional<support::IndexEntry> entry() const {
    std::vector<std::string> files = entry_files();
    if (files.size() != 1) return std::nullopt;
    std::string why;
    return support::decode_entry(slurp(files[0]), &why);
  }

  // The question asked and kept; then `change` made; then the index's answer must be a fresh
  // run's, and the real import's.
  void expect_follows(const std::function<void()>& change, const std::string& import_error_part) {
    CommandResult before = check();
    ASSERT_EQ(before.status, 0) << before.out << before.err;
    ASSERT_TRUE(entry()) << "the first run was not kept";
    ASSERT_EQ(venv_->import("pkg.ext"), "");
    change();
    CommandResult after = check();
    CommandResult fresh = check("--no-cache");
    EXPECT_EQ(after.out, fresh.out);
    EXPECT_EQ(after.status, fresh.status);
    EXPECT_EQ(after.status, 1) << after.out;
    std::string referee = venv_->import("pkg.ext");
    EXPECT_NE(referee.find(import_error_part), std::string::npos) << referee;
    EXPECT_NE(after.out.find(import_error_part), std::string::npos) << after.out;
  }

  void write_bytes(const std::string& path, const std::string& bytes) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);  // the same inode, new bytes
    out << bytes;
  }

  TempDir tmp_;
  std::string cache_ = tmp_ / "cache";
  std::unique_ptr<Venv> venv_;
  std::string site_, lib_;
};

TEST_F(IndexTest, AnUnchangedEnvironmentIsAnsweredFromTheIndex) {
  CommandResult first = check();
  std::optional<support::IndexEntry> kept = entry();
  ASSERT_TRUE(kept);
  CommandResult second = check();
  std::optional<support::IndexEntry> after = entry();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->recorded_ns, kept->recorded_ns) << "answered by a run, not the index";
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(second.status, first.status);
  CommandResult fresh = check("--no-cache");
  EXPECT_EQ(fresh.out, first.out);
  EXPECT_GT(kept->inputs.size(), 10u);
}

TEST_F(IndexTest, NoCacheNeitherReadsNorWritesTheIndex) {
  CommandResult r = check("--no-cache");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(index_dir()));
}

TEST_F(IndexTest, ALibraryWrittenOverInPlace) {
  expect_follows([&] { write_bytes(lib_, slurp(tmp_ / "bad.so")); }, "undefined symbol: dep_value");
}

TEST_F(IndexTest, ALibraryRenamedOver) {
  expect_follows(
      [&] {
        fs::copy_file(tmp_ / "bad.so", site_ + "/pkg/libs/.new");
        fs::rename(site_ + "/pkg/libs/.new", lib_);
      },
      "undefined symbol: dep_value");
}

TEST_F(IndexTest, ALibraryTruncated) {
  expect_follows([&] { fs::resize_file(lib_, 100); }, "cannot read file data");
}

TEST_F(IndexTest, ALibraryHardLinkedOver) {
  expect_follows(
      [&] {
        fs::remove(lib_);
        fs::create_hard_link(tmp_ / "bad.so", lib_);
      },
      "undefined symbol: dep_value");
}

TEST_F(IndexTest, ALibraryAppearingEarlierOnTheSearchPath) {
  expect_follows([&] { fs::copy_file(tmp_ / "bad.so", site_ + "/pkg/first/libdep.so"); },
                 "undefined symbol: dep_value");
}

// A same-size edit with the modification time set back: the change time still moves, and the
// index sees it.
void edit_keeping_size_and_mtime(const std::string& path) {
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  std::string bytes = slurp(path);
  size_t n = 0;
  for (size_t at = 0; (at = bytes.find("dep_value", at)) != std::string::npos; at += 9, ++n) bytes[at + 8] = 'X';
  ASSERT_GT(n, 0u);
  std::ofstream(path, std::ios::binary | std::ios::in | std::ios::out) << bytes;
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  struct stat now;
  ASSERT_EQ(::stat(path.c_str(), &now), 0);
  ASSERT_EQ(now.st_size, st.st_size);
  ASSERT_EQ(now.st_mtim.tv_nsec, st.st_mtim.tv_nsec);
  ASSERT_EQ(now.st_mtim.tv_sec, st.st_mtim.tv_sec);
}

TEST_F(IndexTest, ASameSizeEditWithTheModificationTimeSetBack) {
  expect_follows([&] { edit_keeping_size_and_mtime(lib_); }, "undefined symbol: dep_value");
}

TEST_F(IndexTest, AChangedEnvironmentVariableIsAnotherQuestion) {
  fs::create_directories(tmp_ / "elsewhere");
  fs::copy_file(tmp_ / "bad.so", tmp_ / "elsewhere/libdep.so");
  CommandResult before = check();
  ASSERT_TRUE(entry());
  std::string variables = "LD_LIBRARY_PATH=" + quote(tmp_ / "elsewhere");
  CommandResult after = check("", variables);
  CommandResult fresh = check("--no-cache", variables);
  EXPECT_EQ(after.out, fresh.out);
  EXPECT_EQ(after.status, 1);
  EXPECT_NE(venv_->import("pkg.ext", variables).find("undefined symbol: dep_value"), std::string::npos);
}

TEST_F(IndexTest, ATouchIsAChange) {
  CommandResult before = check();
  std::optional<support::IndexEntry> kept = entry();
  ASSERT_TRUE(kept);
  ASSERT_EQ(::utimensat(AT_FDCWD, lib_.c_str(), nullptr, 0), 0);
  settle();
  CommandResult after = check();
  std::optional<support::IndexEntry> again = entry();
  ASSERT_TRUE(again);
  EXPECT_GT(again->recorded_ns, kept->recorded_ns) << "the touched file was not read again";
  EXPECT_EQ(after.out, before.out);
}

// What the index cannot see, as documented (run_index.h, docs/index.md): a change that keeps
// every field of a file's identity. The kernel moves the change time on every edit; an entry
// whose recorded change time is made the file's new one stands for a file system that does not,
// or a clock set back. The index then answers as before the edit; --verify-hashes, which reads
// every byte and never uses the index, and --no-cache see it.
TEST_F(IndexTest, AnEditThatKeepsTheWholeIdentityIsSeenOnlyByVerifyHashes) {
  std::string sha = run("python3 -c " +
                        quote("import hashlib,base64,sys; d=hashlib.sha256(open(sys.argv[1],'rb').read()).digest(); "
                              "print(base64.urlsafe_b64encode(d).rstrip(b'=').decode())") +
                        " " + quote(lib_))
                        .out;
  sha.pop_back();
  std::string info = fs::relative(site_, tmp_.path()).string() + "/pkg-1.0.dist-info/";
  tmp_.write(info + "METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n");
  tmp_.write(info + "INSTALLER", "pip\n");
  tmp_.write(info + "RECORD", "pkg/libs/libdep.so,sha256=" + sha + "," + std::to_string(fs::file_size(lib_)) +
                                  "\npkg-1.0.dist-info/RECORD,,\n");
  settle();
  CommandResult before = check();
  ASSERT_EQ(before.status, 0) << before.out;
  std::vector<std::string> files = entry_files();
  ASSERT_EQ(files.size(), 1u);
  edit_keeping_size_and_mtime(lib_);
  std::string why;
  std::optional<support::IndexEntry> e = support::decode_entry(slurp(files[0]), &why);
  ASSERT_TRUE(e) << why;
  bool forged = false;
  for (support::IndexInput& in : e->inputs)
    if (in.path == lib_) {
      in.self.ctime_ns = support::identity_of(lib_, false).ctime_ns;
      forged = true;
    }
  ASSERT_TRUE(forged);
  write_bytes(files[0], support::encode_entry(*e));

  CommandResult stale = check();
  EXPECT_EQ(stale.out, before.out) << "the documented limit no longer holds: update run_index.h and docs/index.md";
  CommandResult fresh = check("--no-cache");
  EXPECT_EQ(fresh.status, 1);
  EXPECT_NE(fresh.out.find("undefined symbol: dep_value"), std::string::npos) << fresh.out;
  CommandResult verified = check("--verify-hashes");
  EXPECT_EQ(verified.status, 1);
  EXPECT_NE(verified.out.find("does not have the sha256"), std::string::npos) << verified.out;
}

TEST_F(IndexTest, ADamagedEntryIsANoteAndAFreshRun) {
  CommandResult good = check();
  std::vector<std::string> files = entry_files();
  ASSERT_EQ(files.size(), 1u);
  std::string bytes = slurp(files[0]);
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x20;
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"cut in half", bytes.substr(0, bytes.size() / 2)},
      {"a byte changed", flipped},
      {"empty", ""},
      {"the header alone", bytes.substr(0, 34)},
      {"not an entry", "{\"not\": \"an index entry\"}\n"},
  };
  for (const auto& [what, damaged] : damages) {
    write_bytes(files[0], damaged);
    CommandResult r = check();
    EXPECT_EQ(r.out, good.out) << what;
    EXPECT_EQ(r.status, good.status) << what;
    EXPECT_NE(r.err.find("envdoctor: note: the index entry " + files[0] + " is damaged"), std::string::npos)
        << what << ": " << r.err;
    std::optional<support::IndexEntry> rebuilt = entry();
    EXPECT_TRUE(rebuilt) << what << ": not written again";
  }
}

TEST_F(IndexTest, TheIndexIsBoundedLeastRecentlyUsedFirst) {
  check();
  std::vector<std::string> one = entry_files();
  ASSERT_EQ(one.size(), 1u);
  u64 size = fs::file_size(one[0]);
  std::string bound = "ENVDOCTOR_INDEX_MAX=" + std::to_string(size + size / 2);
  check("--json", bound);  // another question: its entry is kept, the older one goes
  std::vector<std::string> left = entry_files();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_NE(left[0], one[0]);
}

TEST_F(IndexTest, WhyAndCudaAreAnsweredFromTheIndexToo) {
  for (const std::string& command : {std::string("why"), std::string("cuda")}) {
    fs::remove_all(index_dir());
    std::string args = command == "why" ? "libdep.so" : "";
    CommandResult first = envdoctor_run(command, args);
    std::optional<support::IndexEntry> kept = entry();
    ASSERT_TRUE(kept) << command << ": " << first.err;
    CommandResult second = envdoctor_run(command, args);
    EXPECT_EQ(entry()->recorded_ns, kept->recorded_ns) << command;
    EXPECT_EQ(second.out, first.out) << command;
  }
  CommandResult before = envdoctor_run("why", "libdep.so");
  fs::copy_file(tmp_ / "bad.so", site_ + "/pkg/first/libdep.so");
  CommandResult after = envdoctor_run("why", "libdep.so");
  EXPECT_EQ(after.out, envdoctor_run("why", "libdep.so --no-cache").out);
  EXPECT_NE(after.out, before.out);
}

TEST_F(IndexTest, LddIsAnsweredFromTheIndexToo) {
  std::string ldd = "env XDG_CACHE_HOME=" + quote(cache_) + " " + quote(envdoctor()) + " ldd -r " +
                    quote(site_ + "/pkg/ext" + ext_suffix());
  CommandResult first = run(ldd);
  std::optional<support::IndexEntry> kept = entry();
  ASSERT_TRUE(kept) << first.err;
  CommandResult second = run(ldd);
  EXPECT_EQ(entry()->recorded_ns, kept->recorded_ns);
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(second.err, first.err);
  fs::copy_file(tmp_ / "bad.so", site_ + "/pkg/libs/.new");
  fs::rename(site_ + "/pkg/libs/.new", lib_);
  CommandResult after = run(ldd);
  CommandResult fresh = run(ldd + " --no-cache");
  EXPECT_EQ(after.out, fresh.out);
  EXPECT_EQ(after.err, fresh.err);
  EXPECT_EQ(after.status, fresh.status);
  EXPECT_NE(after.err.find("undefined symbol: dep_value"), std::string::npos) << after.out << after.err;

  // Two files on one stream: an answer from the index interleaves the listings (stdout) and the
  // errors (stderr) as the run did.
  std::string both = ldd + " " + quote(tmp_ / "bad.so") + " 2>&1";
  settle();
  CommandResult kept_both = run(both);
  CommandResult answered = run(both);
  EXPECT_EQ(answered.out, kept_both.out);
  EXPECT_EQ(answered.out, run(both + " --no-cache").out);
  EXPECT_LT(answered.out.find("undefined symbol: dep_value"), answered.out.find(tmp_ / "bad.so:")) << answered.out;
}

// The referee of the input log: strace sees every path the process asks about; each must be an
// input of the entry, or a missing path whose nearest existing directory is one
// (tests/fixtures/input_coverage.py). The interpreter's probe, a child, is judged the same way
// against what envdoctor notes for it.
void expect_inputs_cover_the_trace(const std::string& python_args, const std::string& cache) {
  if (!have_tool("strace")) GTEST_SKIP() << "strace is not installed";
  std::string trace = cache + "/trace";
  fs::create_directories(cache);
  CommandResult r = run("env XDG_CACHE_HOME=" + quote(cache) + " strace -f -o " + quote(trace) + " " +
                        quote(envdoctor()) + " check " + python_args + " --gpu sm_90 --driver 580.65.06");
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  std::string index = cache + "/envdoctor/index-v1";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(index)) files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u) << "the traced run was not kept";
  std::string why;
  std::optional<support::IndexEntry> e = support::decode_entry(slurp(files[0]), &why);
  ASSERT_TRUE(e) << why;
  std::ofstream inputs(cache + "/inputs");
  for (const support::IndexInput& in : e->inputs) inputs << in.path << "\n";
  inputs.close();
  std::string judge = "python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/fixtures/input_coverage.py") +
                      " " + quote(trace) + " " + quote(cache + "/inputs") + " " + quote(index);
  CommandResult own = run(judge);
  EXPECT_EQ(own.status, 0) << own.err;
  EXPECT_EQ(own.out, "") << "paths envdoctor read that the index does not keep";
  CommandResult child = run(judge + " --child");
  EXPECT_EQ(child.status, 0) << child.err;
  EXPECT_EQ(child.out, "") << "paths the interpreter's probe read that the index does not keep";
}

TEST_F(IndexTest, TheInputsCoverEveryPathTheRunTouched) {
  expect_inputs_cover_the_trace("--python " + quote(venv_->python()), tmp_ / "traced");
}

TEST(IndexInputs, TheInputsCoverEveryPathOfDebiansPython) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  TempDir tmp;
  expect_inputs_cover_the_trace("--python /usr/bin/python3", tmp / "traced");
}

TEST(IndexEntry, EncodedAndDecodedWhole) {
  support::IndexEntry e{.key = "k\n", .recorded_ns = 42, .status = 1, .out = "out", .err = "err"};
  e.order = {{false, 2}, {true, 3}, {false, 1}};
  e.inputs.push_back({"/a", {0, 040755, 1, 2, 4096, 5, 6}, std::nullopt, false});
  e.inputs.push_back({"/b", {0, 0120777, 1, 3, 1, 5, 6}, support::Identity{0, 0100644, 1, 4, 9, 7, 8}, true});
  e.inputs.push_back({"/c", {ENOENT}, std::nullopt, true});
  std::string bytes = support::encode_entry(e);
  std::string why;
  std::optional<support::IndexEntry> back = support::decode_entry(bytes, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->key, e.key);
  EXPECT_EQ(back->recorded_ns, 42);
  EXPECT_EQ(back->status, 1);
  EXPECT_EQ(back->out, "out");
  EXPECT_EQ(back->err, "err");
  EXPECT_EQ(back->inputs, e.inputs);
  EXPECT_EQ(back->order, e.order);
  // Every prefix, and every single byte changed, is refused with a reason, never a crash.
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(support::decode_entry(std::string_view(bytes).substr(0, n), &why)) << n;
    std::string changed = bytes;
    changed[n] ^= 0x01;
    EXPECT_FALSE(support::decode_entry(changed, &why)) << n;
  }
}

}  // namespace
}  // namespace envdoctor::test
