#include "loader/object_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <vector>

namespace envdoctor::loader {

namespace fs = std::filesystem;

std::string ObjectStore::host_path(const std::string& path) const { return root_.host(path); }

std::shared_ptr<ObjectStore> ObjectStore::layered(std::shared_ptr<ObjectStore> disk) {
  auto out = std::make_shared<ObjectStore>(disk->root());
  std::lock_guard lock(disk->mu_);
  out->links_ = disk->links_;
  out->bindings_.copy_from(disk->bindings_);
  // A layer on a layer reads the disk through the bottom one, and keeps the changes below it, with
  // the files they gave: the bindings learnt name them by address, so they live as long as it.
  out->overlays_ = disk->overlays_;
  out->removed_ = disk->removed_;
  out->keys_ = disk->keys_;
  out->simulated_ = disk->simulated_;
  out->retired_ = disk->retired_;
  out->disk_ = disk->disk_ ? disk->disk_ : disk;
  return out;
}

std::string ObjectStore::simulation_key(const std::string& path) {
  // Callers hold mu_. The loader spells one file many ways ("lib/../x/libfoo.so", a symlinked
  // directory): a simulated change is keyed by the path with every existing component resolved.
  auto it = keys_.find(path);
  if (it != keys_.end()) return it->second;
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(host_path(path), ec);
  std::string key = ec ? path : canonical.string();
  keys_.emplace(path, key);
  return key;
}

void ObjectStore::add_overlay(const std::string& path, std::shared_ptr<const MappedFile> file) {
  std::lock_guard lock(mu_);
  std::string key = simulation_key(path);
  overlays_[key] = std::move(file);
  removed_.erase(key);
  retire(key);
}

void ObjectStore::add_removal(const std::string& path) {
  std::lock_guard lock(mu_);
  std::string key = simulation_key(path);
  removed_[key] = true;
  overlays_.erase(key);
  retire(key);
}

void ObjectStore::retire(const std::string& key) {
  // Kept alive, not freed: the BindingCache remembers providers by address, and a freed
  // ElfFile's address could come back as another file's.
  auto it = simulated_.find(key);
  if (it == simulated_.end()) return;
  retired_.push_back(std::move(it->second));
  simulated_.erase(it);
}

void ObjectStore::add_link(const std::string& path, const std::string& target) {
  std::string dir = path.substr(0, path.rfind('/') + 1);
  std::lock_guard lock(mu_);
  links_[path] = target.starts_with('/') ? target : dir + target;
  cache_.erase(path);
}

std::shared_ptr<const OpenResult> ObjectStore::open(const std::string& path) {
  std::string key, target;
  {
    std::lock_guard lock(mu_);
    if (auto link = links_.find(path); link != links_.end()) target = link->second;
  }
  if (!target.empty()) return open(target);
  {
    std::lock_guard lock(mu_);
    if (!overlays_.empty() || !removed_.empty()) {
      key = simulation_key(path);
      if (removed_.count(key) || overlays_.count(key)) {
        auto it = simulated_.find(key);
        if (it != simulated_.end()) return it->second;
      } else {
        key.clear();
      }
    }
    if (key.empty()) {
      auto it = cache_.find(path);
      if (it != cache_.end()) return it->second;
    }
  }
  // Parsing happens outside the lock; two threads may parse one file at once, and the first
  // result stored wins. Both are identical.
  auto result = open_uncached(path, key);
  std::lock_guard lock(mu_);
  auto [it, inserted] = key.empty() ? cache_.emplace(path, result) : simulated_.emplace(key, result);
  return it->second;
}

std::shared_ptr<const OpenResult> ObjectStore::open_uncached(const std::string& path, const std::string& key) {
  if (key.empty()) return open_disk(host_path(path));
  std::shared_ptr<const MappedFile> file;
  bool removed;
  {
    std::lock_guard lock(mu_);
    removed = removed_.count(key) > 0;
    if (auto it = overlays_.find(key); !removed && it != overlays_.end()) file = it->second;
  }
  if (!removed && !file) return open_disk(host_path(path));  // neither: the disk's file
  auto result = std::make_shared<OpenResult>();
  if (!file) {
    result->errnum = ENOENT;
    result->error = std::strerror(ENOENT);
    return result;
  }
  // A file that is not on disk: give it an identity no disk file has.
  result->id = FileId{static_cast<dev_t>(-1), static_cast<ino_t>(std::hash<std::string>{}(key))};
  parse(*result, std::move(file));
  return result;
}

ObjectStore::Directory ObjectStore::directory(const std::string& dir) {
  {
    std::lock_guard lock(mu_);
    auto it = directories_.find(dir);
    if (it != directories_.end()) return it->second;
  }
  Directory d;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    d.id = FileId{st.st_dev, st.st_ino};
  } else {
    d.missing = errno == ENOENT;
  }
  std::lock_guard lock(mu_);
  return directories_.emplace(dir, d).first->second;
}

std::shared_ptr<const OpenResult> ObjectStore::open_disk(const std::string& host) {
  if (disk_) return disk_->open_disk(host);
  // What opening a path gives depends only on the directory entry it names. The search probes
  // many names in directories that do not exist (glibc-hwcaps/x86-64-v4, tls/x86_64 below every
  // RPATH entry), and reaches one directory by several paths (/lib is /usr/lib on a merged-/usr
  // system, a symlinked CUDA directory): one stat of the directory answers for all of them.
  // Only ENOENT is answered this way; any other state of the directory leaves the answer to
  // open() itself.
  size_t slash = host.rfind('/');
  std::optional<Entry> entry;
  if (slash != std::string::npos && slash > 0) {
    std::string name = host.substr(slash + 1);
    Directory d = directory(host.substr(0, slash));
    if (d.missing) {
      // One answer, shared by every such probe: nearly all of a search's are of this kind.
      static const std::shared_ptr<const OpenResult> kNoDirectory = [] {
        auto result = std::make_shared<OpenResult>();
        result->errnum = ENOENT;
        result->error = std::strerror(ENOENT);
        return result;
      }();
      return kNoDirectory;
    }
    if (d.id && name != "." && name != ".." && !name.empty()) {
      entry = Entry{*d.id, std::move(name)};
      std::lock_guard lock(mu_);
      auto it = by_entry_.find(*entry);
      if (it != by_entry_.end()) return it->second;
    }
  }
  auto result = read_disk(host);
  if (entry) {
    std::lock_guard lock(mu_);
    by_entry_.emplace(std::move(*entry), result);
  }
  return result;
}

std::shared_ptr<const OpenResult> ObjectStore::read_disk(const std::string& host) {
  auto result = std::make_shared<OpenResult>();
  auto fail = [&](int errnum) {
    result->errnum = errnum;
    result->error = std::strerror(errnum);
    return result;
  };
  OpenFile file(host);
  if (file.errnum()) return fail(file.errnum());
  const struct stat& st = file.stat();
  result->id = FileId{st.st_dev, st.st_ino};
  if (S_ISDIR(st.st_mode)) {
    // open_verify reads a directory: "cannot read file data: Is a directory".
    result->status = OpenResult::Status::kInvalid;
    result->errnum = EISDIR;
    result->error = std::string("cannot read file data: ") + std::strerror(EISDIR);
    return result;
  }
  // One file under several names (hard links, a symlinked file) is read and parsed once.
  {
    std::lock_guard lock(mu_);
    auto it = by_id_.find(result->id);
    if (it != by_id_.end()) return it->second;
  }
  std::string err;
  auto mapped = MappedFile::map(file, host, &err);
  if (!mapped) return fail(errno ? errno : EACCES);
  parse(*result, std::move(mapped));
  std::lock_guard lock(mu_);
  return by_id_.emplace(result->id, result).first->second;
}

void ObjectStore::parse(OpenResult& result, std::shared_ptr<const MappedFile> file) {
  Bytes b = file->bytes();
  if (b.size() >= 64 && std::memcmp(b.data(), ELFMAG, SELFMAG) == 0) {
    result.ident.magic = true;
    result.ident.elf_class = b.data()[EI_CLASS];
    result.ident.data = b.data()[EI_DATA];
    std::memcpy(&result.ident.machine, b.data() + 18, 2);  // e_machine, at the same offset in both classes
  }
  std::string err;
  auto elf = elf::ElfFile::parse(std::move(file), &err, &result.header_error);
  if (!elf) {
    result.status = OpenResult::Status::kInvalid;
    result.error = err;
    return;
  }
  result.status = OpenResult::Status::kOk;
  result.elf = std::move(elf);
}

Verdict verify(const OpenResult& op, u8 host_class, u8 host_data, u16 host_machine) {
  auto reject = [](std::string message) { return Verdict{Verdict::Kind::kReject, std::move(message)}; };
  if (op.status == OpenResult::Status::kMissing) return reject(op.error);
  const OpenResult::Ident& id = op.ident;
  // Length and magic first ("file too short", "invalid ELF header"): no identification to go on.
  if (!id.magic) return reject(op.error);
  // open_verify: any class but the loader's own (ELFCLASSNONE included) is "the other class".
  if (id.elf_class != host_class) return {Verdict::Kind::kOtherClass, ""};
  if (id.data != host_data)
    return reject(host_data == ELFDATA2LSB ? "ELF file data encoding not little-endian"
                                           : "ELF file data encoding not big-endian");
  // The rest of e_ident, then e_version, come before the machine.
  if (op.status == OpenResult::Status::kInvalid && op.header_error) return reject(op.error);
  if (id.machine != host_machine) return {Verdict::Kind::kOtherMachine, ""};
  if (op.status == OpenResult::Status::kInvalid) return reject(op.error);
  // _dl_map_object_from_fd's checks, then the mapping: a file cut short is no error the loader
  // words, but a crash.
  if (op.elf->map_error) return {Verdict::Kind::kReject, *op.elf->map_error, true};
  if (op.elf->crash) return {Verdict::Kind::kReject, *op.elf->crash, true};
  return {};
}

}  // namespace envdoctor::loader
