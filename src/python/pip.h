// pip as `envdoctor pip` reads it: the user's command line for `pip install` and `pip uninstall`,
// requirements files, and pip's installation report (`pip install --dry-run --report -`,
// https://pip.pypa.io/en/stable/reference/installation-report/). Only reading and spelling here;
// running pip is the caller's (scenarios/pip_plan.h), deciding is the checks'.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace envdoctor::python {

// The command of `envdoctor pip` and `envdoctor uv pip` (and of MCP's guarded_pip): what pip and
// uv are asked to plan, and then run.
enum class PipAction { kInstall, kUninstall };
// "install", "uninstall": the command as pip and uv spell it.
const char* pip_action_name(PipAction action);
// The action a user's word names; nullopt for any other word.
std::optional<PipAction> parse_pip_action(std::string_view word);

// One item of an installation report: what pip would install.
struct ReportItem {
  std::string name;     // metadata.name, as the distribution spells it
  std::string version;  // metadata.version
  std::string url;      // download_info.url
  std::string sha256;   // download_info.archive_info.hashes.sha256 (or archive_info.hash), "" if absent
  bool archive = true;  // false for a directory or a VCS checkout (dir_info, vcs_info): a source tree
  bool direct = true;   // is_direct: given as a URL or path; false when pip found it on an index
};

// The items of a report of version "1" (pip 23.0 and later). nullopt with `error` set for text
// that is not such a report, or a report of another version (pip 22.2's experimental "0").
std::optional<std::vector<ReportItem>> parse_install_report(const std::string& text, std::string* error);

// The local path of a file:// URL, percent-decoded; nullopt for any other URL.
std::optional<std::string> file_url_path(const std::string& url);
// The file:// URL of an absolute path, as pip's path_to_url writes it: "/w/a b.whl" ->
// "file:///w/a%20b.whl".
std::string file_url(const std::string& path);

// The user's `pip install` arguments that say where pip finds distributions (-i, --index-url,
// --extra-index-url, --no-index, -f, --find-links, --trusted-host, --cert, --client-cert,
// --proxy, --timeout, --retries), each with its value, for `pip download` of the same wheels.
std::vector<std::string> index_options(const std::vector<std::string>& args);

// An option of the user's pip arguments that sends the change elsewhere than the environment's
// own scheme (--target, --prefix, --root, --user, --python), which the simulation does not model;
// "" when there is none.
std::string unmodelled_option(const std::vector<std::string>& args);

// What `pip uninstall ARGS` names: the requirement names given, and those of every
// `-r/--requirement FILE` (nested files read relative to the file that names them), as written
// (pip's warnings use them so), duplicates by normalized name dropped. nullopt with `error` in
// pip's words ("Could not open requirements file: ...") when a file cannot be read.
std::optional<std::vector<std::string>> uninstall_names(const std::vector<std::string>& args, std::string* error);

// The same for another installer's uninstall (uv's): which of its options take a value, and
// which `-r` files are read as requirements files (null: all of them; a file it refuses names
// nothing).
struct UninstallSyntax {
  bool (*takes_value)(std::string_view option);
  bool (*reads_as_requirements)(const std::filesystem::path& file) = nullptr;
};
std::optional<std::vector<std::string>> uninstall_names(const std::vector<std::string>& args,
                                                        const UninstallSyntax& syntax, std::string* error);

// The options of `args` that are in `valued` (each with its value: "-f DIR", "-fDIR",
// "--find-links=DIR") or in `flags`, in order: the ones a second command needs to find the same
// distributions.
std::vector<std::string> options_with_values(const std::vector<std::string>& args,
                                             std::span<const std::string_view> valued,
                                             std::span<const std::string_view> flags);

// pip's own warning for a name that is not installed (pip/_internal/commands/uninstall.py).
std::string not_installed_warning(const std::string& name);

}  // namespace envdoctor::python
