// Damaged files in the loader's words (issue 49, item 2). One table of damages, each crafted from
// a library gcc built: a copy cut short at several places, each byte of e_ident that open_verify
// reads (magic, class, data, version, OS ABI, ABI version, padding), e_version, e_type,
// e_machine, e_phentsize, e_phoff, and segments past the end of the file. Each is opened by the
// real dlopen (in a child, which may die) and by envdoctor's model, both by its path and found by
// a search (LD_LIBRARY_PATH bad:good, where bad holds the damaged copy), and listed by ld.so and by
// `envdoctor ldd` as the dependency of a library that needs it. Where glibc has words, envdoctor's
// are the same; where it has none (a segment past the end: the process dies of SIGBUS), the
// referee's child dies, ld.so lists nothing, and envdoctor says so.
#include <elf.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>

#include "fixtures/fixture.h"
#include "fixtures/loader_referee.h"
#include "loader/process.h"

namespace envdoctor::test {
namespace {

struct Damage {
  const char* name;
  std::function<void(std::string&)> edit;
  // A segment past the end that holds no dynamic section: ld.so in trace mode (`--list`) maps it
  // and never touches it, so it lists the file; a real load runs its code and dies. envdoctor
  // judges the load, and its `ldd` says the crash where ld.so lists.
  bool crashes_only_when_run = false;
};

template <typename T>
void put(std::string& b, u64 off, T value) {
  std::memcpy(b.data() + off, &value, sizeof value);
}
template <typename T>
T get(const std::string& b, u64 off) {
  T value;
  std::memcpy(&value, b.data() + off, sizeof value);
  return value;
}

// The program header of the `nth` segment of type `type` (-1: the last), or npos.
u64 phdr_of(const std::string& b, u32 type, int nth = 0) {
  auto eh = get<Elf64_Ehdr>(b, 0);
  std::vector<u64> found;
  for (u16 i = 0; i < eh.e_phnum; ++i)
    if (get<Elf64_Phdr>(b, eh.e_phoff + i * sizeof(Elf64_Phdr)).p_type == type)
      found.push_back(eh.e_phoff + i * sizeof(Elf64_Phdr));
  if (found.empty()) return std::string::npos;
  return nth < 0 ? found.back() : found.at(nth);
}

std::vector<Damage> damages() {
  auto byte = [](u64 off, char value) { return [=](std::string& b) { b[off] = value; }; };
  auto cut = [](u64 size) { return [=](std::string& b) { b.resize(size); }; };
  return {
      {"cut to 32 bytes", cut(32)},
      {"cut to 63 bytes", cut(63)},
      {"cut to 64 bytes", cut(64)},
      {"cut inside the program headers", cut(100)},
      {"cut after the program headers",
       [](std::string& b) { b.resize(get<Elf64_Ehdr>(b, 0).e_phoff + 9 * sizeof(Elf64_Phdr)); }},
      {"cut at 4096", cut(4096)},
      {"cut at 8192", cut(8192)},
      {"cut one byte short", [](std::string& b) { b.resize(b.size() - 1); }},
      {"bad magic", byte(1, 'X')},
      {"class none", byte(EI_CLASS, ELFCLASSNONE)},
      {"class 3", byte(EI_CLASS, 3)},
      {"class 32", byte(EI_CLASS, ELFCLASS32)},
      {"data none", byte(EI_DATA, ELFDATANONE)},
      {"data big-endian", byte(EI_DATA, ELFDATA2MSB)},
      {"data 3", byte(EI_DATA, 3)},
      {"ident version 0", byte(EI_VERSION, 0)},
      {"OS ABI 9 (FreeBSD)", byte(EI_OSABI, 9)},
      {"OS ABI 3 (GNU)", byte(EI_OSABI, ELFOSABI_GNU)},
      {"OS ABI 97 (ARM)", byte(EI_OSABI, 97)},
      {"ABI version 1", byte(EI_ABIVERSION, 1)},
      {"padding", byte(EI_PAD + 1, 1)},
      {"e_version 0", [](std::string& b) { put<u32>(b, offsetof(Elf64_Ehdr, e_version), 0); }},
      {"e_type ET_REL", [](std::string& b) { put<u16>(b, offsetof(Elf64_Ehdr, e_type), ET_REL); }},
      {"e_machine aarch64", [](std::string& b) { put<u16>(b, offsetof(Elf64_Ehdr, e_machine), EM_AARCH64); }},
      {"e_phentsize 40", [](std::string& b) { put<u16>(b, offsetof(Elf64_Ehdr, e_phentsize), 40); }},
      {"e_phoff past the end", [](std::string& b) { put<u64>(b, offsetof(Elf64_Ehdr, e_phoff), b.size() + 100); }},
      {"PT_DYNAMIC's offset past the end",
       [](std::string& b) { put<u64>(b, phdr_of(b, PT_DYNAMIC) + offsetof(Elf64_Phdr, p_offset), b.size() + 65536); }},
      {"last PT_LOAD's file size past the end",
       [](std::string& b) {
         u64 ph = phdr_of(b, PT_LOAD, -1);
         put<u64>(b, ph + offsetof(Elf64_Phdr, p_filesz), b.size() + 65536);
         put<u64>(b, ph + offsetof(Elf64_Phdr, p_memsz), b.size() + 131072);
       }},
      {"second PT_LOAD's offset past the end",
       [](std::string& b) {
         u64 ph = phdr_of(b, PT_LOAD, 1);
         u64 old = get<u64>(b, ph + offsetof(Elf64_Phdr, p_offset));
         u64 moved = ((b.size() + 65536) & ~u64{4095}) | (old & 4095);
         put<u64>(b, ph + offsetof(Elf64_Phdr, p_offset), moved);
       },
       true},
  };
}

class DamagedFile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc") || access(kLdSo, X_OK) != 0) GTEST_SKIP() << "needs gcc and " << kLdSo;
    build_shared(tmp / "good/libdmg.so", "#include <stdio.h>\nint dmg(void) { return puts(\"dmg\"); }",
                 "-Wl,-soname,libdmg.so", tmp);
    build_shared(tmp / "libtop.so", "int dmg(void); int top(void) { return dmg(); }", "-L" + tmp / "good" + " -ldmg",
                 tmp);
    std::ifstream in(tmp / "good/libdmg.so", std::ios::binary);
    good = std::string(std::istreambuf_iterator<char>(in), {});
    fs::create_directories(tmp / "bad");
  }

  // The real dlopen and the model agree; where the real one dies of SIGBUS, the model says so.
  void expect_same(const std::string& file, const std::string* llp) {
    SCOPED_TRACE(file);
    std::string want = referee_dlopen(tmp, file, llp), got = model_dlopen(tmp, file, llp);
    if (want == "(died: signal 7)") {
      EXPECT_NE(got.find("Bus error: "), std::string::npos) << got;
      EXPECT_NE(got.find("dies of SIGBUS"), std::string::npos) << got;
    } else {
      EXPECT_EQ(got, want);
    }
  }

  // ld.so's listing of libtop.so (which needs libdmg.so, found in bad/ first) and envdoctor's.
  void expect_same_listing(const std::string& llp, bool crashes_only_when_run) {
    CommandResult want = referee_list(tmp / "libtop.so", &llp, "", LddMode::kPlain);
    CommandResult got = envdoctor_ldd(tmp / "libtop.so", &llp, "", LddMode::kPlain);
    if (crashes_only_when_run) {
      EXPECT_EQ(want.status, 0) << want.err;
      EXPECT_EQ(got.out, "");
      EXPECT_NE(got.err.find("dies of SIGBUS when it touches a page past the end"), std::string::npos) << got.err;
      return;
    }
    EXPECT_EQ(got.out, want.out) << want.err << "\n" << got.err;
    if (want.status == 135) {
      EXPECT_EQ(got.status, 1);
      EXPECT_NE(got.err.find("dies of SIGBUS"), std::string::npos) << got.err;
    } else if (want.status == 127) {
      EXPECT_EQ(got.err, want.err);
    }
  }

  // ld.so's listing of the damaged file itself, as a main program, and envdoctor's.
  void expect_same_direct_listing(const std::string& file) {
    CommandResult want = referee_list(file, nullptr, "", LddMode::kPlain);
    CommandResult got = envdoctor_ldd(file, nullptr, "", LddMode::kPlain);
    if (want.status == 135) {
      EXPECT_EQ(want.out, "");
      EXPECT_NE(got.err.find("dies of SIGBUS"), std::string::npos) << got.err;
      return;
    }
    EXPECT_EQ(got.out, want.out) << want.err << "\n" << got.err;
    if (want.status != 127) return;
    // ld.so: "FILE: error while loading shared libraries: FILE: REASON"; envdoctor's ldd, of the
    // file it was given: "FILE: REASON".
    const std::string says = "error while loading shared libraries: " + file + ": ";
    size_t at = want.err.find(says);
    ASSERT_NE(at, std::string::npos) << want.err;
    EXPECT_EQ(got.err, file + ": " + want.err.substr(at + says.size()));
  }

  TempDir tmp;
  std::string good;
};

TEST_F(DamagedFile, EveryDamageInTheLoadersWords) {
  const std::string llp = tmp / "bad" + ":" + tmp / "good";
  const std::string bad = tmp / "bad/libdmg.so";
  for (const Damage& d : damages()) {
    SCOPED_TRACE(d.name);
    std::string bytes = good;
    d.edit(bytes);
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes;
    expect_same(bad, nullptr);
    expect_same("libdmg.so", &llp);
    expect_same_listing(llp, d.crashes_only_when_run);
    // The file as a main program. Not compared: a file without the ELF magic, which envdoctor's
    // ldd refuses as no ELF file (exit 2, as glibc's ldd says "not a dynamic executable"), and a
    // 32-bit class or another machine, for which ldd, as glibc's ldd script does, runs the loader
    // of that class and machine.
    std::string name = d.name;
    if (name != "bad magic" && name != "class 32" && name != "e_machine aarch64" && !d.crashes_only_when_run)
      expect_same_direct_listing(bad);
  }
}

// The words themselves for a copy cut short after its headers, so that both sides cannot agree on
// a wrong one: the real dlopen's child dies of SIGBUS, and envdoctor names the dynamic section.
TEST_F(DamagedFile, CutShortAfterItsHeadersIsABusError) {
  const std::string bad = tmp / "bad/libdmg.so";
  std::ofstream(bad, std::ios::binary | std::ios::trunc) << good.substr(0, 4096);
  EXPECT_EQ(referee_dlopen(tmp, bad), "(died: signal 7)");
  EXPECT_EQ(model_dlopen(tmp, bad, nullptr)
                .rfind(bad + ": Bus error: the file is 4096 bytes (cut short?), and its dynamic "
                             "section (file offset 0x",
                       0),
            0u)
      << model_dlopen(tmp, bad, nullptr);
  CommandResult ld_so = run(std::string(kLdSo) + " --list " + quote(bad));
  EXPECT_EQ(ld_so.status, 135);
  EXPECT_EQ(ld_so.out, "");
}

}  // namespace
}  // namespace envdoctor::test
