// The subcommands. Each takes its parsed options, writes results to stdout and diagnostics to
// stderr, and returns the process exit status: 0 all loads succeed, 1 a load would fail,
// 2 the tool could not do its job.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "environment/session.h"

namespace envdoctor::cli {

using environment::LoaderOptions;  // --root, --ld-library-path, GLIBC_TUNABLES

// `ldd` and `tree`.
struct LddOptions {
  environment::LoaderOptions loader;
  std::string python;         // --python EXE: the interpreter extension modules are loaded into
  bool exact = false;         // --exact: what ld.so prints, every file a main program of its own
  bool bind_symbols = false;  // -r: bind every symbol, as `ldd -r`
  bool no_cache = false;      // --no-cache
};

// check's report: --format text|json|nhc|prom (--json is json).
enum class Format { kText, kJson, kNhc, kProm };

struct CheckOptions {
  std::string python;  // --python EXE
  std::string prefix;  // --prefix DIR (implies --no-exec)
  bool no_exec = false;
  environment::LoaderOptions loader;
  bool verify_hashes = false;
  bool all_files = false;            // --all-files: every file held to its record, not only those that load
  bool json = false;                 // --json (why, snapshot, diff; check's is its format)
  bool only_errors = false;          // --only-errors: the text lists errors only
  bool all = false;                  // --all: the text lists infos too
  Format format = Format::kText;     // --format, or --json
  std::string output;                // --output FILE: written through a temporary file and rename
  std::vector<std::string> without;  // --without PKG: as pip uninstall would leave it
  std::vector<std::string> with;     // --with WHEEL: as pip install would leave it
  environment::NodeRequest node;     // --gpu, --driver, --node (environment/node.h)
  bool all_environments = false;     // --all-environments: the root's or image's other environments too
  bool no_cache = false;             // --no-cache: the persistent index neither read nor written (cli/indexed.h)
};

struct CudaCommandOptions {
  std::string python;  // --python EXE
  std::string prefix;  // --prefix DIR
  environment::LoaderOptions loader;
  environment::NodeRequest node;  // --gpu, --driver, --node
  bool json = false;
  bool no_cache = false;  // --no-cache
};

struct PipOptions {
  bool uv = false;     // `envdoctor uv pip`: uv's plan, and uv runs (the environment found as uv finds it)
  std::string python;  // --python EXE: the environment, and the pip that runs (EXE -m pip)
  environment::LoaderOptions loader;
  bool force = false;             // run pip even when the change would break loads
  bool json = false;              // the plan and prediction as JSON (data/schemas/pip.schema.json)
  std::string action;             // install or uninstall
  std::vector<std::string> args;  // pip's arguments, passed to pip as they are
};

// `mcp`: the tools' default environment; each call may name another.
struct McpOptions {
  std::string python;  // --python EXE
  std::string prefix;  // --prefix DIR
  environment::LoaderOptions loader;
  bool no_cache = false;  // --no-cache: the tools never answered from the persistent index
};

int run_check(const CheckOptions& options);
// `pip install|uninstall ARGS` (and `uv pip ...` with options.uv): the installer's plan checked
// first; the installer runs only if it breaks nothing.
int run_pip(const PipOptions& options);
// `snapshot`: the environment's native state as one canonical JSON document, or its digest alone.
int run_snapshot(const CheckOptions& options, bool digest_only);
// `diff A B`: A and B are snapshot files, or "-" for the environment of `options` checked now.
int run_diff(const CheckOptions& options, const std::string& a, const std::string& b, bool json);
int run_why(const CheckOptions& options, const std::string& name);
int run_ldd(const LddOptions& options, const std::vector<std::string>& files);
int run_tree(const LddOptions& options, const std::vector<std::string>& files);
int run_cuda(const CudaCommandOptions& options);
// The platform tag ELF files earn by auditwheel's policy, and whether wheels' own tags claim more.
// `json`: "" for text; "true" (a bare --json) or "auditwheel" for auditwheel show's documents;
// "envdoctor" for envdoctor's own.
int run_wheel_tag(const std::vector<std::string>& paths, const std::string& json);
// `ps PID`: a running process, read from /proc without ptrace; 2 when it cannot be read.
int run_ps(const std::string& pid, bool json);
// What finding codes mean (docs/findings.md, built in); with no code, the list of codes.
int run_explain(const std::vector<std::string>& codes);
// A Model Context Protocol server on stdio (docs/mcp.md); 0 when the client closes stdin.
int run_mcp(const McpOptions& options);

}  // namespace envdoctor::cli
