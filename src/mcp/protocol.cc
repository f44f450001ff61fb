#include "mcp/protocol.h"

namespace envdoctor::mcp {

namespace {

Message invalid(Json id, int code, std::string message) {
  Message m;
  m.kind = Message::Kind::kInvalid;
  m.id = std::move(id);
  m.error_code = code;
  m.error_message = std::move(message);
  return m;
}

// JSON-RPC allows null and fractional ids; MCP does not (basic/index: "the ID MUST NOT be null"),
// and a client that sends one cannot match our answer to anything.
bool valid_id(const Json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

Message parse_message(std::string_view line) {
  Json j = Json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded()) return invalid(nullptr, kParseError, "Parse error: the line is not JSON");
  if (j.is_array()) return invalid(nullptr, kInvalidRequest, "Invalid Request: batches are not supported");
  if (!j.is_object()) return invalid(nullptr, kInvalidRequest, "Invalid Request: a message is a JSON object");
  Json id = j.contains("id") && valid_id(j["id"]) ? j["id"] : Json(nullptr);
  if (!j.contains("jsonrpc") || j["jsonrpc"] != "2.0")
    return invalid(id, kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
  if (!j.contains("method")) {
    if (j.contains("result") || j.contains("error")) {
      Message m;
      m.kind = Message::Kind::kResponse;
      m.id = id;
      return m;
    }
    return invalid(id, kInvalidRequest, "Invalid Request: no \"method\"");
  }
  if (!j["method"].is_string()) return invalid(id, kInvalidRequest, "Invalid Request: \"method\" must be a string");
  if (j.contains("id") && !valid_id(j["id"]))
    return invalid(nullptr, kInvalidRequest, "Invalid Request: \"id\" must be a string or an integer");
  Message m;
  m.kind = j.contains("id") ? Message::Kind::kRequest : Message::Kind::kNotification;
  m.id = id;
  m.method = j["method"].get<std::string>();
  if (j.contains("params")) {
    if (!j["params"].is_object() && !j["params"].is_null()) {
      if (m.kind == Message::Kind::kNotification) return m;  // never answered, so nothing to say
      return invalid(id, kInvalidParams, "Invalid params: \"params\" must be an object");
    }
    m.params = std::move(j["params"]);
  }
  return m;
}

std::string dump_line(const Json& message) {
  return message.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string result_line(const Json& id, const Json& result) {
  Json m;
  m["jsonrpc"] = "2.0";
  m["id"] = id;
  m["result"] = result;
  return dump_line(m);
}

std::string error_line(const Json& id, int code, const std::string& message) {
  Json m;
  m["jsonrpc"] = "2.0";
  m["id"] = id;
  m["error"] = {{"code", code}, {"message", message}};
  return dump_line(m);
}

}  // namespace envdoctor::mcp
