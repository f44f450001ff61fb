#include "image/squashfs.h"

#include <fcntl.h>
#include <lzo/lzo1x.h>
#include <sqfs/compressor.h>
#include <sqfs/data_reader.h>
#include <sqfs/dir_reader.h>
#include <sqfs/error.h>
#include <sqfs/id_table.h>
#include <sqfs/inode.h>
#include <sqfs/io.h>
#include <sqfs/super.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "support/digest.h"
#include "support/lazy_library.h"
#include "support/text.h"

namespace envdoctor::image {

namespace {

// The part of libsquashfs the image reader uses, opened on the first squashfs image.
struct Libsquashfs {
  decltype(::sqfs_open_file)* open_file;
  decltype(::sqfs_super_read)* super_read;
  decltype(::sqfs_compressor_config_init)* compressor_config_init;
  decltype(::sqfs_compressor_create)* compressor_create;
  decltype(::sqfs_id_table_create)* id_table_create;
  decltype(::sqfs_id_table_read)* id_table_read;
  decltype(::sqfs_dir_reader_create)* dir_reader_create;
  decltype(::sqfs_dir_reader_get_full_hierarchy)* get_full_hierarchy;
  decltype(::sqfs_dir_tree_destroy)* dir_tree_destroy;
  decltype(::sqfs_data_reader_create)* data_reader_create;
  decltype(::sqfs_data_reader_load_fragment_table)* load_fragment_table;
  decltype(::sqfs_data_reader_read)* data_reader_read;
  decltype(::sqfs_inode_get_file_size)* inode_get_file_size;
};

const Libsquashfs* libsquashfs(std::string* error) {
  static support::LazyLibrary lib(ENVDOCTOR_LIBSQUASHFS_SONAME);
  static Libsquashfs api;
  static std::string why;
  static const bool ok = lib.get(api.open_file, "sqfs_open_file", &why) &&
                         lib.get(api.super_read, "sqfs_super_read", &why) &&
                         lib.get(api.compressor_config_init, "sqfs_compressor_config_init", &why) &&
                         lib.get(api.compressor_create, "sqfs_compressor_create", &why) &&
                         lib.get(api.id_table_create, "sqfs_id_table_create", &why) &&
                         lib.get(api.id_table_read, "sqfs_id_table_read", &why) &&
                         lib.get(api.dir_reader_create, "sqfs_dir_reader_create", &why) &&
                         lib.get(api.get_full_hierarchy, "sqfs_dir_reader_get_full_hierarchy", &why) &&
                         lib.get(api.dir_tree_destroy, "sqfs_dir_tree_destroy", &why) &&
                         lib.get(api.data_reader_create, "sqfs_data_reader_create", &why) &&
                         lib.get(api.load_fragment_table, "sqfs_data_reader_load_fragment_table", &why) &&
                         lib.get(api.data_reader_read, "sqfs_data_reader_read", &why) &&
                         lib.get(api.inode_get_file_size, "sqfs_inode_get_file_size", &why);
  if (!ok && error) *error = "cannot read squashfs images: " + why;
  return ok ? &api : nullptr;
}

// The part of liblzo2 that reads LZO blocks, opened on the first squashfs image compressed with
// LZO: Debian's libsquashfs (squashfs-tools-ng 1.2) is built without LZO, whose library is GPL,
// while mksquashfs writes it and enroot asks for it by default (ENROOT_SQUASH_OPTIONS="-comp lzo
// -noD").
struct Liblzo2 {
  decltype(::__lzo_init_v2)* init;
  decltype(::lzo1x_decompress_safe)* decompress_safe;
};

const Liblzo2* liblzo2(std::string* error) {
  static support::LazyLibrary lib(ENVDOCTOR_LIBLZO2_SONAME);
  static Liblzo2 api;
  static std::string why;
  // lzo_init() is this call with the caller's type sizes; the library refuses sizes it was not
  // built for.
  static const bool ok =
      lib.get(api.init, "__lzo_init_v2", &why) && lib.get(api.decompress_safe, "lzo1x_decompress_safe", &why) &&
      (api.init(LZO_VERSION, (int)sizeof(short), (int)sizeof(int), (int)sizeof(long), (int)sizeof(lzo_uint32_t),
                (int)sizeof(lzo_uint), (int)lzo_sizeof_dict_t, (int)sizeof(char*), (int)sizeof(lzo_voidp),
                (int)sizeof(lzo_callback_t)) == LZO_E_OK ||
       (why = std::string(ENVDOCTOR_LIBLZO2_SONAME) + ": lzo_init failed", false));
  if (!ok && error) *error = why;
  return ok ? &api : nullptr;
}

// The names squashfs gives its compressor ids (the superblock's compression_id), as mksquashfs's
// -comp spells them.
const char* compressor_name(u16 id) {
  switch (id) {
    case SQFS_COMP_GZIP: return "gzip";
    case SQFS_COMP_LZMA: return "lzma";
    case SQFS_COMP_LZO: return "lzo";
    case SQFS_COMP_XZ: return "xz";
    case SQFS_COMP_LZ4: return "lz4";
    case SQFS_COMP_ZSTD: return "zstd";
    default: return nullptr;
  }
}

// An LZO decompressor in libsquashfs's own interface, which its readers (metadata, data blocks,
// fragments) call for every block. Every LZO1X variant mksquashfs's -Xalgorithm offers
// (lzo1x_1, _1_11, _1_12, _1_15, _999) writes LZO1X blocks, which lzo1x_decompress_safe reads, as
// the kernel's squashfs and unsquashfs do; the safe variant checks every input and output bound,
// so a hostile block is an error, never a read or write outside the buffers.
struct LzoDecompressor {
  sqfs_compressor_t base;  // first, so that a sqfs_compressor_t* is an LzoDecompressor*
  const Liblzo2* lzo;
  u32 block_size;

  static LzoDecompressor* of(const sqfs_compressor_t* c) {
    return reinterpret_cast<LzoDecompressor*>(const_cast<sqfs_compressor_t*>(c));
  }
  static void get_configuration(const sqfs_compressor_t* c, sqfs_compressor_config_t* cfg) {
    std::memset(cfg, 0, sizeof *cfg);
    cfg->id = SQFS_COMP_LZO;
    cfg->flags = SQFS_COMP_FLAG_UNCOMPRESS;
    cfg->block_size = of(c)->block_size;
  }
  // The options block (algorithm, level) matters only to a compressor; it is never read.
  static int write_options(sqfs_compressor_t*, sqfs_file_t*) { return SQFS_ERROR_UNSUPPORTED; }
  static int read_options(sqfs_compressor_t*, sqfs_file_t*) { return 0; }
  static sqfs_s32 do_block(sqfs_compressor_t* c, const sqfs_u8* in, sqfs_u32 size, sqfs_u8* out, sqfs_u32 outsize) {
    if (outsize >= 0x7FFFFFFF) return SQFS_ERROR_ARG_INVALID;
    lzo_uint len = outsize;
    if (of(c)->lzo->decompress_safe(in, size, out, &len, nullptr) != LZO_E_OK) return SQFS_ERROR_COMPRESSOR;
    return static_cast<sqfs_s32>(len);
  }
  static void destroy(sqfs_object_t* obj) { delete reinterpret_cast<LzoDecompressor*>(obj); }

  static sqfs_compressor_t* create(const Liblzo2& lzo, u32 block_size) {
    auto* d = new LzoDecompressor{};
    d->base.base.destroy = &destroy;
    d->base.base.copy = nullptr;
    d->base.get_configuration = &get_configuration;
    d->base.write_options = &write_options;
    d->base.read_options = &read_options;
    d->base.do_block = &do_block;
    d->lzo = &lzo;
    d->block_size = block_size;
    return &d->base;
  }
};

// The decompressor of the image's compressor: libsquashfs's own, or for LZO, which it may lack,
// liblzo2's. nullptr with `error` saying which compressor and why.
std::string unknown_compressor(u16 id) {
  return "its compressor id " + std::to_string(id) + " is none that squashfs defines (1 gzip to 6 zstd)";
}

sqfs_compressor_t* create_decompressor(const Libsquashfs& sq, u16 id, u32 block_size, std::string* error) {
  const char* name = compressor_name(id);
  if (!name) {
    *error = unknown_compressor(id);
    return nullptr;
  }
  sqfs_compressor_config_t cfg;
  sqfs_compressor_t* cmp = nullptr;
  int rc = sq.compressor_config_init(&cfg, static_cast<SQFS_COMPRESSOR>(id), block_size, SQFS_COMP_FLAG_UNCOMPRESS);
  if (rc == 0) rc = sq.compressor_create(&cfg, &cmp);
  if (rc == 0 && cmp) return cmp;
  if (id == SQFS_COMP_LZO) {
    std::string why;
    if (const Liblzo2* lzo = liblzo2(&why)) return LzoDecompressor::create(*lzo, block_size);
    *error = "its compressor is lzo, which needs " + std::string(ENVDOCTOR_LIBLZO2_SONAME) + ": " + why;
    return nullptr;
  }
  *error = std::string("its compressor, ") + name + ", is not supported by " + ENVDOCTOR_LIBSQUASHFS_SONAME;
  return nullptr;
}

// libsquashfs objects are released through their own destroy function (sqfs_destroy).
struct Destroy {
  void operator()(void* obj) const {
    if (obj) sqfs_destroy(obj);
  }
};
template <typename T>
using Owned = std::unique_ptr<T, Destroy>;

u64 le64(const unsigned char* p) {
  u64 v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A section of a file as a sqfs_file_t of its own: offsets relative to the section, reads past
// its end refused before they reach the file (libsquashfs trusts the superblock's offsets only as
// far as the file's size, and the section's size is that size here).
struct SectionFile {
  sqfs_file_t base;  // first, so that a sqfs_file_t* is a SectionFile*
  sqfs_file_t* file;
  u64 offset, size;

  static SectionFile* of(const sqfs_file_t* f) { return reinterpret_cast<SectionFile*>(const_cast<sqfs_file_t*>(f)); }
  static int read_at(sqfs_file_t* f, sqfs_u64 offset, void* buffer, size_t size) {
    SectionFile* s = of(f);
    if (offset > s->size || size > s->size - offset) return SQFS_ERROR_OUT_OF_BOUNDS;
    return s->file->read_at(s->file, s->offset + offset, buffer, size);
  }
  static int write_at(sqfs_file_t*, sqfs_u64, const void*, size_t) { return SQFS_ERROR_IO; }
  static sqfs_u64 get_size(const sqfs_file_t* f) { return of(f)->size; }
  static int truncate(sqfs_file_t*, sqfs_u64) { return SQFS_ERROR_IO; }
  static void destroy(sqfs_object_t* obj) {
    SectionFile* s = reinterpret_cast<SectionFile*>(obj);
    sqfs_destroy(s->file);
    delete s;
  }
};

// The file, or its section, opened read-only; nullptr when it cannot be opened or the section
// does not lie inside it.
sqfs_file_t* open_section(const Libsquashfs& sq, const std::string& path, const Section& section) {
  sqfs_file_t* file = sq.open_file(path.c_str(), SQFS_FILE_OPEN_READ_ONLY);
  if (!file || (section.offset == 0 && !section.size)) return file;
  u64 total = file->get_size(file);
  u64 size = section.size.value_or(total >= section.offset ? total - section.offset : 0);
  if (section.offset > total || size > total - section.offset) {
    sqfs_destroy(file);
    return nullptr;
  }
  auto* s = new SectionFile{};
  s->base.base.destroy = &SectionFile::destroy;
  s->base.base.copy = nullptr;
  s->base.read_at = &SectionFile::read_at;
  s->base.write_at = &SectionFile::write_at;
  s->base.get_size = &SectionFile::get_size;
  s->base.truncate = &SectionFile::truncate;
  s->file = file;
  s->offset = section.offset;
  s->size = size;
  return &s->base;
}

struct Node {
  std::string path;
  const sqfs_tree_node_t* node;
};

// Pre-order: a directory before what it holds, as a tar stream lists them.
void flatten(const sqfs_tree_node_t* node, const std::string& path, std::vector<Node>& out) {
  for (const sqfs_tree_node_t* child = node->children; child; child = child->next) {
    std::string p = path.empty() ? reinterpret_cast<const char*>(child->name)
                                 : path + "/" + reinterpret_cast<const char*>(child->name);
    out.push_back({p, child});
    flatten(child, p, out);
  }
}

class SquashfsReader : public EntryReader {
 public:
  bool open(const Libsquashfs& sq, const std::string& path, const Section& section, std::string* error) {
    sq_ = &sq;
    auto fail = [&](const std::string& what) {
      *error = path + ": " + what;
      return false;
    };
    file_.reset(open_section(sq, path, section));
    if (!file_)
      return fail(section.offset == 0 && !section.size ? "cannot open" : "cannot open its file system's section");
    // The compressor id first, from the raw superblock: libsquashfs refuses an id it does not
    // know as a bad superblock, which would hide what the image really asks for.
    unsigned char raw[sizeof(sqfs_super_t)];
    if (file_->read_at(file_.get(), 0, raw, sizeof raw) == 0 && std::memcmp(raw, "hsqs", 4) == 0) {
      u16 id = static_cast<u16>(raw[20] | raw[21] << 8);  // sqfs_super_t.compression_id, little-endian
      if (!compressor_name(id)) return fail(unknown_compressor(id));
    }
    std::string why;
    if (sq.super_read(&super_, file_.get()) != 0) return fail("not a squashfs image (bad superblock)");
    compressor_.reset(create_decompressor(sq, super_.compression_id, super_.block_size, &why));
    if (!compressor_) return fail(why);
    ids_.reset(sq.id_table_create(0));
    if (!ids_ || sq.id_table_read(ids_.get(), file_.get(), &super_, compressor_.get()) != 0)
      return fail("unreadable id table");
    dirs_.reset(sq.dir_reader_create(&super_, compressor_.get(), file_.get(), 0));
    data_.reset(sq.data_reader_create(file_.get(), super_.block_size, compressor_.get(), 0));
    if (!dirs_ || !data_ || sq.load_fragment_table(data_.get(), &super_) != 0) return fail("unreadable tables");
    sqfs_tree_node_t* root = nullptr;
    if (sq.get_full_hierarchy(dirs_.get(), ids_.get(), nullptr, SQFS_TREE_NO_DEVICES, &root) != 0 || !root)
      return fail("unreadable directory table");
    tree_ = std::unique_ptr<sqfs_tree_node_t, void (*)(sqfs_tree_node_t*)>(root, sq.dir_tree_destroy);
    flatten(root, "", nodes_);
    return true;
  }

  bool next(RawEntry& e, std::string*) override {
    if (at_ >= nodes_.size()) return false;
    current_ = &nodes_[at_++];
    offset_ = 0;
    const sqfs_inode_generic_t* inode = current_->node->inode;
    e.path = current_->path;
    e.mode = inode->base.mode & 07777;
    e.size = 0;
    e.link.clear();
    switch (inode->base.type) {
      case SQFS_INODE_FILE:
      case SQFS_INODE_EXT_FILE: {
        sqfs_u64 size = 0;
        sq_->inode_get_file_size(inode, &size);
        e.type = EntryType::kFile;
        e.size = size;
        break;
      }
      case SQFS_INODE_DIR:
      case SQFS_INODE_EXT_DIR: e.type = EntryType::kDirectory; break;
      case SQFS_INODE_SLINK:
      case SQFS_INODE_EXT_SLINK: {
        u32 n =
            inode->base.type == SQFS_INODE_SLINK ? inode->data.slink.target_size : inode->data.slink_ext.target_size;
        n = std::min<u32>(n, static_cast<u32>(inode->payload_bytes_used));
        e.type = EntryType::kSymlink;
        e.link.assign(reinterpret_cast<const char*>(inode->extra), n);
        break;
      }
      default: e.type = EntryType::kOther;
    }
    size_ = e.size;
    return true;
  }

  i64 read(void* buffer, size_t n, std::string* error) override {
    if (!current_ || offset_ >= size_) return 0;
    u32 want = static_cast<u32>(std::min<u64>({n, size_ - offset_, 1u << 30}));
    sqfs_s32 got = sq_->data_reader_read(data_.get(), current_->node->inode, offset_, buffer, want);
    if (got < 0) {
      *error = current_->path + ": unreadable data block";
      return -1;
    }
    offset_ += static_cast<u64>(got);
    return got;
  }

 private:
  const Libsquashfs* sq_ = nullptr;
  Owned<sqfs_file_t> file_;
  sqfs_super_t super_{};
  Owned<sqfs_compressor_t> compressor_;
  Owned<sqfs_id_table_t> ids_;
  Owned<sqfs_dir_reader_t> dirs_;
  Owned<sqfs_data_reader_t> data_;
  std::unique_ptr<sqfs_tree_node_t, void (*)(sqfs_tree_node_t*)> tree_{nullptr, nullptr};
  std::vector<Node> nodes_;
  size_t at_ = 0;
  const Node* current_ = nullptr;
  u64 offset_ = 0, size_ = 0;
};

}  // namespace

bool is_squashfs(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char magic[4] = {};
  bool ok = std::fread(magic, 1, 4, f) == 4 && std::memcmp(magic, "hsqs", 4) == 0;
  std::fclose(f);
  return ok;
}

std::optional<std::string> squashfs_key(const std::string& path, const Section& section, std::string_view salt,
                                        ReadCounter* counter, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st;
  unsigned char super[96];
  bool ok = ::fstat(fd, &st) == 0;
  u64 file_size = ok ? static_cast<u64>(st.st_size) : 0;
  u64 size = section.size.value_or(file_size >= section.offset ? file_size - section.offset : 0);
  ok = ok && section.offset <= file_size && size <= file_size - section.offset && size >= sizeof super &&
       ::pread(fd, super, sizeof super, static_cast<off_t>(section.offset)) == sizeof super &&
       std::memcmp(super, "hsqs", 4) == 0;
  // The file's identity, then its superblock and metadata tables (inodes, directories,
  // fragments, ids: where every file is and how large, not the data blocks): another file, or
  // this one changed, is another key, and hashing the metadata alone costs a few megabytes where
  // the whole image would cost gigabytes on every run.
  support::Digest digest(support::Digest::Kind::kSha256);
  if (ok) {
    const u64 identity[] = {static_cast<u64>(st.st_dev),
                            static_cast<u64>(st.st_ino),
                            static_cast<u64>(st.st_size),
                            static_cast<u64>(st.st_mtim.tv_sec),
                            static_cast<u64>(st.st_mtim.tv_nsec),
                            section.offset,
                            size};
    digest.update(salt.data(), salt.size());
    digest.update(identity, sizeof identity);
    digest.update(super, sizeof super);
    u64 bytes_used = le64(super + 40), inode_table = le64(super + 64);
    u64 end = std::min<u64>(bytes_used, size);
    std::vector<unsigned char> chunk(1 << 20);
    for (u64 at = inode_table; ok && at < end;) {
      ssize_t n =
          ::pread(fd, chunk.data(), std::min<u64>(chunk.size(), end - at), static_cast<off_t>(section.offset + at));
      if (n <= 0) {
        ok = false;
        break;
      }
      digest.update(chunk.data(), static_cast<size_t>(n));
      if (counter) counter->bytes += static_cast<u64>(n);
      at += static_cast<u64>(n);
    }
  }
  ::close(fd);
  if (!ok) {
    *error = path + (section.offset == 0 && !section.size ? ": not a squashfs image"
                                                          : ": its partition holds no squashfs image");
    return std::nullopt;
  }
  std::vector<u8> sum = digest.finish();
  if (sum.empty()) {
    support::digests_available(error);
    return std::nullopt;
  }
  return "sqsh-" + support::hex(sum);
}

std::unique_ptr<EntryReader> open_squashfs(const std::string& path, const Section& section, std::string* error) {
  const Libsquashfs* sq = libsquashfs(error);
  if (!sq) return nullptr;
  auto reader = std::make_unique<SquashfsReader>();
  if (!reader->open(*sq, path, section, error)) return nullptr;
  return reader;
}

}  // namespace envdoctor::image
