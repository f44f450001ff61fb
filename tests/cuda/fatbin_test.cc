// The fatbinary reader against real nvcc output (committed fixtures, fixtures built now when
// nvcc is installed, the toolkit's own libraries) and against hand-made malformed sections.
// Where cuobjdump is installed, every listing is compared with `cuobjdump --list-elf --list-ptx`.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

#include "cuda/fatbin.h"
#include "fixtures/cuda_fixtures.h"
#include "fixtures/fixture.h"

namespace envdoctor::cuda {
namespace {

using test::TempDir;

using test::kCudaData;
using test::kNvcc;
const std::string kCudaLib = "/usr/local/cuda/lib64/";

struct Read {
  std::unique_ptr<elf::ElfFile> elf;
  FatbinInfo info;
};

Read read_file(const std::string& path) {
  std::string error;
  std::shared_ptr<const MappedFile> file(MappedFile::open(path, &error).release());
  EXPECT_TRUE(file) << path << ": " << error;
  if (!file) return {};
  Read r;
  r.elf = elf::ElfFile::parse(file, &error);
  EXPECT_TRUE(r.elf) << path << ": " << error;
  if (r.elf) r.info = read_fatbins(*r.elf);
  return r;
}

// "sm_80", "compute_80 compressed", "sm_80 relocatable": one line per entry, in file order.
std::vector<std::string> describe(const FatbinInfo& info) {
  std::vector<std::string> out;
  for (const FatbinEntry& e : info.entries) {
    std::string s = e.arch_name();
    if (e.kind == FatbinEntry::Kind::kPtx)
      s += " isa" + std::to_string(e.ptx_isa_major) + "." + std::to_string(e.ptx_isa_minor);
    if (e.compressed) s += " compressed";
    if (e.relocatable) s += " relocatable";
    if (!e.variant_known) s += " variant?";
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> listing(const std::string& path) {
  Read r = read_file(path);
  EXPECT_EQ(r.info.problems, std::vector<std::string>{}) << path;
  return describe(r.info);
}

// The set of "sm_80" / "compute_80" names cuobjdump lists: its lines read
// "ELF file    1: k.1.sm_80.cubin" and "PTX file    1: k.1.sm_80.ptx".
std::set<std::string> cuobjdump_archs(const std::string& path) {
  test::CommandResult r = test::run("cuobjdump --list-elf --list-ptx " + test::quote(path));
  EXPECT_EQ(r.status, 0) << r.err;
  std::set<std::string> out;
  static const std::regex line(R"((ELF|PTX) file\s+\d+: .*\.(sm_\d+[af]?)\.(cubin|ptx))");
  std::smatch m;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    if (!std::regex_search(l, m, line)) continue;
    std::string arch = m[2];
    out.insert(m[1] == "PTX" ? "compute_" + arch.substr(3) : arch);
  }
  return out;
}

std::set<std::string> our_archs(const FatbinInfo& info) {
  std::set<std::string> out;
  for (const FatbinEntry& e : info.entries)
    if (e.kind != FatbinEntry::Kind::kOther) out.insert(e.arch_name());
  return out;
}

// The caller skips where cuobjdump is not installed (cuobjdump_missing): a comparison that cannot
// run is said, never passed in silence.
void expect_matches_cuobjdump(const std::string& path) {
  Read r = read_file(path);
  EXPECT_EQ(our_archs(r.info), cuobjdump_archs(path)) << path;
}

// Why a comparison with cuobjdump cannot run here; "" where it can.
std::string cuobjdump_missing() {
  return test::have_tool("cuobjdump") ? "" : "cuobjdump (the CUDA toolkit's) not installed";
}

// --- committed fixtures (tests/fixtures/data/cuda/build.sh made them with nvcc 13.0) ---

TEST(FatbinFixtures, Sm80SassOnly) { EXPECT_EQ(listing(kCudaData + "sm80.so"), (std::vector<std::string>{"sm_80"})); }

TEST(FatbinFixtures, Sm80WithPtx) {
  // nvcc compresses PTX by default, not cubins.
  EXPECT_EQ(listing(kCudaData + "sm80_ptx.so"), (std::vector<std::string>{"sm_80", "compute_80 isa9.0 compressed"}));
}

TEST(FatbinFixtures, ArchSpecificVariantComesFromTheHeaderFlag) {
  EXPECT_EQ(listing(kCudaData + "sm90a.so"), (std::vector<std::string>{"sm_90a", "compute_90a isa9.0 compressed"}));
}

TEST(FatbinFixtures, FamilySpecificVariant) {
  EXPECT_EQ(listing(kCudaData + "sm100f.so"), (std::vector<std::string>{"sm_100f", "compute_100f isa9.0 compressed"}));
}

TEST(FatbinFixtures, CompressAllCompressesTheCubinToo) {
  Read r = read_file(kCudaData + "compressed.so");
  EXPECT_EQ(describe(r.info), (std::vector<std::string>{"sm_80 compressed", "compute_80 isa9.0 compressed"}));
  // Sizes from the headers: the stored bytes are smaller than what they inflate to.
  for (const FatbinEntry& e : r.info.entries) EXPECT_LT(e.size, e.uncompressed_size);
  // The stored payload is a zstd frame (magic 28 b5 2f fd), found at the offset reported.
  const u8* p = r.elf->bytes().at(r.info.entries[0].offset, 4);
  ASSERT_TRUE(p);
  EXPECT_EQ(std::vector<u8>(p, p + 4), (std::vector<u8>{0x28, 0xb5, 0x2f, 0xfd}));
}

TEST(FatbinFixtures, UncompressedPtxAndCubinPayloadsAreWhereTheHeaderSays) {
  Read r = read_file(kCudaData + "ptx90_plain.so");
  ASSERT_EQ(describe(r.info), (std::vector<std::string>{"sm_90", "compute_90 isa9.0"}));
  Bytes file = r.elf->bytes();
  const u8* cubin = file.at(r.info.entries[0].offset, 4);
  ASSERT_TRUE(cubin);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(cubin), 4),
            "\x7f"
            "ELF");
  std::string_view ptx = file.slice(r.info.entries[1].offset, r.info.entries[1].size)->as_string_view();
  EXPECT_NE(ptx.find(".target sm_90"), std::string_view::npos);
}

TEST(FatbinFixtures, RelocatableDeviceCodeKeepsBothLinkedAndRelocatableImages) {
  EXPECT_EQ(listing(kCudaData + "rdc.so"), (std::vector<std::string>{"sm_80", "sm_80 compressed relocatable",
                                                                     "compute_80 isa9.0 compressed relocatable"}));
}

TEST(FatbinFixtures, PlainLibraryHasNoFatbin) {
  TempDir tmp;
  test::build_shared(tmp / "libplain.so", "int f(void) { return 1; }", "", tmp);
  Read r = read_file(tmp / "libplain.so");
  EXPECT_TRUE(r.info.entries.empty());
  EXPECT_TRUE(r.info.problems.empty());
}

// --- the variant read from the payload when the header has no flag (older toolkits) ---

// The bytes of a fixture with every entry's variant flags cleared, as a pre-12.9 toolkit might
// have written them: flags at +40, 0x100000 and 0x200000 are byte 2, bits 4-5.
std::vector<u8> without_variant_flags(const std::string& path) {
  std::vector<u8> bytes = test::read_bytes(path);
  test::for_each_fatbin_entry(bytes, [](u8* header) { header[42] &= ~0x30; });
  return bytes;
}

FatbinInfo read_buffer(std::vector<u8> bytes) {
  std::string error;
  std::shared_ptr<const MappedFile> file(MappedFile::from_buffer("buffer", std::move(bytes)).release());
  std::unique_ptr<elf::ElfFile> elf = elf::ElfFile::parse(file, &error);
  EXPECT_TRUE(elf) << error;
  return elf ? read_fatbins(*elf) : FatbinInfo{};
}

TEST(FatbinVariant, UncompressedPtxTargetLineSaysTheVariant) {
  TempDir tmp;
  if (!test::have_tool(kNvcc)) GTEST_SKIP() << "nvcc not installed";
  std::string cu = tmp.write("k.cu", "__global__ void k(int* p) { *p = 1; }\n");
  test::CommandResult r = test::run(kNvcc +
                                    " -shared -Xcompiler -fPIC -cudart none -gencode "
                                    "'arch=compute_90a,code=[compute_90a]' -Xfatbin -compress=false -o " +
                                    tmp / "ptx90a.so " + cu);
  ASSERT_EQ(r.status, 0) << r.err;
  FatbinInfo info = read_buffer(without_variant_flags(tmp / "ptx90a.so"));
  EXPECT_EQ(describe(info), (std::vector<std::string>{"compute_90a isa9.0"}));
}

TEST(FatbinVariant, CompressedPtxOfCuda13WithoutFlagIsThePlainArch) {
  // PTX ISA 9.0 comes from a toolkit known to flag variants: no flag means no variant.
  FatbinInfo info = read_buffer(without_variant_flags(kCudaData + "sm90a.so"));
  EXPECT_EQ(describe(info), (std::vector<std::string>{"sm_90", "compute_90 isa9.0 compressed"}));
}

// --- toolkit libraries, when installed ---

TEST(FatbinToolkit, CudnnCnnListsEveryArchitecture) {
  std::string path = kCudaLib + "libcudnn_cnn.so.9";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not installed";
  Read r = read_file(path);
  EXPECT_TRUE(r.info.problems.empty());
  EXPECT_GT(r.info.entries.size(), 0u);
  EXPECT_TRUE(our_archs(r.info).count("sm_80"));
}

TEST(FatbinToolkit, CudnnCnnListingIsCuobjdumps) {
  std::string path = kCudaLib + "libcudnn_cnn.so.9";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not installed";
  if (std::string why = cuobjdump_missing(); !why.empty()) GTEST_SKIP() << why;
  expect_matches_cuobjdump(path);
}

TEST(FatbinToolkit, HugeLibrariesListFromHeadersOnly) {
  // cuBLASLt (hundreds of MB, thousands of containers) and cuDNN's precompiled engines. Their
  // cuobjdump comparison is recorded in docs/cuda.md, not repeated here: it takes long.
  std::vector<std::string> absent;
  for (std::string name : {"libcublasLt.so.13", "libcudnn_engines_precompiled.so.9"}) {
    std::string path = kCudaLib + name;
    if (!std::filesystem::exists(path)) {
      absent.push_back(path);
      continue;
    }
    Read r = read_file(path);
    EXPECT_EQ(r.info.problems, std::vector<std::string>{}) << name;
    EXPECT_GT(r.info.containers, 1000u) << name;
    std::set<std::string> archs = our_archs(r.info);
    for (const char* arch : {"sm_75", "sm_80", "sm_86", "sm_90", "sm_90a", "sm_100", "sm_120"})
      EXPECT_TRUE(archs.count(arch)) << name << " lacks " << arch;
  }
  if (absent.size() == 2) GTEST_SKIP() << absent[0] << " and " << absent[1] << " not installed";
}

TEST(FatbinToolkit, RuntimeLibraryWithoutDeviceCode) {
  std::string path = kCudaLib + "libcudart.so.13";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not installed";
  Read r = read_file(path);
  EXPECT_TRUE(r.info.entries.empty());
  EXPECT_TRUE(r.info.problems.empty());
}

// --- fixtures built now by nvcc, each compared with what was asked and with cuobjdump ---

struct NvccFixture {
  std::string file, flags;
  std::vector<std::string> expected;  // empty: checked below
};

const std::vector<NvccFixture>& nvcc_fixtures() {
  static const std::vector<NvccFixture> fixtures = {
      {"sm80.so", "-cudart none -gencode arch=compute_80,code=sm_80", {"sm_80"}},
      {"sm80_ptx.so",
       "-cudart none -gencode 'arch=compute_80,code=[sm_80,compute_80]'",
       {"sm_80", "compute_80 isa9.0 compressed"}},
      {"sm90.so", "-cudart none -gencode arch=compute_90,code=sm_90", {"sm_90"}},
      {"sm90a.so",
       "-cudart none -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]'",
       {"sm_90a", "compute_90a isa9.0 compressed"}},
      {"compressed.so",
       "-cudart none -gencode 'arch=compute_80,code=[sm_80,compute_80]' -Xfatbin -compress-all",
       {"sm_80 compressed", "compute_80 isa9.0 compressed"}},
      // -rdc needs the runtime for the device link that fills .nv_fatbin.
      {"rdc.so", "-cudart shared -rdc=true -gencode 'arch=compute_80,code=[sm_80,compute_80]'", {}},
  };
  return fixtures;
}

// Builds every fixture into `tmp`, one nvcc per fixture, all at once: each takes about a second,
// mostly start-up. Returns nvcc's error output.
std::string build_nvcc_fixtures(const TempDir& tmp) {
  std::string cu = tmp.write("k.cu", "__global__ void add(float* a) { a[threadIdx.x] += 1.0f; }\n");
  std::string script;
  for (const NvccFixture& f : nvcc_fixtures())
    script += kNvcc + " -shared -Xcompiler -fPIC " + f.flags + " -o " + test::quote(tmp / f.file) + " " +
              test::quote(cu) + " & ";
  return test::run(script + "wait").err;
}

// One test, so that ctest (which runs each test in its own process) builds the fixtures once.
TEST(NvccFixtures, EachListingIsWhatNvccWasAsked) {
  if (!test::have_tool(kNvcc)) GTEST_SKIP() << "nvcc not installed";
  TempDir tmp;
  std::string err = build_nvcc_fixtures(tmp);
  for (const NvccFixture& f : nvcc_fixtures()) {
    SCOPED_TRACE(f.file);
    std::string path = tmp / f.file;
    ASSERT_TRUE(std::filesystem::exists(path)) << err;
    if (!f.expected.empty()) {
      EXPECT_EQ(listing(path), f.expected);
    } else {
      // The linked image and the two relocatable inputs it was linked from.
      std::vector<std::string> d = listing(path);
      EXPECT_EQ(std::count(d.begin(), d.end(), "sm_80"), 1);
      EXPECT_EQ(std::count(d.begin(), d.end(), "sm_80 compressed relocatable"), 1);
      EXPECT_EQ(std::count(d.begin(), d.end(), "compute_80 isa9.0 compressed relocatable"), 1);
    }
  }
}

// The same fixtures, each listing held to cuobjdump's.
TEST(NvccFixtures, EachListingIsCuobjdumps) {
  if (!test::have_tool(kNvcc)) GTEST_SKIP() << "nvcc not installed";
  if (std::string why = cuobjdump_missing(); !why.empty()) GTEST_SKIP() << why;
  TempDir tmp;
  std::string err = build_nvcc_fixtures(tmp);
  for (const NvccFixture& f : nvcc_fixtures()) {
    SCOPED_TRACE(f.file);
    ASSERT_TRUE(std::filesystem::exists(tmp / f.file)) << err;
    expect_matches_cuobjdump(tmp / f.file);
  }
}

// --- malformed sections: a problem with its place and reason, never a crash ---

// Little-endian section bytes built field by field.
struct SectionWriter {
  std::vector<u8> bytes;
  template <typename T>
  SectionWriter& put(T v) {
    for (size_t i = 0; i < sizeof(T); ++i) bytes.push_back(static_cast<u8>(static_cast<u64>(v) >> (8 * i)));
    return *this;
  }
  SectionWriter& container(u64 fat_size, u16 header_size = 16, u32 magic = 0xBA55ED50, u16 version = 1) {
    return put(magic).put(version).put(header_size).put(fat_size);
  }
  // A 64-byte entry header followed by `payload` bytes of 'x'.
  SectionWriter& entry(u16 kind, u32 arch, u64 payload, u64 flags = 0x11, u32 header_size = 64, u16 major = 9,
                       u16 minor = 0) {
    put(kind).put(u16(0x0101)).put(header_size).put(payload).put(u32(0)).put(u32(0));
    put(minor).put(major).put(arch).put(u32(0)).put(u32(0)).put(flags).put(u64(0)).put(u64(0));
    for (u32 i = 64; i < header_size; ++i) bytes.push_back(0);
    bytes.insert(bytes.end(), payload, 'x');
    return *this;
  }
  FatbinInfo parse() const { return parse_fatbin_section(Bytes(bytes.data(), bytes.size())); }
};

TEST(FatbinMalformed, TwoContainersAndZeroPaddingBetween) {
  SectionWriter w;
  w.container(64 + 8).entry(2, 80, 8).put(u64(0)).container(64 + 16).entry(1, 90, 16);
  FatbinInfo info = w.parse();
  EXPECT_EQ(info.problems, std::vector<std::string>{});
  EXPECT_EQ(describe(info), (std::vector<std::string>{"sm_80", "compute_90 isa9.0"}));
  EXPECT_EQ(info.containers, 2u);
  EXPECT_EQ(info.entries[1].container, 1u);
  EXPECT_EQ(info.entries[1].offset, 16u + 72 + 8 + 16 + 64);
}

TEST(FatbinMalformed, BadMagic) {
  SectionWriter w;
  w.container(0, 16, 0x12345678);
  EXPECT_EQ(w.parse().problems, (std::vector<std::string>{".nv_fatbin+0x0: no fatbinary magic (found 0x12345678)"}));
}

TEST(FatbinMalformed, UnknownVersion) {
  SectionWriter w;
  w.container(0, 16, 0xBA55ED50, 2);
  EXPECT_EQ(w.parse().problems, (std::vector<std::string>{".nv_fatbin+0x0: unknown fatbinary version 2"}));
}

TEST(FatbinMalformed, TruncatedContainerHeader) {
  SectionWriter w;
  w.put(u32(0xBA55ED50)).put(u32(1)).put(u32(0));
  EXPECT_EQ(w.parse().problems,
            (std::vector<std::string>{".nv_fatbin+0x0: container header truncated: 12 bytes left"}));
}

TEST(FatbinMalformed, ContainerHeaderSizeBelowItself) {
  SectionWriter w;
  w.container(0, 8);
  EXPECT_EQ(w.parse().problems, (std::vector<std::string>{".nv_fatbin+0x0: container header size 8 is invalid"}));
}

TEST(FatbinMalformed, FatSizeOverflowingKeepsWhatFits) {
  SectionWriter w;
  w.container(~u64(0) - 4).entry(2, 80, 8);
  FatbinInfo info = w.parse();
  EXPECT_EQ(info.problems,
            (std::vector<std::string>{
                ".nv_fatbin+0x0: container claims 18446744073709551611 bytes but the section has 72 left"}));
  EXPECT_EQ(describe(info), (std::vector<std::string>{"sm_80"}));
}

TEST(FatbinMalformed, EntryHeaderSizeTooSmall) {
  SectionWriter w;
  w.container(64).entry(2, 80, 0, 0x11, 64);
  w.bytes[16 + 4] = 12;  // header_size = 12
  EXPECT_EQ(w.parse().problems, (std::vector<std::string>{".nv_fatbin+0x10: entry header size 12 is invalid"}));
}

TEST(FatbinMalformed, EntryPayloadOverrunsContainer) {
  SectionWriter w;
  w.container(64 + 8).entry(2, 80, 8);
  w.bytes[16 + 8] = 200;  // payload_size = 200
  FatbinInfo info = w.parse();
  EXPECT_EQ(info.problems,
            (std::vector<std::string>{".nv_fatbin+0x10: entry payload of 200 bytes overruns the container"}));
  EXPECT_TRUE(info.entries.empty());
}

TEST(FatbinMalformed, HugePayloadSizeDoesNotWrap) {
  SectionWriter w;
  w.container(64).entry(2, 80, 0);
  for (int i = 0; i < 8; ++i) w.bytes[16 + 8 + i] = 0xff;
  EXPECT_EQ(w.parse().problems,
            (std::vector<std::string>{
                ".nv_fatbin+0x10: entry payload of 18446744073709551615 bytes overruns the container"}));
}

TEST(FatbinMalformed, TruncatedEntryHeader) {
  SectionWriter w;
  w.container(32).put(u64(2)).put(u64(0)).put(u64(0)).put(u64(0));
  EXPECT_EQ(w.parse().problems,
            (std::vector<std::string>{".nv_fatbin+0x10: entry header truncated: 32 bytes left in the container"}));
}

TEST(FatbinMalformed, CompressedSizeLargerThanPayload) {
  SectionWriter w;
  w.container(64 + 8).entry(1, 80, 8, 0x8011);
  w.bytes[16 + 16] = 99;  // compressed_size
  FatbinInfo info = w.parse();
  EXPECT_EQ(info.problems,
            (std::vector<std::string>{".nv_fatbin+0x10: compressed size 99 exceeds the payload of 8 bytes"}));
  ASSERT_EQ(info.entries.size(), 1u);
  EXPECT_EQ(info.entries[0].size, 8u);
}

TEST(FatbinMalformed, TrailingGarbage) {
  SectionWriter w;
  w.container(0).put(u32(7));
  EXPECT_EQ(w.parse().problems,
            (std::vector<std::string>{".nv_fatbin+0x10: trailing 4 bytes after the last container"}));
}

TEST(FatbinMalformed, CompressedUnflaggedCubinOfUnknownToolkitHasUnknownVariant) {
  SectionWriter w;
  w.container(64 + 8).entry(2, 90, 8, 0x8011, 64, /*major=*/1, /*minor=*/7);
  EXPECT_EQ(describe(w.parse()), (std::vector<std::string>{"sm_90 compressed variant?"}));
}

TEST(FatbinMalformed, SectionOutsideTheFile) {
  // An ELF whose .nv_fatbin header points past the end of the file.
  std::ifstream in(kCudaData + "sm80.so", std::ios::binary);
  std::vector<u8> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Read r = read_file(kCudaData + "sm80.so");
  u64 shoff;
  u16 shentsize, shnum;
  std::memcpy(&shoff, &bytes[0x28], 8);
  std::memcpy(&shentsize, &bytes[0x3a], 2);
  std::memcpy(&shnum, &bytes[0x3c], 2);
  std::vector<elf::Section> sections = r.elf->sections();
  u64 size = 0;
  for (u16 i = 0; i < shnum; ++i) {
    if (sections[i].name != ".nv_fatbin") continue;
    size = sections[i].size;
    u64 huge = 1ull << 40;
    std::memcpy(&bytes[shoff + u64(i) * shentsize + 0x18], &huge, 8);  // sh_offset
  }
  FatbinInfo info = read_buffer(bytes);
  EXPECT_EQ(info.problems, (std::vector<std::string>{".nv_fatbin: section at 0x10000000000 of " + std::to_string(size) +
                                                     " bytes lies outside the file"}));
  EXPECT_TRUE(info.entries.empty());
}

}  // namespace
}  // namespace envdoctor::cuda
