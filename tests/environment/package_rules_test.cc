// data/package_loads.json read as untrusted input (docs/package-loads.md, environment/package_rules.h):
// the shipped table parses and holds to its schema, and its cuDNN and NVRTC rules are what the real
// libraries hold; every field of the format is read; a rule that could mean two things, or names
// nothing, is refused with the rule and the field named, and the schema (jsonschema the referee)
// refuses the same where a schema can say it.
#include "environment/package_rules.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "environment/knowledge.h"
#include "fixtures/fixture.h"
#include "fixtures/schema.h"

namespace envdoctor::test::package_rules {

using environment::Condition;
using environment::Knowledge;
using environment::Moment;
using environment::Outcome;
using environment::PackageRule;
using environment::PackageRules;
using environment::Place;
using environment::Step;
using environment::ValueSource;
using nlohmann::json;

const std::string kData = std::string(ENVDOCTOR_SOURCE_DIR) + "/data";

json shipped() { return json::parse(std::ifstream(kData + "/package_loads.json")); }

// A table of one rule, and the smallest rule: one step that opens one name.
json table_of(const json& rule) {
  return {{"schema", 1}, {"sources", {{"S", "a source"}}}, {"rules", json::array({rule})}};
}
json small_rule() {
  return json::parse(R"({"id": "r", "package": ["p"], "moment": "import", "what": "w", "source": "S",
                         "steps": [{"id": "a", "names": ["libx.so.1"], "places": [{"dlopen": "caller"}]}]})");
}

std::string error_of(const json& doc) {
  std::string error;
  EXPECT_FALSE(PackageRules::parse(doc, &error)) << doc.dump();
  return error;
}

PackageRules parsed(const json& doc) {
  std::string error;
  std::optional<PackageRules> rules = PackageRules::parse(doc, &error);
  EXPECT_TRUE(rules) << error;
  return rules ? *rules : PackageRules{};
}

// Whether the schema refuses `doc` ("" when jsonschema is not installed: nothing to compare).
bool schema_refuses(const json& doc) {
  return have_jsonschema() && !schema_errors("package-loads", doc.dump()).empty();
}

// The rule of `rules` with id `id`, or nullptr.
const PackageRule* rule_of(const PackageRules& rules, const std::string& id) {
  for (const PackageRule& r : rules.rules)
    if (r.id == id) return &r;
  return nullptr;
}

// The opener rules of cuDNN and NVRTC.
const std::vector<std::string> kOpenerRules = {"cudnn-9-sublibraries", "cudnn-9-graph-engines", "nvrtc-12-builtins",
                                               "nvrtc-13-builtins"};

TEST(PackageRules, TheShippedTableParsesAndHoldsToItsSchema) {
  PackageRules rules = parsed(shipped());
  for (const std::string& id : kOpenerRules) {
    const PackageRule* r = rule_of(rules, id);
    ASSERT_TRUE(r) << id;
    EXPECT_TRUE(r->packages.empty()) << id;
    EXPECT_TRUE(r->opener.starts_with("libcudnn") || r->opener.starts_with("libnvrtc.so.")) << id;
    EXPECT_EQ(r->moment, Moment::kFirstUse) << id;
    EXPECT_FALSE(r->use.empty()) << id;
    EXPECT_TRUE(rules.source(r->source)) << id;
    ASSERT_TRUE(r->value("v")) << id;
    EXPECT_EQ(r->value("v")->front().kind, ValueSource::Kind::kVersion) << id;
    for (const Step& s : r->steps) {
      ASSERT_EQ(s.places.size(), 1u) << id;
      EXPECT_EQ(s.places[0].kind, Place::Kind::kDlopen) << id;
      EXPECT_EQ(s.own, r->opener.starts_with("libcudnn")) << id;
      EXPECT_EQ(s.missing.kind, Outcome::Kind::kRaise) << id;
    }
  }
  if (!have_jsonschema()) GTEST_SKIP() << "needs python3-jsonschema (scripts/install-deps.sh) for the schema's half";
  EXPECT_EQ(schema_errors("package-loads", shipped().dump()), "");
}

// The table is read with the other knowledge tables, and its errors name the file, the rule and the
// field, as theirs do.
TEST(PackageRules, KnowledgeReadsTheTableAndNamesItsFileOnAnError) {
  std::string error;
  auto k = Knowledge::load(kData, &error);
  ASSERT_TRUE(k) << error;
  ASSERT_TRUE(rule_of(k->package_rules(), "nvrtc-13-builtins"));
  EXPECT_EQ(rule_of(k->package_rules(), "nvrtc-13-builtins")->opener, "libnvrtc.so.13");

  TempDir tmp;
  for (const char* f : {"sonames.json", "driver_libraries.json", "plugins.json"})
    fs::copy_file(kData + "/" + f, tmp / f);
  json doc = shipped();
  for (json& r : doc["rules"])
    if (r["id"] == "cudnn-9-graph-engines") r["steps"][2]["places"][0] = {{"dlopen", "/usr/lib/libself.so"}};
  tmp.write("package_loads.json", doc.dump());
  EXPECT_FALSE(Knowledge::load(tmp.path().string(), &error));
  EXPECT_EQ(error,
            tmp / "package_loads.json" +
                ": rule cudnn-9-graph-engines: steps[2].places[0].dlopen: \"caller\" or a path relative to the site "
                "directory");
  tmp.write("package_loads.json", "{\"schema\": 1,");
  EXPECT_FALSE(Knowledge::load(tmp.path().string(), &error));
  EXPECT_EQ(error.rfind(tmp / "package_loads.json" + ": [json.exception.parse_error", 0), 0u) << error;
  fs::remove(tmp / "package_loads.json");
  EXPECT_FALSE(Knowledge::load(tmp.path().string(), &error));
  EXPECT_EQ(error, tmp / "package_loads.json" + ": cannot be read");
}

// The referee: the CUDA 13.0 toolkit's own cuDNN 9 and NVRTC. Each opener holds the unversioned
// stem of every name its rule tries (its format then adds the version, '%s.%d.%d.%d'); cuDNN's
// words are its format with the function the step's library exports (nm -D), the graph library's
// and NVRTC's are theirs, put in for the toolkit's version.
TEST(PackageRules, TheCudnnAndNvrtcRulesAreWhatTheLibrariesHold) {
  const std::string lib = "/usr/local/cuda-13.0/lib";
  if (!fs::exists(lib + "/libcudnn.so.9") || !fs::exists(lib + "/libnvrtc.so.13") || !have_tool("nm"))
    GTEST_SKIP() << "needs the CUDA 13.0 toolkit's cuDNN 9 and NVRTC in " << lib << ", and nm";
  PackageRules rules = parsed(shipped());
  int cudnn_rules = 0;
  for (const PackageRule& r : rules.rules) {
    if (!r.opener.starts_with("libcudnn")) continue;  // cudnn-9-sublibraries, cudnn-9-graph-engines
    ++cudnn_rules;
    std::string opener = slurp(lib + "/" + r.opener);
    ASSERT_FALSE(opener.empty()) << r.opener;
    for (const Step& s : r.steps) {
      EXPECT_NE(opener.find(s.names.back() + '\0'), std::string::npos) << r.opener << " " << s.names.back();
      EXPECT_EQ(s.names.front(), s.names.back() + ".{v.1}.{v.2}.{v.3}");
      EXPECT_EQ(s.names.back(), "lib" + s.lib + ".so");
      EXPECT_EQ(s.failing.words, s.missing.words);
      if (r.opener == "libcudnn_graph.so.9") {
        EXPECT_EQ(s.missing.words, "Unable to load any of {{{tried}}}.");  // str.format: {{ is a brace
        continue;
      }
      const std::string prefix = "Invalid handle. Cannot load symbol ";
      ASSERT_EQ(s.missing.words.rfind(prefix, 0), 0u) << s.missing.words;
      std::string symbol = s.missing.words.substr(prefix.size());
      CommandResult nm = run("nm -D --defined-only " + quote(lib + "/" + s.names.back() + ".9"));
      ASSERT_EQ(nm.status, 0) << nm.err;
      bool defined = nm.out.find(" T " + symbol + "\n") != std::string::npos ||
                     nm.out.find(" T " + symbol + "@") != std::string::npos;  // cudnnGetVersion@@libcudnn_graph.so.9
      EXPECT_TRUE(defined) << s.lib << " does not define " << symbol;
    }
  }
  EXPECT_EQ(cudnn_rules, 2);
  EXPECT_NE(slurp(lib + "/libcudnn.so.9").find("Invalid handle. Cannot load symbol %s"), std::string::npos);
  EXPECT_NE(slurp(lib + "/libcudnn_graph.so.9").find("Unable to load any of {%s, %s, %s, %s}."), std::string::npos);
  ASSERT_TRUE(rule_of(rules, "nvrtc-13-builtins"));
  const PackageRule& nvrtc = *rule_of(rules, "nvrtc-13-builtins");
  ASSERT_EQ(nvrtc.opener, "libnvrtc.so.13");
  ASSERT_EQ(nvrtc.steps.size(), 1u);
  EXPECT_EQ(nvrtc.steps[0].names, std::vector<std::string>{"libnvrtc-builtins.so.{v.1}.{v.2}"});
  std::string words = nvrtc.steps[0].missing.words;
  for (size_t at; (at = words.find("{name}")) != std::string::npos;) words.replace(at, 6, "libnvrtc-builtins.so.13.0");
  EXPECT_NE(slurp(lib + "/libnvrtc.so.13").find(words), std::string::npos) << words;
}

TEST(PackageRules, DefaultsAreTheDocsAndNamesAreNormalized) {
  json rule = small_rule();
  rule["package"] = {"ONNXRuntime_GPU", "Foo..-Bar"};
  PackageRules rules = parsed(table_of(rule));
  ASSERT_EQ(rules.rules.size(), 1u);
  const PackageRule& r = rules.rules[0];
  EXPECT_EQ(r.packages, (std::vector<std::string>{"onnxruntime-gpu", "foo-bar"}));
  EXPECT_EQ(r.releases, "");
  EXPECT_EQ(r.fingerprint_file, "");
  ASSERT_EQ(r.steps.size(), 1u);
  const Step& s = r.steps[0];
  EXPECT_EQ(s.missing.kind, Outcome::Kind::kRaise);
  EXPECT_EQ(s.missing.words, "OSError: {name}: cannot open shared object file: No such file or directory");
  EXPECT_EQ(s.failing.kind, Outcome::Kind::kRaise);
  EXPECT_EQ(s.failing.words, "OSError: {dlerror}");
  EXPECT_EQ(s.sort, Step::Sort::kListing);
  EXPECT_FALSE(s.every);   // take: first
  EXPECT_FALSE(s.global);  // mode: local
  EXPECT_FALSE(s.own);
  EXPECT_FALSE(s.when);

  // And each default is only that: the fields, written, are read.
  rule["steps"][0].update(json::parse(R"({"sort": "name", "take": "every", "mode": "global", "own": true,
      "missing": {"continue": true}, "failing": {"stop": true}})"));
  const Step t = parsed(table_of(rule)).rules.at(0).steps.at(0);
  EXPECT_EQ(t.sort, Step::Sort::kName);
  EXPECT_TRUE(t.every);
  EXPECT_TRUE(t.global);
  EXPECT_TRUE(t.own);
  EXPECT_EQ(t.missing.kind, Outcome::Kind::kContinue);
  EXPECT_EQ(t.failing.kind, Outcome::Kind::kStop);
  EXPECT_FALSE(schema_refuses(table_of(rule)));

  EXPECT_STREQ(environment::moment_name(Moment::kImport), "import");
  EXPECT_STREQ(environment::moment_name(Moment::kFirstUse), "first-use");
  EXPECT_STREQ(environment::moment_name(Moment::kFirstCompile), "first-compile");
}

// Every field the doc names, read into the structs the engine runs: each kind of place, outcome,
// condition and value, a group, a list and its `each`.
const char* const kEveryField = R"rule({
  "id": "every", "package": ["Torch"], "releases": ">=2.1,<2.9",
  "fingerprint": {"file": "torch/__init__.py", "contains": ["def _load_global_deps", "_preload_cuda_deps"]},
  "moment": "first-compile", "use": "torch.compile(f)(x)",
  "values": {"cuda": [{"variable": "BNB_CUDA_VERSION"},
                      {"file": "torch/version.py", "package": "Torch", "match": "cuda = '(\\d+)\\.(\\d+)'"}],
             "v": [{"version": "self"}]},
  "lists": {"cuda_libs": [{"lib": "cublas", "names": ["libcublas.so.*[0-9]"]},
                          {"lib": "cudnn", "names": ["libcudnn.so.*[0-9]", "libcudnn.so.{v.1}"]}]},
  "what": "w", "source": "S",
  "steps": [
    {"id": "global", "what": "torch's global deps", "lib": "torch_global_deps", "names": ["libtorch_global_deps.so"],
     "places": [{"package": "lib"}], "mode": "global",
     "failing": {"raise": "OSError: {dlerror}", "unless_naming": "cuda_libs"}},
    {"id": "preload", "when": {"failed": "global", "naming": "cuda_libs"}, "steps": [
      {"id": "each", "each": "cuda_libs", "sort": "name", "take": "every", "mode": "global", "missing": {"stop": true},
       "places": [{"sys_path": ["nvidia/{lib}/lib", "nvidia/cu{cuda.1}/lib"], "if_dir": "nvidia"}]}]},
    {"id": "system", "lib": "cudnn", "names": ["lib{lib}.so*"], "sort": "name-descending",
     "places": [{"variable": ["CUDNN_HOME", "CUDNN_PATH"], "default": "/usr/local/cuda", "below": "lib",
                 "recursive": true, "exclude": ["stub"]},
                {"path": "/usr/local/cuda/lib64"}, {"ldconfig": "libcudnn.so"}, {"ld_library_path": true},
                {"dlopen": "caller"}],
     "when": {"all": [{"variable": "CUDNN_HOME", "set": false},
                      {"any": [{"loaded": "each"}, {"mapped": "libcudnn"}]},
                      {"not": {"found": "system", "place": 4}}]},
     "missing": {"fall_back": "CUDA is off: {tried} not in {sys_path}", "to": "the CPU"},
     "failing": {"raise": "RuntimeError: {LIB} ({lib}, {name}): {dlerror} ({listed}), cuda {cuda}.{cuda.2} {{}}"}}]})rule";

TEST(PackageRules, EveryFieldOfTheFormatIsRead) {
  json doc = table_of(json::parse(kEveryField));
  EXPECT_FALSE(schema_refuses(doc));
  PackageRules rules = parsed(doc);
  ASSERT_EQ(rules.rules.size(), 1u);
  const PackageRule& r = rules.rules[0];
  EXPECT_EQ(r.packages, std::vector<std::string>{"torch"});
  EXPECT_EQ(r.releases, ">=2.1,<2.9");
  EXPECT_EQ(r.fingerprint_file, "torch/__init__.py");
  EXPECT_EQ(r.fingerprint, (std::vector<std::string>{"def _load_global_deps", "_preload_cuda_deps"}));
  EXPECT_EQ(r.moment, Moment::kFirstCompile);
  EXPECT_EQ(r.use, "torch.compile(f)(x)");
  ASSERT_TRUE(r.value("cuda"));
  ASSERT_EQ(r.value("cuda")->size(), 2u);
  EXPECT_EQ((*r.value("cuda"))[0].kind, ValueSource::Kind::kVariable);
  EXPECT_EQ((*r.value("cuda"))[0].name, "BNB_CUDA_VERSION");
  EXPECT_EQ((*r.value("cuda"))[1].kind, ValueSource::Kind::kFile);
  EXPECT_EQ((*r.value("cuda"))[1].name, "torch/version.py");
  EXPECT_EQ((*r.value("cuda"))[1].package, "torch");
  EXPECT_EQ((*r.value("cuda"))[1].match, "cuda = '(\\d+)\\.(\\d+)'");
  ASSERT_TRUE(r.list("cuda_libs"));
  EXPECT_EQ(r.list("cuda_libs")->at(1).lib, "cudnn");
  EXPECT_EQ(r.list("cuda_libs")->at(1).names, (std::vector<std::string>{"libcudnn.so.*[0-9]", "libcudnn.so.{v.1}"}));
  EXPECT_FALSE(r.list("cuda"));
  ASSERT_EQ(r.steps.size(), 3u);

  const Step& global = r.steps[0];
  EXPECT_EQ(global.places.at(0).kind, Place::Kind::kPackage);
  EXPECT_EQ(global.places.at(0).dirs, std::vector<std::string>{"lib"});
  EXPECT_EQ(global.what, "torch's global deps");
  EXPECT_EQ(global.failing.kind, Outcome::Kind::kRaise);
  EXPECT_EQ(global.failing.unless_naming, "cuda_libs");

  const Step& group = r.steps[1];
  ASSERT_TRUE(group.when);
  EXPECT_EQ(group.when->kind, Condition::Kind::kFailed);
  EXPECT_EQ(group.when->name, "global");
  EXPECT_EQ(group.when->naming, "cuda_libs");
  ASSERT_EQ(group.steps.size(), 1u);
  const Step& each = group.steps[0];
  EXPECT_EQ(each.each, "cuda_libs");
  EXPECT_TRUE(each.names.empty());
  EXPECT_EQ(each.places.at(0).kind, Place::Kind::kSysPath);
  EXPECT_EQ(each.places.at(0).dirs, (std::vector<std::string>{"nvidia/{lib}/lib", "nvidia/cu{cuda.1}/lib"}));
  EXPECT_EQ(each.places.at(0).if_dir, "nvidia");
  EXPECT_EQ(each.missing.kind, Outcome::Kind::kStop);

  const Step& system = r.steps[2];
  ASSERT_EQ(system.places.size(), 5u);
  const Place& variable = system.places[0];
  EXPECT_EQ(variable.kind, Place::Kind::kVariable);
  EXPECT_EQ(variable.variables, (std::vector<std::string>{"CUDNN_HOME", "CUDNN_PATH"}));
  EXPECT_EQ(variable.fallback, std::optional<std::string>("/usr/local/cuda"));
  EXPECT_EQ(variable.below, "lib");
  EXPECT_TRUE(variable.recursive);
  EXPECT_EQ(variable.exclude, std::vector<std::string>{"stub"});
  EXPECT_EQ(system.places[1].kind, Place::Kind::kPath);
  EXPECT_EQ(system.places[1].dirs, std::vector<std::string>{"/usr/local/cuda/lib64"});
  EXPECT_EQ(system.places[2].kind, Place::Kind::kLdconfig);
  EXPECT_EQ(system.places[2].text, "libcudnn.so");
  EXPECT_EQ(system.places[3].kind, Place::Kind::kLdLibraryPath);
  EXPECT_EQ(system.places[4].kind, Place::Kind::kDlopen);
  EXPECT_EQ(system.sort, Step::Sort::kNameDescending);
  EXPECT_EQ(system.missing.kind, Outcome::Kind::kFallBack);
  EXPECT_EQ(system.missing.words, "CUDA is off: {tried} not in {sys_path}");
  EXPECT_EQ(system.missing.to, "the CPU");
  EXPECT_EQ(system.failing.kind, Outcome::Kind::kRaise);
  EXPECT_EQ(system.failing.words,
            "RuntimeError: {LIB} ({lib}, {name}): {dlerror} ({listed}), cuda {cuda}.{cuda.2} {{}}");
  ASSERT_TRUE(system.when);
  const Condition& all = *system.when;
  EXPECT_EQ(all.kind, Condition::Kind::kAll);
  ASSERT_EQ(all.parts.size(), 3u);
  EXPECT_EQ(all.parts[0].kind, Condition::Kind::kVariable);
  EXPECT_EQ(all.parts[0].name, "CUDNN_HOME");
  EXPECT_FALSE(all.parts[0].set);
  EXPECT_EQ(all.parts[1].kind, Condition::Kind::kAny);
  EXPECT_EQ(all.parts[1].parts.at(0).kind, Condition::Kind::kLoaded);
  EXPECT_EQ(all.parts[1].parts.at(0).name, "each");  // a step inside a group
  EXPECT_EQ(all.parts[1].parts.at(1).kind, Condition::Kind::kMapped);
  EXPECT_EQ(all.parts[1].parts.at(1).name, "libcudnn");
  EXPECT_EQ(all.parts[2].kind, Condition::Kind::kNot);
  EXPECT_EQ(all.parts[2].parts.at(0).kind, Condition::Kind::kFound);
  EXPECT_EQ(all.parts[2].parts.at(0).place, 4);
}

// A rule changed by `edit` (a JSON merge patch of small_rule(), or a whole step list): the error the
// parser gives, and whether the schema refuses it too.
struct Refused {
  std::string error;
  bool by_schema = false;
};
Refused refused(const json& patch) {
  json rule = small_rule();
  rule.merge_patch(patch);
  return {error_of(table_of(rule)), schema_refuses(table_of(rule))};
}
json with_step(const json& step_patch) {
  json step = small_rule()["steps"][0];
  step.merge_patch(step_patch);
  return {{"steps", json::array({step})}};
}

TEST(PackageRules, UnknownKindsAreRefused) {
  ASSERT_FALSE(schema_refuses(table_of(small_rule())));  // the rule the others change holds
  Refused r = refused(with_step({{"places", {{{"dlopn", "caller"}}}}}));
  EXPECT_EQ(r.error,
            "rule r: steps[0].places[0]: \"dlopn\" is not a kind of place (sys_path, package, variable, path, "
            "ldconfig, ld_library_path, dlopen)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused(with_step({{"places", {{{"path", "/a"}, {"dlopen", "caller"}}}}}));
  EXPECT_EQ(r.error,
            "rule r: steps[0].places[0]: path and dlopen: one kind of place each (sys_path, package, "
            "variable, path, ldconfig, ld_library_path, dlopen)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused(with_step({{"missing", {{"warn", "x"}}}}));
  EXPECT_EQ(r.error, "rule r: steps[0].missing: \"warn\" is not a kind of outcome (raise, fall_back, stop, continue)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused(with_step({{"when", {{"exists", "a"}}}}));
  EXPECT_EQ(r.error,
            "rule r: steps[0].when: \"exists\" is not a kind of condition (variable, failed, loaded, "
            "mapped, found, ldconfig, on_path, gpu, all, any, not)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused({{"values", {{"v", {{{"env", "X"}}}}}}});
  EXPECT_EQ(r.error, "rule r: values.v[0]: \"env\" is not a kind of value source (variable, file, version)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused({{"moment", "first-call"}});
  EXPECT_EQ(r.error, "rule r: moment: \"first-call\" is not one of import, first-use, first-compile");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused(with_step({{"sort", "random"}}));
  EXPECT_EQ(r.error, "rule r: steps[0].sort: \"random\" is not one of listing, name, name-descending");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused(with_step({{"take", "all"}}));
  EXPECT_EQ(r.error, "rule r: steps[0].take: \"all\" is not one of first, every");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused(with_step({{"mode", "now"}}));
  EXPECT_EQ(r.error, "rule r: steps[0].mode: \"now\" is not one of local, global");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused(with_step({{"nmes", {"x"}}}));
  EXPECT_EQ(r.error, "rule r: steps[0].nmes: not a field of this object (did you mean \"names\"?)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
}

TEST(PackageRules, AStepThatOpensNothingIsRefused) {
  Refused r = refused({{"steps", {{{"id", "a"}, {"places", {{{"dlopen", "caller"}}}}}}}});
  EXPECT_EQ(r.error,
            "rule r: steps[0]: neither names, each nor steps: a step opens names, one name list per item "
            "of a list (each), or a group (steps)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused(with_step({{"steps", json::array({small_rule()["steps"][0]})}}));
  EXPECT_EQ(r.error, "rule r: steps[0]: names and steps: a step has one of names, each and steps");
  EXPECT_EQ(r.by_schema, have_jsonschema());
}

TEST(PackageRules, AnEachThatNamesNoListIsRefused) {
  Refused r = refused(with_step({{"names", nullptr}, {"each", "libs"}}));
  EXPECT_EQ(r.error, "rule r: steps[0].each: \"libs\" names no list of the rule (it has none)");
  EXPECT_FALSE(r.by_schema);  // a schema cannot say which lists a rule has
  json lists = {{"lists", {{"cuda", {{{"lib", "cublas"}, {"names", {"libcublas.so.12"}}}}}}}};
  lists.update(with_step({{"names", nullptr}, {"each", "libs"}}));
  EXPECT_EQ(refused(lists).error, "rule r: steps[0].each: \"libs\" names no list of the rule (cuda)");
  lists.update(with_step({{"names", nullptr}, {"each", "cuda"}}));
  json rule = small_rule();
  rule.merge_patch(lists);
  EXPECT_EQ(parsed(table_of(rule)).rules.at(0).steps.at(0).each, "cuda");
}

TEST(PackageRules, AConditionThatNamesNoStepOfItsRuleIsRefused) {
  json second = {{"names", {"liby.so.1"}}, {"places", {{{"dlopen", "caller"}}}}, {"when", {{"failed", "b"}}}};
  json rule = small_rule();
  rule["steps"].push_back(second);
  EXPECT_EQ(error_of(table_of(rule)), "rule r: steps[1].when.failed: \"b\" is the id of no step of the rule");
  EXPECT_FALSE(schema_refuses(table_of(rule)));
  rule["steps"][1]["when"] = {{"all", {{{"variable", "X"}}, {{"not", {{"loaded", "zz"}}}}}}};
  EXPECT_EQ(error_of(table_of(rule)),
            "rule r: steps[1].when.all[1].not.loaded: \"zz\" is the id of no step of the rule");
  rule["steps"][1]["when"] = {{"found", "a"}, {"place", 1}};
  EXPECT_EQ(error_of(table_of(rule)), "rule r: steps[1].when.place: step \"a\" has 1 place");
  rule["steps"][1]["when"] = {{"failed", "a"}, {"naming", "cuda"}};
  EXPECT_EQ(error_of(table_of(rule)), "rule r: steps[1].when.naming: \"cuda\" names no list of the rule");
  rule["steps"][1]["when"] = {{"found", "a"}, {"place", 0}};
  EXPECT_EQ(parsed(table_of(rule)).rules.at(0).steps.at(1).when->place, 0);
}

TEST(PackageRules, ARuleOfBothOrNeitherPackageAndOpenerIsRefused) {
  Refused r = refused({{"opener", "libcudnn.so.9"}});
  EXPECT_EQ(r.error,
            "rule r: package and opener: a rule is a package's (package) or a library's that opens "
            "others (opener)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused({{"package", nullptr}});
  EXPECT_EQ(r.error,
            "rule r: neither package nor opener: a rule is a package's (package) or a library's that "
            "opens others (opener)");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  json opener = small_rule();
  opener.merge_patch({{"package", nullptr}, {"opener", "libcudnn.so.9"}});
  EXPECT_EQ(parsed(table_of(opener)).rules.at(0).opener, "libcudnn.so.9");
}

TEST(PackageRules, TwoRulesOfOneIdAreRefused) {
  json doc = table_of(small_rule());
  doc["rules"].push_back(small_rule());
  doc["rules"][1]["package"] = {"q"};
  EXPECT_EQ(error_of(doc), "rule r: id: also the id of rules[0]");
  EXPECT_FALSE(schema_refuses(doc));
  doc["rules"][1]["id"] = "s";
  EXPECT_EQ(parsed(doc).rules.size(), 2u);
  json step = small_rule()["steps"][0];
  doc["rules"][1]["steps"].push_back(step);
  EXPECT_EQ(error_of(doc), "rule s: steps[1].id: \"a\" is the id of an earlier step of the rule");
}

TEST(PackageRules, AFingerprintWithoutItsFileIsRefused) {
  Refused r = refused({{"fingerprint", {{"contains", {"def _load_global_deps"}}}}});
  EXPECT_EQ(r.error, "rule r: fingerprint.file: missing");
  EXPECT_EQ(r.by_schema, have_jsonschema());
}

// What a schema can say as well as the parser, and what only the parser can: a `{NAME}` that is no
// value, a source that is not one of the table's, a use missing at a later moment, a rule without id.
TEST(PackageRules, OtherMistakesAreRefusedWithTheirField) {
  Refused r = refused(with_step({{"names", {"libx.so.{x}"}}}));
  EXPECT_EQ(r.error, "rule r: steps[0].names[0]: {x} is no value of the rule nor a word of the format (lib, LIB)");
  EXPECT_FALSE(r.by_schema);
  r = refused(with_step({{"missing", {{"raise", "E: {nmae}"}}}}));
  EXPECT_EQ(r.error,
            "rule r: steps[0].missing.raise: {nmae} is no value of the rule nor a word of the format "
            "(name, tried, lib, LIB, dlerror, path, sys_path, listed)");
  r = refused(with_step({{"missing", {{"raise", "Unable to load any of {{tried}."}}}}));
  EXPECT_EQ(r.error, "rule r: steps[0].missing.raise: a } that no { opens (a brace of the words is written }})");
  r = refused(with_step({{"missing", {{"raise", "Unable to load any of {tried"}}}}));
  EXPECT_EQ(r.error, "rule r: steps[0].missing.raise: a { that no } closes (a brace of the words is written {{)");
  r = refused(with_step({{"names", {"libx.so.{lib"}}}));
  EXPECT_EQ(r.error, "rule r: steps[0].names[0]: a { that no } closes");
  r = refused(with_step({{"failing", {{"raise", "E"}, {"unless_naming", "cuda"}}}}));
  EXPECT_EQ(r.error, "rule r: steps[0].failing.unless_naming: \"cuda\" names no list of the rule");
  EXPECT_FALSE(r.by_schema);
  EXPECT_EQ(refused({{"source", "T"}}).error, "rule r: source: \"T\" is not a key of the table's sources");
  r = refused({{"moment", "first-use"}});
  EXPECT_EQ(r.error, "rule r: use: missing: a first-use rule names the call that makes its loads");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused({{"id", nullptr}});
  EXPECT_EQ(r.error, "rules[0]: id: missing");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  r = refused({{"releases", ">=2.1,"}});
  EXPECT_EQ(r.error, "rule r: releases: \">=2.1,\" is not a PEP 440 version specifier");
  r = refused({{"values", {{"v", {{{"file", "torch/version.py"}, {"match", "cuda = (\\d+"}}}}}}});
  EXPECT_EQ(r.error.rfind("rule r: values.v[0].match: not an ECMAScript regular expression: ", 0), 0u) << r.error;
  r = refused(with_step({{"missing", {{"fall_back", "off"}}}}));
  EXPECT_EQ(r.error, "rule r: steps[0].missing.to: missing");
  EXPECT_EQ(r.by_schema, have_jsonschema());
  json doc = table_of(small_rule());
  doc["schema"] = 2;
  EXPECT_EQ(error_of(doc), "schema: 2 is not 1, the format this envdoctor reads");
}

// A fingerprint's other files (`also`: Triton's knobs.py, through which its driver.py reads the
// variable) and the `ldconfig` condition (a line of `ldconfig -p` holds a text) are read, and an
// `also` that names no file or no string is refused by the parser and the schema alike.
TEST(PackageRules, AFingerprintsOtherFilesAndTheLdconfigConditionAreRead) {
  json rule = small_rule();
  rule["fingerprint"] = json::parse(R"({"file": "p/a.py", "contains": ["def f("],
                                        "also": [{"file": "p/b.py", "contains": ["X = 1", "Y"]}]})");
  rule["steps"][0]["when"] = json::parse(R"({"not": {"ldconfig": "libx.so.1"}})");
  ASSERT_FALSE(schema_refuses(table_of(rule)));
  PackageRules rules = parsed(table_of(rule));
  ASSERT_EQ(rules.rules.size(), 1u);
  const PackageRule& r = rules.rules[0];
  ASSERT_EQ(r.fingerprint_also.size(), 1u);
  EXPECT_EQ(r.fingerprint_also[0].first, "p/b.py");
  EXPECT_EQ(r.fingerprint_also[0].second, (std::vector<std::string>{"X = 1", "Y"}));
  const Condition& when = *r.steps[0].when;
  ASSERT_EQ(when.parts.size(), 1u);
  EXPECT_EQ(when.parts[0].kind, Condition::Kind::kLdconfig);
  EXPECT_EQ(when.parts[0].name, "libx.so.1");

  Refused e = refused({{"fingerprint", {{"file", "p/a.py"}, {"also", json::array()}}}});
  EXPECT_EQ(e.error, "rule r: fingerprint.also: not a list of files, or empty");
  EXPECT_EQ(e.by_schema, have_jsonschema());
  e = refused({{"fingerprint", {{"file", "p/a.py"}, {"also", {{{"file", "p/b.py"}}}}}}});
  EXPECT_EQ(e.error, "rule r: fingerprint.also[0].contains: missing");
  EXPECT_EQ(e.by_schema, have_jsonschema());
  e = refused(with_step({{"when", {{"ldconfig", ""}}}}));
  EXPECT_EQ(e.error, "rule r: steps[0].when.ldconfig: not a string, or empty");
  EXPECT_EQ(e.by_schema, have_jsonschema());
}

}  // namespace envdoctor::test::package_rules
