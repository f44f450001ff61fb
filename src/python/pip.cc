#include "python/pip.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>

#include "python/metadata_file.h"

namespace envdoctor::python {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A string member of a JSON object, or "" when absent or of another type.
std::string text_of(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<ReportItem> report_item(const json& item, std::string* error) {
  const json& metadata = item.is_object() ? item.value("metadata", json::object()) : json();
  const json& info = item.is_object() ? item.value("download_info", json::object()) : json();
  ReportItem out;
  out.name = text_of(metadata, "name");
  out.version = text_of(metadata, "version");
  out.url = text_of(info, "url");
  if (out.name.empty() || out.version.empty() || out.url.empty()) {
    *error = "pip's installation report has an item without metadata.name, metadata.version or download_info.url";
    return std::nullopt;
  }
  out.archive = info.is_object() && info.contains("archive_info");
  // Only a direct requirement gets a direct_url.json (PEP 610); one found on an index does not.
  if (item.is_object() && item.contains("is_direct") && item["is_direct"].is_boolean())
    out.direct = item["is_direct"].get<bool>();
  if (out.archive) {
    const json& archive = info["archive_info"];
    if (archive.is_object() && archive.contains("hashes")) out.sha256 = text_of(archive["hashes"], "sha256");
    // Reports before pip 22.3 give only "hash": "sha256=HEX".
    std::string legacy = text_of(archive, "hash");
    if (out.sha256.empty() && legacy.rfind("sha256=", 0) == 0) out.sha256 = legacy.substr(7);
  }
  return out;
}

// Option names (long, and short where pip has one) that take a value, in pip's general and
// uninstall options: their value is not a requirement name.
bool takes_value(std::string_view option) {
  static const std::set<std::string_view> kWithValue = {"--root-user-action",
                                                        "--log",
                                                        "--log-file",
                                                        "--local-log",
                                                        "--cache-dir",
                                                        "--proxy",
                                                        "--retries",
                                                        "--timeout",
                                                        "--exists-action",
                                                        "--trusted-host",
                                                        "--cert",
                                                        "--client-cert",
                                                        "--use-feature",
                                                        "--use-deprecated",
                                                        "--keyring-provider",
                                                        "--python",
                                                        "--progress-bar"};
  return kWithValue.count(option) != 0;
}

// The PEP 508 name at the start of a requirement ("Foo_Bar[x]>=1; ..." -> "Foo_Bar").
std::string requirement_name(std::string_view req) {
  size_t n = 0;
  while (n < req.size() &&
         (std::isalnum(static_cast<unsigned char>(req[n])) || req[n] == '.' || req[n] == '-' || req[n] == '_'))
    n++;
  return std::string(req.substr(0, n));
}

class NameCollector {
 public:
  NameCollector(const UninstallSyntax& syntax, std::string* error) : syntax_(syntax), error_(error) {}

  void add(std::string_view req) {
    std::string name = requirement_name(req);
    if (name.empty()) return;
    if (seen_.insert(normalize_name(name)).second) names_.push_back(name);
  }

  // A requirements file as pip reads it (pip/_internal/req/req_file.py): `#` starts a comment at
  // the start of a line or after whitespace, a trailing backslash joins lines, option lines are
  // skipped except -r/--requirement, which nests.
  bool read_file(const fs::path& path, int depth) {
    if (syntax_.reads_as_requirements && !syntax_.reads_as_requirements(path)) return true;
    std::ifstream in(path);
    if (!in || depth > 16) {
      // pip's words: "Could not open requirements file: [Errno 2] No such file or directory: 'r.txt'".
      *error_ = "Could not open requirements file: [Errno 2] No such file or directory: '" + path.string() + "'";
      return false;
    }
    std::string line, joined;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\\') {
        joined += line.substr(0, line.size() - 1);
        continue;
      }
      joined += line;
      if (!read_line(path, joined, depth)) return false;
      joined.clear();
    }
    return joined.empty() || read_line(path, joined, depth);
  }

  std::vector<std::string> names() && { return std::move(names_); }

 private:
  bool read_line(const fs::path& file, std::string line, int depth) {
    for (size_t i = 0; i < line.size(); i++)
      if (line[i] == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1])))) {
        line.resize(i);
        break;
      }
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos) return true;
    line = line.substr(start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line[0] != '-') {
      add(line);
      return true;
    }
    for (std::string_view flag : {"--requirement", "-r"}) {
      if (line.rfind(flag, 0) != 0) continue;
      std::string rest = line.substr(flag.size());
      size_t at = rest.find_first_not_of(" =\t");
      if (at == std::string::npos) return true;
      fs::path nested = rest.substr(at);
      return read_file(nested.is_absolute() ? nested : file.parent_path() / nested, depth + 1);
    }
    return true;
  }

  const UninstallSyntax& syntax_;
  std::string* error_;
  std::set<std::string> seen_;
  std::vector<std::string> names_;
};

}  // namespace

const char* pip_action_name(PipAction action) {
  switch (action) {
    case PipAction::kInstall: return "install";
    case PipAction::kUninstall: return "uninstall";
  }
  return "";
}

std::optional<PipAction> parse_pip_action(std::string_view word) {
  for (PipAction a : {PipAction::kInstall, PipAction::kUninstall})
    if (word == pip_action_name(a)) return a;
  return std::nullopt;
}

std::optional<std::vector<ReportItem>> parse_install_report(const std::string& text, std::string* error) {
  json report = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!report.is_object()) {
    *error = "pip's installation report is not a JSON object";
    return std::nullopt;
  }
  std::string version = text_of(report, "version");
  if (version != "1") {
    *error = "pip's installation report has version \"" + version +
             "\"; envdoctor reads version \"1\" (pip 23.0 and later): upgrade pip in this environment";
    return std::nullopt;
  }
  std::vector<ReportItem> items;
  const json& install = report.value("install", json::array());
  if (!install.is_array()) {
    *error = "pip's installation report has no \"install\" list";
    return std::nullopt;
  }
  for (const json& item : install) {
    std::optional<ReportItem> one = report_item(item, error);
    if (!one) return std::nullopt;
    items.push_back(std::move(*one));
  }
  return items;
}

std::optional<std::string> file_url_path(const std::string& url) {
  constexpr std::string_view kScheme = "file://";
  if (url.rfind(kScheme, 0) != 0) return std::nullopt;
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  // file://localhost/p and file:///p (RFC 8089); no other host is this machine.
  if (rest.rfind("localhost/", 0) == 0) rest.remove_prefix(9);
  if (rest.empty() || rest[0] != '/') return std::nullopt;
  std::string path;
  for (size_t i = 0; i < rest.size(); i++) {
    auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); };
    if (rest[i] == '%' && i + 2 < rest.size() && hex(rest[i + 1]) && hex(rest[i + 2])) {
      path += static_cast<char>(std::stoi(std::string(rest.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      path += rest[i];
    }
  }
  return path;
}

std::string file_url(const std::string& path) {
  std::string out = "file://";
  for (unsigned char c : path) {
    bool plain = std::isalnum(c) || std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos;
    if (plain) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::vector<std::string> index_options(const std::vector<std::string>& args) {
  static constexpr std::array<std::string_view, 11> kValued = {"--index-url",
                                                               "--extra-index-url",
                                                               "--find-links",
                                                               "--trusted-host",
                                                               "--cert",
                                                               "--client-cert",
                                                               "--proxy",
                                                               "--timeout",
                                                               "--retries",
                                                               "-i",
                                                               "-f"};
  static constexpr std::array<std::string_view, 1> kFlags = {"--no-index"};
  return options_with_values(args, kValued, kFlags);
}

std::string unmodelled_option(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    for (std::string_view option : {"--target", "-t", "--prefix", "--root", "--user", "--python"})
      if (a == option || a.rfind(std::string(option) + "=", 0) == 0) return std::string(option);
  return "";
}

std::optional<std::vector<std::string>> uninstall_names(const std::vector<std::string>& args,
                                                        const UninstallSyntax& syntax, std::string* error) {
  NameCollector names(syntax, error);
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (a == "-r" || a == "--requirement" || a == "--requirements") {
      if (i + 1 < args.size() && !names.read_file(args[++i], 0)) return std::nullopt;
    } else if (a.rfind("--requirement=", 0) == 0 || a.rfind("--requirements=", 0) == 0) {
      if (!names.read_file(a.substr(a.find('=') + 1), 0)) return std::nullopt;
    } else if (a.rfind("-r", 0) == 0 && a.size() > 2) {
      if (!names.read_file(a.substr(2), 0)) return std::nullopt;
    } else if (!a.empty() && a[0] == '-') {
      if (syntax.takes_value(a)) i++;
    } else {
      names.add(a);
    }
  }
  return std::move(names).names();
}

std::optional<std::vector<std::string>> uninstall_names(const std::vector<std::string>& args, std::string* error) {
  return uninstall_names(args, UninstallSyntax{takes_value}, error);
}

std::vector<std::string> options_with_values(const std::vector<std::string>& args,
                                             std::span<const std::string_view> valued,
                                             std::span<const std::string_view> flags) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
      out.push_back(a);
      continue;
    }
    for (std::string_view option : valued) {
      if (a == option && i + 1 < args.size()) {
        out.push_back(a);
        out.push_back(args[++i]);
        break;
      }
      bool joined =
          option.size() == 2 ? a.size() > 2 && a.rfind(option, 0) == 0 : a.rfind(std::string(option) + "=", 0) == 0;
      if (joined) {
        out.push_back(a);
        break;
      }
    }
  }
  return out;
}

std::string not_installed_warning(const std::string& name) {
  return "WARNING: Skipping " + name + " as it is not installed.";
}

}  // namespace envdoctor::python
