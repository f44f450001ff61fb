// envdoctor's command line: one subcommand per question (see DESIGN.md, "Command line").
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/indexed.h"
#include "support/text.h"

namespace {

using namespace envdoctor::cli;

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

// A subcommand: its options are declared next to it, into values its `run` owns, and `run`
// calls it once the command line is parsed, with the loader options every command shares.
struct Command {
  CLI::App* app;
  std::function<int(const LoaderOptions& loader)> run;
  // The commands the persistent index answers (check, why, cuda, ldd, tree): their question,
  // asked once the command line is parsed.
  std::function<IndexedQuestion()> index;
};

const char* kNoCacheHelp =
    "answer afresh: read every file again, and neither use nor keep the persistent index "
    "($XDG_CACHE_HOME/envdoctor/index-v1, bounded by ENVDOCTOR_INDEX_MAX)";

const char* kPythonHelp =
    "the interpreter (default: the environment envdoctor is installed in, $VIRTUAL_ENV, $CONDA_PREFIX, python3 on PATH)";
const char* kPrefixHelp = "an environment's prefix, read without running anything";

// --root and --ld-library-path, which every command that models the loader takes. Their values
// are shared: only one subcommand is parsed.
struct LoaderArguments {
  LoaderOptions loader;
  std::string ld_library_path;
  std::vector<CLI::App*> takers;

  void add_to(CLI::App* cmd) {
    cmd->add_option("--root", loader.root, "read a container's root file system: its ld.so.cache and dirs")
        ->type_name("DIR");
    cmd->add_option("--ld-library-path", ld_library_path,
                    "LD_LIBRARY_PATH to model (default: this process's environment)")
        ->type_name("PATHS");
    takers.push_back(cmd);
  }
  // --image REF, for the commands that read one environment as check does.
  void add_image_to(CLI::App* cmd) {
    add_to(cmd);
    cmd->add_option("--image", loader.image,
                    "a container image, read without running it: an OCI layout (DIR[:TAG]), an OCI or docker "
                    "archive (FILE[:TAG]), a squashfs image, or an Apptainer SIF image; its layers are cached in "
                    "$XDG_CACHE_HOME/envdoctor (bounded by ENVDOCTOR_CACHE_MAX, default 20G)")
        ->type_name("REF");
  }
  // After parsing: --ld-library-path where given, then this machine's LD_LIBRARY_PATH and
  // GLIBC_TUNABLES unless --root (they are not a container's).
  LoaderOptions resolve() {
    for (CLI::App* cmd : takers)
      if (cmd->parsed() && cmd->count("--ld-library-path")) loader.ld_library_path = ld_library_path;
    envdoctor::environment::inherit_process_loader(loader);
    return loader;
  }
};

// --gpu and --driver: another machine's GPUs and driver; --node: those a node's snapshot recorded.
void add_node_options(CLI::App* cmd, envdoctor::environment::NodeRequest& node, const char* gpu_help,
                      const char* driver_help) {
  cmd->add_option("--gpu", node.gpus, gpu_help)->type_name("SM");
  cmd->add_option("--driver", node.driver, driver_help)->type_name("VERSION");
  cmd->add_option("--node", node.snapshot, "take the driver and GPUs of the node an `envdoctor snapshot` was taken on")
      ->type_name("SNAPSHOT");
}

Command check_command(CLI::App& app, LoaderArguments& loader) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand("check", "will every native library of this Python environment load?");
  cmd->add_option("--python", o->python, kPythonHelp)->type_name("EXE");
  cmd->add_option("--prefix", o->prefix, kPrefixHelp)->type_name("DIR");
  cmd->add_flag("--no-exec", o->no_exec, "never run the interpreter (needs --prefix)");
  cmd->add_flag("--verify-hashes", o->verify_hashes,
                "compare every file's sha256 with its RECORD (never answered from the persistent index)");
  cmd->add_flag("--no-cache", o->no_cache, kNoCacheHelp);
  cmd->add_flag("--all-files", o->all_files,
                "report every file that differs from its record, not only the files that load (ELF files)");
  CLI::Option* only_errors =
      cmd->add_flag("--only-errors", o->only_errors, "list errors only (warnings are still counted)");
  cmd->add_flag("--all", o->all, "list every finding, without the limit of 5 per code and package")
      ->excludes(only_errors);
  cmd->add_flag("--json", o->json,
                "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/check.schema.json)");
  auto format = std::make_shared<std::string>();
  cmd->add_option("--format", *format, "text, json, nhc (one line for NHC and Slurm) or prom (Prometheus)")
      ->check(CLI::IsMember({"text", "json", "nhc", "prom"}))
      ->type_name("FORMAT");
  cmd->add_option("--output", o->output, "write to FILE (a temporary file, then rename) instead of stdout")
      ->type_name("FILE");
  add_node_options(cmd, o->node, "check GPU code for this GPU: sm_86, 8.6 or 86 (repeatable; default: this machine's)",
                   "check CUDA runtimes against this driver version, whose libraries (libcuda.so.1, ...) are then "
                   "present (default: this machine's)");
  cmd->add_option("--without", o->without, "check the environment as `pip uninstall PKG` would leave it (repeatable)")
      ->type_name("PKG");
  cmd->add_option("--with", o->with, "check the environment as `pip install WHEEL` would leave it (repeatable)")
      ->type_name("WHEEL");
  cmd->add_flag("--all-environments", o->all_environments,
                "with --root or --image: check each of its other Python environments too, one report after "
                "another (JSON: an array), the worst exit status");
  loader.add_image_to(cmd);
  cmd->footer(
      "Examples:\n"
      "  envdoctor check                                  the environment python3 would run in\n"
      "  envdoctor check --python venv/bin/python         another environment (its interpreter)\n"
      "  envdoctor check --prefix /opt/conda/envs/ml      read a prefix without running anything\n"
      "  envdoctor check --without nvidia-cudnn-cu12      what `pip uninstall` would break\n"
      "  envdoctor check --with dist/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl\n"
      "  envdoctor check --gpu sm_90 --driver 580.65.06   another machine's GPU and driver\n"
      "  envdoctor check --image pytorch.sqsh --node node1.snapshot   an image, on that node\n"
      "  envdoctor check --format nhc                     one line for NHC and Slurm");
  return {cmd,
          [o, format](const LoaderOptions& l) {
            o->loader = l;
            // The one reading of the format's word: --format's, else --json's.
            static const std::map<std::string, Format> kFormats = {
                {"text", Format::kText}, {"json", Format::kJson}, {"nhc", Format::kNhc}, {"prom", Format::kProm}};
            o->format = !format->empty() ? kFormats.at(*format) : o->json ? Format::kJson : Format::kText;
            return run_check(*o);
          },
          [o, format] {
            // --verify-hashes reads every byte and trusts no identity; prom's output carries the
            // run's own duration; --output writes a file, which an answer from the index would not.
            bool bypass = o->no_cache || o->verify_hashes || *format == "prom" || !o->output.empty();
            return IndexedQuestion{&o->node, bypass};
          }};
}

Command pip_command(CLI::App& app) {
  auto o = std::make_shared<PipOptions>();
  CLI::App* cmd = app.add_subcommand(
      "pip", "pip install|uninstall ARGS: pip's own plan checked first; pip runs only if it breaks nothing");
  cmd->add_option("--python", o->python, kPythonHelp);
  cmd->add_flag("--force", o->force, "run pip even when its change would introduce errors");
  cmd->add_flag("--json", o->json,
                "the plan and the prediction as JSON (share/envdoctor/schemas/pip.schema.json); pip's output "
                "goes to stderr");
  // Everything from the action on is pip's, passed to it as it is.
  cmd->prefix_command();
  cmd->add_option("ACTION", o->action, "install or uninstall")->required();
  return {cmd, [o, cmd](const LoaderOptions& l) {
            o->loader = l;
            o->args = cmd->remaining();
            return run_pip(*o);
          }};
}

Command uv_pip_command(CLI::App& app) {
  auto o = std::make_shared<PipOptions>();
  o->uv = true;
  CLI::App* uv = app.add_subcommand("uv", "uv pip install|uninstall ARGS: uv's own plan checked first");
  uv->require_subcommand(1);
  CLI::App* cmd = uv->add_subcommand(
      "pip", "uv pip install|uninstall ARGS: uv's own plan checked first; uv runs only if it breaks nothing");
  cmd->add_flag("--force", o->force, "run uv even when its change would introduce errors");
  cmd->add_flag("--json", o->json,
                "the plan and the prediction as JSON (share/envdoctor/schemas/pip.schema.json); uv's output "
                "goes to stderr");
  // Everything from the action on is uv's, passed to it as it is: --python, --system and the
  // rest find the environment as uv finds it.
  cmd->prefix_command();
  cmd->add_option("ACTION", o->action, "install or uninstall")->required();
  cmd->footer(
      "Examples:\n"
      "  envdoctor uv pip uninstall nvidia-cudnn-cu13        in the .venv uv would find from here\n"
      "  envdoctor uv pip install causal-conv1d --python venv/bin/python\n"
      "  envdoctor uv pip --json install -r requirements.txt");
  return {cmd, [o, cmd](const LoaderOptions& l) {
            o->loader = l;
            o->args = cmd->remaining();
            return run_pip(*o);
          }};
}

Command why_command(CLI::App& app, LoaderArguments& loader) {
  auto o = std::make_shared<CheckOptions>();
  auto name = std::make_shared<std::string>();
  CLI::App* cmd =
      app.add_subcommand("why", "a SONAME, path or package: who needs it, where it resolves and why, who owns it");
  cmd->add_option("NAME", *name, "libcudnn.so.9, a path, or a package name")->required()->type_name("NAME");
  cmd->add_option("--python", o->python, kPythonHelp)->type_name("EXE");
  cmd->add_option("--prefix", o->prefix, kPrefixHelp)->type_name("DIR");
  cmd->add_flag("--json", o->json, "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/why.schema.json)");
  loader.add_image_to(cmd);
  cmd->footer(
      "Examples:\n"
      "  envdoctor why libcudnn.so.9\n"
      "  envdoctor why torch\n"
      "  envdoctor why venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so");
  cmd->add_flag("--no-cache", o->no_cache, kNoCacheHelp);
  return {cmd,
          [o, name](const LoaderOptions& l) {
            o->loader = l;
            return run_why(*o, *name);
          },
          [o] {
            return IndexedQuestion{&o->node, o->no_cache};
          }};
}

// ldd and tree: the same options, two listings.
Command single_file_command(CLI::App& app, LoaderArguments& loader, bool as_tree) {
  auto o = std::make_shared<LddOptions>();
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd =
      as_tree ? app.add_subcommand("tree", "the same as a tree: why each library was found where it was")
              : app.add_subcommand(
                    "ldd",
                    "the loader model on single files, in ldd's format: libraries and symbol versions (-r: symbols)");
  loader.add_to(cmd);
  cmd->add_option("--python", o->python,
                  "with -r: the interpreter extension modules are loaded into (default: as check finds one)")
      ->type_name("EXE");
  cmd->add_flag("-r,--function-relocs", o->bind_symbols,
                "as `ldd -r`: also bind every symbol; those that wait for a library that is not found are "
                "counted, one line per library, and the others listed");
  cmd->add_flag("--exact", o->exact,
                "print what ld.so prints: every file a program of its own (extension modules included) "
                "and, with -r, every unbound symbol");
  cmd->add_option("FILE", *files, "ELF files")->required()->type_name("FILE");
  cmd->add_flag("--no-cache", o->no_cache, kNoCacheHelp);
  cmd->footer(as_tree
                  ? "Examples:\n"
                    "  envdoctor tree /usr/bin/python3\n"
                    "  envdoctor tree --python venv/bin/python venv/lib/python3.11/site-packages/numpy/core/*.so"
                  : "Examples:\n"
                    "  envdoctor ldd /usr/lib/x86_64-linux-gnu/libssl.so.3\n"
                    "  envdoctor ldd -r venv/lib/python3.11/site-packages/torch/_C.cpython-311-x86_64-linux-gnu.so\n"
                    "  envdoctor ldd -r --exact /usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so");
  return {cmd,
          [o, files, as_tree](const LoaderOptions& l) {
            o->loader = l;
            return as_tree ? run_tree(*o, *files) : run_ldd(*o, *files);
          },
          [o] {
            return IndexedQuestion{nullptr, o->no_cache};
          }};
}

Command cuda_command(CLI::App& app, LoaderArguments& loader) {
  auto o = std::make_shared<CudaCommandOptions>();
  CLI::App* cmd = app.add_subcommand("cuda", "driver, GPUs, CUDA runtimes, and which packages use which");
  cmd->add_option("--python", o->python, kPythonHelp)->type_name("EXE");
  cmd->add_option("--prefix", o->prefix, kPrefixHelp)->type_name("DIR");
  add_node_options(cmd, o->node, "show coverage for this GPU instead of this machine's (repeatable)",
                   "take this driver version instead of this machine's");
  cmd->add_flag("--json", o->json, "JSON on stdout, schema 1 (docs/json.md; share/envdoctor/schemas/cuda.schema.json)");
  loader.add_image_to(cmd);
  cmd->footer(
      "Examples:\n"
      "  envdoctor cuda\n"
      "  envdoctor cuda --gpu sm_120 --driver 575.51.03 --json");
  cmd->add_flag("--no-cache", o->no_cache, kNoCacheHelp);
  return {cmd,
          [o](const LoaderOptions& l) {
            o->loader = l;
            return run_cuda(*o);
          },
          [o] {
            return IndexedQuestion{&o->node, o->no_cache};
          }};
}

Command snapshot_command(CLI::App& app, LoaderArguments& loader) {
  auto o = std::make_shared<CheckOptions>();
  auto digest_only = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("snapshot", "the environment's native state as one canonical JSON document");
  cmd->add_option("--python", o->python, kPythonHelp)->type_name("EXE");
  cmd->add_option("--prefix", o->prefix, kPrefixHelp)->type_name("DIR");
  add_node_options(cmd, o->node, "take these GPUs instead of this machine's (repeatable)",
                   "take this driver version instead of this machine's");
  cmd->add_flag("--digest", *digest_only, "print only the digest (identical environments print identical lines)");
  loader.add_image_to(cmd);
  cmd->footer(
      "Examples:\n"
      "  envdoctor snapshot > node1.snapshot\n"
      "  pdsh -w 'node[1-64]' envdoctor snapshot --digest | dshbak -c");
  return {cmd, [o, digest_only](const LoaderOptions& l) {
            o->loader = l;
            return run_snapshot(*o, *digest_only);
          }};
}

Command diff_command(CLI::App& app, LoaderArguments& loader) {
  struct DiffArguments {
    CheckOptions options;
    std::string a, b;
    bool json = false;
  };
  auto o = std::make_shared<DiffArguments>();
  CLI::App* cmd = app.add_subcommand("diff", "two snapshots (or a snapshot and its environment now, -): what differs");
  for (std::string* side : {&o->a, &o->b})
    cmd->add_option(side == &o->a ? "A" : "B", *side,
                    "a snapshot file, or - for the other snapshot's environment now (--python or --prefix: another)")
        ->required()
        ->type_name("SNAPSHOT");
  cmd->add_option("--python", o->options.python,
                  "the interpreter whose environment - stands for (default: the one the other snapshot is of)")
      ->type_name("EXE");
  cmd->add_option("--prefix", o->options.prefix,
                  "the prefix of the environment - stands for, read without running anything")
      ->type_name("DIR");
  cmd->add_flag("--json", o->json, "JSON on stdout");
  loader.add_to(cmd);
  cmd->footer(
      "Examples:\n"
      "  envdoctor diff before.snapshot after.snapshot\n"
      "  envdoctor diff node1.snapshot -                    a saved snapshot against its environment now\n"
      "  envdoctor diff venv.snapshot - --python /usr/bin/python3   against another environment");
  return {cmd, [o](const LoaderOptions& l) {
            o->options.loader = l;
            return run_diff(o->options, o->a, o->b, o->json);
          }};
}

Command wheel_tag_command(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "wheel-tag",
      "the platform tag ELF files earn by auditwheel's policy; for a wheel, whether its own tags claim more");
  cmd->add_option("FILE", *files, "ELF files and wheels (.whl)")->required()->type_name("FILE");
  // A flag, so that `--json FILE` never takes FILE for its value: `--json=envdoctor` names the other.
  cmd->add_flag("--json", *json,
                "one line per FILE, each what auditwheel show --json prints (share/envdoctor/schemas/"
                "wheel-tag.schema.json); --json=envdoctor: envdoctor's own document, auditwheel's inside "
                "(share/envdoctor/schemas/wheel-tag-envdoctor.schema.json; docs/json.md)");
  cmd->footer(
      "Examples:\n"
      "  envdoctor wheel-tag dist/*.whl                   exit 1 only for a tag that claims more than its files earn\n"
      "  envdoctor wheel-tag build/lib/mypkg/_ext.so      the tag one file earns (exit 0)\n"
      "  envdoctor wheel-tag --json dist/x.whl            what auditwheel show --json prints for it\n"
      "Policy: auditwheel's own data (share/envdoctor/auditwheel/, from pypa/auditwheel 6.8.1).");
  return {cmd, [files, json](const LoaderOptions&) { return run_wheel_tag(*files, *json); }};
}

Command ps_command(CLI::App& app) {
  auto pid = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("ps", "a running process: what it loaded, from where, what changed on disk since");
  cmd->add_option("PID", *pid, "the process id")->required()->type_name("PID");
  cmd->add_flag("--json", *json, "JSON on stdout");
  return {cmd, [pid, json](const LoaderOptions&) { return run_ps(*pid, *json); }};
}

Command explain_command(CLI::App& app) {
  auto codes = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd =
      app.add_subcommand("explain", "what a finding code means, why it happens, how to fix it (docs/findings.md)");
  cmd->add_option("CODE", *codes, "finding codes, as check prints them (none: list every code)")->type_name("CODE");
  cmd->footer(
      "Examples:\n"
      "  envdoctor explain\n"
      "  envdoctor explain missing-library undefined-symbol");
  return {cmd, [codes](const LoaderOptions&) { return run_explain(*codes); }};
}

Command mcp_command(CLI::App& app, LoaderArguments& loader) {
  auto o = std::make_shared<McpOptions>();
  CLI::App* cmd = app.add_subcommand(
      "mcp", "a Model Context Protocol server on stdio: the checks as tools for coding agents (docs/mcp.md)");
  cmd->add_option("--python", o->python, std::string("the tools' default environment: ") + kPythonHelp)
      ->type_name("EXE");
  cmd->add_option("--prefix", o->prefix, kPrefixHelp)->type_name("DIR");
  loader.add_to(cmd);
  cmd->add_flag("--no-cache", o->no_cache, kNoCacheHelp);
  cmd->footer(
      "Examples:\n"
      "  envdoctor mcp                                    serve the environment envdoctor runs in\n"
      "  envdoctor mcp --python venv/bin/python           serve another environment by default\n"
      "MCP client configuration: \"mcpServers\": {\"envdoctor\": {\"command\": \"envdoctor\", \"args\": [\"mcp\"]}}");
  return {cmd, [o](const LoaderOptions& l) {
            o->loader = l;
            return run_mcp(*o);
          }};
}

}  // namespace

// The subcommands, in the order --help lists them; each --help ends with examples (docs/usage.md
// has more).
int main(int argc, char** argv) {
  CLI::App app{"envdoctor: will every native library in this Python environment load?"};
  app.set_version_flag("--version", std::string("envdoctor ") + ENVDOCTOR_VERSION);
  app.require_subcommand(1);
  LoaderArguments loader;
  const std::vector<Command> commands = {
      check_command(app, loader),
      pip_command(app),
      uv_pip_command(app),
      why_command(app, loader),
      single_file_command(app, loader, false),
      single_file_command(app, loader, true),
      cuda_command(app, loader),
      snapshot_command(app, loader),
      diff_command(app, loader),
      wheel_tag_command(app),
      ps_command(app),
      explain_command(app),
      mcp_command(app, loader),
  };
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
  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    LoaderOptions resolved = loader.resolve();
    if (!c.index) return c.run(resolved);
    return run_indexed(argc, argv, c.index(), [&] { return c.run(resolved); });
  }
  return 2;
}
