// libFuzzer target for the ld.so.cache reader: parse any bytes as /etc/ld.so.cache (old, new and
// combined layouts), then look up every key it holds and a few it does not, with and without
// glibc-hwcaps subdirectories.
#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "loader/ld_cache.h"

using envdoctor::MappedFile;
using envdoctor::u8;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<const MappedFile> file = MappedFile::from_buffer("ld.so.cache", std::vector<u8>(data, data + size));
  std::string error;
  auto cache = envdoctor::loader::LdCache::parse(file, &error);
  if (!cache) return 0;

  const std::vector<std::string> levels = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
  const std::vector<std::string> none;
  auto flags = envdoctor::loader::cache_flags_for_machine(EM_X86_64, true).value_or(0x0303);
  // An x86-64 CPU with AVX-512 on the haswell platform, and one with no legacy hwcaps at all.
  const envdoctor::loader::LegacyCacheHwcaps haswell{(1u << 1) | (1u << 2), envdoctor::u64{1} << 50};
  const envdoctor::loader::LegacyCacheHwcaps bare;
  size_t sink = 0;
  size_t n = 0;
  for (const auto& e : cache->entries()) {
    if (++n > 4096) break;
    sink += e.value.size() + (e.hwcaps_subdir ? e.hwcaps_subdir->size() : 0);
    if (auto hit = cache->lookup(e.key, flags, levels, haswell)) sink += hit->size();
    if (auto hit = cache->lookup(e.key, e.flags, none, bare)) sink += hit->size();
  }
  for (const char* name : {"libc.so.6", "", "libm.so.6", "lib1.so", "zzz"})
    if (auto hit = cache->lookup(name, flags, levels, haswell)) sink += hit->size();
  volatile size_t keep = sink;
  (void)keep;
  return 0;
}
