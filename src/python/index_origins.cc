#include "python/index_origins.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "python/pip.h"
#include "support/xdg.h"

namespace envdoctor::python {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string state_root() { return support::xdg_base("XDG_STATE_HOME", ".local/state") + "/envdoctor/index-origins-v1"; }

// One file per site directory, named by a hash of its path.
std::string state_file(const std::string& site_dir) {
  char name[32];
  std::snprintf(name, sizeof name, "%016zx.json", std::hash<std::string>{}(site_dir));
  return state_root() + "/" + name;
}

// The metadata directory's identity: a reinstall writes a new one.
std::optional<std::string> identity(const fs::path& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// The state file, or an empty one where it is missing or not of this shape: a damaged file is
// written anew, never trusted.
json read_state(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json::object();
  json j = json::parse(in, nullptr, false);
  bool shaped = j.is_object() && j.contains("site_dir") && j["site_dir"].is_string() && j.contains("distributions") &&
                j["distributions"].is_object();
  return shaped ? j : json::object();
}

std::string string_at(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

bool is_find_links(const std::string& option) { return option == "-f" || option == "--find-links"; }

}  // namespace

std::vector<std::string> recordable_index_options(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> out;
  for (const std::string& o : index_options(args)) {
    // "--find-links=DIR" as two words, so that each value is one word after its option.
    size_t eq = o.find('=');
    if (o.starts_with("--") && eq != std::string::npos) {
      out.push_back(o.substr(0, eq));
      out.push_back(o.substr(eq + 1));
    } else {
      out.push_back(o);
    }
  }
  for (size_t i = 0; i + 1 < out.size(); ++i)
    if (is_find_links(out[i]) && out[i + 1].find("://") == std::string::npos && !out[i + 1].starts_with("/"))
      out[i + 1] = fs::path(cwd + "/" + out[i + 1]).lexically_normal().string();
  return out;
}

bool record_index_origins(const std::vector<const Distribution*>& dists, const std::vector<std::string>& options,
                          std::string* error) {
  if (options.empty()) return true;
  std::map<std::string, std::vector<const Distribution*>> by_site;
  for (const Distribution* d : dists) by_site[d->site_dir.string()].push_back(d);
  for (const auto& [site, mine] : by_site) {
    std::string path = state_file(site);
    json state = read_state(path);
    state["site_dir"] = site;
    for (const Distribution* d : mine)
      if (std::optional<std::string> id = identity(d->metadata_dir))
        state["distributions"][d->metadata_dir.string()] = {{"identity", *id}, {"options", options}};
    std::error_code ec;
    fs::create_directories(state_root(), ec);
    // Written whole, then renamed over the old file: a reader never sees half of it.
    std::string tmp = path + "." + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      out << state.dump(1) << "\n";
      if (!out.flush()) {
        if (error) *error = tmp + ": cannot be written";
        return false;
      }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      if (error) *error = path + ": cannot be written";
      return false;
    }
  }
  return true;
}

std::vector<std::string> recorded_index_origin(const Distribution& dist) {
  json state = read_state(state_file(dist.site_dir.string()));
  if (string_at(state, "site_dir") != dist.site_dir.string()) return {};
  const json& records = state["distributions"];
  auto it = records.find(dist.metadata_dir.string());
  if (it == records.end() || !it->is_object()) return {};
  std::optional<std::string> id = identity(dist.metadata_dir);
  if (!id || string_at(*it, "identity") != *id || !it->contains("options") || !(*it)["options"].is_array()) return {};
  std::vector<std::string> options;
  for (const json& o : (*it)["options"])
    if (o.is_string()) options.push_back(o.get<std::string>());
  for (size_t i = 0; i + 1 < options.size(); ++i)
    if (is_find_links(options[i]) && options[i + 1].starts_with("/") && !fs::exists(options[i + 1])) return {};
  return options;
}

}  // namespace envdoctor::python
