// The version tables: DT_VERNEED (.gnu.version_r) and DT_VERDEF (.gnu.version_d), and the index
// from a .gnu.version entry to the version it names.
#include "elf/elf_file.h"
#include "elf/elf_parser.h"

namespace envdoctor::elf {

template <typename E>
void Parser::read_verneed(ElfFile& f, u64 off, u64 count) {
  Bytes b = f.bytes();
  // Each record is at least 16 bytes, so a file cannot hold more than size/16 of them: a bound
  // on crafted counts and vn_next loops alike.
  u64 limit = b.size() / sizeof(Verneed<E>);
  for (u64 i = 0; i < count && i < limit; ++i) {
    const u8* p = b.at(off, sizeof(Verneed<E>));
    if (!p) {
      f.problems.push_back("DT_VERNEED lies outside the file");
      return;
    }
    const auto* vn = reinterpret_cast<const Verneed<E>*>(p);
    VersionNeed need;
    if (auto s = f.dynstr_.cstr(vn->vn_file)) need.file = *s;
    u64 aoff = off + static_cast<u64>(vn->vn_aux);
    for (u64 j = 0; j < vn->vn_cnt && j < limit; ++j) {
      const u8* ap = b.at(aoff, sizeof(Vernaux<E>));
      if (!ap) {
        f.problems.push_back("a Vernaux entry lies outside the file");
        break;
      }
      const auto* aux = reinterpret_cast<const Vernaux<E>*>(ap);
      VersionNeedAux v;
      v.hash = aux->vna_hash;
      v.flags = aux->vna_flags;
      v.other = aux->vna_other;
      if (auto s = f.dynstr_.cstr(aux->vna_name)) v.name = *s;
      need.versions.push_back(v);
      if (aux->vna_next == 0) break;
      aoff += static_cast<u64>(aux->vna_next);
    }
    f.verneed.push_back(std::move(need));
    if (vn->vn_next == 0) break;
    off += static_cast<u64>(vn->vn_next);
  }
}

template <typename E>
void Parser::read_verdef(ElfFile& f, u64 off, u64 count) {
  Bytes b = f.bytes();
  u64 limit = b.size() / sizeof(Verdef<E>);
  for (u64 i = 0; i < count && i < limit; ++i) {
    const u8* p = b.at(off, sizeof(Verdef<E>));
    if (!p) {
      f.problems.push_back("DT_VERDEF lies outside the file");
      return;
    }
    const auto* vd = reinterpret_cast<const Verdef<E>*>(p);
    VersionDef def;
    def.ndx = vd->vd_ndx;
    def.flags = vd->vd_flags;
    def.hash = vd->vd_hash;
    if (const u8* ap = b.at(off + static_cast<u64>(vd->vd_aux), sizeof(Verdaux<E>))) {
      const auto* aux = reinterpret_cast<const Verdaux<E>*>(ap);
      if (auto s = f.dynstr_.cstr(aux->vda_name)) def.name = *s;
    }
    f.verdef.push_back(def);
    if (vd->vd_next == 0) break;
    off += static_cast<u64>(vd->vd_next);
  }
}

void ElfFile::index_versions() {
  auto grow = [](auto& v, u16 ndx) {
    if (v.size() <= ndx) v.resize(static_cast<size_t>(ndx) + 1);
  };
  for (size_t i = 0; i < verdef.size() && i < UINT16_MAX; ++i) {
    u16 ndx = verdef[i].ndx & 0x7fff;
    grow(verdef_by_ndx_, ndx);
    if (verdef_by_ndx_[ndx] == 0) verdef_by_ndx_[ndx] = static_cast<u16>(i + 1);
  }
  for (size_t n = 0; n < verneed.size() && n < UINT16_MAX; ++n)
    for (size_t a = 0; a < verneed[n].versions.size() && a < UINT16_MAX; ++a) {
      u16 ndx = verneed[n].versions[a].other & 0x7fff;
      grow(vernaux_by_ndx_, ndx);
      if (vernaux_by_ndx_[ndx].first == 0) vernaux_by_ndx_[ndx] = {static_cast<u16>(n + 1), static_cast<u16>(a)};
    }
}

const VersionDef* ElfFile::verdef_for(u16 ndx) const {
  ndx &= 0x7fff;
  if (ndx < 2 || ndx >= verdef_by_ndx_.size() || verdef_by_ndx_[ndx] == 0) return nullptr;
  return &verdef[verdef_by_ndx_[ndx] - 1];
}

const VersionNeedAux* ElfFile::vernaux_for(u16 ndx, std::string_view* file) const {
  ndx &= 0x7fff;
  if (ndx < 2 || ndx >= vernaux_by_ndx_.size() || vernaux_by_ndx_[ndx].first == 0) return nullptr;
  const VersionNeed& n = verneed[vernaux_by_ndx_[ndx].first - 1];
  if (file) *file = n.file;
  return &n.versions[vernaux_by_ndx_[ndx].second];
}

// The instantiations the other files of the reader call, one per (class, byte order).
template void Parser::read_verneed<Elf32<false>>(ElfFile&, u64, u64);
template void Parser::read_verneed<Elf32<true>>(ElfFile&, u64, u64);
template void Parser::read_verneed<Elf64<false>>(ElfFile&, u64, u64);
template void Parser::read_verneed<Elf64<true>>(ElfFile&, u64, u64);
template void Parser::read_verdef<Elf32<false>>(ElfFile&, u64, u64);
template void Parser::read_verdef<Elf32<true>>(ElfFile&, u64, u64);
template void Parser::read_verdef<Elf64<false>>(ElfFile&, u64, u64);
template void Parser::read_verdef<Elf64<true>>(ElfFile&, u64, u64);

}  // namespace envdoctor::elf
