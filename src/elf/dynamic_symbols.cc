// The dynamic symbol table (.dynsym, with its .gnu.version entries) and the hash tables that find
// a name in it: DT_GNU_HASH and DT_HASH, which also say how many symbols there are.
#include <algorithm>
#include <bit>
#include <cstring>

#include "elf/elf_file.h"
#include "elf/elf_parser.h"

namespace envdoctor::elf {

template <typename E>
u32 Parser::count_symbols(ElfFile& f) {
  Bytes b = f.bytes();
  if (!f.symtab_off_) return 0;
  u64 max_by_size = (b.size() - *f.symtab_off_) / sizeof(Sym<E>);
  auto clamp = [&](u64 n) { return static_cast<u32>(std::min<u64>({n, max_by_size, UINT32_MAX})); };

  if (f.sysv_hash_off_) {
    if (const u8* p = b.at(*f.sysv_hash_off_, 8)) {
      typename E::Word nchain;
      std::memcpy(&nchain, p + 4, 4);
      return clamp(static_cast<u32>(nchain));
    }
  }
  if (f.gnu_hash_off_) {
    // The GNU table has no count: the last symbol is the end of the longest chain.
    u64 off = *f.gnu_hash_off_;
    const u8* h = b.at(off, 16);
    if (!h) return 0;
    const auto* w = reinterpret_cast<const typename E::Word*>(h);
    u64 nbuckets = w[0], symoffset = w[1], bloom_size = w[2];
    u64 word = E::is_64 ? 8 : 4;
    u64 buckets_off = off + 16 + bloom_size * word;
    const u8* bp = bloom_size < b.size() ? b.at(buckets_off, nbuckets * 4) : nullptr;
    if (!bp) return 0;
    const auto* buckets = reinterpret_cast<const typename E::Word*>(bp);
    u64 last = 0;
    for (u64 i = 0; i < nbuckets; ++i) last = std::max<u64>(last, buckets[i]);
    if (last < symoffset) {
      // No hashed symbol: the table says nothing of the undefined ones, which GNU ld then numbers
      // from 1 with symoffset 1 (a library that only calls out, from a constructor). ld.so reads
      // symtab[ELF64_R_SYM (r_info)] without a count (elf/do-rel.h), so take the .dynsym
      // section's size when there are section headers.
      for (const Section& s : read_sections<E>(f))
        if (s.type == SHT_DYNSYM) return clamp(std::max<u64>(symoffset, s.size / sizeof(Sym<E>)));
      return clamp(symoffset);
    }
    u64 chain_off = buckets_off + nbuckets * 4;
    for (u64 idx = last; idx < max_by_size; ++idx) {
      const u8* cp = b.at(chain_off + (idx - symoffset) * 4, 4);
      if (!cp) return clamp(idx);
      if (static_cast<u32>(*reinterpret_cast<const typename E::Word*>(cp)) & 1) return clamp(idx + 1);
    }
    return clamp(max_by_size);
  }
  for (const Section& s : read_sections<E>(f))
    if (s.type == SHT_DYNSYM) return clamp(s.size / sizeof(Sym<E>));
  return 0;
}

template <typename E>
std::optional<Symbol> Parser::read_symbol(const ElfFile& f, u32 index, bool with_name) {
  if (!f.symtab_off_ || index >= f.nsyms_) return std::nullopt;
  Bytes b = f.bytes();
  const u8* p = b.at(*f.symtab_off_ + static_cast<u64>(index) * sizeof(Sym<E>), sizeof(Sym<E>));
  if (!p) return std::nullopt;
  const auto* s = reinterpret_cast<const Sym<E>*>(p);
  Symbol sym;
  if (with_name) {
    if (auto name = f.dynstr_.cstr(s->st_name)) sym.name = *name;
  }
  sym.bind = s->st_info >> 4;
  sym.type = s->st_info & 0xf;
  sym.visibility = s->st_other & 0x3;
  sym.shndx = s->st_shndx;
  sym.value = s->st_value;
  if (f.versym_off_) {
    if (const u8* v = b.at(*f.versym_off_ + static_cast<u64>(index) * 2, 2))
      sym.versym = static_cast<u16>(*reinterpret_cast<const typename E::Half*>(v));
  }
  return sym;
}

// One sequential pass over the symbol table: reading each symbol where a relocation names it
// would jump around the table (most relocations of a C++ library name its own exported
// symbols), and reading the relocation tables at all is needed only when a symbol fails to bind.
// count_symbols clamped nsyms_ to what the file holds after symtab_off_.
template <typename E>
std::vector<u32> Parser::scan_required(const ElfFile& f) {
  std::vector<u32> out;
  if (!f.symtab_off_) return out;
  const auto* syms = reinterpret_cast<const Sym<E>*>(f.bytes().data() + *f.symtab_off_);
  for (u32 i = 1; i < f.nsyms_; ++i) {
    u8 bind = syms[i].st_info >> 4;
    if (syms[i].st_shndx == SHN_UNDEF && bind != STB_LOCAL && bind != STB_WEAK) out.push_back(i);
  }
  return out;
}

// Compares a symbol's name in place: no strlen over the string table on the lookup path.
template <typename E>
bool Parser::name_equals(const ElfFile& f, u32 index, std::string_view name) {
  if (!f.symtab_off_ || index >= f.nsyms_) return false;
  const u8* p = f.bytes().at(*f.symtab_off_ + static_cast<u64>(index) * sizeof(Sym<E>), sizeof(Sym<E>));
  if (!p) return false;
  u64 off = reinterpret_cast<const Sym<E>*>(p)->st_name;
  const u8* str = f.dynstr_.at(off, name.size() + 1);
  // An empty name may have a null data(): memcmp must not see it, even for 0 bytes.
  return str && (name.empty() || std::memcmp(str, name.data(), name.size()) == 0) && str[name.size()] == 0;
}

// Locates DT_GNU_HASH's bloom filter, buckets and chains once, so that a lookup is a few loads.
template <typename E>
void Parser::locate_gnu_table(ElfFile& f) {
  if (!f.gnu_hash_off_ || !f.symtab_off_) return;
  Bytes b = f.bytes();
  u64 off = *f.gnu_hash_off_;
  const u8* h = b.at(off, 16);
  if (!h) return;
  const auto* w = reinterpret_cast<const typename E::Word*>(h);
  u64 nbuckets = w[0], symoffset = w[1], bloom_words = w[2], shift = w[3];
  constexpr u64 word_size = E::is_64 ? 8 : 4;
  if (nbuckets == 0 || bloom_words == 0 || bloom_words > b.size() / word_size) return;
  u64 bloom_off = off + 16;
  u64 buckets_off = bloom_off + bloom_words * word_size;
  if (!b.contains(bloom_off, bloom_words * word_size) || nbuckets > b.size() / 4 ||
      !b.contains(buckets_off, nbuckets * 4))
    return;
  u64 chains_off = buckets_off + nbuckets * 4;
  u64 readable = (b.size() - chains_off) / 4;
  u64 after = f.nsyms_ > symoffset ? f.nsyms_ - symoffset : 0;
  f.gnu_ = {bloom_off,
            bloom_words,
            static_cast<u32>(shift % 32),
            buckets_off,
            static_cast<u32>(nbuckets),
            static_cast<u32>(symoffset),
            chains_off,
            std::min(readable, after)};
  if constexpr (E::is_64 && !E::big_endian)
    if (std::endian::native == std::endian::little) f.bloom_words64_ = b.data() + bloom_off;
}

// elf/dl-lookup.c's do_lookup_x over DT_GNU_HASH: the bloom filter rejects most names with one
// load; otherwise the bucket gives the first index of a chain of hashes whose low bit ends it.
template <typename E>
void Parser::gnu_lookup(const ElfFile& f, const SymbolKey& key, std::vector<u32>& out) {
  const ElfFile::GnuTable& t = f.gnu_;
  if (t.nbuckets == 0) return;
  constexpr u64 bits = E::is_64 ? 64 : 32;
  const u8* base = f.bytes().data();  // every offset below was bounds-checked by locate_gnu_table
  u32 hash = key.gnu;
  u64 word = static_cast<u64>(
      *reinterpret_cast<const typename E::Addr*>(base + t.bloom_off + ((hash / bits) % t.bloom_words) * (bits / 8)));
  u64 mask = (u64{1} << (hash % bits)) | (u64{1} << ((hash >> t.shift) % bits));
  if ((word & mask) != mask) return;
  u32 idx = *reinterpret_cast<const typename E::Word*>(base + t.buckets_off + u64{hash % t.nbuckets} * 4);
  if (idx == 0 || idx < t.symoffset) return;
  for (u64 i = idx - t.symoffset; i < t.nchains; ++i) {
    u32 chain = *reinterpret_cast<const typename E::Word*>(base + t.chains_off + i * 4);
    if ((chain | 1) == (hash | 1) && name_equals<E>(f, static_cast<u32>(i + t.symoffset), key.name))
      out.push_back(static_cast<u32>(i + t.symoffset));
    if (chain & 1) break;
  }
}

template <typename E>
void Parser::sysv_lookup(const ElfFile& f, const SymbolKey& key, std::vector<u32>& out) {
  Bytes b = f.bytes();
  u64 off = *f.sysv_hash_off_;
  const u8* h = b.at(off, 8);
  if (!h) return;
  const auto* w = reinterpret_cast<const typename E::Word*>(h);
  u64 nbucket = w[0], nchain = w[1];
  if (nbucket == 0) return;
  const u8* bp = b.at(off + 8 + (elf_hash(key.name) % nbucket) * 4, 4);
  if (!bp) return;
  u64 idx = static_cast<u32>(*reinterpret_cast<const typename E::Word*>(bp));
  // At most one step per symbol the file can hold (nsyms_ is nchain clamped to the file's size):
  // a crafted chain can neither loop forever nor claim 2^32 entries.
  u64 limit = std::min<u64>(nchain, f.nsyms_);
  for (u64 steps = 0; idx != 0 && idx < limit && steps < limit; ++steps) {
    if (name_equals<E>(f, static_cast<u32>(idx), key.name)) out.push_back(static_cast<u32>(idx));
    const u8* cp = b.at(off + 8 + nbucket * 4 + idx * 4, 4);
    if (!cp) break;
    idx = static_cast<u32>(*reinterpret_cast<const typename E::Word*>(cp));
  }
}

std::optional<Symbol> ElfFile::symbol(u32 index) const { return read_symbol_(*this, index, true); }

std::optional<Symbol> ElfFile::symbol_without_name(u32 index) const { return read_symbol_(*this, index, false); }

SymbolKey::SymbolKey(std::string_view n) : name(n), gnu(gnu_hash(n)) {}

void ElfFile::find_symbols(const SymbolKey& key, std::vector<u32>& out) const {
  if (!symtab_off_) return;
  if (gnu_hash_off_) return gnu_lookup_(*this, key, out);
  if (sysv_hash_off_) return sysv_lookup_(*this, key, out);
  for (u32 i = 1; i < nsyms_; ++i) {
    auto s = symbol(i);
    if (s && s->name == key.name) out.push_back(i);
  }
}

std::vector<u32> ElfFile::find_symbols(std::string_view name) const {
  std::vector<u32> out;
  find_symbols(SymbolKey(name), out);
  return out;
}

// The instantiations the other files of the reader call, one per (class, byte order).
template u32 Parser::count_symbols<Elf32<false>>(ElfFile&);
template u32 Parser::count_symbols<Elf32<true>>(ElfFile&);
template u32 Parser::count_symbols<Elf64<false>>(ElfFile&);
template u32 Parser::count_symbols<Elf64<true>>(ElfFile&);
template std::optional<Symbol> Parser::read_symbol<Elf32<false>>(const ElfFile&, u32, bool);
template std::optional<Symbol> Parser::read_symbol<Elf32<true>>(const ElfFile&, u32, bool);
template std::optional<Symbol> Parser::read_symbol<Elf64<false>>(const ElfFile&, u32, bool);
template std::optional<Symbol> Parser::read_symbol<Elf64<true>>(const ElfFile&, u32, bool);
template std::vector<u32> Parser::scan_required<Elf32<false>>(const ElfFile&);
template std::vector<u32> Parser::scan_required<Elf32<true>>(const ElfFile&);
template std::vector<u32> Parser::scan_required<Elf64<false>>(const ElfFile&);
template std::vector<u32> Parser::scan_required<Elf64<true>>(const ElfFile&);
template void Parser::locate_gnu_table<Elf32<false>>(ElfFile&);
template void Parser::locate_gnu_table<Elf32<true>>(ElfFile&);
template void Parser::locate_gnu_table<Elf64<false>>(ElfFile&);
template void Parser::locate_gnu_table<Elf64<true>>(ElfFile&);
template void Parser::gnu_lookup<Elf32<false>>(const ElfFile&, const SymbolKey&, std::vector<u32>&);
template void Parser::gnu_lookup<Elf32<true>>(const ElfFile&, const SymbolKey&, std::vector<u32>&);
template void Parser::gnu_lookup<Elf64<false>>(const ElfFile&, const SymbolKey&, std::vector<u32>&);
template void Parser::gnu_lookup<Elf64<true>>(const ElfFile&, const SymbolKey&, std::vector<u32>&);
template void Parser::sysv_lookup<Elf32<false>>(const ElfFile&, const SymbolKey&, std::vector<u32>&);
template void Parser::sysv_lookup<Elf32<true>>(const ElfFile&, const SymbolKey&, std::vector<u32>&);
template void Parser::sysv_lookup<Elf64<false>>(const ElfFile&, const SymbolKey&, std::vector<u32>&);
template void Parser::sysv_lookup<Elf64<true>>(const ElfFile&, const SymbolKey&, std::vector<u32>&);

}  // namespace envdoctor::elf
