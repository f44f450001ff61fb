// The notes of PT_NOTE segments: NT_GNU_BUILD_ID and NT_GNU_PROPERTY_TYPE_0's x86 ISA level.
#include <optional>
#include <string>
#include <string_view>

#include "elf/elf_file.h"
#include "elf/elf_parser.h"

namespace envdoctor::elf {

// The notes of one PT_NOTE segment, each passed to `visit(n_type, name, desc)` with its name and
// descriptor bounds-checked against the segment's end first.
template <typename E, typename Visit>
static void walk_notes(Bytes notes, u64 p_align, Visit visit) {
  const u64 align = p_align == 8 ? 8 : 4;
  auto pad = [&](u64 n) { return (n + align - 1) & ~(align - 1); };
  u64 off = 0;
  while (const u8* at = notes.at(off, sizeof(Nhdr<E>))) {
    const auto* nh = reinterpret_cast<const Nhdr<E>*>(at);
    u64 namesz = nh->n_namesz, descsz = nh->n_descsz;
    u64 name_off = off + sizeof(Nhdr<E>);
    if (!notes.contains(name_off, namesz)) break;
    // The descriptor and the next note start at the segment's alignment, counted from the
    // segment's start: with 8 (NT_GNU_PROPERTY_TYPE_0 on 64-bit) the 12-byte header and "GNU\0"
    // end at 16, where the descriptor begins (binutils' and glibc's ELF_NOTE_NEXT_OFFSET).
    u64 desc_off = pad(name_off + namesz);
    if (!notes.contains(desc_off, descsz)) break;
    std::string_view name(reinterpret_cast<const char*>(notes.data() + name_off), namesz);
    visit(static_cast<u32>(nh->n_type), name, Bytes(notes.data() + desc_off, descsz));
    off = pad(desc_off + descsz);
  }
}

static std::string hex_of(Bytes desc) {
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (u64 i = 0; i < desc.size(); ++i) {
    u8 byte = desc.data()[i];
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

// GNU_PROPERTY_X86_ISA_1_NEEDED among the properties of an NT_GNU_PROPERTY_TYPE_0 note: an array
// of (pr_type, pr_datasz, data padded to the class's word), binutils' include/elf/common.h.
template <typename E>
static std::optional<u32> x86_isa_needed(Bytes desc) {
  constexpr u32 kIsa1Needed = 0xc0008002;  // GNU_PROPERTY_X86_UINT32_OR_LO + 2
  const u64 align = E::is_64 ? 8 : 4;
  u64 off = 0;
  while (const u8* at = desc.at(off, 8)) {
    const auto* words = reinterpret_cast<const typename E::Word*>(at);
    u32 type = words[0], size = words[1];
    if (!desc.contains(off + 8, size)) break;
    if (type == kIsa1Needed && size == 4) return static_cast<u32>(*reinterpret_cast<const typename E::Word*>(at + 8));
    off += 8 + ((u64{size} + align - 1) & ~(align - 1));
  }
  return std::nullopt;
}

// What the notes of one PT_NOTE segment say: the GNU build-id (hex) and the x86 ISA level needed.
template <typename E>
void read_notes(ElfFile& f, Bytes notes, u64 p_align) {
  walk_notes<E>(notes, p_align, [&](u32 type, std::string_view name, Bytes desc) {
    if (name != std::string_view("GNU\0", 4)) return;
    if (type == NT_GNU_BUILD_ID && f.build_id.empty()) f.build_id = hex_of(desc);
    if (type == NT_GNU_PROPERTY_TYPE_0 && !f.x86_isa_needed) f.x86_isa_needed = x86_isa_needed<E>(desc);
  });
}

// The instantiations the other files of the reader call, one per (class, byte order).
template void read_notes<Elf32<false>>(ElfFile&, Bytes, u64);
template void read_notes<Elf32<true>>(ElfFile&, Bytes, u64);
template void read_notes<Elf64<false>>(ElfFile&, Bytes, u64);
template void read_notes<Elf64<true>>(ElfFile&, Bytes, u64);

}  // namespace envdoctor::elf
