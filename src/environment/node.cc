#include "environment/node.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace envdoctor::environment {

namespace {

using nlohmann::json;

// --gpu and --driver, with this machine's driver and GPUs for what they leave out.
std::optional<Node> node_of_arguments(const NodeRequest& request, const cuda::CudaTables& tables, std::string* error) {
  Node n;
  for (const std::string& arg : request.gpus) {
    std::optional<int> sm = cuda::parse_gpu_arch(arg);
    if (!sm) {
      *error = "--gpu " + arg + ": not a GPU architecture (sm_86, sm_90a, 8.6 or 86)";
      return std::nullopt;
    }
    std::string why;
    if (!cuda::gpu_arch_possible(tables, *sm, &why)) {
      *error = "--gpu " + arg + ": " + why;
      return std::nullopt;
    }
    bool seen = std::any_of(n.gpus.begin(), n.gpus.end(), [&](const cuda::Gpu& g) { return g.sm == *sm; });
    if (!seen) n.gpus.push_back({"sm_" + std::to_string(*sm), *sm});
  }
  if (!request.gpus.empty()) n.gpus_source = "--gpu";
  if (!request.driver.empty()) {
    n.driver = cuda::DriverVersion::parse(request.driver);
    if (!n.driver) {
      *error = "--driver " + request.driver + ": not a driver version (580.65.06)";
      return std::nullopt;
    }
    n.driver_source = "--driver";
  }
  if (n.gpus.empty() || !n.driver) {
    cuda::DriverInfo info = request.detected ? *request.detected : cuda::detect_driver();
    if (n.gpus.empty()) {
      n.gpus = info.gpus;
      n.gpus_source = info.gpus_source;
    }
    if (!n.driver && info.version) {
      n.driver = info.version;
      n.driver_source = info.version_source;
      n.driver_cuda = info.cuda;
    }
    n.problems = info.problems;
  }
  return n;
}

// --node FILE: the node its snapshot was taken on.
std::optional<Node> node_of_snapshot_file(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "--node " + path + ": cannot read";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::optional<json> snapshot = parse_snapshot(text.str(), error);
  if (!snapshot) {
    *error = "--node " + path + ": " + *error;
    return std::nullopt;
  }
  return snapshot_node(*snapshot, path, error);
}

}  // namespace

bool reads_this_machine(const NodeRequest& request) {
  return request.snapshot.empty() && (request.gpus.empty() || request.driver.empty());
}

std::optional<Node> read_node(const NodeRequest& request, const cuda::CudaTables& tables, std::string* error) {
  if (request.snapshot.empty()) return node_of_arguments(request, tables, error);
  if (!request.gpus.empty() || !request.driver.empty()) {
    *error = "--node takes the driver and GPUs from its snapshot: give --node, or --gpu and --driver";
    return std::nullopt;
  }
  return node_of_snapshot_file(request.snapshot, error);
}

std::optional<json> parse_snapshot(const std::string& text, std::string* error) {
  json s = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (s.is_discarded()) {
    *error = "not JSON";
    return std::nullopt;
  }
  if (!s.is_object() || !s.contains("schema") || !s.contains("digest") || !s.contains("files")) {
    *error = "not an envdoctor snapshot";
    return std::nullopt;
  }
  if (s["schema"] != kSnapshotSchema) {
    *error =
        "snapshot schema " + s["schema"].dump() + ", this envdoctor reads schema " + std::to_string(kSnapshotSchema);
    return std::nullopt;
  }
  for (const char* key : {"packages", "files", "resolutions", "findings"})
    if (!s.contains(key) || !s[key].is_array()) {
      *error = std::string("not an envdoctor snapshot: no \"") + key + "\" array";
      return std::nullopt;
    }
  return s;
}

std::optional<Node> snapshot_node(const json& snapshot, const std::string& source, std::string* error) {
  Node n;
  const json& facts = snapshot.contains("cuda") && snapshot["cuda"].is_object() ? snapshot["cuda"] : json::object();
  auto bad = [&](const std::string& what) -> std::optional<Node> {
    *error = "--node " + source + ": " + what;
    return std::nullopt;
  };
  if (facts.contains("driver") && facts["driver"].is_string()) {
    n.driver = cuda::DriverVersion::parse(facts["driver"].get<std::string>());
    if (!n.driver) return bad("cuda.driver is not a driver version");
    n.driver_source = "--node " + source;
  }
  if (facts.contains("driver_cuda") && facts["driver_cuda"].is_string())
    n.driver_cuda = cuda::MajorMinor::parse(facts["driver_cuda"].get<std::string>());
  if (facts.contains("gpus") && facts["gpus"].is_array())
    for (const json& g : facts["gpus"]) {
      if (!g.is_object() || !g.contains("sm") || !g["sm"].is_number_integer()) return bad("a GPU without its sm");
      std::string name = g.contains("name") && g["name"].is_string() ? g["name"].get<std::string>() : "";
      n.gpus.push_back({name, g["sm"].get<int>()});
    }
  if (!n.gpus.empty()) n.gpus_source = "--node " + source;
  if (facts.contains("driver_libraries") && facts["driver_libraries"].is_array()) {
    n.driver_libraries.emplace();
    for (const json& name : facts["driver_libraries"]) {
      if (!name.is_string()) return bad("cuda.driver_libraries holds a name that is not a string");
      n.driver_libraries->push_back(name.get<std::string>());
    }
  }
  return n;
}

}  // namespace envdoctor::environment
