#include "cuda/fatbin.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "elf/elf_types.h"

namespace envdoctor::cuda {

namespace {

// Fatbinaries are little-endian whatever the host: NVIDIA GPUs are (CUDA Programming Guide,
// "All NVIDIA GPU architectures use a little-endian representation").
using U16 = elf::Field<u16, false>;
using U32 = elf::Field<u32, false>;
using U64 = elf::Field<u64, false>;

constexpr u32 kFatbinMagic = 0xBA55ED50;  // FATBIN_MAGIC (fatbinary.h)
constexpr u16 kFatbinVersion = 1;         // FATBIN_VERSION

// fatbinary.h's fatBinaryHeader.
struct ContainerHeader {
  U32 magic;
  U16 version;
  U16 headerSize;  // where the first entry starts, from the container's start
  U64 fatSize;     // bytes of entries after the header
};
static_assert(sizeof(ContainerHeader) == 16);

// One entry's header. The field names follow what each field holds; NVIDIA publishes no names.
// Established from nvcc 13.0 output (docs/cuda.md has the dumps).
struct EntryHeader {
  U16 kind;              // fatBinaryCodeKind: 1 PTX, 2 ELF, 8 NVVM IR
  U16 format_version;    // 0x0101
  U32 header_size;       // 64, or more when fields follow (options string, cubin attributes)
  U64 payload_size;      // bytes after the header, to the next entry (padded to 8)
  U32 compressed_size;   // stored bytes of a compressed payload, 0 otherwise
  U32 extension_offset;  // 64 when header_size > 64
  U16 version_minor;     // PTX: the ISA version (9.0 = CUDA 13.0); ELF: the cubin's code version
  U16 version_major;
  U32 arch;  // SM number: 90 for sm_90 and compute_90
  U32 name_offset;
  U32 name_size;
  U64 flags;
  U64 reserved;
  U64 uncompressed_size;  // 0 when not compressed
};
static_assert(sizeof(EntryHeader) == 64);

// Entry flags seen in nvcc output; the variant bits were told apart by compiling the same kernel
// for sm_90 / sm_90a / sm_100f / sm_120a with nvcc 13.0 (docs/cuda.md).
constexpr u64 kFlag64Bit = 0x1;
constexpr u64 kFlagDebug = 0x2;
constexpr u64 kFlagCompressedLz4 = 0x2000;  // toolkits before 12.4 or so
constexpr u64 kFlagCompressedZstd = 0x8000;
constexpr u64 kFlagArchSpecific = 0x100000;    // sm_90a, compute_100a
constexpr u64 kFlagFamilySpecific = 0x200000;  // sm_100f, compute_120f

constexpr u16 kKindPtx = 1;
constexpr u16 kKindElf = 2;

std::string hex(u64 v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// A cubin's own ELF header, for the `a` bit when the fatbin header has none. The pre-CUDA-13 ABI
// (EI_ABIVERSION 7) keeps the SM in e_flags' low byte and EF_CUDA_ACCELERATORS_V1 (0x800) for
// `sm_90a`; ABI 8 moved the SM to bits 8-15 and names 0x8 EF_CUDA_ACCELERATORS (LLVM
// BinaryFormat/ELF.h), though nvcc 13.0 leaves it clear for sm_90a and writes the fatbin flag.
// Returns nullopt when the payload is not a readable cubin header.
std::optional<char> cubin_variant(Bytes payload) {
  constexpr u16 kEmCuda = 190;
  const u8* h = payload.at(0, 52);
  if (!h || std::memcmp(h, ELFMAG, SELFMAG) != 0) return std::nullopt;
  bool is64 = h[EI_CLASS] == ELFCLASS64;
  u16 machine = *reinterpret_cast<const U16*>(h + 18);
  if (machine != kEmCuda) return std::nullopt;
  u32 e_flags = *reinterpret_cast<const U32*>(h + (is64 ? 48 : 36));
  if (h[EI_ABIVERSION] < 8) return (e_flags & 0x800) ? 'a' : char(0);
  return (e_flags & 0x8) ? 'a' : char(0);
}

// The suffix of the first `.target sm_NN[a|f]` directive in a PTX module's opening bytes
// (PTX ISA, "Specifying the target": .version comes first, .target next).
std::optional<char> ptx_variant(Bytes payload) {
  std::string_view text = payload.slice(0, std::min<u64>(payload.size(), 4096))->as_string_view();
  size_t at = text.find(".target");
  if (at == std::string_view::npos) return std::nullopt;
  size_t sm = text.find("sm_", at);
  if (sm == std::string_view::npos || sm > at + 32) return std::nullopt;
  size_t i = sm + 3;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i < text.size() && (text[i] == 'a' || text[i] == 'f')) return text[i];
  return char(0);
}

struct SectionParser {
  Bytes bytes;
  std::string_view section;
  u64 base;
  FatbinInfo& out;

  void problem(u64 at, const std::string& what) {
    out.problems.push_back(std::string(section) + "+" + hex(at) + ": " + what);
  }

  void run();
  // Parses the container at `at`; returns where the next one starts, or nullopt to stop.
  std::optional<u64> container(u64 at);
  // Parses the entry at `at`, inside [at, end); returns its total size, or nullopt to stop.
  std::optional<u64> entry(u64 at, u64 end);
  void set_variant(FatbinEntry& e, const EntryHeader& h, Bytes payload);
};

void SectionParser::run() {
  u64 at = 0;
  while (at < bytes.size()) {
    const u8* head = bytes.at(at, 8);
    if (!head) {
      // Fewer than 8 bytes left: alignment padding if zero.
      if (std::any_of(bytes.data() + at, bytes.data() + bytes.size(), [](u8 b) { return b != 0; }))
        problem(at, "trailing " + std::to_string(bytes.size() - at) + " bytes after the last container");
      return;
    }
    // Containers are 8-byte aligned; the linker may pad between the ones of two objects.
    if (std::all_of(head, head + 8, [](u8 b) { return b == 0; })) {
      at += 8;
      continue;
    }
    std::optional<u64> next = container(at);
    if (!next) return;
    at = *next;
  }
}

std::optional<u64> SectionParser::container(u64 at) {
  const auto* h = reinterpret_cast<const ContainerHeader*>(bytes.at(at, sizeof(ContainerHeader)));
  if (!h) {
    problem(at, "container header truncated: " + std::to_string(bytes.size() - at) + " bytes left");
    return std::nullopt;
  }
  if (h->magic != kFatbinMagic) {
    problem(at, "no fatbinary magic (found " + hex(u32(h->magic)) + ")");
    return std::nullopt;
  }
  if (h->version != kFatbinVersion) {
    problem(at, "unknown fatbinary version " + std::to_string(u16(h->version)));
    return std::nullopt;
  }
  u64 header_size = h->headerSize;
  u64 fat_size = h->fatSize;
  if (header_size < sizeof(ContainerHeader) || !bytes.contains(at, header_size)) {
    problem(at, "container header size " + std::to_string(header_size) + " is invalid");
    return std::nullopt;
  }
  u64 start = at + header_size;
  u64 end = start + fat_size;
  bool overrun = fat_size > bytes.size() - start;
  if (overrun) {
    // The extent is unknown, so nothing after this container can be found; list what fits.
    problem(at, "container claims " + std::to_string(fat_size) + " bytes but the section has " +
                    std::to_string(bytes.size() - start) + " left");
    end = bytes.size();
  }
  u32 index = out.containers++;
  for (u64 e = start; e < end;) {
    size_t before = out.entries.size();
    std::optional<u64> size = entry(e, end);
    if (!size) break;
    if (out.entries.size() > before) out.entries.back().container = index;
    e += *size;
  }
  if (overrun) return std::nullopt;
  return end;
}

std::optional<u64> SectionParser::entry(u64 at, u64 end) {
  if (end - at < sizeof(EntryHeader)) {
    problem(at, "entry header truncated: " + std::to_string(end - at) + " bytes left in the container");
    return std::nullopt;
  }
  const auto* h = reinterpret_cast<const EntryHeader*>(bytes.data() + at);
  u64 header_size = h->header_size;
  u64 payload_size = h->payload_size;
  // A header of at least 64 bytes is also what bounds the walk: every entry advances by 64 or
  // more, so a section of N bytes yields at most N / 64 entries and no entry can loop back.
  if (header_size < sizeof(EntryHeader) || header_size > end - at) {
    problem(at, "entry header size " + std::to_string(header_size) + " is invalid");
    return std::nullopt;
  }
  if (payload_size > end - at - header_size) {
    problem(at, "entry payload of " + std::to_string(payload_size) + " bytes overruns the container");
    return std::nullopt;
  }
  u64 payload_at = at + header_size;
  u64 flags = h->flags;

  FatbinEntry e;
  e.raw_kind = h->kind;
  e.kind = e.raw_kind == kKindElf   ? FatbinEntry::Kind::kSass
           : e.raw_kind == kKindPtx ? FatbinEntry::Kind::kPtx
                                    : FatbinEntry::Kind::kOther;
  e.sm = static_cast<int>(std::min<u32>(h->arch, 100000));
  if (e.kind == FatbinEntry::Kind::kPtx) {
    e.ptx_isa_major = h->version_major;
    e.ptx_isa_minor = h->version_minor;
  }
  e.compressed = (flags & (kFlagCompressedZstd | kFlagCompressedLz4)) != 0;
  e.relocatable = section == "__nv_relfatbin";
  e.address64 = flags & kFlag64Bit;
  e.debug = flags & kFlagDebug;
  e.offset = base + payload_at;
  e.size = payload_size;
  if (e.compressed) {
    if (h->compressed_size > payload_size) {
      problem(at, "compressed size " + std::to_string(u32(h->compressed_size)) + " exceeds the payload of " +
                      std::to_string(payload_size) + " bytes");
    } else {
      e.size = h->compressed_size;
    }
    e.uncompressed_size = h->uncompressed_size;
  } else {
    e.uncompressed_size = payload_size;
  }
  set_variant(e, *h, *bytes.slice(payload_at, e.size));
  out.entries.push_back(e);
  return header_size + payload_size;
}

void SectionParser::set_variant(FatbinEntry& e, const EntryHeader& h, Bytes payload) {
  u64 flags = h.flags;
  if (flags & kFlagArchSpecific) {
    e.variant = 'a';
    return;
  }
  if (flags & kFlagFamilySpecific) {
    e.variant = 'f';
    return;
  }
  // Variants exist from sm_90 on; nothing to establish below.
  if (e.sm < 90 || e.kind == FatbinEntry::Kind::kOther) return;
  if (!e.compressed) {
    std::optional<char> v = e.kind == FatbinEntry::Kind::kSass ? cubin_variant(payload) : ptx_variant(payload);
    if (v) e.variant = *v;
    return;
  }
  // Compressed and unflagged. nvcc 13.0 flags every variant (PTX ISA 9.0, cubin code version
  // 1.8), so from those toolkits no flag means the plain architecture; for older toolkits the
  // flag's presence is not established, and the payload cannot be read without inflating it.
  bool flagging_toolkit = e.kind == FatbinEntry::Kind::kPtx
                              ? e.ptx_isa_major >= 9
                              : (h.version_major > 1 || (h.version_major == 1 && h.version_minor >= 8));
  e.variant_known = flagging_toolkit;
}

// Asks the kernel to read only the pages the walk touches in `range` of a mapped file, for as
// long as this lives. The walk reads an entry's header every few kilobytes of a section that
// may hold hundreds of megabytes, and a fault on a page that is not in the page cache reads
// read_ahead_kb around it by default: a cold `check` then read torch's CUDA libraries nearly
// whole (2.2 GB of the torch venv's 4.7) for 111 MB of headers. Advice only: on a heap buffer
// or where the kernel refuses it, nothing changes.
class SparseReads {
 public:
  explicit SparseReads(Bytes range) {
    static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    if (range.empty()) return;
    uintptr_t start = reinterpret_cast<uintptr_t>(range.data());
    begin_ = reinterpret_cast<void*>(start & ~(page - 1));
    size_ = start + range.size() - reinterpret_cast<uintptr_t>(begin_);
    ::madvise(begin_, size_, MADV_RANDOM);
  }
  ~SparseReads() {
    if (begin_) ::madvise(begin_, size_, MADV_NORMAL);  // later readers of the file read ahead again
  }
  SparseReads(const SparseReads&) = delete;
  SparseReads& operator=(const SparseReads&) = delete;

 private:
  void* begin_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

std::string FatbinEntry::arch_name() const {
  std::string s = kind == Kind::kPtx ? "compute_" : "sm_";
  s += std::to_string(sm);
  if (variant) s += variant;
  return s;
}

FatbinInfo parse_fatbin_section(Bytes bytes, std::string_view section, u64 base) {
  FatbinInfo info;
  SectionParser{bytes, section, base, info}.run();
  return info;
}

FatbinInfo read_fatbins(const elf::ElfFile& file) {
  FatbinInfo info;
  Bytes whole = file.bytes();
  // Crafted section headers may name the same bytes a thousand times: each range is read once,
  // and never more than the file's size in all.
  std::vector<std::pair<u64, u64>> seen;
  u64 scanned = 0;
  for (const elf::Section& s : file.sections()) {
    if (s.name != ".nv_fatbin" && s.name != "__nv_relfatbin") continue;
    if (s.type == SHT_NOBITS) continue;
    bool overlaps = std::any_of(seen.begin(), seen.end(), [&](const std::pair<u64, u64>& r) {
      return s.offset < r.first + r.second && r.first < s.offset + s.size;
    });
    if (overlaps || s.size > whole.size() - std::min(scanned, whole.size())) {
      info.problems.push_back(std::string(s.name) + ": section at " + hex(s.offset) + " overlaps another, ignored");
      continue;
    }
    seen.emplace_back(s.offset, s.size);
    scanned += s.size;
    std::optional<Bytes> bytes = whole.slice(s.offset, s.size);
    if (!bytes) {
      info.problems.push_back(std::string(s.name) + ": section at " + hex(s.offset) + " of " + std::to_string(s.size) +
                              " bytes lies outside the file");
      continue;
    }
    SparseReads sparse(*bytes);
    FatbinInfo part = parse_fatbin_section(*bytes, s.name, s.offset);
    for (FatbinEntry& e : part.entries) {
      e.container += info.containers;
      info.entries.push_back(e);
    }
    info.containers += part.containers;
    info.problems.insert(info.problems.end(), part.problems.begin(), part.problems.end());
  }
  return info;
}

}  // namespace envdoctor::cuda
