#include "python/site_layout.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "python/metadata_file.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

namespace {

constexpr u64 kMaxPthFile = 1 << 20;
constexpr u64 kMaxSitePy = 1 << 20;

bool exists_in(const support::FileRoot& root, const std::string& path) {
  // os.path.exists: stat(2), links followed; a path with a NUL is not there (Python 3.8+).
  if (path.find('\0') != std::string::npos) return false;
  struct stat st;
  return ::stat(root.host(path).c_str(), &st) == 0;
}

bool is_dir_in(const support::FileRoot& root, const std::string& path) {
  struct stat st;
  return ::stat(root.host(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// str.strip()'s whitespace, in ASCII: space, \t\n\v\f\r and the separators \x1c-\x1f.
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

// The lines of a .pth file as site.py iterates them: a text file's universal newlines (\n, \r\n,
// \r) before 3.13, str.splitlines() from 3.13 (also \v, \f and \x1c-\x1e); the terminator kept
// off either way, which rstrip() would remove anyway.
std::vector<std::string> pth_lines(std::string_view text, const SiteVersion& version) {
  if (version.at_least_313() && text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<std::string> out;
  std::string line;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool ends =
        c == '\n' || c == '\r' || (version.at_least_313() && (c == '\v' || c == '\f' || (c >= '\x1c' && c <= '\x1e')));
    if (!ends) {
      line += c;
      continue;
    }
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    out.push_back(std::move(line));
    line.clear();
  }
  if (!line.empty()) out.push_back(std::move(line));
  return out;
}

struct SiteWalk {
  const SiteVersion& version;
  const support::FileRoot& root;
  SitePath result;
  std::set<std::string> known;  // makepath's normcase: the path itself on POSIX
  std::set<std::pair<std::string, size_t>> ran;

  void append(const std::string& dir) {
    if (known.insert(dir).second) result.sys_path.push_back(dir);
  }

  // site.addpackage: one .pth file.
  void add_package(const std::string& sitedir, const std::string& name) {
    std::string file = sitedir + "/" + name;
    std::optional<std::string> text = read_bounded_file(root.host(file), kMaxPthFile, nullptr);
    if (!text) return;  // addpackage returns on OSError
    size_t number = 0;
    for (std::string& line : pth_lines(*text, version)) {
      ++number;
      if (line.starts_with("#")) continue;
      if (std::all_of(line.begin(), line.end(), is_space)) continue;
      if (line.starts_with("import ") || line.starts_with("import\t")) {
        // A venv's site-packages is added twice (site.venv(), then PREFIXES), and its import lines
        // would run twice; they are one line of code not run.
        if (ran.insert({file, number}).second) result.not_run.push_back({file, number, line});
        continue;
      }
      while (!line.empty() && is_space(line.back())) line.pop_back();
      std::string dir = normpath(line.starts_with("/") ? line : sitedir + "/" + line);
      if (!known.count(dir) && exists_in(root, dir)) append(dir);
    }
  }

  // site.addsitedir.
  void add_site_dir(const std::string& given) {
    std::string sitedir = normpath(given);
    append(sitedir);
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(root.host(sitedir), ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (!name.ends_with(".pth")) continue;
      if (version.skips_hidden_pth() && name.starts_with(".")) continue;
      names.push_back(std::move(name));
    }
    // sorted(): by code point, which for UTF-8 is the bytes' order (char_traits compares unsigned).
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) add_package(sitedir, name);
  }
};

}  // namespace

std::string normpath(const std::string& path) {
  if (path.empty()) return ".";
  size_t slashes = path.find_first_not_of('/');
  if (slashes == std::string::npos) slashes = path.size();
  std::string lead = slashes == 2 ? "//" : slashes > 0 ? "/" : "";
  std::vector<std::string_view> parts;
  std::string_view rest(path);
  rest.remove_prefix(slashes);
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == ".." && (!lead.empty() || (!parts.empty() && parts.back() != ".."))) {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out = lead;
  for (size_t i = 0; i < parts.size(); ++i) (out += i ? "/" : "") += parts[i];
  return out.empty() ? "." : out;
}

SitePath add_site_dirs(const std::vector<std::string>& initial, const std::vector<std::string>& site_dirs,
                       const SiteVersion& version, const support::FileRoot& root) {
  SiteWalk walk{version, root, {}, {}, {}};
  walk.result.sys_path = initial;
  walk.known.insert(initial.begin(), initial.end());
  for (const std::string& dir : site_dirs)
    if (is_dir_in(root, dir)) walk.add_site_dir(dir);
  return std::move(walk.result);
}

std::vector<SiteCode> customize_modules(const std::vector<std::string>& sys_path, bool user_site,
                                        const support::FileRoot& root) {
  std::vector<SiteCode> out;
  std::vector<std::string> names = {"sitecustomize"};
  if (user_site) names.push_back("usercustomize");
  for (const std::string& name : names) {
    for (const std::string& entry : sys_path) {
      if (entry.empty() || entry[0] != '/' || !is_dir_in(root, entry)) continue;
      // importlib's FileFinder: a package directory first, then extension modules, source, bytecode.
      std::string found;
      if (exists_in(root, entry + "/" + name + "/__init__.py")) found = entry + "/" + name + "/__init__.py";
      std::error_code ec;
      for (fs::directory_iterator it(root.host(entry), ec); found.empty() && !ec && it != fs::directory_iterator();
           it.increment(ec)) {
        std::string file = it->path().filename().string();
        if (file.starts_with(name + ".") && file.ends_with(".so")) found = entry + "/" + file;
      }
      for (const char* ext : {".py", ".pyc"})
        if (found.empty() && exists_in(root, entry + "/" + name + ext)) found = entry + "/" + name + ext;
      if (found.empty()) continue;
      out.push_back({found, 0, name});
      break;
    }
  }
  return out;
}

SiteRules read_site_rules(const std::string& base_prefix, const std::string& xy, const support::FileRoot& root) {
  SiteRules rules;
  for (const char* libdir : {"lib64", "lib"}) {
    std::string stdlib = base_prefix + "/" + libdir + "/python" + xy;
    if (exists_in(root, stdlib + "/os.py") || exists_in(root, stdlib + "/os.pyc")) {
      rules.platlibdir = libdir;
      break;
    }
  }
  std::string site = base_prefix + "/" + rules.platlibdir + "/python" + xy + "/site.py";
  std::optional<std::string> text = read_bounded_file(root.host(site), kMaxSitePy, nullptr);
  if (!text) return rules;
  // Upstream's site.py speaks of /usr/local and site-packages only in its docstring, unquoted.
  if (text->find("\"dist-packages\"") != std::string::npos) rules.flavor = SiteFlavor::kDebian;
  else if (text->find("\"/usr/local\"") != std::string::npos) rules.flavor = SiteFlavor::kFedora;
  return rules;
}

std::vector<std::string> getsitepackages(const SiteRules& rules, const std::string& xy,
                                         const std::vector<std::string>& prefixes, bool in_venv) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::vector<std::string> libdirs = {rules.platlibdir};
  if (rules.platlibdir != "lib") libdirs.push_back("lib");
  std::vector<std::string> all = prefixes;
  // Fedora's patch: /usr/local's directories before the system's, outside a virtual environment.
  if (rules.flavor == SiteFlavor::kFedora && !in_venv) all.insert(all.begin(), "/usr/local");
  for (const std::string& prefix : all) {
    if (prefix.empty() || !seen.insert(prefix).second) continue;
    std::string p = prefix == "/" ? "" : prefix;
    if (rules.flavor != SiteFlavor::kDebian) {
      for (const std::string& libdir : libdirs) out.push_back(p + "/" + libdir + "/python" + xy + "/site-packages");
      continue;
    }
    // Debian's site.py: a venv's own site-packages, then pip's, apt's and the deprecated one.
    if (in_venv) out.push_back(p + "/lib/python" + xy + "/site-packages");
    out.push_back(p + "/local/lib/python" + xy + "/dist-packages");
    out.push_back(p + "/lib/python3/dist-packages");
    for (const std::string& libdir : libdirs) out.push_back(p + "/" + libdir + "/python" + xy + "/dist-packages");
  }
  return out;
}

}  // namespace envdoctor::python
