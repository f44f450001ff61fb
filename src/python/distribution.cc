#include "python/distribution.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "python/metadata_file.h"
#include "support/parallel.h"
#include "support/text.h"

namespace envdoctor::python {

namespace {

constexpr u64 kMaxMetadataFile = 64 * 1024 * 1024;

std::string read_small(const fs::path& path, std::vector<std::string>* problems, bool required) {
  std::string error;
  bool truncated = false;
  auto text = read_bounded_file(path, kMaxMetadataFile, &error, &truncated);
  if (!text) {
    std::error_code ec;
    if (required || fs::symlink_status(path, ec).type() != fs::file_type::not_found) problems->push_back(error);
    return {};
  }
  if (truncated) problems->push_back(path.filename().string() + ": larger than 64 MiB, read in part");
  return std::move(*text);
}

// "{name}-{version}.dist-info": the name is everything before the first '-' (the wheel spec
// escapes '-' in both parts to '_'), the version the rest.
std::pair<std::string, std::string> split_dir_name(const fs::path& dir) {
  std::string stem = dir.stem().string();
  size_t dash = stem.find('-');
  if (dash == std::string::npos) return {stem, ""};
  return {stem.substr(0, dash), stem.substr(dash + 1)};
}

void read_core_metadata(Distribution& d, std::string_view text, const char* file) {
  std::vector<Header> headers = parse_headers(text);
  auto name = header_value(headers, "Name");
  auto version = header_value(headers, "Version");
  if (name && !name->empty()) d.name = *name;
  else d.problems.push_back(std::string(file) + ": no Name");
  if (version && !version->empty()) d.version = *version;
  else d.problems.push_back(std::string(file) + ": no Version");
  for (const std::string& line : header_values(headers, "Requires-Dist")) {
    std::string error;
    if (auto r = parse_requirement(line, &error)) d.requires_dist.push_back(std::move(*r));
    else d.problems.push_back(std::string(file) + ": Requires-Dist: " + error);
  }
}

void fallback_identity(Distribution& d) {
  auto [name, version] = split_dir_name(d.metadata_dir);
  if (d.name.empty()) d.name = name;
  if (d.version.empty()) d.version = version;
}

}  // namespace

std::string Distribution::key() const { return normalize_name(name); }

std::vector<Requirement> Distribution::requirements_for(const MarkerEnvironment& env,
                                                        const std::vector<std::string>& extras) const {
  return applicable_requirements(requires_dist, env, extras);
}

bool Distribution::metadata_only() const {
  if (record.empty()) return false;
  fs::path dir = metadata_dir.lexically_normal();
  return std::all_of(record.begin(), record.end(), [&](const RecordEntry& e) { return path_within(e.resolved, dir); });
}

std::string Distribution::installation_key() const {
  if (installer == "debian") return "debian:" + installer_package;
  if (kind != kConda && installer == "conda" && !installer_package.empty()) return normalize_name(installer_package);
  return key();
}

bool Distribution::judged_by_record() const {
  if (kind == kConda) return true;  // conda-meta is conda's own record
  return installer != "debian" && !(installer == "conda" && !installer_package.empty());
}

void identify_installers(Inventory& inventory, const DpkgIndex& dpkg) {
  // conda-meta lists the .dist-info's METADATA among the package's files.
  std::unordered_map<std::string, const Distribution*> conda_metadata;
  for (const Distribution& d : inventory.distributions)
    if (d.kind == Distribution::kConda)
      for (const RecordEntry& e : d.record)
        if (e.path.ends_with(".dist-info/METADATA") || e.path.ends_with(".egg-info/PKG-INFO") ||
            e.path.ends_with(".egg-info"))
          conda_metadata.emplace(e.resolved.string(), &d);
  for (Distribution& d : inventory.distributions) {
    if (d.kind == Distribution::kConda) continue;
    fs::path metadata = d.kind == Distribution::kDistInfo  ? d.metadata_dir / "METADATA"
                        : fs::is_directory(d.metadata_dir) ? d.metadata_dir / "PKG-INFO"
                                                           : d.metadata_dir;
    metadata = metadata.lexically_normal();
    if (auto it = conda_metadata.find(metadata.string()); it != conda_metadata.end()) {
      if (d.installer.empty()) d.installer = "conda";
      if (d.installer == "conda") {
        d.installer_package = it->second->name;
        d.installer_version = it->second->version;
      }
      continue;
    }
    if (!d.installer.empty()) continue;
    // pip, uv and conda write INSTALLER; Debian's builds do not.
    if (auto owner = dpkg.owner(metadata.string())) {
      d.installer = "debian";
      d.installer_package = owner->name;
      d.installer_version = owner->version;
    }
  }
}

namespace {

// The .pth files a .dist-info's RECORD lists in its own site directory.
void read_dist_info_editable(Distribution& d, const support::FileRoot& root, std::vector<std::string>* problems) {
  fs::path site = lexically_resolve("/", d.site_dir);
  if (!reads_pth_files(site.string())) return;
  std::vector<std::string> pths;
  bool setuptools = false;
  for (const RecordEntry& e : d.record) {
    if (e.resolved.extension() != ".pth" || e.resolved.parent_path() != site) continue;
    pths.push_back(e.resolved.string());
    setuptools = setuptools || e.resolved.filename().string().starts_with("__editable__.");
  }
  if (!d.origin.editable && !setuptools) return;
  for (const std::string& pth : pths)
    for (ImportRoot& r : read_editable_pth(pth, d.name, root, problems))
      if (std::find(d.editable_roots.begin(), d.editable_roots.end(), r) == d.editable_roots.end())
        d.editable_roots.push_back(std::move(r));
}

// setup.py develop: SITE/NAME.egg-link names the directory of NAME.egg-info, which
// easy-install.pth put on sys.path (where the inventory found the .egg-info).
void read_egg_links(Inventory& inventory, const support::FileRoot& root) {
  for (const std::string& site : inventory.site_dirs) {
    if (!reads_pth_files(site)) continue;
    std::error_code ec;
    for (fs::directory_iterator it(root.host(site), ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (it->path().extension() != ".egg-link") continue;
      std::string link = site + "/" + it->path().filename().string();
      std::optional<std::string> dir = read_egg_link(link, root, &inventory.problems);
      std::string key = normalize_name(it->path().stem().string());
      for (Distribution& d : inventory.distributions)
        if (dir && d.kind == Distribution::kEggInfo && d.key() == key && d.editable_roots.empty() &&
            lexically_resolve("/", d.site_dir).string() == *dir)
          d.editable_roots.push_back({ImportRoot::kPath, *dir, "", link});
    }
  }
}

}  // namespace

void read_editable_installs(Inventory& inventory, const support::FileRoot& root) {
  for (Distribution& d : inventory.distributions) {
    d.editable_roots.clear();
    if (d.kind == Distribution::kDistInfo) read_dist_info_editable(d, root, &inventory.problems);
  }
  read_egg_links(inventory, root);
  // A directory that holds other projects' metadata is a site directory, not one project's tree.
  for (Distribution& d : inventory.distributions)
    std::erase_if(d.editable_roots, [&](const ImportRoot& r) {
      return r.kind == ImportRoot::kPath &&
             std::any_of(inventory.distributions.begin(), inventory.distributions.end(), [&](const Distribution& o) {
               return o.key() != d.key() && lexically_resolve("/", o.site_dir).string() == r.path;
             });
    });
}

const Distribution* Inventory::find(std::string_view name) const {
  std::string key = normalize_name(name);
  for (const Distribution& d : distributions)
    if (d.key() == key) return &d;
  return nullptr;
}

std::optional<std::string> Inventory::nearest_name(std::string_view name) const {
  std::vector<std::string> keys;
  for (const Distribution& d : distributions) keys.push_back(d.key());
  std::optional<std::string> key = support::did_you_mean(normalize_name(name), keys);
  if (!key) return std::nullopt;
  return find(*key)->name;
}

fs::path install_root_for(const fs::path& site_dir, const fs::path& prefix) {
  fs::path site = lexically_resolve("/", site_dir);
  if (!prefix.empty()) {
    fs::path p = lexically_resolve("/", prefix);
    if (path_within(site, p)) return p;
  }
  // ~/.local/lib/python3.11/site-packages: scripts go to ~/.local/bin.
  if (site.filename() == "site-packages" && site.parent_path().filename().string().starts_with("python") &&
      site.parent_path().parent_path().filename() == "lib")
    return site.parent_path().parent_path().parent_path();
  return site;
}

Distribution read_dist_info(const fs::path& dir, const fs::path& site_dir, const fs::path& root) {
  Distribution d;
  d.kind = Distribution::kDistInfo;
  d.metadata_dir = dir;
  d.site_dir = site_dir;
  std::string metadata = read_small(dir / "METADATA", &d.problems, true);
  if (!metadata.empty()) read_core_metadata(d, metadata, "METADATA");
  fallback_identity(d);
  std::string installer = read_small(dir / "INSTALLER", &d.problems, false);
  d.installer = std::string(trim(installer.substr(0, installer.find('\n'))));
  d.record = read_record(dir / "RECORD", RecordContext{site_dir, root}, &d.problems);
  if (std::string direct = read_small(dir / "direct_url.json", &d.problems, false); !direct.empty())
    d.origin = parse_direct_url(direct);
  return d;
}

DirectUrl parse_direct_url(std::string_view text) {
  using nlohmann::json;
  json j = json::parse(text, nullptr, false);
  DirectUrl u;
  if (!j.is_object() || !j.contains("url") || !j["url"].is_string()) return u;
  auto str = [](const json& o, const char* key) {
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
  };
  u.url = j["url"].get<std::string>();
  u.subdirectory = str(j, "subdirectory");
  if (j.contains("vcs_info") && j["vcs_info"].is_object()) {
    u.kind = DirectUrl::kVcs;
    u.vcs = str(j["vcs_info"], "vcs");
    u.commit_id = str(j["vcs_info"], "commit_id");
  } else if (j.contains("dir_info") && j["dir_info"].is_object()) {
    u.kind = DirectUrl::kDirectory;
    const json& info = j["dir_info"];
    u.editable = info.contains("editable") && info["editable"].is_boolean() && info["editable"].get<bool>();
  } else if (j.contains("archive_info") && j["archive_info"].is_object()) {
    u.kind = DirectUrl::kArchive;
  } else {
    u.url.clear();  // the spec requires exactly one of the three
  }
  return u;
}

std::vector<std::string> egg_requires_to_pep508(std::string_view text) {
  std::vector<std::string> out;
  std::string section;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = trim(text.substr(pos, nl == text.npos ? text.npos : nl - pos));
    pos = nl == text.npos ? text.size() : nl + 1;
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = std::string(trim(line.substr(1, line.size() - 2)));
      continue;
    }
    // importlib.metadata's _convert_egg_info_reqs_to_simple_reqs.
    size_t colon = section.find(':');
    std::string extra = section.substr(0, colon);
    std::string marker = colon == std::string::npos ? "" : section.substr(colon + 1);
    if (!extra.empty() && !marker.empty()) marker = "(" + marker + ")";
    std::vector<std::string> conditions;
    if (!marker.empty()) conditions.push_back(marker);
    if (!extra.empty()) conditions.push_back("extra == \"" + extra + "\"");
    std::string req(line);
    if (req.find('@') != std::string::npos) req += " ";
    for (size_t i = 0; i < conditions.size(); i++) req += (i ? " and " : "; ") + conditions[i];
    out.push_back(std::move(req));
  }
  return out;
}

Distribution read_egg_info(const fs::path& dir, const fs::path& site_dir, const fs::path& root) {
  Distribution d;
  d.kind = Distribution::kEggInfo;
  d.metadata_dir = dir;
  d.site_dir = site_dir;
  std::error_code ec;
  // distutils' install_egg_info writes a single file named *.egg-info holding PKG-INFO.
  bool is_file = fs::is_regular_file(dir, ec);
  std::string pkg_info = read_small(is_file ? dir : dir / "PKG-INFO", &d.problems, true);
  if (!pkg_info.empty()) read_core_metadata(d, pkg_info, "PKG-INFO");
  fallback_identity(d);
  if (is_file) return d;
  for (const std::string& line : egg_requires_to_pep508(read_small(dir / "requires.txt", &d.problems, false))) {
    std::string error;
    if (auto r = parse_requirement(line, &error)) d.requires_dist.push_back(std::move(*r));
    else d.problems.push_back("requires.txt: " + error);
  }
  // installed-files.txt: one path a line, relative to the .egg-info directory.
  std::string files = read_small(dir / "installed-files.txt", &d.problems, false);
  fs::path escape_root = lexically_resolve("/", root);
  u64 line_no = 0;
  for (size_t pos = 0; pos < files.size();) {
    size_t nl = files.find('\n', pos);
    std::string_view line = trim(std::string_view(files).substr(pos, nl == files.npos ? files.npos : nl - pos));
    pos = nl == files.npos ? files.size() : nl + 1;
    line_no++;
    if (line.empty()) continue;
    if (line.size() > kMaxRecordRow || line.find('\0') != line.npos) {
      d.problems.push_back("installed-files.txt line " + std::to_string(line_no) + ": ignored");
      continue;
    }
    RecordEntry e;
    e.path = std::string(line);
    e.line = line_no;
    e.resolved = lexically_resolve(dir, e.path);
    if (!path_within(e.resolved, escape_root))
      d.problems.push_back("installed-files.txt line " + std::to_string(line_no) + ": path '" + e.path +
                           "' escapes the environment prefix " + escape_root.string());
    d.record.push_back(std::move(e));
  }
  return d;
}

std::vector<Distribution> scan_site_dir(const fs::path& site_dir, const fs::path& root,
                                        std::vector<std::string>* problems) {
  std::vector<fs::path> entries;
  std::error_code ec;
  fs::directory_iterator it(site_dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    problems->push_back(site_dir.string() + ": " + ec.message());
    return {};
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      problems->push_back(site_dir.string() + ": " + ec.message());
      break;
    }
    std::string n = it->path().filename().string();
    if (n.ends_with(".dist-info") || n.ends_with(".egg-info")) entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  enum class Kind { kSkipped, kDistInfo, kEggInfo };
  std::vector<Kind> kinds(entries.size(), Kind::kSkipped);
  for (size_t i = 0; i < entries.size(); ++i) {
    const fs::path& p = entries[i];
    std::error_code sec;
    fs::file_status st = fs::status(p, sec);  // follows symlinks; a loop is an error here
    if (sec) {
      problems->push_back(p.string() + ": " + sec.message());
      continue;
    }
    bool dir = fs::is_directory(st);
    if (!p.filename().string().ends_with(".dist-info")) kinds[i] = Kind::kEggInfo;
    else if (dir) kinds[i] = Kind::kDistInfo;
    else problems->push_back(p.string() + ": not a directory");
  }
  // Each metadata directory is read on its own, spread over the cores: a RECORD can run to tens
  // of thousands of lines (awscli's, botocore's), and reading them was most of `check`'s time on
  // such an interpreter.
  std::vector<std::optional<Distribution>> read(entries.size());
  support::parallel_for(entries.size(), [&](size_t i) {
    if (kinds[i] == Kind::kDistInfo) read[i] = read_dist_info(entries[i], site_dir, root);
    if (kinds[i] == Kind::kEggInfo) read[i] = read_egg_info(entries[i], site_dir, root);
  });
  std::vector<Distribution> out;
  for (std::optional<Distribution>& d : read)
    if (d) out.push_back(std::move(*d));
  return out;
}

namespace {

Distribution read_conda_record(const fs::path& json_path, const fs::path& prefix) {
  using nlohmann::json;
  Distribution d;
  d.kind = Distribution::kConda;
  d.metadata_dir = json_path;
  d.site_dir = prefix;
  d.installer = "conda";
  std::string text = read_small(json_path, &d.problems, true);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::string fname = json_path.filename().string();
  if (j.is_discarded() || !j.is_object()) {
    if (!text.empty()) d.problems.push_back(fname + ": not a JSON object");
    // "<name>-<version>-<build>.json"
    std::string stem = json_path.stem().string();
    size_t b = stem.rfind('-');
    size_t v = b == std::string::npos ? b : stem.rfind('-', b - 1);
    d.name = v == std::string::npos ? stem : stem.substr(0, v);
    if (v != std::string::npos) d.version = stem.substr(v + 1, b - v - 1);
    return d;
  }
  if (auto n = j.find("name"); n != j.end() && n->is_string()) d.name = *n;
  if (auto v = j.find("version"); v != j.end() && v->is_string()) d.version = *v;
  if (d.name.empty()) d.problems.push_back(fname + ": no name");
  RecordContext context{prefix, prefix};
  fs::path root = lexically_resolve("/", prefix);
  auto add = [&](const std::string& path, const json* data, u64 index) {
    RecordEntry e;
    e.path = path;
    e.line = index + 1;
    e.resolved = lexically_resolve(prefix, path);
    if (fs::path(path).is_absolute() || !path_within(e.resolved, root))
      d.problems.push_back(fname + ": file '" + path + "' lies outside the prefix");
    if (data) {
      if (auto s = data->find("sha256"); s != data->end() && s->is_string()) {
        std::string hex = *s;
        auto nibble = [](char c) -> int {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          return -1;
        };
        for (size_t i = 0; hex.size() == 64 && i < hex.size(); i += 2) {
          int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
          if (hi < 0 || lo < 0) break;
          e.digest.push_back(static_cast<u8>(hi * 16 + lo));
        }
        if (e.digest.size() == 32) e.hash_algorithm = "sha256";
        else e.digest.clear();
      }
      if (auto z = data->find("size_in_bytes"); z != data->end() && z->is_number_unsigned()) e.size = z->get<u64>();
    }
    d.record.push_back(std::move(e));
  };
  // conda >= 4.3 writes paths_data with hashes; "files" is the older, plain list.
  auto pd = j.find("paths_data");
  if (pd != j.end() && pd->is_object() && pd->contains("paths") && (*pd)["paths"].is_array()) {
    u64 i = 0;
    for (const json& p : (*pd)["paths"]) {
      if (p.is_object() && p.contains("_path") && p["_path"].is_string()) add(p["_path"], &p, i);
      i++;
    }
  } else if (auto f = j.find("files"); f != j.end() && f->is_array()) {
    u64 i = 0;
    for (const json& p : *f) {
      if (p.is_string()) add(p, nullptr, i);
      i++;
    }
  }
  return d;
}

}  // namespace

std::vector<Distribution> read_conda_meta(const fs::path& prefix, std::vector<std::string>* problems) {
  fs::path dir = prefix / "conda-meta";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".json") files.push_back(it->path());
  if (ec) problems->push_back(dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<Distribution> out;
  for (const fs::path& f : files) out.push_back(read_conda_record(f, prefix));
  return out;
}

Inventory read_inventory(const PythonEnvironment& env) {
  Inventory inv;
  inv.site_dirs = env.site_dirs();
  for (const std::string& site : inv.site_dirs) {
    fs::path root = install_root_for(site, env.prefix);
    for (Distribution& d : scan_site_dir(site, root, &inv.problems)) inv.distributions.push_back(std::move(d));
  }
  if (!env.prefix.empty())
    for (Distribution& d : read_conda_meta(env.prefix, &inv.problems)) inv.distributions.push_back(std::move(d));
  return inv;
}

}  // namespace envdoctor::python
