// JSON-RPC 2.0 as the Model Context Protocol carries it on stdio: one message per line, UTF-8,
// no embedded newlines (modelcontextprotocol.io/specification/2025-11-25/basic/transports).
//
// A line is read into one of four shapes: a request (a method and an id: it gets exactly one
// response), a notification (a method and no id: never answered), a response to us (ignored, as
// this server sends no requests), or something malformed, which is answered with the JSON-RPC
// error the specification names: -32700 when the line is no JSON at all, -32600 when it is JSON
// but no request (an array: MCP has no batches since 2025-06-18; a missing "jsonrpc": "2.0"; an
// id that is neither a string nor an integer). The line comes from whoever started us, so it is
// hostile input: nothing in it is trusted beyond its JSON shape (fuzz/mcp_message_fuzz.cc).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace envdoctor::mcp {

using Json = nlohmann::ordered_json;

// JSON-RPC 2.0's error codes (jsonrpc.org/specification, section 5.1).
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;

struct Message {
  enum class Kind { kRequest, kNotification, kResponse, kInvalid };
  Kind kind = Kind::kInvalid;
  Json id;  // a request's id (string or integer); for an invalid one, its id when readable, else null
  std::string method;
  Json params;  // an object, or null when absent
  // kInvalid: the error to answer with.
  int error_code = 0;
  std::string error_message;
};

Message parse_message(std::string_view line);

// One line each, newline included.
std::string result_line(const Json& id, const Json& result);
std::string error_line(const Json& id, int code, const std::string& message);

// A JSON document without a throw on invalid UTF-8 (a path from the disk): replaced.
std::string dump_line(const Json& message);

}  // namespace envdoctor::mcp
