// envdoctor's command line: one subcommand per question (see DESIGN.md, "Command line").
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace envdoctor::cli;
  CLI::App app{"envdoctor: will every native library in this Python environment load?"};
  app.set_version_flag("--version", std::string("envdoctor ") + ENVDOCTOR_VERSION);
  app.require_subcommand(1);
  const char* kPythonHelp =
      "the interpreter (default: the environment envdoctor is installed in, $VIRTUAL_ENV, $CONDA_PREFIX, python3 on PATH)";

  LoaderOptions loader;
  std::string ld_library_path;
  auto add_loader_options = [&](CLI::App* cmd) {
    cmd->add_option("--root", loader.root, "read a container's root file system: its ld.so.cache and dirs");
    cmd->add_option("--ld-library-path", ld_library_path,
                    "LD_LIBRARY_PATH to model (default: this process's environment)");
  };

  CheckOptions check_options;
  CLI::App* check = app.add_subcommand("check", "will every native library of this Python environment load?");
  check->add_option("--python", check_options.python, kPythonHelp);
  check->add_option("--prefix", check_options.prefix, "an environment's prefix, read without running anything");
  check->add_flag("--no-exec", check_options.no_exec, "never run the interpreter (needs --prefix)");
  check->add_flag("--verify-hashes", check_options.verify_hashes, "compare every file's sha256 with its RECORD");
  check->add_flag("--json", check_options.json,
                  "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/check.schema.json)");
  check
      ->add_option("--format", check_options.format,
                   "text, json, nhc (one line for NHC and Slurm) or prom (Prometheus)")
      ->check(CLI::IsMember({"text", "json", "nhc", "prom"}));
  check->add_option("--output", check_options.output,
                    "write to FILE (a temporary file, then rename) instead of stdout");
  check->add_option("--gpu", check_options.gpus,
                    "check GPU code for this GPU: sm_86, 8.6 or 86 (repeatable; default: this machine's)");
  check->add_option("--driver", check_options.driver,
                    "check CUDA runtimes against this driver version (default: this machine's)");
  check->add_option("--without", check_options.without,
                    "check the environment as `pip uninstall PKG` would leave it (repeatable)");
  check->add_option("--with", check_options.with,
                    "check the environment as `pip install WHEEL` would leave it (repeatable)");
  add_loader_options(check);

  PipOptions pip_options;
  CLI::App* pip = app.add_subcommand(
      "pip", "pip install|uninstall ARGS: pip's own plan checked first; pip runs only if it breaks nothing");
  pip->add_option("--python", pip_options.python, kPythonHelp);
  pip->add_flag("--force", pip_options.force, "run pip even when its change would introduce errors");
  pip->add_flag("--json", pip_options.json,
                "the plan and the prediction as JSON (share/envdoctor/schemas/pip.schema.json); pip's output "
                "goes to stderr");
  // Everything from the action on is pip's, passed to it as it is.
  pip->prefix_command();
  pip->add_option("ACTION", pip_options.action, "install or uninstall")->required();

  std::string why_name;
  CheckOptions why_options;
  CLI::App* why =
      app.add_subcommand("why", "a SONAME, path or package: who needs it, where it resolves and why, who owns it");
  why->add_option("NAME", why_name, "libcudnn.so.9, a path, or a package name")->required();
  why->add_option("--python", why_options.python, kPythonHelp);
  why->add_option("--prefix", why_options.prefix, "an environment's prefix, read without running anything");
  add_loader_options(why);

  std::vector<std::string> files;
  CLI::App* ldd = app.add_subcommand("ldd", "the loader model on single files, in ldd's format");
  add_loader_options(ldd);
  ldd->add_option("FILE", files, "ELF files")->required();

  CLI::App* tree = app.add_subcommand("tree", "the same as a tree: why each library was found where it was");
  add_loader_options(tree);
  tree->add_option("FILE", files, "ELF files")->required();

  CudaCommandOptions cuda_options;
  CLI::App* cuda = app.add_subcommand("cuda", "driver, GPUs, CUDA runtimes, and which packages use which");
  cuda->add_option("--python", cuda_options.python, kPythonHelp);
  cuda->add_option("--prefix", cuda_options.prefix, "an environment's prefix, read without running anything");
  cuda->add_option("--gpu", cuda_options.gpus, "show coverage for this GPU instead of this machine's (repeatable)");
  cuda->add_option("--driver", cuda_options.driver, "take this driver version instead of this machine's");
  cuda->add_flag("--json", cuda_options.json,
                 "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/cuda.schema.json)");
  add_loader_options(cuda);

  CheckOptions snapshot_options;
  bool digest_only = false;
  CLI::App* snapshot = app.add_subcommand("snapshot", "the environment's native state as one canonical JSON document");
  snapshot->add_option("--python", snapshot_options.python, kPythonHelp);
  snapshot->add_option("--prefix", snapshot_options.prefix, "an environment's prefix, read without running anything");
  snapshot->add_option("--gpu", snapshot_options.gpus, "take these GPUs instead of this machine's (repeatable)");
  snapshot->add_option("--driver", snapshot_options.driver, "take this driver version instead of this machine's");
  snapshot->add_flag("--digest", digest_only, "print only the digest (identical environments print identical lines)");
  add_loader_options(snapshot);

  std::string diff_a, diff_b;
  bool diff_json = false;
  CheckOptions diff_options;
  CLI::App* diff = app.add_subcommand("diff", "two snapshots (or a snapshot and this environment, -): what differs");
  diff->add_option("A", diff_a, "a snapshot file, or - for this environment now")->required();
  diff->add_option("B", diff_b, "a snapshot file, or - for this environment now")->required();
  diff->add_option("--python", diff_options.python, kPythonHelp);
  diff->add_option("--prefix", diff_options.prefix, "an environment's prefix, read without running anything");
  diff->add_flag("--json", diff_json, "JSON on stdout");
  add_loader_options(diff);

  bool wheel_tag_json = false;
  CLI::App* wheel_tag = app.add_subcommand(
      "wheel-tag", "the manylinux tag ELF files earn; for a wheel, whether its tags claim too old a glibc");
  wheel_tag->add_option("FILE", files, "ELF files and wheels (.whl)")->required();
  wheel_tag->add_flag("--json", wheel_tag_json,
                      "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/wheel-tag.schema.json)");

  std::vector<std::string> explain_codes;
  CLI::App* explain =
      app.add_subcommand("explain", "what a finding code means, why it happens, how to fix it (docs/findings.md)");
  explain->add_option("CODE", explain_codes, "finding codes, as check prints them (none: list every code)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  for (CLI::App* cmd : {check, why, ldd, tree, cuda, snapshot, diff}) {
    if (cmd->parsed() && cmd->count("--ld-library-path")) loader.ld_library_path = ld_library_path;
  }
  // This machine's LD_LIBRARY_PATH is not a container's: under --root only the flag counts.
  if (!loader.ld_library_path && loader.root.empty()) {
    if (const char* env = std::getenv("LD_LIBRARY_PATH")) loader.ld_library_path = env;
  }
  if (why->parsed()) {
    why_options.loader = loader;
    return run_why(why_options, why_name);
  }
  if (pip->parsed()) {
    pip_options.loader = loader;
    pip_options.args = pip->remaining();
    return run_pip(pip_options);
  }
  if (check->parsed()) {
    check_options.loader = loader;
    return run_check(check_options);
  }
  if (cuda->parsed()) {
    cuda_options.loader = loader;
    return run_cuda(cuda_options);
  }
  if (snapshot->parsed()) {
    snapshot_options.loader = loader;
    return run_snapshot(snapshot_options, digest_only);
  }
  if (diff->parsed()) {
    diff_options.loader = loader;
    return run_diff(diff_options, diff_a, diff_b, diff_json);
  }
  if (ldd->parsed()) return run_ldd(loader, files);
  if (tree->parsed()) return run_tree(loader, files);
  if (wheel_tag->parsed()) return run_wheel_tag(files, wheel_tag_json);
  if (explain->parsed()) return run_explain(explain_codes);
  return 2;
}
