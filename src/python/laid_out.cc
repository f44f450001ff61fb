#include "python/laid_out.h"

#include "python/metadata_file.h"
#include "python/record.h"

namespace envdoctor::python {

namespace {

constexpr u64 kMaxWheelFile = 1 << 20;

}  // namespace

std::optional<LaidOutDistribution> LaidOutDistribution::open(const fs::path& dir, std::string* error) {
  LaidOutDistribution out;
  out.dir_ = fs::absolute(dir).lexically_normal();
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(out.dir_, ec)) {
    std::string name = e.path().filename().string();
    if (!name.ends_with(".dist-info") || !e.is_directory()) continue;
    if (!out.dist_info_.empty()) {
      *error = out.dir_.string() + " holds more than one .dist-info directory (" + out.dist_info_ + ", " + name + ")";
      return std::nullopt;
    }
    out.dist_info_ = name;
  }
  if (ec || out.dist_info_.empty()) {
    *error = out.dir_.string() + " holds no .dist-info directory";
    return std::nullopt;
  }
  fs::path info = out.dir_ / out.dist_info_;
  if (!fs::is_regular_file(info / "RECORD", ec)) {
    *error = (info / "RECORD").string() + " is missing";
    return std::nullopt;
  }
  out.metadata_ = read_dist_info(info, out.dir_, out.dir_);
  std::string wheel_error;
  if (std::optional<std::string> wheel = read_bounded_file(info / "WHEEL", kMaxWheelFile, &wheel_error)) {
    auto purelib = header_value(parse_headers(*wheel), "Root-Is-Purelib");
    out.root_is_purelib_ = !purelib || normalize_name(*purelib) == "true";
  }
  return out;
}

std::vector<std::pair<LaidOutFile, fs::path>> LaidOutDistribution::install_plan(const InstallScheme& scheme) const {
  std::vector<std::pair<LaidOutFile, fs::path>> out;
  for (const RecordEntry& e : metadata_.record) {
    if (!path_within(e.resolved, dir_)) continue;
    std::error_code ec;
    u64 size = fs::file_size(e.resolved, ec);
    if (ec) continue;
    fs::path relative = e.resolved.lexically_relative(dir_);
    // A target install puts console scripts in DIR/bin (uv's scheme for --target).
    bool script = *relative.begin() == "bin";
    fs::path dest = script ? lexically_resolve(scheme.scripts, relative.lexically_relative("bin"))
                           : lexically_resolve(root(scheme), relative);
    out.push_back({LaidOutFile{&e, relative.string(), size}, dest});
  }
  return out;
}

Distribution LaidOutDistribution::as_installed(const InstallScheme& scheme) const {
  Distribution d = metadata_;
  d.site_dir = root(scheme);
  d.metadata_dir = lexically_resolve(d.site_dir, dist_info_);
  d.record.clear();
  for (const auto& [file, dest] : install_plan(scheme)) {
    RecordEntry e = *file.entry;
    e.resolved = dest;
    d.record.push_back(std::move(e));
  }
  return d;
}

}  // namespace envdoctor::python
