// uv as `envdoctor uv pip` reads it: the user's `uv pip install|uninstall` command line, which
// environment it changes (https://docs.astral.sh/uv/pip/environments/), and what `uv pip
// install --dry-run` prints. Only reading and spelling here; running uv is scenarios/uv_plan.h's.
//
// uv has no machine-readable plan in a release (`--output-format json` for `uv pip install` is
// an open pull request, astral-sh/uv#21893), so the plan is read from its dry run's documented
// lines, on stderr:
//   Resolved 3 packages in 12ms
//   Would download 1 package
//   Would uninstall 1 package
//   Would install 2 packages
//    - corepkg==1.0
//    + corepkg==2.0
//    + leaf==1.0 (from file:///w/leaf-1.0-py3-none-any.whl)
// or "Would make no changes". ` ~ name==version` is a reinstall (--reinstall); a direct reference
// may also read ` + leaf @ URL`, without its version.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envdoctor::python {

// The options of a `uv pip` command that decide which environment it changes.
struct UvTargetOptions {
  std::string python;   // --python/-p VALUE: an interpreter's path, a venv directory, or a request ("3.11")
  bool system = false;  // --system
  std::string prefix;   // --prefix DIR
  std::string target;   // --target DIR
};
UvTargetOptions uv_target_options(const std::vector<std::string>& args);

// What uv's discovery reads besides the command line.
struct UvDiscoveryContext {
  std::string virtual_env;        // $VIRTUAL_ENV
  std::string conda_prefix;       // $CONDA_PREFIX
  std::string uv_python;          // $UV_PYTHON: --python's default
  bool uv_system_python = false;  // $UV_SYSTEM_PYTHON set to 1 or true: --system's default
  std::string cwd;                // where .venv is looked for, then in each parent
  // An executable on PATH, as execvp finds it ("" when none).
  std::string (*find_program)(const std::string& name) = nullptr;
};

// The interpreter whose environment `uv pip install|uninstall` changes, as uv's documentation
// says it finds one for a command that modifies an environment: --python (a path to an
// interpreter; a directory, whose bin/python; else a request such as "3.12" or "python3.12",
// looked for on PATH as python3.12), --system (the first python3, then python, on PATH), else
// an active virtual environment ($VIRTUAL_ENV), an active conda environment ($CONDA_PREFIX), or
// a `.venv` in the current directory or the nearest parent that has one. nullopt with `error` in
// uv's words when there is none ("No virtual environment found; ...").
std::optional<std::string> uv_environment_python(const UvTargetOptions& options, const UvDiscoveryContext& context,
                                                 std::string* error);

// `uv pip uninstall` ARGS's names: the packages given and those of each `-r` file
// (requirements.txt as pip reads it, PEP 751 pylock.toml by its [[packages]] names), as written,
// duplicates by normalized name dropped. nullopt with `error` when a file cannot be read.
std::optional<std::vector<std::string>> uv_uninstall_names(const std::vector<std::string>& args, std::string* error);

// The arguments of `uv pip install` ARGS that are requirements (not options or their values),
// and whether any come from files (-r, -e, -c, --overrides... are "other").
struct UvInstallRequests {
  std::vector<std::string> requirements;  // positional: "causal-conv1d", "./x.whl", "y @ file:///..."
  bool from_files = false;                // -r/--requirements or -e/--editable given
  bool no_deps = false;                   // --no-deps
};
UvInstallRequests uv_install_requests(const std::vector<std::string>& args);

// The options of `uv pip install` ARGS that say where uv finds distributions (--index-url/-i,
// --extra-index-url, --index, --default-index, --find-links/-f, --no-index, --index-strategy,
// --keyring-provider, --offline, --cache-dir, --no-cache/-n, --config-file, --no-config), each
// with its value, for laying out the same wheels.
std::vector<std::string> uv_index_options(const std::vector<std::string>& args);

// One line of the dry run's plan.
struct UvPlanLine {
  char change = '+';    // '+' installed, '-' removed, '~' reinstalled
  std::string name;     // as uv prints it (normalized)
  std::string version;  // "" for a direct URL, whose version uv does not print
  std::string url;      // a direct reference's: after " @ ", or in "(from URL)"
};
struct UvDryRun {
  std::vector<UvPlanLine> lines;
  bool no_changes = false;  // "Would make no changes"
};
// The plan in the dry run's stderr. nullopt with `error` when it holds neither a "Would ..."
// summary nor "Would make no changes".
std::optional<UvDryRun> parse_uv_dry_run(std::string_view stderr_text, std::string* error);

// uv's own warning for a name that is not installed (crates/uv/src/commands/pip/uninstall.rs).
std::string uv_not_installed_warning(const std::string& name);

}  // namespace envdoctor::python
