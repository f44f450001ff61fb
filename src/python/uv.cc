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

// The lines of `text`, without their "\n" or "\r\n".
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
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

// uv reads a `-r` file by its name: a PEP 751 lock file (pylock.toml, pylock.NAME.toml), a
// pyproject.toml, setup.py or setup.cfg as what they are; any other as a requirements file.
bool uv_reads_as_requirements(const fs::path& file) {
  std::string name = file.filename().string();
  bool pylock = name == "pylock.toml" || (name.starts_with("pylock.") && name.ends_with(".toml") && name.size() > 12);
  return !pylock && name != "pyproject.toml" && name != "setup.py" && name != "setup.cfg";
}

}  // namespace

UvTargetOptions uv_target_options(const std::vector<std::string>& args) {
  return {option_value(args, "--prefix"), option_value(args, "--target"), option_value(args, "--directory")};
}

std::vector<std::string> uv_discovery_options(const std::vector<std::string>& args) {
  static constexpr std::array<std::string_view, 6> kValued = {"--python",      "-p",         "--directory", "--project",
                                                              "--config-file", "--cache-dir"};
  static constexpr std::array<std::string_view, 10> kFlags = {"--system",
                                                              "--break-system-packages",
                                                              "--no-break-system-packages",
                                                              "--managed-python",
                                                              "--no-managed-python",
                                                              "--no-python-downloads",
                                                              "--no-config",
                                                              "--no-cache",
                                                              "-n",
                                                              "--offline"};
  return options_with_values(args, kValued, kFlags);
}

std::optional<std::string> parse_uv_environment(std::string_view text, const std::string& cwd, std::string* error) {
  constexpr std::string_view kUsing = "Using Python ", kAt = " environment at: ";
  for (std::string_view line : lines_of(text)) {
    size_t using_at = line.find(kUsing), at = line.find(kAt);
    if (using_at == std::string_view::npos || at == std::string_view::npos || at < using_at) continue;
    std::string version(line.substr(using_at + kUsing.size(), at - using_at - kUsing.size()));
    fs::path root = fs::path(cwd) / std::string(trim(line.substr(at + kAt.size())));
    root = root.lexically_normal();
    std::string minor = version.substr(0, version.find('.', version.find('.') + 1));
    std::error_code ec;
    // A virtual environment's own name for its interpreter; elsewhere (/usr) several may share it.
    if (fs::exists(root / "pyvenv.cfg", ec) && fs::exists(root / "bin" / "python", ec))
      return (root / "bin" / "python").string();
    for (const std::string& name : {"python" + minor, std::string("python3"), std::string("python")})
      if (fs::exists(root / "bin" / name, ec)) return (root / "bin" / name).string();
    *error = "uv names the environment at " + root.string() + ", which has no bin/python" + minor;
    return std::nullopt;
  }
  *error = "uv named no environment (no \"Using Python ... environment at: ...\" line)";
  return std::nullopt;
}

std::optional<std::vector<std::string>> uv_uninstall_names(const std::vector<std::string>& args, std::string* error) {
  return uninstall_names(args, UninstallSyntax{uv_takes_value, uv_reads_as_requirements}, error);
}

std::vector<std::string> uv_dry_run_args(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    bool quiet = a == "--quiet" || (a.size() >= 2 && a[0] == '-' && a.find_first_not_of('q', 1) == std::string::npos);
    if (a == "--dry-run" || a.rfind("--color=", 0) == 0 || quiet) continue;
    if (a == "--color") {
      i++;
      continue;
    }
    out.push_back(a);
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
  for (std::string_view line : lines_of(text)) {
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
