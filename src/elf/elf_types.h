// ELF record layouts as byte-array overlays with endian-aware fields.
//
// Every field type stores raw bytes and converts on read with memcpy (and a byte swap when the
// file's order is not the host's), so a struct can be laid over any address of a mapping without
// alignment or aliasing concerns. The 32/64-bit choice is a trait (`Elf32<BE>`, `Elf64<BE>`),
// and the layouts that differ between the classes are selected with `requires E::is_64`.
// Field names are the spec's own (e_phoff, d_tag, vna_hash). Constants come from <elf.h>.
#pragma once

#include <elf.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace envdoctor::elf {

template <typename T, bool BE>
class Field {
 public:
  operator T() const {
    T v;
    std::memcpy(&v, raw_, sizeof(T));
    if constexpr (BE != (std::endian::native == std::endian::big)) {
      if constexpr (sizeof(T) == 2) v = static_cast<T>(__builtin_bswap16(static_cast<uint16_t>(v)));
      if constexpr (sizeof(T) == 4) v = static_cast<T>(__builtin_bswap32(static_cast<uint32_t>(v)));
      if constexpr (sizeof(T) == 8) v = static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)));
    }
    return v;
  }

 private:
  uint8_t raw_[sizeof(T)];
};

template <bool BE>
struct Elf64 {
  static constexpr bool is_64 = true;
  static constexpr bool big_endian = BE;
  using Half = Field<uint16_t, BE>;
  using Word = Field<uint32_t, BE>;
  using Sword = Field<int32_t, BE>;
  using Xword = Field<uint64_t, BE>;
  using Sxword = Field<int64_t, BE>;
  using Addr = Field<uint64_t, BE>;
  using Off = Field<uint64_t, BE>;
};

template <bool BE>
struct Elf32 {
  static constexpr bool is_64 = false;
  static constexpr bool big_endian = BE;
  using Half = Field<uint16_t, BE>;
  using Word = Field<uint32_t, BE>;
  using Sword = Field<int32_t, BE>;
  using Xword = Field<uint32_t, BE>;  // d_val and friends are 32-bit words in ELF32
  using Sxword = Field<int32_t, BE>;
  using Addr = Field<uint32_t, BE>;
  using Off = Field<uint32_t, BE>;
};

template <typename E>
struct Ehdr {
  uint8_t e_ident[EI_NIDENT];
  typename E::Half e_type;
  typename E::Half e_machine;
  typename E::Word e_version;
  typename E::Addr e_entry;
  typename E::Off e_phoff;
  typename E::Off e_shoff;
  typename E::Word e_flags;
  typename E::Half e_ehsize;
  typename E::Half e_phentsize;
  typename E::Half e_phnum;
  typename E::Half e_shentsize;
  typename E::Half e_shnum;
  typename E::Half e_shstrndx;
};

template <typename E>
struct Phdr;

template <typename E>
requires E::is_64 struct Phdr<E> {
  typename E::Word p_type;
  typename E::Word p_flags;
  typename E::Off p_offset;
  typename E::Addr p_vaddr;
  typename E::Addr p_paddr;
  typename E::Xword p_filesz;
  typename E::Xword p_memsz;
  typename E::Xword p_align;
};

template <typename E>
requires(!E::is_64) struct Phdr<E> {
  typename E::Word p_type;
  typename E::Off p_offset;
  typename E::Addr p_vaddr;
  typename E::Addr p_paddr;
  typename E::Word p_filesz;
  typename E::Word p_memsz;
  typename E::Word p_flags;
  typename E::Word p_align;
};

// A note header (PT_NOTE); the name and descriptor follow, each padded to the segment's
// alignment (4, or 8 for notes in an 8-aligned segment: glibc elf/dl-prop.h, ELF_NOTE_NEXT_OFFSET).
template <typename E>
struct Nhdr {
  typename E::Word n_namesz;
  typename E::Word n_descsz;
  typename E::Word n_type;
};

template <typename E>
struct Shdr {
  typename E::Word sh_name;
  typename E::Word sh_type;
  typename E::Xword sh_flags;
  typename E::Addr sh_addr;
  typename E::Off sh_offset;
  typename E::Xword sh_size;
  typename E::Word sh_link;
  typename E::Word sh_info;
  typename E::Xword sh_addralign;
  typename E::Xword sh_entsize;
};

template <typename E>
struct Dyn {
  typename E::Sxword d_tag;
  typename E::Xword d_val;
};

template <typename E>
struct Sym;

template <typename E>
requires E::is_64 struct Sym<E> {
  typename E::Word st_name;
  uint8_t st_info;
  uint8_t st_other;
  typename E::Half st_shndx;
  typename E::Addr st_value;
  typename E::Xword st_size;
};

template <typename E>
requires(!E::is_64) struct Sym<E> {
  typename E::Word st_name;
  typename E::Addr st_value;
  typename E::Word st_size;
  uint8_t st_info;
  uint8_t st_other;
  typename E::Half st_shndx;
};

// r_info packs the symbol index and the type differently in the two classes.
template <typename E>
struct Rel {
  typename E::Addr r_offset;
  typename E::Xword r_info;
  uint32_t sym() const {
    if constexpr (E::is_64) return static_cast<uint32_t>(static_cast<uint64_t>(r_info) >> 32);
    else return static_cast<uint32_t>(r_info) >> 8;
  }
  uint32_t type() const {
    if constexpr (E::is_64) return static_cast<uint32_t>(static_cast<uint64_t>(r_info) & 0xffffffff);
    else return static_cast<uint32_t>(r_info) & 0xff;
  }
};

template <typename E>
struct Rela {
  typename E::Addr r_offset;
  typename E::Xword r_info;
  typename E::Sxword r_addend;
  uint32_t sym() const {
    if constexpr (E::is_64) return static_cast<uint32_t>(static_cast<uint64_t>(r_info) >> 32);
    else return static_cast<uint32_t>(r_info) >> 8;
  }
  uint32_t type() const {
    if constexpr (E::is_64) return static_cast<uint32_t>(static_cast<uint64_t>(r_info) & 0xffffffff);
    else return static_cast<uint32_t>(r_info) & 0xff;
  }
};

// Version records are the same in both classes.
template <typename E>
struct Verneed {
  typename E::Half vn_version;
  typename E::Half vn_cnt;
  typename E::Word vn_file;
  typename E::Word vn_aux;
  typename E::Word vn_next;
};

template <typename E>
struct Vernaux {
  typename E::Word vna_hash;
  typename E::Half vna_flags;
  typename E::Half vna_other;
  typename E::Word vna_name;
  typename E::Word vna_next;
};

template <typename E>
struct Verdef {
  typename E::Half vd_version;
  typename E::Half vd_flags;
  typename E::Half vd_ndx;
  typename E::Half vd_cnt;
  typename E::Word vd_hash;
  typename E::Word vd_aux;
  typename E::Word vd_next;
};

template <typename E>
struct Verdaux {
  typename E::Word vda_name;
  typename E::Word vda_next;
};

// The System V ELF hash (DT_HASH buckets, vna_hash / vd_hash of version names).
inline uint32_t elf_hash(std::string_view name) {
  uint32_t h = 0;
  for (unsigned char c : name) {
    h = (h << 4) + c;
    uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

// The GNU hash (DT_GNU_HASH), djb2 over the name.
inline uint32_t gnu_hash(std::string_view name) {
  // h = h * 33 + c, four characters a step: h * 33^4 + c0 * 33^3 + c1 * 33^2 + c2 * 33 + c3 (mod
  // 2^32), which shortens the chain of dependent multiplications on long (C++) names.
  constexpr uint32_t k1 = 33, k2 = k1 * 33, k3 = k2 * 33, k4 = k3 * 33;
  const auto* p = reinterpret_cast<const unsigned char*>(name.data());
  size_t n = name.size(), i = 0;
  uint32_t h = 5381;
  for (; i + 4 <= n; i += 4) h = h * k4 + (p[i] * k3 + p[i + 1] * k2) + (p[i + 2] * k1 + p[i + 3]);
  for (; i < n; ++i) h = h * 33 + p[i];
  return h;
}

}  // namespace envdoctor::elf
