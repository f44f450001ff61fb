#include "python/dpkg.h"

#include <filesystem>
#include <fstream>

namespace envdoctor::python {

namespace fs = std::filesystem;

void DpkgIndex::load() const {
  loaded_ = true;
  std::error_code ec;
  fs::path info = fs::path(root_ + "/var/lib/dpkg/info");
  std::unordered_map<std::string, u32> index;
  for (fs::directory_iterator it(info, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".list") continue;
    // "libstdc++6:amd64.list" -> "libstdc++6".
    std::string stem = it->path().stem().string();
    std::string name = stem.substr(0, stem.find(':'));
    auto [slot, fresh] = index.try_emplace(name, static_cast<u32>(packages_.size()));
    if (fresh) {
      packages_.push_back(name);
      info_stems_.push_back(stem);
    }
    std::ifstream in(it->path());
    // Only what is ever asked about: shared objects, files of Python's site directories, and
    // programs (an interpreter); about a third of a desktop's 170,000 lines.
    for (std::string line; std::getline(in, line);)
      if (line.find(".so") != std::string::npos || line.find("-packages/") != std::string::npos ||
          line.find("/bin/") != std::string::npos)
        file_to_package_.emplace(std::move(line), slot->second);
  }
  std::ifstream status(root_ + "/var/lib/dpkg/status");
  std::string package;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Package: ", 0) == 0) package = line.substr(9);
    else if (line.rfind("Version: ", 0) == 0 && !package.empty()) versions_.emplace(package, line.substr(9));
    else if (line.empty()) package.clear();
  }
  load_diversions();
}

// /var/lib/dpkg/diversions: three lines per diversion (the path, where it was moved, the package
// that diverted it, or ":" for a local one). dpkg installs a diverted path of any other package
// at the moved-to path (dpkg-divert(1)).
void DpkgIndex::load_diversions() const {
  std::ifstream in(root_ + "/var/lib/dpkg/diversions");
  std::string from, to, by;
  while (std::getline(in, from) && std::getline(in, to) && std::getline(in, by))
    diversions_.emplace(std::move(from), std::make_pair(std::move(to), std::move(by)));
}

bool DpkgIndex::loaded() const {
  std::lock_guard lock(mu_);
  return loaded_;
}

std::optional<DpkgPackage> DpkgIndex::package(u32 index) const {
  DpkgPackage pkg{packages_[index], ""};
  if (auto v = versions_.find(pkg.name); v != versions_.end()) pkg.version = v->second;
  return pkg;
}

std::optional<DpkgPackage> DpkgIndex::owner(const std::string& path) const {
  std::lock_guard lock(mu_);
  if (!loaded_) load();
  auto found = file_to_package_.find(path);
  if (found == file_to_package_.end()) {
    // Merged /usr: the database says /lib/x86_64-linux-gnu/libc.so.6 or /usr/lib/..., the loader
    // may say the other; try the directory with its links resolved, and the two spellings.
    std::error_code ec;
    fs::path p(path);
    fs::path dir = fs::canonical(root_ + p.parent_path().string(), ec);
    std::string candidates[] = {
        ec ? std::string() : (dir / p.filename()).string().substr(root_.size()),
        path.rfind("/usr/", 0) == 0 ? path.substr(4) : "/usr" + path,
    };
    for (const std::string& c : candidates) {
      if (c.empty()) continue;
      found = file_to_package_.find(c);
      if (found != file_to_package_.end()) break;
    }
    if (found == file_to_package_.end()) return std::nullopt;
  }
  return package(found->second);
}

std::vector<DpkgFile> DpkgIndex::files(const std::string& package) const {
  std::string stem;
  {
    std::lock_guard lock(mu_);
    if (!loaded_) load();
    for (size_t i = 0; i < packages_.size(); ++i)
      if (packages_[i] == package) stem = info_stems_[i];
  }
  if (stem.empty()) return {};
  std::vector<DpkgFile> out;
  std::ifstream in(root_ + "/var/lib/dpkg/info/" + stem + ".md5sums");
  // "<32 hex digits>  <path without its leading slash>"
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 35 || line[32] != ' ' || line[33] != ' ') continue;
    DpkgFile f{"/" + line.substr(34), line.substr(0, 32)};
    if (auto d = diversions_.find(f.path); d != diversions_.end() && d->second.second != package)
      f.path = d->second.first;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace envdoctor::python
