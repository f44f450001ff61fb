// `check --image FILE.sqsh` whatever compressor squashfs-tools wrote it with: gzip, lzma, lzo
// (enroot's default, `-comp lzo -noD`, which Debian's libsquashfs cannot read and liblzo2 does),
// lz4, xz, zstd, each also with its metadata, data or fragments left uncompressed. Referees: the
// real mksquashfs compresses one root; every entry the image reader hands out is the root's own,
// byte for byte; and `check --root` of that very tree gives the findings `check --image` gives.
// Hostile images (a compressor id squashfs does not
// define, a truncated image, a corrupt LZO block) are a clear refusal, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/fixture.h"
#include "fixtures/venv.h"
#include "image/squashfs.h"

namespace envdoctor::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kSuffix = ".cpython-311-x86_64-linux-gnu.so";  // the root's venv is Python 3.11's

void step(const std::string& command) {
  CommandResult r = run("set -e; " + command);
  ASSERT_EQ(r.status, 0) << command << "\n" << r.out << r.err;
}

// A package `name` 1.0 unpacked from its wheel into `site`, with `paths` (arcname -> file).
void install_package(const TempDir& t, const std::string& site, const std::string& name, const json& paths) {
  fs::create_directories(t / "wheels");
  std::string wheel = make_wheel(t / "wheels", {{"name", name},
                                                {"version", "1.0"},
                                                {"tag", "cp311-cp311-linux_x86_64"},
                                                {"purelib", false},
                                                {"files", {{name + "/__init__.py", "from . import _" + name + "\n"}}},
                                                {"paths", paths}});
  step("python3 -m zipfile -e " + quote(wheel) + " " + quote(site));
}

// The root every image compresses: this machine's libc, libm and libz with an ld.so.cache, and a
// venv where sqfoo's extension needs a library nothing ships (missing-library), sqbar's loads its
// own from sqbar.libs and ships data of several blocks (random, text, and a sparse run of zeros),
// and sqbaz's __init__.py was changed after install (record-size-mismatch, with --all-files).
void make_squashed_root(const TempDir& t, const std::string& root) {
  std::string site = root + "/opt/venv/lib/python3.11/site-packages";
  step(
      "R=" + quote(root) + "; mkdir -p $R/usr/lib/x86_64-linux-gnu $R/usr/lib64 $R/etc/ld.so.conf.d " + quote(site) +
      "; ln -s usr/lib $R/lib; ln -s usr/lib64 $R/lib64"
      "; for l in libc.so.6 libm.so.6 libz.so.1 ld-linux-x86-64.so.2; do cp -L /lib/x86_64-linux-gnu/$l "
      "$R/usr/lib/x86_64-linux-gnu/; done"
      "; ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 $R/usr/lib64/ld-linux-x86-64.so.2"
      "; cp /etc/ld.so.conf $R/etc/; cp /etc/ld.so.conf.d/x86_64-linux-gnu.conf $R/etc/ld.so.conf.d/"
      "; ldconfig -r $R"
      "; printf 'home = /usr/bin\\ninclude-system-site-packages = false\\nversion = 3.11.2\\n' > $R/opt/venv/pyvenv.cfg");
  build_shared(t / "build/libsqfoo.so.1", "int sqfoo(void) { return 1; }", "-Wl,-soname,libsqfoo.so.1", t);
  build_shared(t / "build/_sqfoo.so", "int sqfoo(void); int f(void) { return sqfoo(); }",
               quote(t / "build/libsqfoo.so.1"), t);
  install_package(t, site, "sqfoo", {{"sqfoo/_sqfoo" + std::string(kSuffix), t / "build/_sqfoo.so"}});
  build_shared(t / "build/libsqbar.so.1", "#include <zlib.h>\nlong sqbar(void) { return (long)zlibVersion(); }",
               "-Wl,-soname,libsqbar.so.1 -lz", t);
  build_shared(t / "build/_sqbar.so", "long sqbar(void); long f(void) { return sqbar(); }",
               quote(t / "build/libsqbar.so.1") + " -Wl,-rpath,'$ORIGIN/../sqbar.libs'", t);
  step(
      "cd " + quote(t / "build") +
      " && head -c 400000 /dev/urandom > data.bin && seq 1 200000 >> data.bin && head -c 300000 /dev/zero >> data.bin");
  install_package(t, site, "sqbar",
                  {{"sqbar/_sqbar" + std::string(kSuffix), t / "build/_sqbar.so"},
                   {"sqbar.libs/libsqbar.so.1", t / "build/libsqbar.so.1"},
                   {"sqbar/data.bin", t / "build/data.bin"}});
  build_shared(t / "build/_sqbaz.so", "int f(void) { return 3; }", "", t);
  install_package(t, site, "sqbaz", {{"sqbaz/_sqbaz" + std::string(kSuffix), t / "build/_sqbaz.so"}});
  step("echo '# changed' >> " + quote(site + "/sqbaz/__init__.py"));
}

class SquashfsCompressorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_tool("mksquashfs") || !have_tool("unsquashfs") || !have_tool("ldconfig") || !have_tool("gcc")) return;
    tmp_ = new TempDir;
    root_ = new std::string(*tmp_ / "root");
    make_squashed_root(*tmp_, *root_);
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
    delete tmp_;
    tmp_ = nullptr;
  }
  void SetUp() override {
    if (!tmp_) GTEST_SKIP() << "needs mksquashfs, unsquashfs (squashfs-tools), ldconfig and gcc";
  }

  // `envdoctor check --json ARGS` with a cache of the suite's own; its exit status in `status`.
  static json check(const std::string& args, int* status = nullptr, std::string* err = nullptr) {
    CommandResult r =
        run("env XDG_CACHE_HOME=" + quote(*tmp_ / "cache") + " " + quote(envdoctor()) + " check --json " + args);
    if (status) *status = r.status;
    if (err) *err = r.err;
    return json::parse(r.out.empty() ? "{}" : r.out);
  }

  // The root compressed by the real mksquashfs with `options`; "" when mksquashfs refused them.
  static std::string squash(const std::string& name, const std::string& options) {
    std::string image = *tmp_ / (name + ".sqsh");
    CommandResult r =
        run("mksquashfs " + quote(*root_) + " " + quote(image) + " " + options + " -noappend -quiet -no-progress");
    EXPECT_EQ(r.status, 0) << options << "\n" << r.out << r.err;
    return r.status == 0 ? image : "";
  }

  static TempDir* tmp_;
  static std::string* root_;
};

// What differs between the image's entries, as image::open_squashfs reads them, and the root's
// files: "" when every entry is there with the same type, mode, link target and bytes, and the
// image holds every file of the root.
std::string differences(const std::string& image, const std::string& root) {
  std::string error;
  std::unique_ptr<image::EntryReader> reader = image::open_squashfs(image, {}, &error);
  if (!reader) return error;
  std::string out;
  size_t entries = 0;
  image::RawEntry e;
  while (reader->next(e, &error)) {
    ++entries;
    fs::path on_disk = fs::path(root) / e.path;
    fs::file_status st = fs::symlink_status(on_disk);
    if (e.type == image::EntryType::kSymlink) {
      if (!fs::is_symlink(st) || fs::read_symlink(on_disk) != e.link) out += e.path + ": another link\n";
      continue;
    }
    if (static_cast<u32>(st.permissions()) != e.mode) out += e.path + ": another mode\n";
    if (e.type != image::EntryType::kFile) continue;
    std::string data;
    char buffer[65536];
    for (i64 n; (n = reader->read(buffer, sizeof buffer, &error)) != 0;) {
      if (n < 0) return out + e.path + ": " + error;
      data.append(buffer, static_cast<size_t>(n));
    }
    if (data != slurp(on_disk)) out += e.path + ": other bytes\n";
  }
  if (!error.empty()) return out + error;
  size_t files = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) ++files;
  if (files != entries) out += std::to_string(entries) + " entries for " + std::to_string(files) + " files\n";
  return out;
}

TempDir* SquashfsCompressorTest::tmp_ = nullptr;
std::string* SquashfsCompressorTest::root_ = nullptr;

// Every compressor mksquashfs offers, with the options that change how blocks are stored: -noI
// (metadata), -noD (data blocks), -noF (fragments), -noX (extended attributes), and each
// compressor's own variants (LZO's faster algorithm, LZ4's high compression, XZ's x86 filter).
TEST_F(SquashfsCompressorTest, EveryCompressorGivesTheFindingsOfItsRoot) {
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"gzip", "-comp gzip"},
      {"gzip", "-comp gzip -noI -noD -noF -noX"},
      {"lzma", "-comp lzma"},
      {"lzo", "-comp lzo -noD"},  // enroot's ENROOT_SQUASH_OPTIONS
      {"lzo", "-comp lzo"},
      {"lzo", "-comp lzo -Xalgorithm lzo1x_1 -noF"},
      {"lzo", "-comp lzo -noI -b 4K"},
      {"lz4", "-comp lz4"},
      {"lz4", "-comp lz4 -Xhc -noD"},
      {"xz", "-comp xz"},
      {"xz", "-comp xz -Xbcj x86 -b 1M"},
      {"zstd", "-comp zstd"},
      {"zstd", "-comp zstd -Xcompression-level 19 -noF"},
  };
  json referee = check("--root " + quote(*root_) + " --prefix /opt/venv --all-files");
  ASSERT_EQ(findings(referee, "missing-library").size(), 1u) << referee.dump(1);
  ASSERT_EQ(findings(referee, "record-size-mismatch").size(), 1u) << referee.dump(1);
  EXPECT_EQ(referee["summary"]["errors"], 1) << referee.dump(1);
  int n = 0;
  for (const auto& [compressor, options] : variants) {
    std::string image = squash("image" + std::to_string(n++), options);
    if (image.empty()) continue;
    // The file is what the options asked for, as squashfs-tools itself reads it.
    CommandResult super = run("unsquashfs -s " + quote(image));
    EXPECT_NE(super.out.find("Compression " + compressor + "\n"), std::string::npos) << options << "\n" << super.out;
    EXPECT_EQ(differences(image, *root_), "") << options;
    int status = -1;
    std::string err;
    json j = check("--image " + quote(image) + " --prefix /opt/venv --all-files", &status, &err);
    EXPECT_EQ(status, 1) << options << "\n" << err;
    EXPECT_EQ(plain(j), plain(referee)) << options << "\n" << j.dump(1);
    EXPECT_EQ(j["environment"]["packages"], referee["environment"]["packages"]) << options;
    EXPECT_EQ(j["environment"]["elf_files"], referee["environment"]["elf_files"]) << options;
  }
}

// A squashfs refused says why and which file, with exit status 2: an id no compressor has, an
// image cut short, an LZO block whose bytes were changed.
TEST_F(SquashfsCompressorTest, AHostileImageIsAClearRefusal) {
  std::string lzo = squash("hostile", "-comp lzo -noD");
  ASSERT_FALSE(lzo.empty());
  std::string bytes = slurp(lzo);
  auto refusal = [&](const std::string& name, const std::string& content) {
    std::string path = tmp_->write(name, content);
    int status = -1;
    std::string err;
    check("--image " + quote(path) + " --prefix /opt/venv", &status, &err);
    EXPECT_EQ(status, 2) << name << "\n" << err;
    return err;
  };
  std::string unknown = bytes;
  unknown[20] = 9;  // the superblock's compression_id
  std::string path = *tmp_ / "unknown.sqsh";
  EXPECT_EQ(refusal("unknown.sqsh", unknown), "envdoctor: --image " + path + ": " + path +
                                                  ": its compressor id 9 is none that squashfs defines (1 gzip "
                                                  "to 6 zstd)\n");
  std::string truncated = *tmp_ / "truncated.sqsh";
  EXPECT_EQ(refusal("truncated.sqsh", bytes.substr(0, bytes.size() / 2)),
            "envdoctor: --image " + truncated + ": " + truncated + ": unreadable id table\n");
  // -noD leaves the data blocks as they are; the metadata blocks are LZO. The inode table's first
  // block (its offset at byte 64 of the superblock, after the block's 2-byte header) with its
  // bytes changed fails lzo1x_decompress_safe.
  std::string corrupt = bytes;
  size_t inodes = 0;
  for (int i = 7; i >= 0; --i) inodes = inodes << 8 | static_cast<unsigned char>(bytes[64 + i]);
  ASSERT_LT(inodes + 64, corrupt.size());
  for (size_t at = inodes + 2; at < inodes + 64; ++at) corrupt[at] = static_cast<char>(corrupt[at] ^ 0x5a);
  std::string path_c = *tmp_ / "corrupt.sqsh";
  EXPECT_EQ(refusal("corrupt.sqsh", corrupt),
            "envdoctor: --image " + path_c + ": " + path_c + ": unreadable directory table\n");
}

// enroot's own squashfs: `enroot export` of a container writes the image with its
// ENROOT_SQUASH_OPTIONS (`-comp lzo -noD` unless configured), the file `enroot import` writes too.
TEST_F(SquashfsCompressorTest, EnrootsOwnImage) {
  if (!have_tool("enroot")) GTEST_SKIP() << "needs enroot, which Debian does not package (NVIDIA's releases only)";
  std::string gzip = squash("enroot-source", "-comp gzip");
  ASSERT_FALSE(gzip.empty());
  std::string env =
      "env ENROOT_DATA_PATH=" + quote(*tmp_ / "enroot/data") + " ENROOT_CACHE_PATH=" + quote(*tmp_ / "enroot/cache") +
      " ENROOT_RUNTIME_PATH=" + quote(*tmp_ / "enroot/run") + " ENROOT_TEMP_PATH=" + quote(*tmp_ / "enroot/tmp") + " ";
  step("mkdir -p " + quote(*tmp_ / "enroot/tmp") + " && " + env + "enroot create --name sqtest " + quote(gzip) +
       " && " + env + "enroot export --output " + quote(*tmp_ / "enroot.sqsh") + " sqtest");
  CommandResult super = run("unsquashfs -s " + quote(*tmp_ / "enroot.sqsh"));
  EXPECT_NE(super.out.find("Compression "), std::string::npos) << super.out;
  json referee = check("--root " + quote(*root_) + " --prefix /opt/venv --all-files");
  json j = check("--image " + quote(*tmp_ / "enroot.sqsh") + " --prefix /opt/venv --all-files");
  EXPECT_EQ(plain(j), plain(referee)) << j.dump(1);
}

}  // namespace
}  // namespace envdoctor::test
