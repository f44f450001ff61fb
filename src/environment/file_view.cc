#include "environment/file_view.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "support/digest.h"
#include "support/text.h"

namespace envdoctor::environment {

bool sha256_available(std::string* error) { return support::digests_available(error); }

std::vector<u8> sha256_bytes(Bytes b) { return support::sha256_of(b.data(), b.size()); }

std::optional<std::string> md5_hex_file(const std::string& path) {
  std::string err;
  auto file = MappedFile::open(path, &err);
  if (!file) return std::nullopt;
  std::vector<u8> digest = support::md5_of(file->bytes().data(), file->bytes().size());
  if (digest.empty()) return std::nullopt;
  return support::hex(digest);
}

std::optional<std::vector<u8>> sha256_file(const std::string& path) {
  std::string err;
  auto file = MappedFile::open(path, &err);
  if (!file) return std::nullopt;
  std::vector<u8> digest = sha256_bytes(file->bytes());
  if (digest.empty()) return std::nullopt;
  return digest;
}

std::optional<FileView::Facts> FileView::stat(const std::string& path) const {
  if (auto it = added_.find(path); it != added_.end()) return Facts{it->second.size, false};
  if (removed_.count(path)) return std::nullopt;
  struct stat st;
  if (::lstat(root_.host_no_follow(path).c_str(), &st) != 0) return std::nullopt;
  return Facts{static_cast<u64>(st.st_size), S_ISLNK(st.st_mode)};
}

FileView::Kind FileView::kind(const std::string& path) const {
  if (added_.count(path)) return Kind::kFile;
  if (removed_.count(path)) return Kind::kMissing;
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0 && listing_->dirs.count(path.substr(0, slash))) {
    auto it = listing_->entries.find(path);
    if (it == listing_->entries.end()) return Kind::kMissing;
    return it->second == Listing::Type::kLink ? Kind::kLink : Kind::kFile;
  }
  std::optional<Facts> st = stat(path);
  return !st ? Kind::kMissing : st->is_link ? Kind::kLink : Kind::kFile;
}

std::optional<std::vector<u8>> FileView::sha256(const std::string& path) const {
  if (auto it = added_.find(path); it != added_.end()) return it->second.sha256;
  if (removed_.count(path)) return std::nullopt;
  return sha256_file(root_.host(path));
}

std::optional<std::string> FileView::md5(const std::string& path) const {
  if (added_.count(path) || removed_.count(path)) return std::nullopt;  // a wheel's file: not dpkg's
  return md5_hex_file(root_.host(path));
}

void FileView::remove(const std::string& path) {
  added_.erase(path);
  removed_.insert(path);
}

bool FileView::is_directory(const std::string& path) const {
  const std::string below = path + "/";
  if (auto it = added_.lower_bound(below); it != added_.end() && it->first.starts_with(below)) return true;
  struct stat st;
  return ::lstat(root_.host_no_follow(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> FileView::remove_tree(const std::string& dir) {
  std::vector<std::string> out;
  const std::string below = dir + "/";
  for (auto it = added_.lower_bound(below); it != added_.end() && it->first.starts_with(below);) {
    out.push_back(it->first);
    removed_.insert(it->first);
    it = added_.erase(it);
  }
  std::error_code ec;
  const std::filesystem::path host = root_.host_no_follow(dir);
  for (auto it = std::filesystem::recursive_directory_iterator(host, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) continue;
    std::string path = below + it->path().lexically_relative(host).string();
    if (removed_.insert(path).second) out.push_back(path);
  }
  return out;
}

void FileView::add(const std::string& path, u64 size, std::optional<std::vector<u8>> sha256,
                   std::optional<std::string> text) {
  removed_.erase(path);
  added_[path] = Added{size, std::move(sha256), std::move(text)};
}

std::string FileView::read_text(const std::string& path, u64 limit) const {
  if (auto it = added_.find(path); it != added_.end()) return it->second.text.value_or("").substr(0, limit);
  if (removed_.count(path)) return "";
  std::ifstream in(root_.empty() ? path : root_.host(path), std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::vector<std::string> FileView::changed_paths() const {
  std::vector<std::string> out(removed_.begin(), removed_.end());
  for (const auto& [path, added] : added_) out.push_back(path);
  return out;
}

}  // namespace envdoctor::environment
