// The static TLS model's inputs against the referee: GLIBC_TUNABLES as this machine's ld.so reads
// it (`ld.so --list-tunables` prints the values it took), and the allocator on hostile numbers.
// How much room the model leaves is checked against real imports in tests/checks/static_tls_test.cc.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fixtures/fixture.h"
#include "loader/static_tls.h"

namespace envdoctor::test {
namespace {

using loader::StaticTls;
using loader::TlsBlock;
using loader::TlsTunables;

const char* kLdSo = "/lib64/ld-linux-x86-64.so.2";

// The value ld.so took for `name` ("glibc.rtld.nns: 0x4 (min: 0x1, max: 0x10)").
u64 listed(const std::string& out, const std::string& name) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + ": ", 0) == 0) return std::stoull(line.substr(name.size() + 2), nullptr, 0);
  ADD_FAILURE() << name << " not listed in\n" << out;
  return 0;
}

TEST(TlsTunables, ReadAsLdSoReadsThem) {
  CommandResult probe = run(std::string(kLdSo) + " --list-tunables");
  if (probe.status != 0 || probe.out.find("glibc.rtld.optional_static_tls") == std::string::npos)
    GTEST_SKIP() << "needs a glibc ld.so with --list-tunables and the rtld tunables";
  for (const std::string text :
       {"", "glibc.rtld.optional_static_tls=1024", "glibc.rtld.optional_static_tls=0x400:glibc.rtld.nns=2",
        "glibc.rtld.nns=0", "glibc.rtld.nns=17", "glibc.rtld.nns=16", "glibc.rtld.nns=010", "glibc.rtld.nns= 7x",
        "glibc.rtld.nns=+3", "glibc.rtld.nns=-1", "glibc.rtld.optional_static_tls=-1",
        "glibc.rtld.optional_static_tls=abc", "glibc.rtld.nns=3:glibc.rtld.nns=5", "glibc.rtld.nns:glibc.rtld.nns=6",
        "glibc.rtld.nns=3:glibc.rtld.nns", "glibc.malloc.check=1:glibc.rtld.optional_static_tls=99999", "rtld.nns=9",
        "glibc.rtld.optional_static_tls=99999999999999999999999"}) {
    SCOPED_TRACE(text);
    CommandResult r = run("GLIBC_TUNABLES=" + quote(text) + " " + kLdSo + " --list-tunables");
    ASSERT_EQ(r.status, 0) << r.err;
    TlsTunables t = TlsTunables::parse(text);
    EXPECT_EQ(t.nns, listed(r.out, "glibc.rtld.nns"));
    EXPECT_EQ(t.optional_static_tls, listed(r.out, "glibc.rtld.optional_static_tls"));
  }
}

// glibc 2.36's defaults: a surplus of 1664 bytes; each namespace above 4 adds 288, each byte of
// optional_static_tls above 512 adds one.
TEST(StaticTls, SurplusFromTheTunables) {
  loader::TlsAbi x86 = *loader::TlsAbi::for_machine(EM_X86_64);
  EXPECT_EQ(StaticTls(x86, {}, {}).surplus(), 1664u);
  EXPECT_EQ(StaticTls(x86, {5, 512}, {}).surplus(), 1664u + 288);
  EXPECT_EQ(StaticTls(x86, {4, 600}, {}).surplus(), 1664u + 88);
  EXPECT_EQ(StaticTls(x86, {4, 600}, {}).optional_left(), 600u);
}

TEST(StaticTls, HostileBlocksNeverFitNorCrash) {
  for (bool tcb_at_tp : {true, false}) {
    loader::TlsAbi abi = *loader::TlsAbi::for_machine(tcb_at_tp ? EM_X86_64 : EM_AARCH64);
    std::vector<TlsBlock> initial;
    for (u64 v : {u64{0}, u64{3}, ~u64{0}, u64{1} << 63}) initial.push_back(TlsBlock::of(elf::TlsSegment{v, v, v, v}));
    StaticTls area(abi, {16, ~u64{0}}, initial);
    for (u64 v : {u64{0}, u64{1}, u64{3}, ~u64{0}, u64{1} << 63}) {
      TlsBlock b = TlsBlock::of(elf::TlsSegment{v, 0, v, v});
      EXPECT_GE(b.align, 1u);
      area.try_allocate(b, false);
      area.try_allocate(b, true);
    }
    StaticTls plain(abi, {}, {});
    EXPECT_FALSE(plain.try_allocate(TlsBlock::of(elf::TlsSegment{0, 0, u64{1} << 62, 16}), false));
  }
}

}  // namespace
}  // namespace envdoctor::test
