// uv as `envdoctor uv pip` reads it: the user's `uv pip install|uninstall` command line, which
// environment it changes (https://docs.astral.sh/uv/pip/environments/), and what `uv pip
// install|uninstall --dry-run` prints. Only reading and spelling here; running uv is
// scenarios/uv_plan.h's.
//
// The plan is read from the dry run's lines on stderr, as uv 0.13.9 prints them (tests/scenarios/uv_test.cc reads
// the real uv's, and holds them to its own `--output-format json`, whose schema uv calls
// experimental and which names no URL):
//   Resolved 3 packages in 12ms
//   Would download 2 packages
//   Would uninstall 1 package
//   Would install 2 packages
//    - corepkg==1.0
//    + corepkg==2.0
//    + leaf @ file:///w/leaf-1.0-py3-none-any.whl
// or "Would make no changes"; a line per distribution, sorted by name, a removal before an
// install. A reinstall is a removal and an install of the same version in the dry run (uv's own
// summary after a real reinstall says ` ~ name==version`); a direct reference is ` + name @ URL`,
// without its version; an installed distribution that came from a URL is `name==version (from
// URL)`. `uv pip uninstall --dry-run` prints "Would uninstall N packages" and the ` - ` lines.
// `--check` prints the same lines but exits 1 both when there are changes and when resolution
// fails, so envdoctor asks for the dry run, whose status is 0 whenever it has a plan.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envdoctor::python {

// The options of a `uv pip` command that say where it works: --prefix and --target install
// elsewhere than an environment's own scheme, which envdoctor does not model; --directory is
// where uv runs, and its paths are relative to.
struct UvTargetOptions {
  std::string prefix;     // --prefix DIR
  std::string target;     // --target DIR
  std::string directory;  // --directory DIR
};
UvTargetOptions uv_target_options(const std::vector<std::string>& args);

// Which environment a `uv pip install|uninstall` changes is uv's to say: its discovery
// (https://docs.astral.sh/uv/pip/environments/) accepts a virtual environment that satisfies a
// request such as `-p 3.12` before any interpreter of that name, takes a virtual environment's
// interpreter first on PATH when no other is found, reads uv.toml, and says "No virtual
// environment found for Python 3.9" in its own words. So envdoctor asks uv (scenarios/uv_plan.h)
// with the options of ARGS that decide it: --python/-p, --system, --break-system-packages,
// --managed-python, --no-managed-python, --no-python-downloads, --directory, --project,
// --config-file, --no-config, --cache-dir, --no-cache/-n and --offline, each with its value.
std::vector<std::string> uv_discovery_options(const std::vector<std::string>& args);

// The interpreter of the environment uv names in its verbose output ("Using Python 3.11.7
// environment at: .venv", relative to `cwd` when not absolute): a virtual environment's
// bin/python; elsewhere bin/pythonX.Y, else bin/python3, else bin/python. nullopt with `error`
// when no line names one.
std::optional<std::string> parse_uv_environment(std::string_view stderr_text, const std::string& cwd,
                                                std::string* error);

// `uv pip uninstall` ARGS's names, for uv's warnings about those that are not installed (the plan
// itself is uv's dry run): the packages given and those of each `-r` requirements file as pip
// reads it, as written, duplicates by normalized name dropped. A PEP 751 lock file (pylock.toml,
// pylock.NAME.toml) names nothing to uninstall (uv 0.13.9: "No packages to uninstall"), and a
// pyproject.toml, setup.py or setup.cfg, whose dependencies uv reads, is not read. nullopt with
// `error` when a file cannot be read.
std::optional<std::vector<std::string>> uv_uninstall_names(const std::vector<std::string>& args, std::string* error);

// The user's ARGS for envdoctor's own dry run of them: without --dry-run and --color, which
// envdoctor gives (clap refuses either twice), and without --quiet (-q, -qq), under which uv
// prints no plan.
std::vector<std::string> uv_dry_run_args(const std::vector<std::string>& args);

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

// uv's own warning for a name that is not installed (crates/uv/src/commands/pip/uninstall.rs),
// which names it normalized (PEP 503), in sorted order.
std::string uv_not_installed_warning(const std::string& name);

}  // namespace envdoctor::python
