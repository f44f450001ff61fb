// The static TLS block: glibc 2.36's per-thread area for the TLS of the objects loaded at
// start-up, sized once, with a fixed surplus for objects that dlopen adds later.
//
// At start-up ld.so lays out the TLS blocks of the main program and its libraries, in module-id
// order (elf/dl-tls.c, _dl_determine_tlsoffset), and adds the surplus computed from the tunables
// rtld.nns and rtld.optional_static_tls (_dl_tls_static_surplus_init). Nothing ever grows it: an
// object loaded by dlopen whose TLS a relocation reaches by an initial-exec offset must fit in
// what is left (elf/dl-reloc.c, _dl_try_allocate_static_tls), or dlopen fails with "cannot
// allocate memory in static TLS block" (_dl_allocate_static_tls). TLS descriptors take room there
// too while the optional part of the surplus lasts, and fall back to dynamic TLS after it.
//
// The model is arithmetic only, on the numbers of PT_TLS (elf::TlsSegment), so every step can be
// replayed with other tunables, or with objects moved to start-up (LD_PRELOAD), to find a fix.
// Which of an object's dynamic relocations ask for room there, and for whose block, is glibc's
// rule too (static_tls_targets): the ELF reader only lists the relocations of the types asked for.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "elf/elf_file.h"
#include "support/types.h"

namespace envdoctor::loader {

// The rtld tunables from GLIBC_TUNABLES (elf/dl-tunables.list): glibc.rtld.nns, 1 to 16, default
// 4; glibc.rtld.optional_static_tls, 0 up, default 512.
struct TlsTunables {
  u64 nns = 4;
  u64 optional_static_tls = 512;

  // GLIBC_TUNABLES as elf/dl-tunables.c's parse_tunables reads it: "name=value" items separated
  // by ':', values read by _dl_strtoul (elf/dl-misc.c: decimal, 0x hex, 0 octal), a value out of
  // the tunable's range ignored, the last valid one kept.
  static TlsTunables parse(std::string_view glibc_tunables);
};

// One object's TLS block as ld.so's allocator sees it.
struct TlsBlock {
  u64 blocksize = 0;         // l_tls_blocksize: p_memsz
  u64 align = 1;             // l_tls_align: p_align (0 is read as 1: glibc would divide by it)
  u64 firstbyte_offset = 0;  // l_tls_firstbyte_offset: p_vaddr & (p_align - 1)

  static TlsBlock of(const elf::TlsSegment& tls);
};

// Where the thread pointer sits, for the machine's glibc (sysdeps/*/nptl/tls.h): after the TLS
// blocks (TLS_TCB_AT_TP: x86-64, i386) or before them (TLS_DTV_AT_TP: aarch64), with
// TCB_ALIGNMENT (sysdeps/x86/nptl/pthreaddef.h: 64; nptl/descr.h's default: 32) and, for
// TLS_DTV_AT_TP, TLS_TCB_SIZE (aarch64: sizeof (tcbhead_t), 16). x86's TLS_TCB_SIZE (struct
// pthread) is added to the block's size and taken off again before any comparison, so it is 0 here.
struct TlsAbi {
  bool tcb_at_tp = true;
  u64 tcb_alignment = 64;
  u64 tcb_size = 0;

  static std::optional<TlsAbi> for_machine(u16 machine);
};

// One TLS block a dynamic relocation asks ld.so to place in the static TLS block: the object's
// own (symbol index 0, a local symbol, or one it defines) or the block of the object that
// defines `symbol`. `optional`: a TLS descriptor (R_X86_64_TLSDESC, R_386_TLS_DESC,
// R_AARCH64_TLSDESC), which glibc places there only while the optional surplus lasts and
// otherwise resolves dynamically (elf/dl-static-tls.h, TRY_STATIC_TLS); otherwise an initial-exec
// relocation (R_X86_64_TPOFF64, R_386_TLS_TPOFF, R_386_TLS_TPOFF32, R_AARCH64_TLS_TPREL), which
// fails the load when there is no room (CHECK_STATIC_TLS).
struct StaticTlsTarget {
  std::string_view symbol;  // "" for the object's own block
  bool optional = false;
  bool operator==(const StaticTlsTarget&) const = default;
};

// The TLS blocks `f`'s dynamic relocations want in the static TLS block, each (symbol, optional)
// once, in the order glibc relocates (DT_RELA/DT_REL, then DT_JMPREL). A pass over the relocation
// tables on each call, made only for an object with PT_TLS or DF_STATIC_TLS (the linkers' mark
// for initial-exec TLS, set also by an object that reaches another's TLS, as libm.so.6 reaches
// libc's): any other object has none, and is answered without a read.
std::vector<StaticTlsTarget> static_tls_targets(const elf::ElfFile& f);

class StaticTls {
 public:
  // _dl_tls_static_surplus_init (no audit modules), then _dl_determine_tlsoffset over the
  // start-up objects' blocks in module-id order (load order).
  StaticTls(const TlsAbi& abi, const TlsTunables& tunables, const std::vector<TlsBlock>& initial);

  // _dl_try_allocate_static_tls: takes the room for `block` and returns true, or returns false
  // when it does not fit, when its alignment exceeds the block's, or (optional) when the optional
  // surplus left is smaller than what it would take.
  bool try_allocate(const TlsBlock& block, bool optional);

  u64 surplus() const { return surplus_; }  // GLRO(dl_tls_static_surplus): 1664 by default
  u64 used() const { return used_; }        // GL(dl_tls_static_used)
  u64 align() const { return align_; }      // GLRO(dl_tls_static_align)
  u64 optional_left() const { return optional_left_; }
  // What a dlopen'd object may still take.
  u64 free_bytes() const;

 private:
  TlsAbi abi_;
  u64 surplus_ = 0;
  u64 used_ = 0;
  u64 size_ = 0;  // GLRO(dl_tls_static_size), without x86's TLS_TCB_SIZE
  u64 align_ = 0;
  u64 optional_left_ = 0;  // GL(dl_tls_static_optional)
};

}  // namespace envdoctor::loader
