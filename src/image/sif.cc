#include "image/sif.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace envdoctor::image {

namespace {

constexpr u64 kHeaderSize = 128;
constexpr u64 kDescriptorSize = 585;
constexpr u64 kMagicAt = 32;
constexpr char kMagic[] = "SIF_MAGIC";  // with its NUL: 10 bytes
// sif creates 48 descriptors by default; a table past this is no SIF any tool wrote.
constexpr u64 kMaxDescriptors = 1 << 16;

constexpr std::int32_t kDataPartition = 0x4004;  // DataPartition
constexpr std::int32_t kPartPrimSys = 2;         // PartPrimSys
constexpr std::int32_t kFsSquash = 1;            // FsSquash

u32 le32(const unsigned char* p) { return u32(p[0]) | u32(p[1]) << 8 | u32(p[2]) << 16 | u32(p[3]) << 24; }
i64 le64s(const unsigned char* p) {
  u64 v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return static_cast<i64>(v);
}

// sif's arch.go: two digits and a NUL.
std::string go_arch(const unsigned char* p) {
  static const char* const kNames[] = {"unknown", "386",    "amd64",  "arm",      "arm64", "ppc64",   "ppc64le",
                                       "mips",    "mipsle", "mips64", "mips64le", "s390x", "riscv64", "loong64"};
  if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9' || p[2] != 0) return "unknown";
  size_t n = static_cast<size_t>((p[0] - '0') * 10 + (p[1] - '0'));
  return n < std::size(kNames) ? kNames[n] : "unknown";
}

std::string fs_name(std::int32_t fs) {
  switch (fs) {
    case 1: return "squashfs";
    case 2: return "ext3";
    case 3: return "an archive of immutable objects";
    case 4: return "raw data";
    case 5: return "encrypted squashfs";
    case 6: return "gocryptfs-encrypted squashfs";
  }
  return "file system type " + std::to_string(fs);
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool read_exact(int fd, void* buffer, u64 size, u64 offset, ReadCounter* counter) {
  ssize_t n = ::pread(fd, buffer, size, static_cast<off_t>(offset));
  if (n > 0 && counter) counter->bytes += static_cast<u64>(n);
  return n >= 0 && static_cast<u64>(n) == size;
}

// One in-use partition descriptor, its offset and size checked against the file.
struct Partition {
  u32 id = 0;
  std::int32_t fs = 0, type = 0;
  std::string arch;
  u64 offset = 0, size = 0;
};

// The descriptors' partitions; false with `error` set when one lies outside the file.
bool read_partitions(const unsigned char* table, u64 count, u64 file_size, std::vector<Partition>* out,
                     std::string* error) {
  for (u64 i = 0; i < count; ++i) {
    const unsigned char* d = table + i * kDescriptorSize;
    if (d[4] == 0 || static_cast<std::int32_t>(le32(d)) != kDataPartition) continue;  // unused, or not a file system
    Partition p;
    p.id = le32(d + 5);
    i64 offset = le64s(d + 17), size = le64s(d + 25);
    const unsigned char* extra = d + 201;
    p.fs = static_cast<std::int32_t>(le32(extra));
    p.type = static_cast<std::int32_t>(le32(extra + 4));
    p.arch = go_arch(extra + 8);
    if (offset < 0 || size < 0 || static_cast<u64>(offset) > file_size ||
        static_cast<u64>(size) > file_size - static_cast<u64>(offset)) {
      *error = "descriptor " + std::to_string(p.id) + " places its partition at offset " + std::to_string(offset) +
               " with size " + std::to_string(size) + ", past the end of the file (" + std::to_string(file_size) +
               " bytes): the image is truncated or damaged";
      return false;
    }
    p.offset = static_cast<u64>(offset);
    p.size = static_cast<u64>(size);
    out->push_back(std::move(p));
  }
  return true;
}

}  // namespace

bool is_sif(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  unsigned char magic[sizeof kMagic];
  return f.fd >= 0 && read_exact(f.fd, magic, sizeof magic, kMagicAt, nullptr) &&
         std::memcmp(magic, kMagic, sizeof kMagic) == 0;
}

std::optional<SifRoot> sif_root_partition(const std::string& path, ReadCounter* counter, std::string* error) {
  auto failed = [&](const std::string& why) -> std::optional<SifRoot> {
    *error = path + ": " + why;
    return std::nullopt;
  };
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st;
  if (f.fd < 0 || ::fstat(f.fd, &st) != 0) return failed(std::strerror(errno));
  u64 file_size = static_cast<u64>(st.st_size);
  unsigned char h[kHeaderSize];
  if (file_size < kHeaderSize || !read_exact(f.fd, h, kHeaderSize, 0, counter))
    return failed("truncated SIF image: " + std::to_string(file_size) + " bytes, shorter than its " +
                  std::to_string(kHeaderSize) + "-byte global header");
  if (std::memcmp(h + kMagicAt, kMagic, sizeof kMagic) != 0) return failed("not a SIF image (no SIF_MAGIC)");
  if (std::memcmp(h + 42, "01", 3) != 0)
    return failed(
        "SIF version " +
        std::string(reinterpret_cast<const char*>(h + 42), strnlen(reinterpret_cast<const char*>(h + 42), 3)) +
        ", and envdoctor reads version 01 (as Apptainer's sif library does)");
  i64 total = le64s(h + 88), offset = le64s(h + 96), size = le64s(h + 104);
  // The table: `total` descriptors of 585 bytes at `offset`, all inside the file.
  if (total < 0 || static_cast<u64>(total) > kMaxDescriptors)
    return failed("its header claims " + std::to_string(total) + " descriptors: the image is damaged");
  u64 table_size = static_cast<u64>(total) * kDescriptorSize;
  if (offset < 0 || size < 0 || static_cast<u64>(size) < table_size || static_cast<u64>(offset) > file_size ||
      table_size > file_size - static_cast<u64>(offset))
    return failed("its descriptor table (" + std::to_string(total) + " descriptors at offset " +
                  std::to_string(offset) + ") lies past the end of the file (" + std::to_string(file_size) +
                  " bytes): the image is truncated or damaged");
  std::vector<unsigned char> table(table_size);
  if (!read_exact(f.fd, table.data(), table_size, static_cast<u64>(offset), counter))
    return failed("cannot read its descriptor table");
  std::vector<Partition> partitions;
  if (!read_partitions(table.data(), static_cast<u64>(total), file_size, &partitions, error)) return failed(*error);
  std::vector<const Partition*> primary;
  for (const Partition& p : partitions)
    if (p.type == kPartPrimSys) primary.push_back(&p);
  // Apptainer mounts the one primary system partition (sif.WithPartitionType(PartPrimSys)); with
  // none, or several, it has no root file system.
  if (primary.empty())
    return failed("no primary system partition" +
                  (partitions.empty() ? std::string()
                                      : " (it has " + std::to_string(partitions.size()) + " other partition" +
                                            (partitions.size() > 1 ? "s)" : ")")) +
                  ": Apptainer would find no root file system; `siftool setprim` marks one");
  if (primary.size() > 1) return failed("several primary system partitions: Apptainer would refuse it");
  const Partition& root = *primary[0];
  if (root.fs != kFsSquash)
    return failed("its primary system partition is " + fs_name(root.fs) + ", and envdoctor reads squashfs only");
  unsigned char magic[4];
  if (root.size < 4 || !read_exact(f.fd, magic, 4, root.offset, counter) || std::memcmp(magic, "hsqs", 4) != 0)
    return failed("its primary system partition (descriptor " + std::to_string(root.id) + ", offset " +
                  std::to_string(root.offset) + ") holds no squashfs superblock");
  SifRoot out;
  out.partition.offset = root.offset;
  out.partition.size = root.size;
  out.arch = root.arch;
  out.header_tables.assign(reinterpret_cast<const char*>(h), kHeaderSize);
  out.header_tables.append(reinterpret_cast<const char*>(table.data()), table.size());
  return out;
}

}  // namespace envdoctor::image
