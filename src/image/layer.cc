#include "image/layer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/xdg.h"

namespace envdoctor::image {

namespace {

namespace fs = std::filesystem;

constexpr const char* kIndex = "index";
constexpr int kFields = 7;

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool starts_with(const std::string& s, std::string_view head) { return s.compare(0, head.size(), head) == 0; }

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
std::string dirname_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

bool has_component_ending(const std::string& path, std::string_view tail) {
  for (size_t pos = 0; pos <= path.size();) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(pos, slash - pos);
    if (ends_with(part, tail) && slash < path.size()) return true;
    pos = slash + 1;
  }
  return false;
}

// The index: every field of every entry, NUL-separated (no path or link target holds a NUL), so
// that any byte a layer puts in a name survives.
std::string encode(const std::vector<LayerEntry>& entries) {
  std::string out;
  for (const LayerEntry& e : entries) {
    for (const std::string& field :
         {std::to_string(static_cast<int>(e.kind)), e.path, std::to_string(e.mode), std::to_string(e.size), e.link,
          std::to_string(e.file), std::string(e.content ? "1" : "0")}) {
      out += field;
      out += '\0';
    }
  }
  return out;
}

std::optional<std::vector<LayerEntry>> decode(const std::string& text) {
  std::vector<std::string> fields;
  for (size_t pos = 0; pos < text.size();) {
    size_t nul = text.find('\0', pos);
    if (nul == std::string::npos) return std::nullopt;
    fields.push_back(text.substr(pos, nul - pos));
    pos = nul + 1;
  }
  if (fields.size() % kFields != 0) return std::nullopt;
  std::vector<LayerEntry> out;
  for (size_t i = 0; i < fields.size(); i += kFields) {
    LayerEntry e;
    char* end = nullptr;
    long kind = std::strtol(fields[i].c_str(), &end, 10);
    if (*end || kind < 0 || kind > static_cast<long>(LayerEntryKind::kOpaque)) return std::nullopt;
    e.kind = static_cast<LayerEntryKind>(kind);
    e.path = fields[i + 1];
    e.mode = static_cast<u32>(std::strtoul(fields[i + 2].c_str(), nullptr, 10));
    e.size = std::strtoull(fields[i + 3].c_str(), nullptr, 10);
    e.link = fields[i + 4];
    e.file = std::strtoll(fields[i + 5].c_str(), nullptr, 10);
    e.content = fields[i + 6] == "1";
    out.push_back(std::move(e));
  }
  return out;
}

// Writes the current entry's data into `path`: all of it when `keep` says so or it starts with
// the ELF magic, else a sparse file of `size` bytes (what remains is skipped by the reader).
bool store_file(EntryReader& reader, const std::string& path, const std::string& name, u64 size, u32 mode, bool keep,
                bool* kept, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  std::vector<char> buffer(1 << 16);
  size_t have = 0;
  bool ok = true;
  // The first bytes, for the magic.
  while (have < 4 && size > have) {
    i64 n = reader.read(buffer.data() + have, 4 - have, error);
    if (n < 0) ok = false;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  *kept = keep || (have == 4 && std::memcmp(buffer.data(),
                                            "\x7f"
                                            "ELF",
                                            4) == 0);
  if (ok && *kept) {
    ok = ::write(fd, buffer.data(), have) == static_cast<ssize_t>(have);
    for (i64 n; ok && (n = reader.read(buffer.data(), buffer.size(), error)) != 0;)
      ok = n > 0 && ::write(fd, buffer.data(), static_cast<size_t>(n)) == n;
    if (!ok && error->empty()) *error = path + ": " + std::strerror(errno);
  } else if (ok) {
    ok = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
    if (!ok) *error = path + ": " + std::strerror(errno);
  }
  // Readable by its owner whatever the layer says (the model reads it); no set-id bits.
  ::fchmod(fd, (mode & 0777) | 0400);
  ::close(fd);
  if (!ok) *error = name + ": " + *error;
  return ok;
}

// One raw entry of the stream as the layer records it (OCI image spec, "Whiteouts").
bool classify(const RawEntry& raw, LayerEntry& e, std::vector<std::string>& problems) {
  if (!normalize_entry_path(raw.path, &e.path)) {
    problems.push_back(raw.path + ": left out, the path leaves the root");
    return false;
  }
  e.mode = raw.mode;
  std::string base = basename_of(e.path);
  if (starts_with(base, ".wh.")) {
    if (base == ".wh..wh..opq") {
      e.kind = LayerEntryKind::kOpaque;
      e.path = dirname_of(e.path);
      return true;
    }
    if (starts_with(base, ".wh..wh.")) return false;  // aufs' own bookkeeping (.wh..wh.plnk), not a whiteout
    std::string dir = dirname_of(e.path);
    e.kind = LayerEntryKind::kWhiteout;
    e.path = (dir.empty() ? "" : dir + "/") + base.substr(4);
    return true;
  }
  if (e.path.empty()) return false;  // the root directory itself
  switch (raw.type) {
    case EntryType::kFile:
      e.kind = LayerEntryKind::kFile;
      e.size = raw.size;
      return true;
    case EntryType::kDirectory: e.kind = LayerEntryKind::kDirectory; return true;
    case EntryType::kSymlink:
      e.kind = LayerEntryKind::kSymlink;
      e.link = raw.link;
      return true;
    case EntryType::kHardlink:
      e.kind = LayerEntryKind::kHardlink;
      if (!normalize_entry_path(raw.link, &e.link) || e.link.empty()) {
        problems.push_back(e.path + ": left out, a hard link to " + raw.link + " outside the root");
        return false;
      }
      return true;
    case EntryType::kOther: return false;  // devices, FIFOs, sockets: nothing the model reads
  }
  return false;
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace

// v4: layers keep site.py, patchlevel.h, the customize modules and editable installs' files whole,
// which an older layer holds sparse (kept_by_name).
std::string cache_root() { return support::xdg_base("XDG_CACHE_HOME", ".cache") + "/envdoctor/images-v4"; }

bool kept_by_name(const std::string& path) {
  std::string base = basename_of(path);
  if (base == "__init__.py" || base == "pyvenv.cfg" || base == "version.json" || ends_with(base, ".pth") ||
      ends_with(base, ".egg-info"))
    return true;
  // The interpreter's own files that sys.path is read from without running it
  // (python/site_layout.h): its site.py, which Debian and Fedora patch, and patchlevel.h's PY_VERSION.
  if (base == "site.py" || (base == "patchlevel.h" && path.find("include/python") != std::string::npos)) return true;
  // The customize modules site.py would run, read to tell Debian's own from the image's.
  if (base == "sitecustomize.py" || base == "usercustomize.py") return true;
  // An editable install's .egg-link and the finder its .pth imports (python/editable.h).
  if (ends_with(base, ".egg-link") ||
      ((starts_with(base, "__editable__") || starts_with(base, "_editable_impl_")) && ends_with(base, ".py")))
    return true;
  if (has_component_ending(path, ".dist-info") || has_component_ending(path, ".egg-info") ||
      has_component_ending(path, "conda-meta"))
    return true;
  return starts_with(path, "var/lib/dpkg/") || path == "etc/ld.so.cache" || path == "etc/ld.so.conf" ||
         starts_with(path, "etc/ld.so.conf.d/") || path == "etc/environment" || path == "etc/os-release" ||
         path == "usr/lib/os-release" || starts_with(path, ".singularity.d/env/") || path == "environment";
}

std::optional<Layer> load_cached_layer(const std::string& cache, const std::string& key, std::string* error,
                                       CacheLease* lease) {
  std::string dir = cache + "/layers/" + key;
  if (lease && !lease->hold(dir + "/entry")) return std::nullopt;
  std::ifstream in(dir + "/" + kIndex, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  std::optional<std::vector<LayerEntry>> entries = decode(text.str());
  if (!entries) {
    *error = dir + ": damaged index (remove the directory to read the layer again)";
    return std::nullopt;
  }
  Layer layer;
  layer.dir = dir;
  layer.entries = std::move(*entries);
  std::ifstream problems(dir + "/problems", std::ios::binary);
  for (std::string line; std::getline(problems, line);) layer.problems.push_back(line);
  return layer;
}

namespace {

// Whether what `reader` read is what the image names: false with `error` saying which digest
// differs.
bool digests_hold(EntryReader& reader, const LayerDigests& expected, std::string* error) {
  if (expected.stored.empty() && expected.content.empty()) return true;
  std::optional<EntryReader::Digests> got = reader.digests(error);
  if (!got) return false;
  auto differs = [&](const std::string& want, const std::string& have, const char* what, const char* named) {
    if (want.empty() || have == want) return false;
    *error = std::string(what) + " is " + (have.empty() ? "unknown" : have) + ", not the " + named + " " + want +
             " the image names it by: the image is damaged or was altered, and nothing of it was cached";
    return true;
  };
  return !differs(expected.stored, got->stored, "its stored content", "digest") &&
         !differs(expected.content, got->content, "its uncompressed content", "diff_id");
}

}  // namespace

std::optional<Layer> cache_layer(const std::string& cache, const std::string& key, EntryReader& reader,
                                 const LayerDigests& expected, std::string* error, CacheLease* lease) {
  std::error_code ec;
  fs::create_directories(cache + "/layers", ec);
  std::ostringstream tmp_name;
  tmp_name << cache << "/layers/.tmp-" << key << "-" << ::getpid() << "-" << std::this_thread::get_id();
  std::string tmp = tmp_name.str();
  fs::remove_all(tmp, ec);
  if (!fs::create_directories(tmp + "/files", ec)) {
    *error = tmp + ": " + ec.message();
    return std::nullopt;
  }
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } cleanup{tmp};

  Layer layer;
  RawEntry raw;
  std::string why;
  for (i64 n = 0; reader.next(raw, &why); ++n) {
    LayerEntry e;
    if (!classify(raw, e, layer.problems)) continue;
    if (e.kind == LayerEntryKind::kFile) {
      e.file = n;
      if (!store_file(reader, tmp + "/files/" + std::to_string(n), e.path, e.size, e.mode, kept_by_name(e.path),
                      &e.content, &why))
        break;
    }
    layer.entries.push_back(std::move(e));
  }
  if (!why.empty() || !digests_hold(reader, expected, &why)) {
    *error = why;
    return std::nullopt;
  }
  std::string problems;
  for (const std::string& p : layer.problems) problems += p + "\n";
  if (!write_text(tmp + "/" + kIndex, encode(layer.entries)) || !write_text(tmp + "/problems", problems)) {
    *error = tmp + ": cannot write the layer's index";
    return std::nullopt;
  }
  std::string dir = cache + "/layers/" + key;
  // Its marker (cache.h), held from before the rename so that no eviction takes it meanwhile.
  CacheWriteLock writing(cache);
  if (!write_marker(tmp + "/entry", marker_text(disk_bytes(tmp, true)), lease)) {
    *error = tmp + ": cannot write the layer's marker";
    return std::nullopt;
  }
  if (std::rename(tmp.c_str(), dir.c_str()) != 0) {
    int why = errno;
    // Another process cached it meanwhile: theirs is as good.
    if (std::optional<Layer> theirs = load_cached_layer(cache, key, error, lease)) return theirs;
    *error = dir + ": " + std::strerror(why);
    return std::nullopt;
  }
  cleanup.dir.clear();
  layer.dir = dir;
  return layer;
}

}  // namespace envdoctor::image
