// envdoctor's command line: one subcommand per question (see DESIGN.md, "Command line").
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "support/text.h"

namespace {

// What CLI11 says of a slip, said as a person would: an unknown command or option is named, with
// the nearest real one ("did you mean check?"); nullopt leaves the error to CLI11 (--help,
// missing values, ...).
std::optional<std::string> explain_parse_error(const CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' && std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    std::string why = std::string("'") + argv[1] + "' is not an envdoctor command";
    if (auto near = envdoctor::support::did_you_mean(argv[1], commands)) why += "; did you mean '" + *near + "'?";
    return why + " (envdoctor --help lists them)";
  }
  if (!dynamic_cast<const CLI::ExtrasError*>(&e)) return std::nullopt;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (!sub->parsed()) continue;
    std::vector<std::string> options;
    for (const CLI::Option* o : sub->get_options())
      for (const std::string& name : o->get_lnames()) options.push_back("--" + name);
    // CLI11 hands what a subcommand does not know up to the application, last first.
    std::vector<std::string> extras = sub->remaining();
    for (const std::string& x : app.remaining()) extras.push_back(x);
    // An unknown option first: the arguments after it are often its value.
    std::stable_partition(extras.begin(), extras.end(), [](const std::string& x) { return x.starts_with("-"); });
    for (const std::string& extra : extras) {
      std::string why = sub->get_name() + ": ";
      if (!extra.starts_with("-"))
        return why + "unexpected argument '" + extra + "' (envdoctor " + sub->get_name() +
               " --help lists what it takes)";
      std::string name = extra.substr(0, extra.find('='));
      why += "unknown option " + name;
      if (auto near = envdoctor::support::did_you_mean(name, options)) why += "; did you mean " + *near + "?";
      return why;
    }
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace envdoctor::cli;
  CLI::App app{"envdoctor: will every native library in this Python environment load?"};
  app.set_version_flag("--version", std::string("envdoctor ") + ENVDOCTOR_VERSION);
  app.require_subcommand(1);
  const char* kPythonHelp =
      "the interpreter (default: the environment envdoctor is installed in, $VIRTUAL_ENV, $CONDA_PREFIX, python3 on PATH)";

  const char* kPrefixHelp = "an environment's prefix, read without running anything";

  LoaderOptions loader;
  std::string ld_library_path;
  auto add_loader_options = [&](CLI::App* cmd) {
    cmd->add_option("--root", loader.root, "read a container's root file system: its ld.so.cache and dirs")
        ->type_name("DIR");
    cmd->add_option("--ld-library-path", ld_library_path,
                    "LD_LIBRARY_PATH to model (default: this process's environment)")
        ->type_name("PATHS");
  };

  // --image REF for the commands that read one environment as check does.
  auto add_image_option = [&](CLI::App* cmd) {
    cmd->add_option("--image", loader.image,
                    "a container image, read without running it: an OCI layout (DIR[:TAG]), an OCI or docker "
                    "archive (FILE[:TAG]), or a squashfs image; its layers are cached in $XDG_CACHE_HOME/envdoctor")
        ->type_name("REF");
  };
  auto add_node_option = [&](CLI::App* cmd, std::string& node) {
    cmd->add_option("--node", node,
                    "check against the driver and GPUs of the node an `envdoctor snapshot` was taken on")
        ->type_name("SNAPSHOT");
  };

  CheckOptions check_options;
  CLI::App* check = app.add_subcommand("check", "will every native library of this Python environment load?");
  check->add_option("--python", check_options.python, kPythonHelp)->type_name("EXE");
  check->add_option("--prefix", check_options.prefix, kPrefixHelp)->type_name("DIR");
  check->add_flag("--no-exec", check_options.no_exec, "never run the interpreter (needs --prefix)");
  check->add_flag("--verify-hashes", check_options.verify_hashes, "compare every file's sha256 with its RECORD");
  check->add_flag("--all-files", check_options.all_files,
                  "report every file that differs from its record, not only the files that load (ELF files)");
  CLI::Option* only_errors =
      check->add_flag("--only-errors", check_options.only_errors, "list errors only (warnings are still counted)");
  check->add_flag("--all", check_options.all, "list every finding, without the limit of 5 per code and package")
      ->excludes(only_errors);
  check->add_flag("--json", check_options.json,
                  "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/check.schema.json)");
  check
      ->add_option("--format", check_options.format,
                   "text, json, nhc (one line for NHC and Slurm) or prom (Prometheus)")
      ->check(CLI::IsMember({"text", "json", "nhc", "prom"}))
      ->type_name("FORMAT");
  check->add_option("--output", check_options.output, "write to FILE (a temporary file, then rename) instead of stdout")
      ->type_name("FILE");
  check
      ->add_option("--gpu", check_options.gpus,
                   "check GPU code for this GPU: sm_86, 8.6 or 86 (repeatable; default: this machine's)")
      ->type_name("SM");
  check
      ->add_option("--driver", check_options.driver,
                   "check CUDA runtimes against this driver version, whose libraries (libcuda.so.1, ...) are then "
                   "present (default: this machine's)")
      ->type_name("VERSION");
  check
      ->add_option("--without", check_options.without,
                   "check the environment as `pip uninstall PKG` would leave it (repeatable)")
      ->type_name("PKG");
  check
      ->add_option("--with", check_options.with,
                   "check the environment as `pip install WHEEL` would leave it (repeatable)")
      ->type_name("WHEEL");
  add_loader_options(check);
  add_image_option(check);
  add_node_option(check, check_options.node);

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

  PipOptions uv_options;
  uv_options.uv = true;
  CLI::App* uv = app.add_subcommand("uv", "uv pip install|uninstall ARGS: uv's own plan checked first");
  uv->require_subcommand(1);
  CLI::App* uv_pip = uv->add_subcommand(
      "pip", "uv pip install|uninstall ARGS: uv's own plan checked first; uv runs only if it breaks nothing");
  uv_pip->add_flag("--force", uv_options.force, "run uv even when its change would introduce errors");
  uv_pip->add_flag("--json", uv_options.json,
                   "the plan and the prediction as JSON (share/envdoctor/schemas/pip.schema.json); uv's output "
                   "goes to stderr");
  // Everything from the action on is uv's, passed to it as it is: --python, --system and the
  // rest find the environment as uv finds it.
  uv_pip->prefix_command();
  uv_pip->add_option("ACTION", uv_options.action, "install or uninstall")->required();

  std::string why_name;
  CheckOptions why_options;
  CLI::App* why =
      app.add_subcommand("why", "a SONAME, path or package: who needs it, where it resolves and why, who owns it");
  why->add_option("NAME", why_name, "libcudnn.so.9, a path, or a package name")->required()->type_name("NAME");
  why->add_option("--python", why_options.python, kPythonHelp)->type_name("EXE");
  why->add_option("--prefix", why_options.prefix, kPrefixHelp)->type_name("DIR");
  why->add_flag("--json", why_options.json,
                "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/why.schema.json)");
  add_loader_options(why);
  add_image_option(why);

  std::vector<std::string> files;
  LddOptions ldd_options;
  auto add_ldd_options = [&](CLI::App* cmd) {
    add_loader_options(cmd);
    cmd->add_option("--python", ldd_options.python,
                    "with -r: the interpreter extension modules are loaded into (default: as check finds one)")
        ->type_name("EXE");
    cmd->add_flag("-r,--function-relocs", ldd_options.bind_symbols,
                  "as `ldd -r`: also bind every symbol; those that wait for a library that is not found are "
                  "counted, one line per library, and the others listed");
    cmd->add_flag("--exact", ldd_options.exact,
                  "print what ld.so prints: every file a program of its own (extension modules included) "
                  "and, with -r, every unbound symbol");
    cmd->add_option("FILE", files, "ELF files")->required()->type_name("FILE");
  };
  CLI::App* ldd = app.add_subcommand(
      "ldd", "the loader model on single files, in ldd's format: libraries and symbol versions (-r: symbols)");
  add_ldd_options(ldd);

  CLI::App* tree = app.add_subcommand("tree", "the same as a tree: why each library was found where it was");
  add_ldd_options(tree);

  CudaCommandOptions cuda_options;
  CLI::App* cuda = app.add_subcommand("cuda", "driver, GPUs, CUDA runtimes, and which packages use which");
  cuda->add_option("--python", cuda_options.python, kPythonHelp)->type_name("EXE");
  cuda->add_option("--prefix", cuda_options.prefix, kPrefixHelp)->type_name("DIR");
  cuda->add_option("--gpu", cuda_options.gpus, "show coverage for this GPU instead of this machine's (repeatable)")
      ->type_name("SM");
  cuda->add_option("--driver", cuda_options.driver, "take this driver version instead of this machine's")
      ->type_name("VERSION");
  cuda->add_flag("--json", cuda_options.json,
                 "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/cuda.schema.json)");
  add_loader_options(cuda);
  add_image_option(cuda);
  add_node_option(cuda, cuda_options.node);

  CheckOptions snapshot_options;
  bool digest_only = false;
  CLI::App* snapshot = app.add_subcommand("snapshot", "the environment's native state as one canonical JSON document");
  snapshot->add_option("--python", snapshot_options.python, kPythonHelp)->type_name("EXE");
  snapshot->add_option("--prefix", snapshot_options.prefix, kPrefixHelp)->type_name("DIR");
  snapshot->add_option("--gpu", snapshot_options.gpus, "take these GPUs instead of this machine's (repeatable)")
      ->type_name("SM");
  snapshot->add_option("--driver", snapshot_options.driver, "take this driver version instead of this machine's")
      ->type_name("VERSION");
  snapshot->add_flag("--digest", digest_only, "print only the digest (identical environments print identical lines)");
  add_loader_options(snapshot);
  add_image_option(snapshot);
  add_node_option(snapshot, snapshot_options.node);

  std::string diff_a, diff_b;
  bool diff_json = false;
  CheckOptions diff_options;
  CLI::App* diff = app.add_subcommand("diff", "two snapshots (or a snapshot and its environment now, -): what differs");
  diff->add_option("A", diff_a,
                   "a snapshot file, or - for the other snapshot's environment now (--python or --prefix: another)")
      ->required()
      ->type_name("SNAPSHOT");
  diff->add_option("B", diff_b,
                   "a snapshot file, or - for the other snapshot's environment now (--python or --prefix: another)")
      ->required()
      ->type_name("SNAPSHOT");
  diff->add_option("--python", diff_options.python,
                   "the interpreter whose environment - stands for (default: the one the other snapshot is of)")
      ->type_name("EXE");
  diff->add_option("--prefix", diff_options.prefix,
                   "the prefix of the environment - stands for, read without running anything")
      ->type_name("DIR");
  diff->add_flag("--json", diff_json, "JSON on stdout");
  add_loader_options(diff);

  bool wheel_tag_json = false;
  CLI::App* wheel_tag = app.add_subcommand(
      "wheel-tag",
      "the platform tag ELF files earn by auditwheel's policy; for a wheel, whether its own tags claim more");
  wheel_tag->add_option("FILE", files, "ELF files and wheels (.whl)")->required()->type_name("FILE");
  wheel_tag->add_flag("--json", wheel_tag_json,
                      "one line per FILE in auditwheel show --json's shape, envdoctor's fields under \"envdoctor\" "
                      "(docs/json.md; share/envdoctor/schemas/wheel-tag.schema.json)");

  std::string ps_pid;
  bool ps_json = false;
  CLI::App* ps = app.add_subcommand("ps", "a running process: what it loaded, from where, what changed on disk since");
  ps->add_option("PID", ps_pid, "the process id")->required()->type_name("PID");
  ps->add_flag("--json", ps_json, "JSON on stdout");

  std::vector<std::string> explain_codes;
  CLI::App* explain =
      app.add_subcommand("explain", "what a finding code means, why it happens, how to fix it (docs/findings.md)");
  explain->add_option("CODE", explain_codes, "finding codes, as check prints them (none: list every code)")
      ->type_name("CODE");

  McpOptions mcp_options;
  CLI::App* mcp = app.add_subcommand(
      "mcp", "a Model Context Protocol server on stdio: the checks as tools for coding agents (docs/mcp.md)");
  mcp->add_option("--python", mcp_options.python, std::string("the tools' default environment: ") + kPythonHelp)
      ->type_name("EXE");
  mcp->add_option("--prefix", mcp_options.prefix, kPrefixHelp)->type_name("DIR");
  add_loader_options(mcp);

  // Each --help ends with examples (docs/usage.md has more).
  check->footer(
      "Examples:\n"
      "  envdoctor check                                  the environment python3 would run in\n"
      "  envdoctor check --python venv/bin/python         another environment (its interpreter)\n"
      "  envdoctor check --prefix /opt/conda/envs/ml      read a prefix without running anything\n"
      "  envdoctor check --without nvidia-cudnn-cu12      what `pip uninstall` would break\n"
      "  envdoctor check --with dist/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl\n"
      "  envdoctor check --gpu sm_90 --driver 580.65.06   another machine's GPU and driver\n"
      "  envdoctor check --image pytorch.sqsh --node node1.snapshot   an image, on that node\n"
      "  envdoctor check --format nhc                     one line for NHC and Slurm");
  uv_pip->footer(
      "Examples:\n"
      "  envdoctor uv pip uninstall nvidia-cudnn-cu13        in the .venv uv would find from here\n"
      "  envdoctor uv pip install causal-conv1d --python venv/bin/python\n"
      "  envdoctor uv pip --json install -r requirements.txt");
  why->footer(
      "Examples:\n"
      "  envdoctor why libcudnn.so.9\n"
      "  envdoctor why torch\n"
      "  envdoctor why venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so");
  ldd->footer(
      "Examples:\n"
      "  envdoctor ldd /usr/lib/x86_64-linux-gnu/libssl.so.3\n"
      "  envdoctor ldd -r venv/lib/python3.11/site-packages/torch/_C.cpython-311-x86_64-linux-gnu.so\n"
      "  envdoctor ldd -r --exact /usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so");
  tree->footer(
      "Examples:\n"
      "  envdoctor tree /usr/bin/python3\n"
      "  envdoctor tree --python venv/bin/python venv/lib/python3.11/site-packages/numpy/core/*.so");
  cuda->footer(
      "Examples:\n"
      "  envdoctor cuda\n"
      "  envdoctor cuda --gpu sm_120 --driver 575.51.03 --json");
  snapshot->footer(
      "Examples:\n"
      "  envdoctor snapshot > node1.snapshot\n"
      "  pdsh -w 'node[1-64]' envdoctor snapshot --digest | dshbak -c");
  diff->footer(
      "Examples:\n"
      "  envdoctor diff before.snapshot after.snapshot\n"
      "  envdoctor diff node1.snapshot -                    a saved snapshot against its environment now\n"
      "  envdoctor diff venv.snapshot - --python /usr/bin/python3   against another environment");
  wheel_tag->footer(
      "Examples:\n"
      "  envdoctor wheel-tag dist/*.whl                   exit 1 only for a tag that claims more than its files earn\n"
      "  envdoctor wheel-tag build/lib/mypkg/_ext.so      the tag one file earns (exit 0)\n"
      "Policy: auditwheel's own data (share/envdoctor/auditwheel/, from pypa/auditwheel 6.8.1).");
  mcp->footer(
      "Examples:\n"
      "  envdoctor mcp                                    serve the environment envdoctor runs in\n"
      "  envdoctor mcp --python venv/bin/python           serve another environment by default\n"
      "MCP client configuration: \"mcpServers\": {\"envdoctor\": {\"command\": \"envdoctor\", \"args\": [\"mcp\"]}}");
  explain->footer(
      "Examples:\n"
      "  envdoctor explain\n"
      "  envdoctor explain missing-library undefined-symbol");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (std::optional<std::string> why = explain_parse_error(app, argc, argv, e)) {
      std::cerr << "envdoctor: " << *why << "\n";
      return 2;
    }
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  for (CLI::App* cmd : {check, why, ldd, tree, cuda, snapshot, diff, mcp}) {
    if (cmd->parsed() && cmd->count("--ld-library-path")) loader.ld_library_path = ld_library_path;
  }
  // This machine's LD_LIBRARY_PATH and GLIBC_TUNABLES, unless --root (they are not a container's).
  envdoctor::checks::inherit_process_loader(loader);
  if (why->parsed()) {
    why_options.loader = loader;
    return run_why(why_options, why_name);
  }
  if (pip->parsed()) {
    pip_options.loader = loader;
    pip_options.args = pip->remaining();
    return run_pip(pip_options);
  }
  if (uv_pip->parsed()) {
    uv_options.loader = loader;
    uv_options.args = uv_pip->remaining();
    return run_pip(uv_options);
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
  ldd_options.loader = loader;
  if (ldd->parsed()) return run_ldd(ldd_options, files);
  if (tree->parsed()) return run_tree(ldd_options, files);
  if (wheel_tag->parsed()) return run_wheel_tag(files, wheel_tag_json);
  if (explain->parsed()) return run_explain(explain_codes);
  if (ps->parsed()) return run_ps(ps_pid, ps_json);
  if (mcp->parsed()) {
    mcp_options.loader = loader;
    return run_mcp(mcp_options);
  }
  return 2;
}
