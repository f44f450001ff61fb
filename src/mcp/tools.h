// The MCP tools: envdoctor's questions as an agent asks them, each answered by the same functions
// the command line calls (environment/session.h, run.h, simulation.h, pip_plan.h, why.h, single_file.h,
// cuda_summary.h, live_checks.h) and rendered by the same renderers, into strings: a tool call
// never writes to stdout, which carries protocol messages alone.
//
// Every tool has an inputSchema, an outputSchema (the JSON Schema of the command's --json
// document, data/schemas/, read at start-up from the installed tables' directory) and annotations
// that say the truth: all are read-only except guarded_pip, which runs pip. Its result carries
// `structuredContent` (the same document `--json` prints) and a short text rendering (the
// command's text). A domain failure (an environment that cannot be read, a missing wheel) is a
// result with isError and the command line's sentence; a finding, however bad, is an answer.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "environment/session.h"
#include "mcp/protocol.h"

namespace envdoctor::mcp {

struct ToolResult {
  Json structured;  // null when there is none (a failure)
  std::string text;
  bool is_error = false;

  Json to_json() const;  // a CallToolResult
};

struct Tool {
  std::string name, title, description;
  Json input_schema, output_schema, annotations;
  ToolResult (*call)(const Json& arguments, const environment::EnvironmentRequest& defaults, std::stop_token stop);

  Json to_json() const;  // a Tool of tools/list
};

// Every tool, with its output schema read from `schema_dir` (data/schemas). nullopt with `error`
// when a schema cannot be read.
std::optional<std::vector<Tool>> load_tools(const std::string& schema_dir, std::string* error);

// The node a call's "gpus" and "driver" name (this machine's for what they leave out).
environment::NodeRequest node_of(const Json& arguments);

// Whether the persistent index (support/run_index.h) may answer `tool`: the read-only tools,
// whose answers come from files, but not `process`, which reads a running process.
bool indexed(const Tool& tool);

// "" when `arguments` holds to `schema` (the subset of JSON Schema the input schemas use: object,
// properties, required, additionalProperties false, string, boolean, integer with minimum, arrays
// of strings with minItems, enum); else a sentence for the agent naming the argument.
std::string argument_problem(const Json& schema, const Json& arguments);

}  // namespace envdoctor::mcp
