#include "python/wheel.h"

#include <map>
#include <set>

#include "python/metadata_file.h"
#include "support/lazy_library.h"

namespace envdoctor::python {

namespace {

// The part of libzip a wheel reader uses, opened on the first wheel (see LazyLibrary).
struct Libzip {
  decltype(::zip_open)* open;
  decltype(::zip_discard)* discard;
  decltype(::zip_get_num_entries)* get_num_entries;
  decltype(::zip_stat_index)* stat_index;
  decltype(::zip_strerror)* strerror;
  decltype(::zip_fopen_index)* fopen_index;
  decltype(::zip_fread)* fread;
  decltype(::zip_fclose)* fclose;
  decltype(::zip_file_strerror)* file_strerror;
  decltype(::zip_error_init_with_code)* error_init_with_code;
  decltype(::zip_error_strerror)* error_strerror;
  decltype(::zip_error_fini)* error_fini;
};

// libzip's functions, or nullptr with `error` saying why it could not be loaded.
const Libzip* libzip(std::string* error) {
  static support::LazyLibrary lib(ENVDOCTOR_LIBZIP_SONAME);
  static Libzip api;
  static std::string why;
  static const bool ok =
      lib.get(api.open, "zip_open", &why) && lib.get(api.discard, "zip_discard", &why) &&
      lib.get(api.get_num_entries, "zip_get_num_entries", &why) && lib.get(api.stat_index, "zip_stat_index", &why) &&
      lib.get(api.strerror, "zip_strerror", &why) && lib.get(api.fopen_index, "zip_fopen_index", &why) &&
      lib.get(api.fread, "zip_fread", &why) && lib.get(api.fclose, "zip_fclose", &why) &&
      lib.get(api.file_strerror, "zip_file_strerror", &why) &&
      lib.get(api.error_init_with_code, "zip_error_init_with_code", &why) &&
      lib.get(api.error_strerror, "zip_error_strerror", &why) && lib.get(api.error_fini, "zip_error_fini", &why);
  if (!ok && error) *error = "cannot read wheels: " + why;
  return ok ? &api : nullptr;
}

std::string zip_error_text(const Libzip& zip, int code) {
  zip_error_t e;
  zip.error_init_with_code(&e, code);
  std::string text = zip.error_strerror(&e);
  zip.error_fini(&e);
  return text;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (size_t pos = 0;;) {
    size_t at = s.find(sep, pos);
    out.emplace_back(s.substr(pos, at == s.npos ? s.npos : at - pos));
    if (at == s.npos) break;
    pos = at + 1;
  }
  return out;
}

std::string first_component(std::string_view name) { return std::string(name.substr(0, name.find('/'))); }

}  // namespace

bool safe_member_name(std::string_view member) {
  if (member.empty() || member.front() == '/' || member.find('\\') != member.npos || member.find('\0') != member.npos)
    return false;
  for (const std::string& part : split(member, '/'))
    if (part == "..") return false;
  return true;
}

std::optional<WheelName> WheelName::parse(std::string_view filename, std::string* error) {
  auto fail = [&](const std::string& what) -> std::optional<WheelName> {
    if (error) *error = std::string(filename) + ": " + what;
    return std::nullopt;
  };
  if (!filename.ends_with(".whl")) return fail("not a .whl file name");
  std::vector<std::string> parts = split(filename.substr(0, filename.size() - 4), '-');
  if (parts.size() != 5 && parts.size() != 6)
    return fail("a wheel name has 5 or 6 parts separated by '-', this one has " + std::to_string(parts.size()));
  for (const std::string& p : parts)
    if (p.empty()) return fail("empty part in the wheel name");
  WheelName w;
  w.name = parts[0];
  w.version = parts[1];
  size_t t = 2;
  if (parts.size() == 6) {
    w.build = parts[2];
    if (w.build[0] < '0' || w.build[0] > '9') return fail("build tag '" + w.build + "' must start with a digit");
    t = 3;
  }
  w.python_tags = split(parts[t], '.');
  w.abi_tags = split(parts[t + 1], '.');
  w.platform_tags = split(parts[t + 2], '.');
  return w;
}

std::string WheelName::project() const {
  std::string out = name;
  for (char& c : out)
    if (c == '_') c = '-';
  return out;
}

std::vector<Tag> WheelName::tags() const {
  std::vector<Tag> out;
  for (const std::string& py : python_tags)
    for (const std::string& abi : abi_tags)
      for (const std::string& plat : platform_tags) out.push_back({py, abi, plat});
  return out;
}

InstallScheme install_scheme(const PythonEnvironment& env, std::string_view project) {
  InstallScheme s;
  s.purelib = env.paths.purelib;
  s.platlib = env.paths.platlib;
  s.scripts = env.paths.scripts;
  s.data = env.paths.data;
  // pip's locations: in a virtual environment headers go to
  // <prefix>/include/site/pythonX.Y/<project>; otherwise to sysconfig's include/<project>.
  if (env.in_venv())
    s.headers = fs::path(env.prefix) / "include" / "site" / ("python" + env.version_info.short_str()) / project;
  else s.headers = fs::path(env.paths.include) / project;
  return s;
}

Wheel::~Wheel() {
  if (zip_) libzip(nullptr)->discard(zip_);
}

bool wheel_file_exists(const fs::path& path, std::string* error) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  std::string why = st.type() == fs::file_type::not_found ? "no such file"
                    : fs::is_directory(st)                ? "a directory, not a wheel file"
                    : !fs::is_regular_file(st)            ? (ec ? ec.message() : "not a regular file")
                                                          : "";
  if (why.empty()) return true;
  if (error) *error = path.string() + ": " + why;
  return false;
}

std::unique_ptr<Wheel> Wheel::open(const fs::path& path, std::string* error, const WheelLimits& limits) {
  if (!wheel_file_exists(path, error)) return nullptr;
  std::unique_ptr<Wheel> w(new Wheel());
  w->limits_ = limits;
  w->path_ = path;
  std::string why;
  auto name = WheelName::parse(path.filename().string(), &why);
  if (!name) {
    if (error) *error = why;
    return nullptr;
  }
  w->name_ = std::move(*name);
  const Libzip* zip = libzip(error);
  if (!zip) return nullptr;
  int code = 0;
  // ZIP_CHECKCONS: libzip compares the central directory with the local headers, which
  // catches truncated and spliced archives before any member is trusted.
  w->zip_ = zip->open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!w->zip_) {
    // libzip refuses duplicate names itself (ZIP_ER_EXISTS) without saying which.
    std::string why = code == ZIP_ER_NOZIP    ? "not a zip archive"
                      : code == ZIP_ER_EXISTS ? "two members have the same name"
                                              : zip_error_text(*zip, code);
    if (error) *error = path.filename().string() + ": " + why;
    return nullptr;
  }
  if (!w->load(&why)) {
    if (error) *error = path.filename().string() + ": " + why;
    return nullptr;
  }
  return w;
}

bool Wheel::load(std::string* error) {
  const Libzip& zip = *libzip(nullptr);  // loaded by open()
  zip_int64_t n = zip.get_num_entries(zip_, 0);
  std::set<std::string> seen, info_dirs;
  u64 total = 0;
  for (zip_int64_t i = 0; i < n; i++) {
    zip_stat_t st;
    if (zip.stat_index(zip_, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME)) {
      *error = "cannot read member " + std::to_string(i) + ": " + zip.strerror(zip_);
      return false;
    }
    WheelMember m;
    m.name = st.name;
    m.index = static_cast<u64>(i);
    m.size = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
    m.compressed_size = (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : 0;
    m.is_directory = m.name.ends_with("/");
    if (!safe_member_name(m.name)) {
      *error = "member '" + m.name + "' escapes the wheel";
      return false;
    }
    if (!seen.insert(m.name).second) {
      *error = "member '" + m.name + "' appears twice";
      return false;
    }
    total += m.size;
    if (total > limits_.max_total) {
      *error = "members declare more than " + std::to_string(limits_.max_total) + " bytes in all";
      return false;
    }
    if (m.size > (m.compressed_size + 1) * limits_.max_ratio) {
      *error = "member '" + m.name + "' expands " + std::to_string(m.size) + " bytes from " +
               std::to_string(m.compressed_size) + ": refused as a zip bomb";
      return false;
    }
    std::string top = first_component(m.name);
    if (top.ends_with(".dist-info") && m.name.size() > top.size()) info_dirs.insert(top);
    by_name_[m.name] = members_.size();
    members_.push_back(std::move(m));
  }
  // pip's wheel_dist_info_dir: exactly one, named for the project.
  if (info_dirs.empty()) {
    *error = ".dist-info directory not found";
    return false;
  }
  if (info_dirs.size() > 1) {
    *error = "multiple .dist-info directories found: " + *info_dirs.begin() + ", " + *std::next(info_dirs.begin());
    return false;
  }
  dist_info_ = *info_dirs.begin();
  std::string info_name = dist_info_.substr(0, dist_info_.find('-'));
  if (normalize_name(info_name) != normalize_name(name_.name)) {
    *error = ".dist-info directory '" + dist_info_ + "' does not start with '" + name_.name + "'";
    return false;
  }
  return load_metadata(error);
}

const WheelMember* Wheel::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &members_[it->second];
}

std::string Wheel::data_dir() const {
  return dist_info_.substr(0, dist_info_.size() - std::string_view(".dist-info").size()) + ".data";
}

std::optional<std::vector<u8>> Wheel::read(std::string_view member, u64 limit, std::string* error) {
  auto fail = [&](const std::string& what) -> std::optional<std::vector<u8>> {
    if (error) *error = path_.filename().string() + ": " + std::string(member) + ": " + what;
    return std::nullopt;
  };
  const WheelMember* m = find(member);
  if (!m) return fail("no such member");
  if (m->size > limit) return fail("larger than " + std::to_string(limit) + " bytes");
  if (bytes_read_ + m->size > limits_.max_total) return fail("the wheel's read bound is spent");
  const Libzip& zip = *libzip(nullptr);  // loaded by open()
  zip_file_t* f = zip.fopen_index(zip_, m->index, 0);
  if (!f) return fail(zip.strerror(zip_));
  std::vector<u8> out(m->size);
  // One byte more than declared: a member that decompresses to more than its header says is
  // refused instead of being trusted.
  u8 extra;
  zip_int64_t got = out.empty() ? 0 : zip.fread(f, out.data(), out.size());
  zip_int64_t more = got == static_cast<zip_int64_t>(out.size()) ? zip.fread(f, &extra, 1) : 0;
  std::string why = (got < 0 || more < 0) ? zip.file_strerror(f) : "";
  zip.fclose(f);
  if (!why.empty()) return fail(why);
  if (static_cast<u64>(got) != m->size || more > 0) return fail("size differs from the zip directory's");
  bytes_read_ += m->size;
  return out;
}

bool Wheel::load_metadata(std::string* error) {
  auto text_of = [&](const std::string& name) -> std::optional<std::string> {
    std::string why;
    auto bytes = read(dist_info_ + "/" + name, kMaxWheelMetadata, &why);
    if (!bytes) {
      if (find(dist_info_ + "/" + name)) metadata_.problems.push_back(why);
      return std::nullopt;
    }
    return std::string(bytes->begin(), bytes->end());
  };
  metadata_.kind = Distribution::kDistInfo;
  metadata_.metadata_dir = fs::path("/") / dist_info_;
  metadata_.site_dir = "/";
  auto wheel = text_of("WHEEL");
  if (!wheel) {
    *error = dist_info_ + "/WHEEL is missing or unreadable";
    return false;
  }
  auto purelib = header_value(parse_headers(*wheel), "Root-Is-Purelib");
  root_is_purelib_ = purelib && normalize_name(*purelib) == "true";
  if (auto metadata = text_of("METADATA")) {
    std::vector<Header> headers = parse_headers(*metadata);
    metadata_.name = header_value(headers, "Name").value_or("");
    metadata_.version = header_value(headers, "Version").value_or("");
    for (const std::string& line : header_values(headers, "Requires-Dist")) {
      std::string why;
      if (auto r = parse_requirement(line, &why)) metadata_.requires_dist.push_back(std::move(*r));
      else metadata_.problems.push_back("METADATA: Requires-Dist: " + why);
    }
  } else {
    metadata_.problems.push_back(dist_info_ + "/METADATA is missing");
  }
  if (metadata_.name.empty()) metadata_.name = name_.name;
  if (metadata_.version.empty()) metadata_.version = name_.version;
  if (auto record = text_of("RECORD")) {
    metadata_.record = parse_record(*record, RecordContext{"/", ""}, &metadata_.problems);
  } else {
    metadata_.problems.push_back(dist_info_ + "/RECORD is missing");
  }
  check_record();
  check_data_dir();
  return true;
}

void Wheel::check_record() {
  std::set<std::string> listed;
  for (const RecordEntry& e : metadata_.record) {
    listed.insert(e.path);
    if (!find(e.path)) metadata_.problems.push_back("RECORD lists '" + e.path + "', which the wheel lacks");
  }
  if (metadata_.record.empty()) return;
  // The signature files are the ones RECORD cannot list (PEP 427).
  std::set<std::string> unlisted_ok = {dist_info_ + "/RECORD", dist_info_ + "/RECORD.jws", dist_info_ + "/RECORD.p7s"};
  for (const WheelMember& m : members_)
    if (!m.is_directory && !listed.count(m.name) && !unlisted_ok.count(m.name))
      metadata_.problems.push_back("'" + m.name + "' is not in RECORD");
}

void Wheel::check_data_dir() {
  // pip's install_wheel raises "Unknown scheme key used in ..." for anything else.
  std::string data = data_dir() + "/";
  InstallScheme probe{"/purelib", "/platlib", "/scripts", "/headers", "/data"};
  for (const WheelMember& m : members_)
    if (!m.is_directory && m.name.starts_with(data) && !install_path(m, probe))
      metadata_.problems.push_back("'" + m.name + "' is in no scheme of " + data +
                                   " (purelib, platlib, scripts, "
                                   "headers, data): pip refuses the wheel");
}

std::optional<fs::path> Wheel::install_path(const WheelMember& member, const InstallScheme& scheme) const {
  if (member.is_directory) return std::nullopt;
  std::string data = data_dir() + "/";
  const fs::path& root = root_is_purelib_ ? scheme.purelib : scheme.platlib;
  if (!member.name.starts_with(data)) return lexically_resolve(root, member.name);
  std::string_view rest = std::string_view(member.name).substr(data.size());
  size_t slash = rest.find('/');
  if (slash == rest.npos) return std::nullopt;
  std::string_view key = rest.substr(0, slash), file = rest.substr(slash + 1);
  const fs::path* dir = key == "purelib"   ? &scheme.purelib
                        : key == "platlib" ? &scheme.platlib
                        : key == "scripts" ? &scheme.scripts
                        : key == "headers" ? &scheme.headers
                        : key == "data"    ? &scheme.data
                                           : nullptr;
  if (!dir) return std::nullopt;
  return lexically_resolve(*dir, file);
}

std::vector<std::pair<const WheelMember*, fs::path>> Wheel::install_plan(const InstallScheme& scheme) const {
  std::vector<std::pair<const WheelMember*, fs::path>> out;
  for (const WheelMember& m : members_)
    if (auto dest = install_path(m, scheme)) out.emplace_back(&m, *dest);
  return out;
}

Distribution Wheel::as_installed(const InstallScheme& scheme) const {
  Distribution d = metadata_;
  const fs::path& root = root_is_purelib_ ? scheme.purelib : scheme.platlib;
  d.site_dir = root;
  d.metadata_dir = lexically_resolve(root, dist_info_);
  d.installer = "";
  std::map<std::string, const RecordEntry*, std::less<>> by_path;
  for (const RecordEntry& e : metadata_.record) by_path[e.path] = &e;
  d.record.clear();
  for (const auto& [member, dest] : install_plan(scheme)) {
    RecordEntry e;
    e.path = member->name;
    e.resolved = dest;
    // pip rewrites a "#!python" shebang in scripts, so their RECORD hash is the wheel's, not
    // the installed file's: leave it out.
    bool script = member->name.starts_with(data_dir() + "/scripts/");
    if (auto it = by_path.find(member->name); it != by_path.end() && !script) {
      e.hash_algorithm = it->second->hash_algorithm;
      e.digest = it->second->digest;
      e.size = it->second->size;
      e.line = it->second->line;
    }
    d.record.push_back(std::move(e));
  }
  return d;
}

}  // namespace envdoctor::python
