#include "image/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "support/digest.h"
#include "support/lazy_library.h"
#include "support/text.h"

namespace envdoctor::image {

namespace {

// The part of libarchive the image reader uses, opened on the first image (see LazyLibrary).
struct Libarchive {
  decltype(::archive_read_new)* read_new;
  decltype(::archive_read_free)* read_free;
  decltype(::archive_read_support_filter_all)* support_filter_all;
  decltype(::archive_read_support_format_tar)* support_format_tar;
  decltype(::archive_read_support_format_raw)* support_format_raw;
  decltype(::archive_read_set_read_callback)* set_read_callback;
  decltype(::archive_read_set_skip_callback)* set_skip_callback;
  decltype(::archive_read_set_callback_data)* set_callback_data;
  decltype(::archive_read_open1)* open1;
  decltype(::archive_read_next_header)* next_header;
  decltype(::archive_read_data)* read_data;
  decltype(::archive_error_string)* error_string;
  decltype(::archive_entry_pathname)* entry_pathname;
  decltype(::archive_entry_filetype)* entry_filetype;
  decltype(::archive_entry_perm)* entry_perm;
  decltype(::archive_entry_size)* entry_size;
  decltype(::archive_entry_symlink)* entry_symlink;
  decltype(::archive_entry_hardlink)* entry_hardlink;
};

const Libarchive* libarchive(std::string* error) {
  static support::LazyLibrary lib(ENVDOCTOR_LIBARCHIVE_SONAME);
  static Libarchive api;
  static std::string why;
  static const bool ok =
      lib.get(api.read_new, "archive_read_new", &why) && lib.get(api.read_free, "archive_read_free", &why) &&
      lib.get(api.support_filter_all, "archive_read_support_filter_all", &why) &&
      lib.get(api.support_format_tar, "archive_read_support_format_tar", &why) &&
      lib.get(api.support_format_raw, "archive_read_support_format_raw", &why) &&
      lib.get(api.set_read_callback, "archive_read_set_read_callback", &why) &&
      lib.get(api.set_skip_callback, "archive_read_set_skip_callback", &why) &&
      lib.get(api.set_callback_data, "archive_read_set_callback_data", &why) &&
      lib.get(api.open1, "archive_read_open1", &why) && lib.get(api.next_header, "archive_read_next_header", &why) &&
      lib.get(api.read_data, "archive_read_data", &why) && lib.get(api.error_string, "archive_error_string", &why) &&
      lib.get(api.entry_pathname, "archive_entry_pathname", &why) &&
      lib.get(api.entry_filetype, "archive_entry_filetype", &why) &&
      lib.get(api.entry_perm, "archive_entry_perm", &why) && lib.get(api.entry_size, "archive_entry_size", &why) &&
      lib.get(api.entry_symlink, "archive_entry_symlink", &why) &&
      lib.get(api.entry_hardlink, "archive_entry_hardlink", &why);
  if (!ok && error) *error = "cannot read container images: " + why;
  return ok ? &api : nullptr;
}

constexpr size_t kChunk = 1 << 20;

// A file read in chunks, every byte counted; skips seek instead of reading.
struct FileClient {
  int fd = -1;
  std::vector<char> buffer = std::vector<char>(kChunk);
  ReadCounter* counter = nullptr;
  std::string error;
  ~FileClient() {
    if (fd >= 0) ::close(fd);
  }
  i64 read(const void** data) {
    ssize_t n;
    do n = ::read(fd, buffer.data(), buffer.size());
    while (n < 0 && errno == EINTR);
    if (n < 0) {
      error = std::strerror(errno);
      return -1;
    }
    if (counter) counter->bytes += static_cast<u64>(n);
    *data = buffer.data();
    return n;
  }
  i64 skip(i64 request) {
    struct stat st;
    off_t at = ::lseek(fd, 0, SEEK_CUR);
    if (at < 0 || ::fstat(fd, &st) != 0 || request <= 0) return 0;
    i64 step = std::min<i64>(request, st.st_size > at ? st.st_size - at : 0);
    return ::lseek(fd, step, SEEK_CUR) < 0 ? 0 : step;
  }
};

std::unique_ptr<FileClient> open_client(const std::string& path, ReadCounter* counter, std::string* error) {
  auto client = std::make_unique<FileClient>();
  client->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  client->counter = counter;
  if (client->fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  return client;
}

la_ssize_t file_read(struct archive*, void* data, const void** buffer) {
  return static_cast<FileClient*>(data)->read(buffer);
}
la_int64_t file_skip(struct archive*, void* data, la_int64_t request) {
  return static_cast<FileClient*>(data)->skip(request);
}

// The stored bytes of a layer, digested as they go by.
struct ChunkClient {
  ChunkSource source;
  std::string error;
  support::Digest digest{support::Digest::Kind::kSha256};
};
la_ssize_t chunk_read(struct archive*, void* data, const void** buffer) {
  auto* client = static_cast<ChunkClient*>(data);
  i64 n = client->source(buffer, &client->error);
  if (n > 0) client->digest.update(*buffer, static_cast<size_t>(n));
  return n;
}

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

ArchivePtr new_reader(const Libarchive& la) {
  ArchivePtr a(la.read_new(), la.read_free);
  if (a) {
    la.support_filter_all(a.get());
    la.support_format_tar(a.get());
  }
  return a;
}

EntryType entry_type(unsigned filetype, bool hardlink) {
  if (hardlink) return EntryType::kHardlink;
  switch (filetype) {
    case AE_IFREG: return EntryType::kFile;
    case AE_IFDIR: return EntryType::kDirectory;
    case AE_IFLNK: return EntryType::kSymlink;
    default: return EntryType::kOther;
  }
}

// A layer as two readers: the first undoes the compression of the stored bytes (its one entry
// is the whole stream: libarchive's raw format), the second reads that stream as tar. Between
// them the stream is digested, so that a layer is checked against its diff_id in the same pass
// that reads it.
struct LayerPipe {
  const Libarchive* la = nullptr;
  ChunkClient client;
  ArchivePtr raw{nullptr, nullptr};
  std::vector<char> buffer = std::vector<char>(kChunk);
  support::Digest content{support::Digest::Kind::kSha256};
  std::string error;

  la_ssize_t pull(const void** data) {
    la_ssize_t n = la->read_data(raw.get(), buffer.data(), buffer.size());
    if (n < 0) {
      const char* why = la->error_string(raw.get());
      error = !client.error.empty() ? client.error : why ? why : "unreadable compressed stream";
      return -1;
    }
    if (n > 0) content.update(buffer.data(), static_cast<size_t>(n));
    *data = buffer.data();
    return n;
  }
};
la_ssize_t pipe_read(struct archive*, void* data, const void** buffer) {
  return static_cast<LayerPipe*>(data)->pull(buffer);
}

// One layer read entry by entry.
class TarReader : public EntryReader {
 public:
  TarReader(ArchivePtr a, std::shared_ptr<LayerPipe> pipe) : la_(*pipe->la), a_(std::move(a)), pipe_(std::move(pipe)) {}

  bool next(RawEntry& e, std::string* error) override {
    struct archive_entry* entry = nullptr;
    int rc = la_.next_header(a_.get(), &entry);
    if (rc == ARCHIVE_EOF) return false;
    if (rc < ARCHIVE_WARN) return fail(error);
    const char* name = la_.entry_pathname(entry);
    const char* hard = la_.entry_hardlink(entry);
    const char* sym = la_.entry_symlink(entry);
    e.path = name ? name : "";
    e.type = entry_type(la_.entry_filetype(entry), hard != nullptr);
    e.mode = la_.entry_perm(entry);
    i64 size = la_.entry_size(entry);
    e.size = size > 0 && e.type == EntryType::kFile ? static_cast<u64>(size) : 0;
    e.link = hard ? hard : sym ? sym : "";
    return true;
  }

  i64 read(void* buffer, size_t n, std::string* error) override {
    la_ssize_t got = la_.read_data(a_.get(), buffer, n);
    if (got < 0) return fail(error), -1;
    return got;
  }

  // The rest of both streams read (tar's end-of-archive blocks are not all of a layer), then
  // both digests.
  std::optional<Digests> digests(std::string* error) override {
    const void* data;
    for (la_ssize_t n; (n = pipe_->pull(&data)) != 0;)
      if (n < 0) return *error = pipe_->error, std::nullopt;
    for (i64 n; (n = chunk_read(nullptr, &pipe_->client, &data)) != 0;)
      if (n < 0) return *error = pipe_->client.error, std::nullopt;
    std::vector<u8> stored = pipe_->client.digest.finish(), content = pipe_->content.finish();
    if (stored.empty() || content.empty()) {
      support::digests_available(error);
      return std::nullopt;
    }
    return Digests{"sha256:" + support::hex(stored), "sha256:" + support::hex(content)};
  }

 private:
  bool fail(std::string* error) {
    const char* why = la_.error_string(a_.get());
    *error = !pipe_->error.empty() ? pipe_->error : why ? why : "unreadable tar stream";
    return false;
  }
  const Libarchive& la_;
  ArchivePtr a_;
  std::shared_ptr<LayerPipe> pipe_;
};

// `a` opened over `client` with its callbacks; false with `error` set.
template <typename Client>
bool open_with(const Libarchive& la, struct archive* a, Client* client, archive_read_callback* read,
               archive_skip_callback* skip, std::string* error) {
  la.set_callback_data(a, client);
  la.set_read_callback(a, read);
  if (skip) la.set_skip_callback(a, skip);
  if (la.open1(a) != ARCHIVE_OK) {
    const char* why = la.error_string(a);
    *error = !client->error.empty() ? client->error : why ? why : "not a tar archive";
    return false;
  }
  return true;
}

// The outer archive opened and advanced to member `name`; nullptr with `error` set.
struct PositionedOuter {
  std::unique_ptr<FileClient> client;
  ArchivePtr a{nullptr, nullptr};
  struct archive_entry* entry = nullptr;
};

bool same_member(std::string a, std::string b) {
  std::string na, nb;
  return normalize_entry_path(a, &na) && normalize_entry_path(b, &nb) && na == nb;
}

std::unique_ptr<PositionedOuter> position(const Libarchive& la, const std::string& path, const std::string& name,
                                          ReadCounter* counter, std::string* error) {
  auto p = std::make_unique<PositionedOuter>();
  p->client = open_client(path, counter, error);
  if (!p->client) return nullptr;
  p->a = new_reader(la);
  if (!p->a || !open_with(la, p->a.get(), p->client.get(), file_read, file_skip, error)) {
    *error = path + ": " + *error;
    return nullptr;
  }
  for (;;) {
    int rc = la.next_header(p->a.get(), &p->entry);
    if (rc == ARCHIVE_EOF) {
      *error = path + ": no member " + name;
      return nullptr;
    }
    if (rc < ARCHIVE_WARN) {
      const char* why = la.error_string(p->a.get());
      *error = path + ": " + (why ? why : "unreadable tar archive");
      return nullptr;
    }
    const char* member = la.entry_pathname(p->entry);
    if (member && same_member(member, name) && la.entry_filetype(p->entry) == AE_IFREG) return p;
  }
}

}  // namespace

bool normalize_entry_path(const std::string& raw, std::string* out) {
  if (raw.find('\0') != std::string::npos) return false;
  std::string normal;
  size_t pos = 0;
  while (pos <= raw.size()) {
    size_t slash = raw.find('/', pos);
    if (slash == std::string::npos) slash = raw.size();
    std::string_view part(raw.data() + pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return false;
    if (!normal.empty()) normal += '/';
    normal += part;
  }
  *out = std::move(normal);
  return true;
}

bool libarchive_available(std::string* error) { return libarchive(error) != nullptr; }

std::unique_ptr<EntryReader> open_tar_stream(ChunkSource source, std::string* error) {
  const Libarchive* la = libarchive(error);
  if (!la) return nullptr;
  auto pipe = std::make_shared<LayerPipe>();
  pipe->la = la;
  pipe->client.source = std::move(source);
  pipe->raw = ArchivePtr(la->read_new(), la->read_free);
  if (!pipe->raw) return *error = "out of memory", nullptr;
  la->support_filter_all(pipe->raw.get());
  la->support_format_raw(pipe->raw.get());
  if (!open_with(*la, pipe->raw.get(), &pipe->client, chunk_read, nullptr, error)) return nullptr;
  struct archive_entry* whole = nullptr;
  if (la->next_header(pipe->raw.get(), &whole) != ARCHIVE_OK) {
    const char* why = la->error_string(pipe->raw.get());
    *error = !pipe->client.error.empty() ? pipe->client.error : why ? why : "an empty layer";
    return nullptr;
  }
  ArchivePtr tar(la->read_new(), la->read_free);
  if (!tar) return *error = "out of memory", nullptr;
  la->support_format_tar(tar.get());
  if (!open_with(*la, tar.get(), pipe.get(), pipe_read, nullptr, error)) return nullptr;
  return std::make_unique<TarReader>(std::move(tar), std::move(pipe));
}

ChunkSource file_source(const std::string& path, ReadCounter* counter, std::string* error) {
  std::shared_ptr<FileClient> client = open_client(path, counter, error);
  if (!client) return nullptr;
  return [client](const void** data, std::string* why) {
    i64 n = client->read(data);
    if (n < 0) *why = client->error;
    return n;
  };
}

std::optional<std::string> OuterArchive::read_member(const std::string& name, u64 limit, std::string* error) const {
  const Libarchive* la = libarchive(error);
  if (!la) return std::nullopt;
  std::unique_ptr<PositionedOuter> p = position(*la, path_, name, counter_, error);
  if (!p) return std::nullopt;
  i64 size = la->entry_size(p->entry);
  if (size < 0 || static_cast<u64>(size) > limit) {
    *error = path_ + ": " + name + " is larger than " + std::to_string(limit) + " bytes";
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(size), '\0');
  size_t have = 0;
  while (have < text.size()) {
    la_ssize_t got = la->read_data(p->a.get(), text.data() + have, text.size() - have);
    if (got <= 0) {
      *error = path_ + ": " + name + ": truncated";
      return std::nullopt;
    }
    have += static_cast<size_t>(got);
  }
  return text;
}

bool OuterArchive::has_member(const std::string& name) const {
  std::string error;
  const Libarchive* la = libarchive(&error);
  return la && position(*la, path_, name, nullptr, &error) != nullptr;
}

std::unique_ptr<EntryReader> OuterArchive::open_member_tar(const std::string& name, std::string* error) const {
  const Libarchive* la = libarchive(error);
  if (!la) return nullptr;
  std::shared_ptr<PositionedOuter> outer = position(*la, path_, name, counter_, error);
  if (!outer) return nullptr;
  auto buffer = std::make_shared<std::vector<char>>(kChunk);
  ChunkSource source = [la, outer, buffer](const void** data, std::string* why) -> i64 {
    la_ssize_t got = la->read_data(outer->a.get(), buffer->data(), buffer->size());
    if (got < 0) {
      const char* e = la->error_string(outer->a.get());
      *why = e ? e : "unreadable member";
      return -1;
    }
    *data = buffer->data();
    return got;
  };
  std::unique_ptr<EntryReader> reader = open_tar_stream(std::move(source), error);
  if (!reader) *error = path_ + ": " + name + ": " + *error;
  return reader;
}

}  // namespace envdoctor::image
