// libFuzzer target for what an MCP client sends `envdoctor mcp`: any bytes as one line, read as
// a JSON-RPC message (mcp/protocol.h); a tools/call's arguments then held to every tool's
// inputSchema (mcp::argument_problem), and each answer written as the server would write it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cuda/tables.h"
#include "mcp/protocol.h"
#include "mcp/tools.h"

using namespace envdoctor::mcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<Tool> tools = [] {
    std::string error;
    auto loaded = load_tools(envdoctor::cuda::default_data_dir() + "/schemas", &error);
    return loaded ? std::move(*loaded) : std::vector<Tool>{};
  }();
  std::string_view line(reinterpret_cast<const char*>(data), size);
  Message m = parse_message(line);
  static volatile size_t sink = 0;
  if (m.kind == Message::Kind::kInvalid) sink += error_line(m.id, m.error_code, m.error_message).size();
  if (m.kind == Message::Kind::kRequest && m.method == "tools/call" && m.params.is_object()) {
    Json arguments = m.params.contains("arguments") ? m.params["arguments"] : Json::object();
    for (const Tool& t : tools) sink += argument_problem(t.input_schema, arguments).size();
    sink += result_line(m.id, ToolResult{nullptr, std::to_string(sink), true}.to_json()).size();
  }
  return 0;
}
