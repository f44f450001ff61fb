#include "loader/ld_cache.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace envdoctor::loader {

namespace {

constexpr char kOldMagic[] = "ld.so-1.7.0";           // 11 bytes, then nlibs at offset 12
constexpr char kNewMagic[] = "glibc-ld.so.cache1.1";  // magic and version, 20 bytes
constexpr u64 kOldHeader = 16;                        // magic[11], pad, nlibs
constexpr u64 kOldEntry = 12;                         // flags, key, value
constexpr u64 kNewHeader = 48;
constexpr u64 kNewEntry = 24;  // flags, key, value, osversion, hwcap
constexpr u32 kExtensionMagic = 0xEAA42174;
constexpr u32 kTagGenerator = 0;
constexpr u32 kTagGlibcHwcaps = 1;
// glibc's DL_CACHE_HWCAP_EXTENSION (bit 62) marks an entry of a glibc-hwcaps subdirectory; its
// low 32 bits index the extension's subdirectory names. On x86 the ten bits above bit 32 hold
// the ISA level ldconfig read from the library's GNU property note.
constexpr u64 kHwcapExtension = u64{1} << 62;
constexpr u64 kIsaLevelMask = 0x3ff;

u32 read_u32(const u8* p) {
  u32 v;
  std::memcpy(&v, p, 4);
  return v;
}
u64 read_u64(const u8* p) {
  u64 v;
  std::memcpy(&v, p, 8);
  return v;
}

bool is_named_hwcap(u64 hwcap) { return ((hwcap >> 32) & ~kIsaLevelMask) == (kHwcapExtension >> 32); }

}  // namespace

std::optional<i64> cache_flags_for_machine(u16 machine, bool is_64) {
  constexpr i64 kElfLibc6 = 0x0003;  // FLAG_ELF_LIBC6
  switch (machine) {
    case EM_X86_64: return is_64 ? kElfLibc6 | 0x0300 : kElfLibc6 | 0x0800;  // LIB64, X32
    case EM_386: return kElfLibc6;
    case EM_AARCH64: return kElfLibc6 | 0x0a00;  // FLAG_AARCH64_LIB64
    case EM_PPC64: return kElfLibc6 | 0x0500;    // FLAG_POWERPC_LIB64
    case EM_S390: return is_64 ? kElfLibc6 | 0x0400 : kElfLibc6;
    case EM_RISCV: return is_64 ? kElfLibc6 | 0x1000 : kElfLibc6 | 0x1100;  // lp64d / ilp32d
    default: return std::nullopt;
  }
}

bool cache_flags_accepted(i64 entry, i64 wanted) {
  // _dl_cache_check_flags (sysdeps/.../dl-cache.h): x86-64, x32, AArch64 and RISC-V take their own
  // word only, so a 32-bit library ldconfig filed as plain ELF (1: one that needs no libc) is not
  // theirs; the generic rule, i386's, also takes 1.
  switch (wanted & 0xff00) {
    case 0x0300:
    case 0x0800:
    case 0x0a00:
    case 0x1000:
    case 0x1100: return entry == wanted;
    default: return entry == wanted || entry == 1;
  }
}

std::unique_ptr<LdCache> LdCache::load(const std::string& path, std::string* error) {
  std::string err;
  auto file = MappedFile::open(path, &err);
  if (!file) {
    if (error) *error = path + ": " + err;
    return nullptr;
  }
  return parse(std::shared_ptr<const MappedFile>(std::move(file)), error);
}

namespace {

// The old format (glibc's CACHEMAGIC "ld.so-1.7.0"): 12-byte entries; string offsets count from
// the end of the entries.
void read_old_entries(Bytes b, u64 nlibs, std::vector<LdCacheEntry>& out) {
  u64 entries_end = kOldHeader + nlibs * kOldEntry;
  Bytes strings(b.data() + entries_end, b.size() - entries_end);
  for (u64 i = 0; i < nlibs; ++i) {
    const u8* e = b.data() + kOldHeader + i * kOldEntry;
    auto key = strings.cstr(read_u32(e + 4));
    auto value = strings.cstr(read_u32(e + 8));
    if (!key || !value) continue;  // glibc's _dl_cache_verify_ptr rejects the entry
    LdCacheEntry entry;
    entry.flags = static_cast<int32_t>(read_u32(e));
    entry.key = *key;
    entry.value = *value;
    out.push_back(entry);
  }
}

// The new format's extension sections (glibc 2.33): the glibc-hwcaps subdirectory names
// (cache_extension_tag_glibc_hwcaps), by index, and the generator's words that `ldconfig -p`
// prints last (cache_extension_tag_generator).
struct Extensions {
  std::vector<std::string_view> hwcaps_names;
  std::optional<std::string_view> generator;
};

Extensions read_extensions(Bytes file, Bytes area) {
  Extensions out;
  u64 ext_off = read_u32(area.data() + 32);
  if (ext_off == 0) return out;
  const u8* ext = area.at(ext_off, 8);
  if (!ext || read_u32(ext) != kExtensionMagic) return out;
  u64 count = read_u32(ext + 4);
  for (u64 i = 0; i < count && i < area.size() / 16; ++i) {
    const u8* sec = area.at(ext_off + 8 + i * 16, 16);
    if (!sec) break;
    u32 tag = read_u32(sec);
    u64 off = read_u32(sec + 8), size = read_u32(sec + 12);
    if (!area.contains(off, size)) break;
    if (tag == kTagGenerator) out.generator = std::string_view(reinterpret_cast<const char*>(area.data() + off), size);
    if (tag != kTagGlibcHwcaps) continue;
    for (u64 j = 0; j + 4 <= size; j += 4) {
      // ld.so reads these name offsets from the start of the file, not of the new header.
      auto name = file.cstr(read_u32(area.data() + off + j));
      out.hwcaps_names.push_back(name.value_or(std::string_view()));
    }
  }
  return out;
}

// The new format (CACHEMAGIC_NEW "glibc-ld.so.cache1.1") at `new_off`: 24-byte entries with their
// hwcap word; string offsets count from the new header. nullptr, or why the file is refused.
const char* read_new_entries(Bytes file, u64 new_off, std::vector<LdCacheEntry>& out,
                             std::optional<std::string_view>& generator) {
  Bytes area(file.data() + new_off, file.size() - new_off);
  const u8* h = area.data();
  u64 nlibs = read_u32(h + 20);
  u8 endian = h[28];
  if (endian == 3 || endian == 1) return "cache written for another byte order";
  if (nlibs > (area.size() - kNewHeader) / kNewEntry) return "entry count exceeds the file";
  Extensions extensions = read_extensions(file, area);
  const std::vector<std::string_view>& hwcaps_names = extensions.hwcaps_names;
  generator = extensions.generator;
  for (u64 i = 0; i < nlibs; ++i) {
    const u8* e = h + kNewHeader + i * kNewEntry;
    auto key = area.cstr(read_u32(e + 4));
    auto value = area.cstr(read_u32(e + 8));
    if (!key || !value) continue;
    LdCacheEntry entry;
    entry.flags = static_cast<int32_t>(read_u32(e));
    entry.key = *key;
    entry.value = *value;
    entry.hwcap = read_u64(e + 16);
    if (is_named_hwcap(entry.hwcap)) {
      u32 idx = static_cast<u32>(entry.hwcap);
      // An index past the table names nothing usable; glibc skips such an entry.
      entry.hwcaps_subdir = idx < hwcaps_names.size() ? hwcaps_names[idx] : std::string_view();
    }
    out.push_back(entry);
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<LdCache> LdCache::parse(std::shared_ptr<const MappedFile> file, std::string* error) {
  Bytes b = file->bytes();
  std::unique_ptr<LdCache> cache(new LdCache());
  cache->file_ = file;
  auto fail = [&](const char* why) {
    if (error) *error = std::string("ld.so.cache: ") + why;
    return nullptr;
  };
  // Three layouts (elf/dl-cache.c): old, new, and old followed by new aligned to 8 (combined),
  // where ld.so reads the new part.
  u64 new_off = 0;
  if (b.size() >= kOldHeader && std::memcmp(b.data(), kOldMagic, sizeof kOldMagic - 1) == 0) {
    u64 nlibs = read_u32(b.data() + 12);
    if (nlibs > (b.size() - kOldHeader) / kOldEntry) return fail("old-format entry count exceeds the file");
    u64 aligned = (kOldHeader + nlibs * kOldEntry + 7) & ~u64{7};
    if (aligned + kNewHeader <= b.size() && std::memcmp(b.data() + aligned, kNewMagic, sizeof kNewMagic - 1) == 0) {
      cache->format_ = Format::kCombined;
      new_off = aligned;
    } else {
      cache->format_ = Format::kOld;
      read_old_entries(b, nlibs, cache->entries_);
    }
  } else if (b.size() >= kNewHeader && std::memcmp(b.data(), kNewMagic, sizeof kNewMagic - 1) == 0) {
    cache->format_ = Format::kNew;
  } else {
    return fail("not a cache file (bad magic)");
  }
  if (cache->format_ != Format::kOld)
    if (const char* why = read_new_entries(b, new_off, cache->entries_, cache->generator_)) return fail(why);
  for (u32 i = 0; i < cache->entries_.size(); ++i) cache->by_key_[cache->entries_[i].key].push_back(i);
  return cache;
}

std::unique_ptr<LdCache> LdCache::from_entries(std::vector<LdCacheEntry> entries, std::shared_ptr<const void> strings) {
  std::unique_ptr<LdCache> cache(new LdCache());
  cache->strings_ = std::move(strings);
  cache->entries_ = std::move(entries);
  for (u32 i = 0; i < cache->entries_.size(); ++i) cache->by_key_[cache->entries_[i].key].push_back(i);
  return cache;
}

std::optional<std::string_view> LdCache::lookup(std::string_view soname, i64 flags,
                                                const std::vector<std::string>& active_hwcaps,
                                                const LegacyCacheHwcaps& legacy) const {
  auto it = by_key_.find(soname);
  if (it == by_key_.end()) return std::nullopt;
  std::optional<std::string_view> best;
  size_t best_priority = 0;
  for (u32 idx : it->second) {
    const LdCacheEntry& e = entries_[idx];
    if (!cache_flags_accepted(e.flags, flags)) continue;
    if (e.hwcaps_subdir) {
      // glibc_hwcaps_priority: the position in the active list, earlier is better; entries of
      // subdirectories this CPU does not support are skipped.
      size_t priority = 0;
      for (size_t i = 0; i < active_hwcaps.size(); ++i)
        if (active_hwcaps[i] == *e.hwcaps_subdir) priority = active_hwcaps.size() - i;
      // dl_cache_hwcap_isa_level_compatible (sysdeps/x86/dl-isa-level.h): the ISA level ldconfig
      // read from the library must be one this CPU has (level N is x86-64-v(N+1), 0 baseline).
      u32 level = static_cast<u32>(e.hwcap >> 32) & kIsaLevelMask;
      if (level != 0 && std::find(active_hwcaps.begin(), active_hwcaps.end(), "x86-64-v" + std::to_string(level + 1)) ==
                            active_hwcaps.end())
        continue;
      if (priority == 0) continue;
      if (!best || priority > best_priority) {
        best = e.value;
        best_priority = priority;
      }
      continue;
    }
    // The named entries come first; the first plain one ends the search unless one matched.
    if (best) break;
    if (format_ != Format::kOld) {
      if (e.hwcap & ~(legacy.hwcap | kCachePlatformBits | kCacheTlsBit)) continue;
      if ((e.hwcap & kCachePlatformBits) != 0 && (e.hwcap & kCachePlatformBits) != legacy.platform) continue;
    }
    return e.value;
  }
  return best;
}

}  // namespace envdoctor::loader
