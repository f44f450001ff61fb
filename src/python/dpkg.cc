#include "python/dpkg.h"

#include <filesystem>
#include <fstream>

namespace envdoctor::python {

namespace fs = std::filesystem;

namespace {

// "libstdc++6:amd64.list" -> "libstdc++6".
std::string package_of_list(const fs::path& list) {
  std::string name = list.stem().string();
  return name.substr(0, name.find(':'));
}

}  // namespace

void DpkgIndex::load() const {
  loaded_ = true;
  std::error_code ec;
  fs::path info = fs::path(root_ + "/var/lib/dpkg/info");
  for (fs::directory_iterator it(info, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".list") continue;
    std::string package = package_of_list(it->path());
    std::ifstream in(it->path());
    for (std::string line; std::getline(in, line);) {
      // Only files the loader could open matter: shared objects.
      if (line.find(".so") == std::string::npos) continue;
      file_to_package_.emplace(line, package);
    }
  }
  std::ifstream status(root_ + "/var/lib/dpkg/status");
  std::string package;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Package: ", 0) == 0) package = line.substr(9);
    else if (line.rfind("Version: ", 0) == 0 && !package.empty()) versions_.emplace(package, line.substr(9));
    else if (line.empty()) package.clear();
  }
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
  DpkgPackage pkg{found->second, ""};
  if (auto v = versions_.find(pkg.name); v != versions_.end()) pkg.version = v->second;
  return pkg;
}

}  // namespace envdoctor::python
