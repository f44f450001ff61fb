#include "mcp/tools.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "checks/run.h"
#include "environment/file_view.h"
#include "python/wheel.h"
#include "queries/cuda_summary.h"
#include "queries/live_checks.h"
#include "queries/single_file.h"
#include "queries/why.h"
#include "report/explain.h"
#include "report/report.h"
#include "scenarios/commands.h"

namespace envdoctor::mcp {

using environment::EnvironmentRequest;
using environment::Session;

namespace {

// ---- results ----

ToolResult failure(const std::string& why) { return {nullptr, "envdoctor: " + why, true}; }

ToolResult answer(const std::string& document, std::string text) {
  return {Json::parse(document), std::move(text), false};
}

// ---- arguments ----

std::string text_arg(const Json& args, const char* name) {
  return args.contains(name) ? args[name].get<std::string>() : std::string();
}

std::vector<std::string> list_arg(const Json& args, const char* name) {
  return args.contains(name) ? args[name].get<std::vector<std::string>>() : std::vector<std::string>();
}

bool flag_arg(const Json& args, const char* name) { return args.contains(name) && args[name].get<bool>(); }

}  // namespace

environment::NodeRequest node_of(const Json& args) {
  return environment::NodeRequest{list_arg(args, "gpus"), text_arg(args, "driver"), ""};
}

bool indexed(const Tool& tool) { return tool.annotations.value("readOnlyHint", false) && tool.name != "process"; }

namespace {

// The environment the call names, else the server's (`envdoctor mcp --python EXE`), with the
// loader's facts as the command line takes them, on the node its "gpus" and "driver" name (this
// machine's for what they leave out).
EnvironmentRequest environment_of(const Json& args, const EnvironmentRequest& defaults) {
  EnvironmentRequest r = defaults;
  if (args.contains("python") || args.contains("prefix")) {
    r.python = text_arg(args, "python");
    r.prefix = text_arg(args, "prefix");
  }
  // A container's root: this machine's LD_LIBRARY_PATH and GLIBC_TUNABLES are not its own.
  if (args.contains("root")) r.loader = {.root = text_arg(args, "root")};
  // An image: its composed root, its configuration's environment (session.h), as --image.
  if (args.contains("image")) r.loader = {.image = text_arg(args, "image")};
  if (args.contains("ld_library_path")) r.loader.ld_library_path = text_arg(args, "ld_library_path");
  environment::inherit_process_loader(r.loader);
  r.node = node_of(args);
  // This machine's driver and GPUs as the server read them for the index's key (server.cc).
  if (defaults.node) r.node->detected = defaults.node->detected;
  return r;
}

// ---- the tools ----

// check, or check --with/--without (scenarios::check): the check document and its text.
ToolResult check_with_changes(const Json& args, const EnvironmentRequest& defaults, scenarios::CheckRequest asked) {
  std::string error;
  asked.verify_hashes = flag_arg(args, "verify_hashes");
  if (!scenarios::check_arguments_valid(asked, &error)) return failure(error);
  std::optional<Session> session = environment::open_session(environment_of(args, defaults), &error);
  if (!session) return failure(error);
  std::optional<scenarios::CheckOutcome> checked = scenarios::check(*session, asked, &error);
  if (!checked) return failure(error);
  report::Report r = report::environment_report(checked->env(*session), std::move(checked->run));
  r.change = std::move(checked->change);
  return answer(report::render_json(r), report::render_text(r, {}));
}

ToolResult check_environment(const Json& args, const EnvironmentRequest& defaults, std::stop_token) {
  return check_with_changes(args, defaults, {});
}

ToolResult predict_uninstall(const Json& args, const EnvironmentRequest& defaults, std::stop_token) {
  scenarios::CheckRequest asked;
  asked.without = list_arg(args, "packages");
  return check_with_changes(args, defaults, std::move(asked));
}

// pip's plan for ACTION ARGS, checked: what `envdoctor pip` decides from. The report points into
// the check, so the whole stays where it was made.
struct CheckedPip {
  Session session;
  scenarios::PipCheck check;
  report::PipReport report;
};

std::unique_ptr<CheckedPip> check_pip(const Json& args, const EnvironmentRequest& defaults,
                                      const scenarios::InstallerRequest& pip, std::string* error) {
  EnvironmentRequest request = environment_of(args, defaults);
  if (!request.prefix.empty()) {  // as `envdoctor pip`, which has no --prefix
    *error = "pip runs the environment's own interpreter: name it with \"python\", not \"prefix\"";
    return nullptr;
  }
  std::optional<Session> session = environment::open_session(request, error);
  if (!session) return nullptr;
  std::optional<scenarios::PipCheck> checked = scenarios::check_installer_change(*session, pip, error);
  if (!checked) return nullptr;
  auto out = std::make_unique<CheckedPip>(CheckedPip{std::move(*session), std::move(*checked), {}});
  out->report.plan = &out->check.plan;
  out->report.verdict = out->check.verdict;
  if (out->check.prediction)
    out->report.prediction =
        report::environment_report(*out->check.prediction->env, std::move(out->check.prediction->run));
  return out;
}

ToolResult predict_install(const Json& args, const EnvironmentRequest& defaults, std::stop_token) {
  std::vector<std::string> wheels = list_arg(args, "wheels"), requirements = list_arg(args, "requirements");
  if (wheels.empty() == requirements.empty())
    return failure("predict_install takes either \"wheels\" (wheel files) or \"requirements\" (pip arguments)");
  if (!wheels.empty()) {
    scenarios::CheckRequest asked;
    asked.with = wheels;
    return check_with_changes(args, defaults, std::move(asked));
  }
  std::string error;
  std::unique_ptr<CheckedPip> checked =
      check_pip(args, defaults, {false, python::PipAction::kInstall, requirements}, &error);
  if (!checked) return failure(error);
  checked->report.predict_only = true;
  return answer(report::render_pip_json(checked->report), report::render_pip_text(checked->report, {}));
}

// What pip said, bounded: its last lines are the ones that say how it ended.
std::string tail(const std::string& s, size_t limit) {
  return s.size() <= limit ? s : "..." + s.substr(s.size() - limit);
}

ToolResult guarded_pip(const Json& args, const EnvironmentRequest& defaults, std::stop_token stop) {
  // The input schema's enum holds the action to install or uninstall.
  python::PipAction action = python::parse_pip_action(text_arg(args, "action")).value_or(python::PipAction::kInstall);
  scenarios::InstallerRequest pip{false, action, list_arg(args, "args")};
  // Never a prompt: stdin is not the user's. pip uninstall asks for confirmation unless -y.
  if (pip.action == python::PipAction::kUninstall &&
      std::find(pip.args.begin(), pip.args.end(), "-y") == pip.args.end() &&
      std::find(pip.args.begin(), pip.args.end(), "--yes") == pip.args.end())
    pip.args.insert(pip.args.begin(), "--yes");
  std::string error;
  std::unique_ptr<CheckedPip> checked = check_pip(args, defaults, pip, &error);
  if (!checked) return failure(error);
  checked->report.force_command = "guarded_pip again with \"force\": true";
  bool proceed = checked->report.verdict == scenarios::PipVerdict::kSafe || flag_arg(args, "force");
  Json structured = {{"pip", Json::parse(report::render_pip_json(checked->report))},
                     {"ran", false},
                     {"exit_status", nullptr},
                     {"output", ""}};
  std::string text = report::render_pip_text(checked->report, {});
  if (!proceed) {
    structured["exit_status"] = scenarios::status_without_pip(checked->check.plan);
    return {std::move(structured), std::move(text), false};
  }
  // A call cancelled while it was being checked changes nothing.
  if (stop.stop_requested()) return failure("cancelled before pip ran; nothing changed");
  std::optional<scenarios::InstallerRun> ran = scenarios::run_installer(checked->session, checked->check.plan, pip,
                                                                        scenarios::InstallerOutput::kCaptured, &error);
  if (!ran) return failure(error);
  std::string output = tail(ran->output, 16384);
  structured["ran"] = true;
  structured["exit_status"] = ran->status;
  structured["output"] = output;
  text += output;
  if (ran->status != 0) text += "pip exited with status " + std::to_string(ran->status) + "\n";
  if (!ran->problem.empty()) text += "envdoctor: " + ran->problem + "\n";
  return {std::move(structured), std::move(text), ran->status != 0};
}

ToolResult why(const Json& args, const EnvironmentRequest& defaults, std::stop_token) {
  std::string name = text_arg(args, "name"), error;
  std::optional<Session> session = environment::open_session(environment_of(args, defaults), &error);
  if (!session) return failure(error);
  std::optional<queries::WhyAnswer> found =
      queries::answer_why(*session, name, &error, scenarios::fix_vetting(*session));
  if (!found) return failure(error);
  return answer(report::render_why_json(*found, name), report::render_why_text(*found));
}

ToolResult explain(const Json& args, const EnvironmentRequest&, std::stop_token) {
  std::string error;
  std::optional<std::vector<const report::FindingDoc*>> docs =
      report::find_finding_docs(list_arg(args, "codes"), &error);
  if (!docs) return failure(error);
  std::string text = docs->empty() ? report::render_explain_list() : report::render_explain(*docs);
  return answer(report::render_explain_json(*docs), std::move(text));
}

ToolResult inspect_library(const Json& args, const EnvironmentRequest& defaults, std::stop_token) {
  queries::SingleFileQuestion question{environment_of(args, defaults).loader,
                                       args.contains("python") ? text_arg(args, "python") : defaults.python,
                                       flag_arg(args, "exact")};
  loader::ObjectStore store(question.loader.root);  // outlives the loads, which point into it
  std::vector<std::string> files = list_arg(args, "files");
  std::vector<std::optional<queries::SingleFileLoad>> loaded(files.size());
  queries::load_single_files(question, store, files,
                             [&](size_t i, queries::SingleFileLoad& load) { loaded[i].emplace(std::move(load)); });
  std::vector<queries::SingleFileLoad> loads;
  std::string text;
  bool unreadable = false;
  for (std::optional<queries::SingleFileLoad>& load : loaded) {
    loads.push_back(std::move(*load));
    report::FileText ldd = report::render_ldd_file(loads.back(), true);
    text += ldd.out + ldd.err;
    if (loads.back().loaded) text += "tree:\n" + report::render_tree_file(loads.back()).out;
    unreadable |= loads.back().unreadable;
  }
  // A file that cannot be opened is the tool's failure, as `ldd` exits 2 for it.
  return {Json::parse(report::render_files_json(loads)), std::move(text), unreadable};
}

ToolResult cuda_summary(const Json& args, const EnvironmentRequest& defaults, std::stop_token) {
  std::string error;
  std::optional<Session> session = environment::open_session(environment_of(args, defaults), &error);
  if (!session) return failure(error);
  queries::CudaSummary summary = queries::summarize_environment_cuda(*session);
  return answer(report::render_cuda_json(summary), report::render_cuda_text(summary));
}

ToolResult process(const Json& args, const EnvironmentRequest&, std::stop_token) {
  std::string error;
  std::optional<queries::LiveExamination> examined =
      queries::examine_pid(std::to_string(args["pid"].get<long>()), &error);
  if (!examined) return failure(error);
  return answer(report::render_ps_json(*examined), report::render_ps_text(*examined, {}));
}

// ---- schemas ----

std::optional<Json> read_schema(const std::string& dir, const std::string& name, std::string* error) {
  std::string path = dir + "/" + name + ".schema.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Json schema = Json::parse(text.str(), nullptr, false);
  if (!in || schema.is_discarded() || !schema.is_object()) {
    *error = "cannot read the output schema " + path;
    return std::nullopt;
  }
  // MCP's default dialect is 2020-12 (basic/index, "JSON Schema Usage"), which these are written
  // in; the meta-schema's URL is left out so that a validator that does not hold that meta-schema
  // (Ajv's default draft-07 build) still compiles them.
  schema.erase("$schema");
  return schema;
}

// `schema` as a part of another: without its own $id (a validator that caches schemas by $id,
// as the TypeScript SDK's Ajv does, would meet one id twice), its $defs moved up into `defs`, where
// its "#/$defs/..." references then point from the root of the whole.
Json embedded(Json schema, Json& defs) {
  schema.erase("$id");
  if (schema.contains("$defs")) {
    for (const auto& [name, def] : schema["$defs"].items()) defs[name] = def;
    schema.erase("$defs");
  }
  return schema;
}

Json string_property(const std::string& description) { return {{"type", "string"}, {"description", description}}; }
Json list_property(const std::string& description, size_t min_items = 0) {
  Json j = {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", description}};
  if (min_items) j["minItems"] = min_items;
  return j;
}

// The environment a tool examines; every one has the server's default.
Json environment_properties() {
  return {{"python", string_property("The environment's interpreter, e.g. /home/me/venv/bin/python (run once to learn "
                                     "sys.path). Default: the server's environment (envdoctor mcp --python, "
                                     "$VIRTUAL_ENV, $CONDA_PREFIX, python3 on PATH).")},
          {"prefix", string_property("An environment's prefix (a venv or conda directory), read without running "
                                     "anything. Instead of python.")},
          {"root", string_property("A container's root file system: its own ld.so.cache and directories; needs "
                                   "prefix, the environment's path inside the root.")},
          {"ld_library_path", string_property("LD_LIBRARY_PATH to model. Default: the server's own.")}};
}

// The image the questions (check, why, cuda) may be asked of, as --image takes it.
Json image_property() {
  return {
      {"image", string_property("A container image, read without running it: an OCI layout (DIR or DIR:TAG), an "
                                "OCI archive, a docker save archive, a squashfs image, or an Apptainer SIF image. Its "
                                "Python is the "
                                "one the image would run (or prefix, a path inside it); driver checks its "
                                "NVIDIA_REQUIRE_CUDA. Instead of root.")}};
}

Json gpu_properties() {
  return {{"gpus", list_property("GPUs to check GPU code for: sm_86, 8.6 or 86. Default: this machine's.")},
          {"driver", string_property("An NVIDIA driver version to check CUDA runtimes against, e.g. 580.65.06. "
                                     "Default: this machine's.")}};
}

Json input_schema(Json properties, std::vector<std::string> required = {}) {
  Json j = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) j["required"] = required;
  j["additionalProperties"] = false;
  return j;
}

Json merged(Json a, const Json& b) {
  for (const auto& [k, v] : b.items()) a[k] = v;
  return a;
}

Json annotations(bool read_only, bool idempotent, bool open_world) {
  return {{"readOnlyHint", read_only},
          {"destructiveHint", !read_only},
          {"idempotentHint", idempotent},
          {"openWorldHint", open_world}};
}

const char* kVerdict =
    " Findings are the answer, not a failure: summary.errors > 0 means something will not load (the CLI's exit "
    "status 1); each finding has a stable code (explain tells what it means), the loader's own message, a hint and "
    "usually a fix_command to run as it is.";

}  // namespace

Json ToolResult::to_json() const {
  Json j;
  j["content"] = Json::array({{{"type", "text"}, {"text", text}}});
  if (!structured.is_null()) j["structuredContent"] = structured;
  j["isError"] = is_error;
  return j;
}

Json Tool::to_json() const {
  return {{"name", name},
          {"title", title},
          {"description", description},
          {"inputSchema", input_schema},
          {"outputSchema", output_schema},
          {"annotations", merged(annotations, {{"title", title}})}};
}

namespace {

// guarded_pip: the one tool that changes anything.
void add_guarded_pip(std::vector<Tool>& tools, std::map<std::string, Json>& schemas, const Json& env) {
  Json guarded_defs = Json::object();
  Json guarded_out = {{"type", "object"},
                      {"properties",
                       {{"pip", embedded(schemas["pip"], guarded_defs)},
                        {"ran", {{"type", "boolean"}, {"description", "whether pip was run"}}},
                        {"exit_status",
                         {{"type", "integer"},
                          {"description",
                           "pip's exit status when it ran; else the CLI's: 1 refused, or pip's dry "
                           "run's status"}}},
                        {"output", {{"type", "string"}, {"description", "pip's own output, its last 16 kB"}}}}},
                      {"required", {"pip", "ran", "exit_status", "output"}},
                      {"additionalProperties", false}};
  if (!guarded_defs.empty()) guarded_out["$defs"] = std::move(guarded_defs);
  tools.push_back(
      {"guarded_pip", "Run pip install/uninstall only if it breaks nothing",
       "Use it INSTEAD of running `pip install` or `pip uninstall` yourself: asks the environment's own pip for its "
       "plan, predicts the environment as the plan leaves it, and runs pip (with these arguments, never prompting; "
       "uninstall gets --yes) only when the change introduces no errors. pip.verdict says what was decided: "
       "\"safe\" (pip ran; exit_status is pip's), \"refused\" (new errors: pip.prediction's findings marked new say "
       "what would break; nothing changed), \"cannot-check\" (pip's plan or a wheel could not be had; nothing "
       "changed). force: true runs pip even so; do that only when the user asks for it. The only tool here that "
       "changes anything.",
       input_schema(
           merged(env, {{"action",
                         {{"type", "string"}, {"enum", {"install", "uninstall"}}, {"description", "pip's command."}}},
                        {"args", list_property("pip's arguments after the command, passed as they are, "
                                               "e.g. [\"torch==2.8.0\"] or [\"nvidia-cudnn-cu12\"].")},
                        {"force",
                         {{"type", "boolean"},
                          {"description",
                           "Run pip even when the change would introduce errors "
                           "or cannot be checked."}}}}),
           {"action", "args"}),
       guarded_out, annotations(false, false, true), guarded_pip});
}

// check_environment and the tools that predict a change: predict_uninstall, predict_install;
// then guarded_pip.
void add_change_tools(std::vector<Tool>& tools, std::map<std::string, Json>& schemas, const Json& env) {
  tools.push_back(
      {"check_environment", "Check a Python environment's native libraries",
       std::string("Predicts, without importing anything, whether every native library (extension modules, .so "
                   "files, CUDA code) in a Python environment will load, and if not exactly why and what fixes it. "
                   "Call it after an ImportError or `undefined symbol`/`cannot open shared object file` error, "
                   "before trusting an environment, or to see what is already broken before a change.") +
           kVerdict,
       input_schema(merged(merged(merged(env, image_property()), gpu_properties()),
                           {{"verify_hashes",
                             {{"type", "boolean"},
                              {"description",
                               "Also compare every file's sha256 with its RECORD "
                               "(slower)."}}}})),
       schemas["check"], annotations(true, true, false), check_environment});
  tools.push_back(
      {"predict_uninstall", "Predict what uninstalling packages breaks",
       std::string("Call it BEFORE `pip uninstall` or `uv pip uninstall`: checks the environment as uninstalling "
                   "these distributions would leave it (every file of their RECORD removed, including files another "
                   "package also installed), on disk nothing changes. Findings the change brings are marked "
                   "\"new\": true; change.new_errors > 0 means the uninstall would break a load (the CLI's exit "
                   "status 1), change.fixed_errors what it repairs.") +
           kVerdict,
       input_schema(merged(merged(env, gpu_properties()),
                           {{"packages", list_property("Distribution names, as pip uninstall takes them.", 1)}}),
                    {"packages"}),
       schemas["check"], annotations(true, true, false), predict_uninstall});
  Json either_defs = Json::object();
  Json either = {{"type", "object"},
                 {"oneOf", {embedded(schemas["check"], either_defs), embedded(schemas["pip"], either_defs)}}};
  either["$defs"] = std::move(either_defs);
  tools.push_back(
      {"predict_install", "Predict what installing wheels or requirements breaks",
       std::string("Call it BEFORE `pip install` or `uv pip install`. With \"wheels\" (local .whl files): checks the "
                   "environment as installing them would leave it, and returns a check document (change.new_errors "
                   "> 0: the install breaks a load, e.g. an extension linked against libcudart.so.12 in a CUDA 13 "
                   "environment). With \"requirements\" (pip install arguments: names, specifiers, -r FILE, index "
                   "options): asks the environment's own pip for its plan (`pip install --dry-run --report`, nothing "
                   "installed) and returns the pip document: verdict \"safe\", \"refused\" (new errors) or "
                   "\"cannot-check\", and the prediction. Nothing is ever installed.") +
           kVerdict,
       input_schema(merged(merged(env, gpu_properties()),
                           {{"wheels", list_property("Wheel files to install, as paths.")},
                            {"requirements", list_property("pip install arguments, e.g. [\"flash-attn==2.8.3\"] or "
                                                           "[\"-r\", \"requirements.txt\"]; needs pip in the "
                                                           "environment.")}})),
       either, annotations(true, true, true), predict_install});
  add_guarded_pip(tools, schemas, env);
}

// The questions about one name, file, process or the CUDA side: why, explain, inspect_library,
// cuda_summary, process.
void add_question_tools(std::vector<Tool>& tools, std::map<std::string, Json>& schemas, const Json& env) {
  tools.push_back(
      {"why", "Explain a library, file or package",
       std::string("For a SONAME (libcudnn.so.9), a path or a package name: every copy the environment can reach "
                   "and who owns it, who needs it, where each need resolves and by which loader rule, which copies "
                   "that shadows, and the findings about it. Call it after an ImportError names a library, or "
                   "before removing a package, to see who uses it. will_not_load: true means an error says it "
                   "will not load (the CLI's exit status 1)."),
       input_schema(merged(merged(env, image_property()),
                           {{"name", string_property("A SONAME, a file path, or a distribution name.")}}),
                    {"name"}),
       schemas["why"], annotations(true, true, false), why});
  tools.push_back({"explain", "Explain finding codes",
                   "What a finding code (missing-library, file-owned-twice, ...) means, how the loader or pip decides "
                   "it, and how to fix it with pip, uv, conda or apt. With no codes, every code and its one-line "
                   "summary.",
                   input_schema({{"codes", list_property("Finding codes, as findings carry them.")}}),
                   schemas["explain"], annotations(true, true, false), explain});
  tools.push_back(
      {"inspect_library", "Resolve one ELF file's libraries (ldd and tree)",
       "The loader model on single files, as `ld.so --list` loads them: every library each needs, where it resolves "
       "and by which rule (RPATH, RUNPATH, LD_LIBRARY_PATH, ld.so.cache, default directories), the paths tried for "
       "one not found, and version and symbol errors in the loader's own words. An extension module is loaded into "
       "its interpreter, as import does. Nothing is executed. failed: true means it would not load.",
       input_schema({{"files", list_property("ELF files: libraries, extension modules or programs.", 1)},
                     {"python", string_property("The interpreter extension modules are loaded into. Default: as "
                                                "check_environment finds one.")},
                     {"exact",
                      {{"type", "boolean"},
                       {"description",
                        "As `ldd -r`: every file a program of its own, extension modules "
                        "included."}}},
                     {"root", env["root"]},
                     {"ld_library_path", env["ld_library_path"]}},
                    {"files"}),
       schemas["ldd"], annotations(true, true, false), inspect_library});
  tools.push_back({"cuda_summary", "Summarise the CUDA side of an environment",
                   "The NVIDIA driver and GPUs, the CUDA runtimes present and which packages load each (the loader "
                   "model's resolutions), and which GPU architectures each package's binaries carry code for. Call "
                   "it before installing a CUDA wheel, or after `no kernel image is available` or a CUDA version "
                   "error.",
                   input_schema(merged(merged(env, image_property()), gpu_properties())), schemas["cuda"],
                   annotations(true, true, false), cuda_summary});
  tools.push_back(
      {"process", "Examine a running process's loaded libraries",
       "A running process, read from /proc without ptrace: what it mapped, from where, who owns it, what was "
       "replaced or deleted on disk since it loaded it, SONAMEs loaded twice, two OpenMP runtimes or CUDA majors, "
       "and where it differs from what check_environment predicts. Call it when a long-running job behaves as if "
       "it had another library than the one installed.",
       input_schema({{"pid", {{"type", "integer"}, {"minimum", 1}, {"description", "The process id."}}}}, {"pid"}),
       schemas["ps"], annotations(true, true, false), process});
}

}  // namespace

std::optional<std::vector<Tool>> load_tools(const std::string& schema_dir, std::string* error) {
  std::map<std::string, Json> schemas;
  for (const char* name : {"check", "pip", "why", "explain", "ldd", "cuda", "ps"}) {
    std::optional<Json> s = read_schema(schema_dir, name, error);
    if (!s) return std::nullopt;
    schemas[name] = std::move(*s);
  }
  Json env = environment_properties();
  std::vector<Tool> tools;
  add_change_tools(tools, schemas, env);
  add_question_tools(tools, schemas, env);
  return tools;
}

std::string argument_problem(const Json& schema, const Json& arguments) {
  if (!arguments.is_object()) return "arguments must be an object";
  const Json& properties = schema["properties"];
  for (const auto& [name, value] : arguments.items()) {
    if (!properties.contains(name)) return "unknown argument \"" + name + "\"";
    const Json& p = properties[name];
    std::string type = p.value("type", "");
    bool ok = (type == "string" && value.is_string()) || (type == "boolean" && value.is_boolean()) ||
              (type == "integer" && value.is_number_integer()) || (type == "array" && value.is_array());
    if (!ok) return "argument \"" + name + "\" must be " + (type == "array" ? "an array" : "a " + type);
    if (type == "array") {
      for (const Json& item : value)
        if (!item.is_string()) return "argument \"" + name + "\" must be an array of strings";
      if (p.contains("minItems") && value.size() < p["minItems"].get<size_t>())
        return "argument \"" + name + "\" must not be empty";
    }
    if (type == "integer" && p.contains("minimum") && value.get<long long>() < p["minimum"].get<long long>())
      return "argument \"" + name + "\" must be at least " + p["minimum"].dump();
    if (p.contains("enum") && std::find(p["enum"].begin(), p["enum"].end(), value) == p["enum"].end())
      return "argument \"" + name + "\" must be one of " + p["enum"].dump();
  }
  if (schema.contains("required"))
    for (const Json& name : schema["required"])
      if (!arguments.contains(name.get<std::string>()))
        return "missing required argument \"" + name.get<std::string>() + "\"";
  return "";
}

}  // namespace envdoctor::mcp
