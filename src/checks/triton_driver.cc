#include "checks/triton_driver.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "imports/python_process.h"
#include "imports/python_source.h"
#include "loader/process.h"

namespace envdoctor::checks {

using imports::ldconfig_print;
using imports::literal_at;
using imports::path_exists;
using imports::process_variable;

namespace fs = std::filesystem;
using environment::Environment;

namespace {

// What the installed Triton's libcuda_dirs() does, read from its source.
struct TritonRule {
  std::string file;              // the source file that defines it
  std::string listed;            // the name an `ldconfig -p` line must contain ("libcuda.so.1")
  std::string asserted;          // the file one of the directories must hold
  bool ld_library_path = false;  // LD_LIBRARY_PATH searched where the cache names none
  bool reads_variable = false;   // TRITON_LIBCUDA_PATH, where set, taken instead of the search
  std::string start, listed_words, found_words, none_words;  // the assertion's message, in parts
};

// The literal after "NAME" and its operator on a line ("msg += 'x'"), from `from` on.
std::optional<std::string> assigned(std::string_view body, std::string_view op, size_t* from) {
  size_t at = body.find(op, *from);
  if (at == std::string_view::npos) return std::nullopt;
  size_t value = body.find_first_not_of(' ', at + op.size());
  *from = at + op.size();
  return literal_at(body, value);
}

// libcuda_dirs() of `text`, as far as its shape is known; nullopt for any other shape (then no
// verdict can be exact, and none is given).
// `knobs`: the installed triton/knobs.py, through which newer releases read their variables
// (`knobs.nvidia.libcuda_path`); "" where there is none.
std::optional<TritonRule> read_rule(const std::string& file, std::string_view text, std::string_view knobs) {
  size_t def = text.find("def libcuda_dirs(");
  if (def == std::string_view::npos) return std::nullopt;
  size_t end = text.find("\ndef ", def + 1);
  std::string_view body = text.substr(def, end == std::string_view::npos ? std::string_view::npos : end - def);
  TritonRule r;
  r.file = file;
  for (std::string_view name : {"libcuda.so.1", "libcuda.so"})
    if (body.find("\"" + std::string(name) + "\" in line") != std::string_view::npos) {
      r.listed = name;
      break;
    }
  const std::string join = "os.path.join(path, ";
  size_t j = body.find(join);
  std::optional<std::string> asserted = j == std::string_view::npos ? std::nullopt : literal_at(body, j + join.size());
  if (r.listed.empty() || !asserted || body.find("assert any(") == std::string_view::npos) return std::nullopt;
  r.asserted = *asserted;
  r.ld_library_path = body.find("LD_LIBRARY_PATH") != std::string_view::npos;
  r.reads_variable =
      body.find("TRITON_LIBCUDA_PATH") != std::string_view::npos ||
      (body.find("knobs.nvidia.libcuda_path") != std::string_view::npos &&
       knobs.find("libcuda_path: env_opt_str = env_opt_str(\"TRITON_LIBCUDA_PATH\")") != std::string_view::npos);
  // msg = START; if locs: msg += LISTED % str(locs); msg += FOUND; else: msg += NONE; msg += NONE.
  size_t at = 0;
  std::optional<std::string> start = assigned(body, "msg = ", &at);
  std::optional<std::string> listed = assigned(body, "msg += ", &at), found = assigned(body, "msg += ", &at);
  size_t else_at = body.find("else:", at);
  std::optional<std::string> none1 = assigned(body, "msg += ", &at), none2 = assigned(body, "msg += ", &at);
  if (!start || !listed || !found || !none1 || !none2 || else_at == std::string_view::npos || else_at > at ||
      listed->find("%s") == std::string::npos)
    return std::nullopt;
  r.start = *start;
  r.listed_words = *listed;
  r.found_words = *found;
  r.none_words = *none1 + *none2;
  return r;
}

// Python's str() of a list of paths: ['/a', '/b'].
std::string python_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& s : items) {
    bool single = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    char q = single ? '"' : '\'';
    out += (out.size() > 1 ? ", " : "") + std::string(1, q);
    for (char c : s) {
      if (c == '\\' || c == q) out += '\\';
      out += c;
    }
    out += q;
  }
  return out + "]";
}

// Where the loader finds libcuda.so.1 from the interpreter; nullopt where it finds none (no
// driver here: the driver note says so, and no Triton verdict is given).
std::optional<std::string> loaded_driver(const Environment& env) {
  imports::ImportModel::Interpreter python = imports::ImportModel::start_in(env, env.loader);
  if (!python.found) return std::nullopt;
  loader::Process::DlopenResult r = python.process.dlopen("libcuda.so.1", false, python.caller);
  if (r.object < 0) return std::nullopt;
  return python.process.objects()[r.object].path;
}

Finding triton_finding(const environment::RuntimeLoad& row, const python::Distribution& dist, const TritonRule& rule,
                       const std::vector<std::string>& locs, const std::string& driver) {
  Finding f;
  f.code = Code::kRuntimeLibraryMissing;
  f.severity = row.needed ? Severity::kError : Severity::kWarning;
  f.file = rule.file;
  f.package = dist.name;
  f.library = rule.asserted;
  std::string listed = rule.listed_words;
  listed.replace(listed.find("%s"), 2, python_list(locs));
  f.message = rule.start + (locs.empty() ? rule.none_words : listed + rule.found_words);
  std::string driver_dir = fs::path(driver).parent_path().string();
  std::string h = dist.name + " " + dist.version + " (" + row.what +
                  ") takes the directories of the `ldconfig -p` lines " + "that name " + rule.listed +
                  (rule.ld_library_path ? " (LD_LIBRARY_PATH only where none do)" : "") + " and needs " +
                  rule.asserted + " in one of them; ";
  if (locs.empty())
    h += "ld.so.cache names no " + rule.listed + ", though the loader finds " + driver +
         " (the default directories, which Triton does not search)";
  else
    h += "ld.so.cache names " + python_list(locs) + ", and none of their directories holds " + rule.asserted +
         " (the loader finds " + driver + ")";
  h += ", so its first compile (an empty ~/.triton/cache) fails: ";
  if (rule.asserted == "libcuda.so.1") h += "run ldconfig as root to bring ld.so.cache up to date";
  else
    h += "create the link " + driver_dir + "/" + rule.asserted + " -> " + fs::path(driver).filename().string() +
         " and run ldconfig as root";
  // Only a Triton that reads the variable is helped by it (the shape of 2.0 has none).
  if (rule.reads_variable) h += ", or set TRITON_LIBCUDA_PATH=" + driver_dir;
  f.hint = h;
  return f;
}

}  // namespace

std::vector<Finding> check_triton_driver(const Context& ctx, const environment::RuntimeLoad& row) {
  const Environment& env = ctx.env;
  std::vector<Finding> out;
  const python::Distribution* dist = env.inventory.find(row.opener);
  if (!dist) return out;
  std::optional<TritonRule> rule;
  std::string knobs;
  for (const python::RecordEntry& e : dist->record)
    if (e.path == "triton/knobs.py") knobs = env.files.read_text(e.resolved.string(), 1 << 20);
  for (const python::RecordEntry& e : dist->record) {
    std::string path = e.resolved.string();
    if (!path.ends_with("/driver.py") && !path.ends_with("/build.py")) continue;
    if ((rule = read_rule(path, env.files.read_text(path, 1 << 20), knobs))) break;
  }
  // The search is skipped where the variable is set and not empty (Python's truth of the value).
  std::optional<std::string> libcuda_path = process_variable(env, "TRITON_LIBCUDA_PATH");
  if (!rule || (rule->reads_variable && libcuda_path && !libcuda_path->empty())) return out;
  std::optional<std::string> driver = loaded_driver(env);
  if (!driver) return out;
  // The lines of `ldconfig -p` (python_source.h) that hold the name, each giving
  // line.split()[-1]: its last word, the path.
  std::vector<std::string> locs;
  for (const std::string& line : ldconfig_print(env.loader).value_or(std::vector<std::string>{})) {
    if (line.find(rule->listed) == std::string::npos) continue;
    size_t last = line.find_last_not_of(" \t\n\r\f\v");  // not npos: the line holds the name
    size_t blank = line.find_last_of(" \t\n\r\f\v", last);
    size_t first = blank == std::string::npos ? 0 : blank + 1;
    locs.push_back(line.substr(first, last + 1 - first));
  }
  std::vector<std::string> dirs;
  for (const std::string& loc : locs) dirs.push_back(fs::path(loc).parent_path().string());
  if (rule->ld_library_path && dirs.empty()) {
    std::string_view rest = env.loader.ld_library_path;
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string dir(rest.substr(0, colon));
      if (!dir.empty() && path_exists(env, dir + "/" + rule->asserted)) dirs.push_back(dir);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  for (const std::string& dir : dirs)
    if (path_exists(env, dir + "/" + rule->asserted)) return out;
  out.push_back(triton_finding(row, *dist, *rule, locs, *driver));
  return out;
}

}  // namespace envdoctor::checks
