#include "checks/manylinux.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "python/wheel.h"

namespace envdoctor::checks {

namespace {

constexpr u64 kMaxMemberRead = u64{2} << 30;
constexpr size_t kElfHeaderSize = 52;  // sizeof(Elf32_Ehdr), the smallest a loader reads

// The oldest policy of each architecture: manylinux1 (glibc 2.5) covered x86_64 and i686 only;
// the others begin with manylinux2014 (glibc 2.17), as in auditwheel's policy table.
GlibcVersion oldest_policy(std::string_view arch) {
  return arch == "x86_64" || arch == "i686" ? GlibcVersion{2, 5} : GlibcVersion{2, 17};
}

std::string dynamic_linker(u16 machine, bool big_endian) {
  switch (machine) {
    case EM_X86_64: return "ld-linux-x86-64.so.2";
    case EM_386: return "ld-linux.so.2";
    case EM_AARCH64: return "ld-linux-aarch64.so.1";
    case EM_PPC64: return big_endian ? "ld64.so.1" : "ld64.so.2";
    case EM_S390: return "ld64.so.1";
    default: return "";
  }
}

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::vector<std::string> manylinux_libraries(u16 machine) {
  std::vector<std::string> libs = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1"};
  std::string ld = dynamic_linker(machine, false);
  if (!ld.empty()) libs.push_back(ld);
  if (machine == EM_PPC64) libs.push_back(dynamic_linker(machine, true));
  return libs;
}

std::string manylinux_arch(const elf::ElfFile& file) {
  switch (file.machine) {
    case EM_X86_64: return file.is_64() ? "x86_64" : "";
    case EM_386: return "i686";
    case EM_AARCH64: return "aarch64";
    case EM_PPC64: return file.big_endian() ? "ppc64" : "ppc64le";
    case EM_S390: return file.is_64() ? "s390x" : "";
    default: return "";
  }
}

std::optional<GlibcVersion> glibc_version_of(std::string_view name) {
  // glibc 2.36 NEWS: objects linked with DT_RELR need GLIBC_ABI_DT_RELR, which 2.36 first defines.
  if (name == "GLIBC_ABI_DT_RELR") return GlibcVersion{2, 36};
  constexpr std::string_view prefix = "GLIBC_";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = name.substr(prefix.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view minor = rest.substr(dot + 1);
  minor = minor.substr(0, minor.find('.'));  // GLIBC_2.2.5: the release is 2.2
  std::optional<int> ma = parse_int(rest.substr(0, dot)), mi = parse_int(minor);
  if (!ma || !mi) return std::nullopt;
  return GlibcVersion{*ma, *mi};
}

ManylinuxNeeds manylinux_needs(const elf::ElfFile& file, std::string name, const std::vector<std::string>& provided) {
  ManylinuxNeeds n;
  n.file = std::move(name);
  n.arch = manylinux_arch(file);
  if (n.arch.empty())
    n.problems.push_back("no manylinux policy covers its machine (e_machine " + std::to_string(file.machine) + ")");
  std::vector<std::string> allowed = manylinux_libraries(file.machine);
  auto in = [](const std::vector<std::string>& list, std::string_view s) {
    return std::find(list.begin(), list.end(), s) != list.end();
  };
  for (std::string_view lib : file.needed) {
    if (in(allowed, lib) || in(provided, lib)) continue;
    n.problems.push_back("needs " + std::string(lib) + ", which manylinux does not promise (allowed: " + join(allowed) +
                         ")");
  }
  n.glibc = oldest_policy(n.arch);
  std::optional<GlibcVersion> highest;
  for (const elf::VersionNeed& need : file.verneed) {
    if (!in(allowed, need.file)) continue;  // a library of the wheel's own, or one refused above
    for (const elf::VersionNeedAux& aux : need.versions) {
      std::optional<GlibcVersion> v = glibc_version_of(aux.name);
      if (!v) {
        n.problems.push_back("needs " + std::string(aux.name) + " of " + std::string(need.file) +
                             ", which no glibc release promises");
        continue;
      }
      n.versions_needed++;
      if (!highest || *highest < *v) {
        highest = *v;
        n.floor.clear();
      }
      if (*highest == *v) n.floor.push_back({std::string(need.file), std::string(aux.name)});
    }
  }
  if (highest && n.glibc < *highest) n.glibc = *highest;
  return n;
}

std::optional<ManylinuxTag> parse_manylinux_tag(std::string_view tag) {
  // PEP 600's aliases for the legacy tags (PEP 513, 571, 599).
  static const std::pair<std::string_view, GlibcVersion> kLegacy[] = {
      {"manylinux1_", {2, 5}}, {"manylinux2010_", {2, 12}}, {"manylinux2014_", {2, 17}}};
  for (const auto& [prefix, glibc] : kLegacy)
    if (tag.substr(0, prefix.size()) == prefix) return ManylinuxTag{glibc, std::string(tag.substr(prefix.size()))};
  constexpr std::string_view prefix = "manylinux_";
  if (tag.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = tag.substr(prefix.size());
  size_t a = rest.find('_');
  size_t b = a == std::string_view::npos ? a : rest.find('_', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  std::optional<int> ma = parse_int(rest.substr(0, a)), mi = parse_int(rest.substr(a + 1, b - a - 1));
  if (!ma || !mi || b + 1 == rest.size()) return std::nullopt;
  return ManylinuxTag{{*ma, *mi}, std::string(rest.substr(b + 1))};
}

std::string WheelTagAudit::tag() const {
  if (!glibc || arch.empty()) return "";
  for (const ManylinuxNeeds& f : files)
    if (!f.taggable()) return "";
  return "manylinux_" + std::to_string(glibc->major) + "_" + std::to_string(glibc->minor) + "_" + arch;
}

namespace {

// What the wheel's tags promise, held against what its files need.
void check_claims(WheelTagAudit& a) {
  const ManylinuxNeeds* neediest = nullptr;
  for (const ManylinuxNeeds& f : a.files)
    if (!neediest || neediest->glibc < f.glibc) neediest = &f;
  bool needs_glibc = false;
  for (const ManylinuxNeeds& f : a.files) needs_glibc |= f.versions_needed > 0;
  for (const std::string& claim : a.claimed) {
    if (claim == "any") {
      a.problems.push_back("tagged any, but it holds ELF files for " +
                           (a.arch.empty() ? "an unknown machine" : a.arch));
      continue;
    }
    if (claim.rfind("musllinux_", 0) == 0 && needs_glibc) {
      a.problems.push_back("tagged " + claim + ", but its files need glibc, not musl");
      continue;
    }
    std::optional<ManylinuxTag> t = parse_manylinux_tag(claim);
    if (!t) continue;  // linux_x86_64 promises nothing about the C library
    if (!a.arch.empty() && t->arch != a.arch)
      a.problems.push_back("tagged " + claim + ", but its files are for " + a.arch);
    if (neediest && t->glibc < neediest->glibc) {
      std::string why = neediest->floor.empty()
                            ? ""
                            : " (" + neediest->floor.front().version + " of " + neediest->floor.front().library + ")";
      a.problems.push_back("tagged " + claim + ", which promises glibc " + t->glibc.str() + ", but " + neediest->file +
                           " needs glibc " + neediest->glibc.str() + why);
    }
    for (const ManylinuxNeeds& f : a.files)
      for (const std::string& p : f.problems) a.problems.push_back("tagged " + claim + ", but " + f.file + " " + p);
  }
}

}  // namespace

std::optional<WheelTagAudit> audit_wheel_tags(python::Wheel& wheel, std::string* error) {
  WheelTagAudit a;
  a.wheel = wheel.path().string();
  a.claimed = wheel.filename().platform_tags;
  // Parse every ELF member first: what one needs, another may provide.
  std::vector<std::pair<std::string, std::unique_ptr<elf::ElfFile>>> elves;
  std::vector<std::string> provided;
  for (const python::WheelMember& m : wheel.members()) {
    if (m.is_directory || m.size < kElfHeaderSize) continue;
    auto bytes = wheel.read(m.name, kMaxMemberRead, error);
    if (!bytes) {
      *error = a.wheel + ": " + *error;
      return std::nullopt;
    }
    if (std::memcmp(bytes->data(), ELFMAG, SELFMAG) != 0) continue;
    std::string parse_error;
    std::unique_ptr<elf::ElfFile> elf =
        elf::ElfFile::parse(MappedFile::from_buffer(m.name, std::move(*bytes)), &parse_error);
    if (!elf) {
      a.problems.push_back(m.name + ": " + parse_error);
      continue;
    }
    if (elf->soname) provided.emplace_back(*elf->soname);
    provided.push_back(std::filesystem::path(m.name).filename().string());
    elves.emplace_back(m.name, std::move(elf));
  }
  for (const auto& [name, elf] : elves) {
    a.files.push_back(manylinux_needs(*elf, name, provided));
    const ManylinuxNeeds& f = a.files.back();
    if (!a.glibc || *a.glibc < f.glibc) a.glibc = f.glibc;
    if (a.arch.empty()) a.arch = f.arch;
    else if (!f.arch.empty() && f.arch != a.arch)
      a.problems.push_back(name + " is for " + f.arch + ", the others for " + a.arch);
  }
  check_claims(a);
  return a;
}

}  // namespace envdoctor::checks
