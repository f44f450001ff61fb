#include "python/uv.h"

#include <array>
#include <filesystem>
#include <set>

#include "python/metadata_file.h"
#include "python/pip.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

namespace {

// The value of option `long_name` (or `short_name`) in ARGS: "--python X", "--python=X", "-pX";
// the last one given wins, as in clap.
std::string option_value(const std::vector<std::string>& args, std::string_view long_name,
                         std::string_view short_name = {}) {
  std::string out;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if ((a == long_name || (!short_name.empty() && a == short_name)) && i + 1 < args.size()) out = args[++i];
    else if (a.rfind(std::string(long_name) + "=", 0) == 0) out = a.substr(long_name.size() + 1);
    else if (!short_name.empty() && a.size() > 2 && a.rfind(short_name, 0) == 0 && a[1] != '-') out = a.substr(2);
  }
  return out;
}

// Options of `uv pip install` and `uv pip uninstall` (and uv's global ones) that take a value:
// their value is no requirement (docs.astral.sh/uv/reference/cli/#uv-pip-install).
bool uv_takes_value(std::string_view option) {
  static const std::set<std::string_view> kWithValue = {"--python",
                                                        "-p",
                                                        "--prefix",
                                                        "--target",
                                                        "--keyring-provider",
                                                        "--cache-dir",
                                                        "--config-file",
                                                        "--directory",
                                                        "--project",
                                                        "--color",
                                                        "--constraint",
                                                        "-c",
                                                        "--override",
                                                        "--overrides",
                                                        "--build-constraint",
                                                        "-b",
                                                        "--extra",
                                                        "--index-url",
                                                        "-i",
                                                        "--extra-index-url",
                                                        "--index",
                                                        "--default-index",
                                                        "--find-links",
                                                        "-f",
                                                        "--index-strategy",
                                                        "--resolution",
                                                        "--prerelease",
                                                        "--only-binary",
                                                        "--no-binary",
                                                        "--python-version",
                                                        "--python-platform",
                                                        "--exclude-newer",
                                                        "--link-mode",
                                                        "--config-setting",
                                                        "-C",
                                                        "--no-build-package",
                                                        "--no-binary-package",
                                                        "--upgrade-package",
                                                        "-P",
                                                        "--reinstall-package",
                                                        "--refresh-package",
                                                        "--group",
                                                        "--torch-backend",
                                                        "--allow-insecure-host",
                                                        "--trusted-host",
                                                        "--excludes",
                                                        "--exclude"};
  return kWithValue.count(option) != 0;
}

bool is_virtual_env(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "pyvenv.cfg", ec);
}

}  // namespace

UvTargetOptions uv_target_options(const std::vector<std::string>& args) {
  UvTargetOptions out;
  out.python = option_value(args, "--python", "-p");
  out.prefix = option_value(args, "--prefix");
  out.target = option_value(args, "--target");
  for (const std::string& a : args) out.system |= a == "--system";
  return out;
}

std::optional<std::string> uv_environment_python(const UvTargetOptions& options, const UvDiscoveryContext& context,
                                                 std::string* error) {
  std::string request = options.python.empty() ? context.uv_python : options.python;
  if (!request.empty()) {
    std::error_code ec;
    if (request.find('/') != std::string::npos) {
      // A path: an interpreter, or a virtual environment's directory (uv takes both).
      if (fs::is_directory(request, ec)) return (fs::path(request) / "bin" / "python").string();
      if (fs::exists(request, ec)) return request;
      *error = "No interpreter found at path `" + request + "`";
      return std::nullopt;
    }
    // A request: "3.12", "python3.12", "cpython3.12"; looked for on PATH by its executable name.
    std::string name = request;
    if (name.rfind("cpython", 0) == 0) name = name.substr(7);
    if (name.rfind("python", 0) != 0) name = "python" + name;
    if (std::string found = context.find_program ? context.find_program(name) : ""; !found.empty()) return found;
    *error = "No interpreter found for " + request + " in the system path";
    return std::nullopt;
  }
  if (options.system || context.uv_system_python) {
    for (const char* name : {"python3", "python"})
      if (std::string found = context.find_program ? context.find_program(name) : ""; !found.empty()) return found;
    *error = "No system Python installation found";
    return std::nullopt;
  }
  if (!context.virtual_env.empty()) return (fs::path(context.virtual_env) / "bin" / "python").string();
  if (!context.conda_prefix.empty()) return (fs::path(context.conda_prefix) / "bin" / "python").string();
  for (fs::path dir = fs::absolute(context.cwd).lexically_normal();; dir = dir.parent_path()) {
    if (is_virtual_env(dir / ".venv")) return (dir / ".venv" / "bin" / "python").string();
    if (dir == dir.parent_path()) break;
  }
  *error =
      "No virtual environment found; run `uv venv` to create an environment, or pass `--system` to install into a "
      "non-virtual environment";
  return std::nullopt;
}

std::optional<std::vector<std::string>> uv_uninstall_names(const std::vector<std::string>& args, std::string* error) {
  return uninstall_names(args, UninstallSyntax{uv_takes_value, true}, error);
}

UvInstallRequests uv_install_requests(const std::vector<std::string>& args) {
  UvInstallRequests out;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (a == "-r" || a == "--requirements" || a == "--requirement" || a == "-e" || a == "--editable") {
      out.from_files = true;
      i++;
    } else if (a.rfind("-r", 0) == 0 || a.rfind("-e", 0) == 0 || a.rfind("--requirements=", 0) == 0 ||
               a.rfind("--requirement=", 0) == 0 || a.rfind("--editable=", 0) == 0) {
      out.from_files = true;  // "-rFILE", "-eDIR", "--requirements=FILE"
    } else if (a == "--no-deps") {
      out.no_deps = true;
    } else if (!a.empty() && a[0] == '-') {
      if (uv_takes_value(a)) i++;
    } else {
      out.requirements.push_back(a);
    }
  }
  return out;
}

std::vector<std::string> uv_index_options(const std::vector<std::string>& args) {
  static constexpr std::array<std::string_view, 11> kValued = {"--index-url",
                                                               "--extra-index-url",
                                                               "--index",
                                                               "--default-index",
                                                               "--find-links",
                                                               "--index-strategy",
                                                               "--keyring-provider",
                                                               "--cache-dir",
                                                               "--config-file",
                                                               "-i",
                                                               "-f"};
  static constexpr std::array<std::string_view, 5> kFlags = {"--no-index", "--offline", "--no-cache", "-n",
                                                             "--no-config"};
  return options_with_values(args, kValued, kFlags);
}

std::optional<UvDryRun> parse_uv_dry_run(std::string_view text, std::string* error) {
  UvDryRun out;
  bool summary = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("Would make no changes", 0) == 0) {
      out.no_changes = summary = true;
      continue;
    }
    if (line.rfind("Would ", 0) == 0) {
      summary = true;
      continue;
    }
    // " + name==version", " - name==version", " ~ name==version", " + name @ url".
    if (line.size() < 4 || line[0] != ' ' || line[2] != ' ' || (line[1] != '+' && line[1] != '-' && line[1] != '~'))
      continue;
    UvPlanLine item;
    item.change = line[1];
    std::string_view spec = trim(line.substr(3));
    if (size_t at = spec.find(" @ "); at != std::string_view::npos) {
      item.name = std::string(trim(spec.substr(0, at)));
      item.url = std::string(trim(spec.substr(at + 3)));
    } else if (size_t eq = spec.find("=="); eq != std::string_view::npos) {
      item.name = std::string(spec.substr(0, eq));
      std::string_view version = spec.substr(eq + 2);
      // A version may be followed by its source: "foo==1.0 (from file:///w/foo-1.0-py3-none-any.whl)".
      item.version = std::string(version.substr(0, version.find(' ')));
      if (size_t from = version.find(" (from "); from != std::string_view::npos && version.ends_with(")"))
        item.url = std::string(version.substr(from + 7, version.size() - from - 8));
    } else {
      continue;
    }
    if (!item.name.empty()) out.lines.push_back(std::move(item));
  }
  if (!summary) {
    *error = "uv's dry run printed no plan (no \"Would install\", \"Would uninstall\" or \"Would make no changes\")";
    return std::nullopt;
  }
  return out;
}

std::string uv_not_installed_warning(const std::string& name) {
  return "warning: Skipping " + name + " as it is not installed";
}

}  // namespace envdoctor::python
