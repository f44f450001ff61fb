#include "loader/static_tls.h"

#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <utility>

#include "loader/tunables.h"

namespace envdoctor::loader {

namespace {

// glibc 2.36 elf/dl-tls.c: the static TLS surplus is sized for IE TLS in libc.so of every
// namespace but the first, IE TLS of other libraries in every namespace, the optional part, and
// LEGACY_TLS, chosen so that the defaults give the historic 1664.
constexpr i64 kLibcIeTls = 144;    // LIBC_IE_TLS
constexpr i64 kOtherIeTls = 144;   // OTHER_IE_TLS
constexpr u64 kDefaultNns = 4;     // DEFAULT_NNS
constexpr u64 kOptionalTls = 512;  // OPTIONAL_TLS
constexpr u64 kDlNns = 16;         // DL_NNS (sysdeps/generic/ldsodefs.h)

// tls_static_surplus: its parameters are `int`, so an optional_static_tls beyond INT_MAX is cut to
// 32 bits as glibc cuts it.
i64 tls_static_surplus(u64 nns, u64 opt_tls) {
  i64 opt = static_cast<int32_t>(static_cast<uint32_t>(opt_tls));
  return static_cast<i64>(nns - 1) * kLibcIeTls + static_cast<i64>(nns) * kOtherIeTls + opt;
}
const i64 kLegacyTls = 1664 - tls_static_surplus(kDefaultNns, kOptionalTls);  // LEGACY_TLS: 144

// Blocks larger than this never fit anything real; capping them keeps every sum below 2^64.
constexpr u64 kCap = u64{1} << 40;

// sys/param.h's roundup, for any y.
u64 roundup(u64 x, u64 y) { return (x + y - 1) / y * y; }
// libc-pointer-arith.h's ALIGN_UP, for a power of two (as glibc assumes p_align is).
u64 align_up(u64 x, u64 a) { return (x + a - 1) & ~(a - 1); }

enum class TlsRelocation { kNone, kStatic, kOptional };

// The dynamic relocation types by which ld.so places a TLS block in the static TLS block, per
// machine (glibc 2.36 sysdeps/*/dl-machine.h, elf_machine_rela / elf_machine_rel):
// CHECK_STATIC_TLS for initial-exec offsets, TRY_STATIC_TLS for TLS descriptors in a shared ld.so.
// x86-64's ld.so handles R_X86_64_TPOFF64 only; R_X86_64_TPOFF32 never reaches it.
TlsRelocation tls_relocation(u16 machine, u32 type) {
  switch (machine) {
    case EM_X86_64:
      if (type == R_X86_64_TPOFF64) return TlsRelocation::kStatic;
      if (type == R_X86_64_TLSDESC) return TlsRelocation::kOptional;
      break;
    case EM_386:
      if (type == R_386_TLS_TPOFF || type == R_386_TLS_TPOFF32) return TlsRelocation::kStatic;
      if (type == R_386_TLS_DESC) return TlsRelocation::kOptional;
      break;
    case EM_AARCH64:
      if (type == R_AARCH64_TLS_TPREL) return TlsRelocation::kStatic;
      if (type == R_AARCH64_TLSDESC) return TlsRelocation::kOptional;
      break;
  }
  return TlsRelocation::kNone;
}

bool reaches_static_tls(u16 machine, u32 type) { return tls_relocation(machine, type) != TlsRelocation::kNone; }

}  // namespace

// A relocation's target block: the symbol's definer. Symbol 0 and local symbols are the object's
// own (resolve_map in elf/dl-reloc.c keeps the map for STB_LOCAL); so is a symbol it defines,
// which is what its own lookup finds unless another object interposes a TLS definition.
std::vector<StaticTlsTarget> static_tls_targets(const elf::ElfFile& f) {
  std::vector<StaticTlsTarget> out;
  if (!f.tls && !(f.flags & DF_STATIC_TLS)) return out;
  std::set<std::pair<std::string_view, bool>> seen;
  for (const elf::Relocation& r : f.relocations(&reaches_static_tls)) {
    StaticTlsTarget target{"", tls_relocation(f.machine, r.type) == TlsRelocation::kOptional};
    if (r.symbol != 0) {
      std::optional<elf::Symbol> s = f.symbol(r.symbol);
      if (!s) continue;  // beyond the symbol table: nothing a model can say
      if (!s->defined() && s->bind != STB_LOCAL) target.symbol = s->name;
    }
    if (seen.insert({target.symbol, target.optional}).second) out.push_back(target);
  }
  return out;
}

TlsTunables TlsTunables::parse(std::string_view text) {
  TlsTunables t;
  for_each_tunable(text, [&](std::string_view name, std::string_view value) {
    // do_tunable_update_val: a value outside [minval, maxval] leaves the tunable as it was.
    if (name == "glibc.rtld.nns") {
      u64 v = dl_strtoul(value);
      if (v >= 1 && v <= kDlNns) t.nns = v;
    } else if (name == "glibc.rtld.optional_static_tls") {
      t.optional_static_tls = dl_strtoul(value);
    }
  });
  return t;
}

TlsBlock TlsBlock::of(const elf::TlsSegment& tls) {
  TlsBlock b;
  b.blocksize = std::min(tls.memsz, kCap);
  b.align = tls.align == 0 ? 1 : std::min(tls.align, kCap);
  b.firstbyte_offset = tls.align == 0 ? 0 : tls.vaddr & (b.align - 1);
  return b;
}

std::optional<TlsAbi> TlsAbi::for_machine(u16 machine) {
  switch (machine) {
    case EM_X86_64:
    case EM_386: return TlsAbi{true, 64, 0};
    case EM_AARCH64: return TlsAbi{false, 32, 16};
  }
  return std::nullopt;
}

StaticTls::StaticTls(const TlsAbi& abi, const TlsTunables& tunables, const std::vector<TlsBlock>& initial) : abi_(abi) {
  u64 nns = std::min(tunables.nns, kDlNns);
  i64 surplus = tls_static_surplus(nns, tunables.optional_static_tls) + kLegacyTls;
  surplus_ = surplus < 0 ? kCap : std::min(static_cast<u64>(surplus), kCap);  // size_t of a negative int: huge
  optional_left_ = tunables.optional_static_tls;

  // _dl_determine_tlsoffset: each block placed at the first offset that keeps p_vaddr's
  // alignment, reusing the gap a previous block's alignment left when it fits there.
  u64 max_align = abi.tcb_alignment;
  u64 freetop = 0, freebottom = 0;
  if (abi.tcb_at_tp) {
    u64 offset = 0;
    for (const TlsBlock& b : initial) {
      u64 firstbyte = (0 - b.firstbyte_offset) & (b.align - 1);
      max_align = std::max(max_align, b.align);
      if (freebottom - freetop >= b.blocksize) {
        u64 off = roundup(freetop + b.blocksize - firstbyte, b.align) + firstbyte;
        if (off <= freebottom) {
          freetop = off;
          continue;
        }
      }
      u64 off = roundup(offset + b.blocksize - firstbyte, b.align) + firstbyte;
      if (off > offset + b.blocksize + (freebottom - freetop)) {
        freetop = offset;
        freebottom = off - b.blocksize;
      }
      offset = off;
    }
    used_ = offset;
    size_ = roundup(offset + surplus_, max_align);  // + TLS_TCB_SIZE, which try_allocate takes off again
  } else {
    u64 offset = abi.tcb_size;
    for (const TlsBlock& b : initial) {
      u64 firstbyte = (0 - b.firstbyte_offset) & (b.align - 1);
      max_align = std::max(max_align, b.align);
      if (b.blocksize <= freetop - freebottom) {
        u64 off = roundup(freebottom, b.align);
        if (off - freebottom < firstbyte) off += b.align;
        if (off + b.blocksize - firstbyte <= freetop) {
          freebottom = off + b.blocksize - firstbyte;
          continue;
        }
      }
      u64 off = roundup(offset, b.align);
      if (off - offset < firstbyte) off += b.align;
      if (off - firstbyte - offset > freetop - freebottom) {
        freebottom = offset;
        freetop = off - firstbyte;
      }
      offset = off + b.blocksize - firstbyte;
    }
    used_ = offset;
    size_ = roundup(offset + surplus_, abi.tcb_alignment);
  }
  align_ = max_align;
}

u64 StaticTls::free_bytes() const { return size_ > used_ ? size_ - used_ : 0; }

bool StaticTls::try_allocate(const TlsBlock& b, bool optional) {
  if (b.align > align_) return false;
  u64 use = 0;
  if (abi_.tcb_at_tp) {
    u64 freebytes = free_bytes();
    u64 blsize = b.blocksize + b.firstbyte_offset;
    if (freebytes < blsize) return false;
    u64 n = (freebytes - blsize) / b.align;
    use = freebytes - n * b.align - b.firstbyte_offset;
  } else {
    u64 offset = align_up(used_ - b.firstbyte_offset, b.align) + b.firstbyte_offset;
    u64 used = offset + b.blocksize;
    if (used > size_) return false;
    use = used - used_;
  }
  if (optional) {
    if (use > optional_left_) return false;
    optional_left_ -= use;
  }
  used_ += use;
  return true;
}

}  // namespace envdoctor::loader
