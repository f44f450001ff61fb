// TransformerEngine's own loads at import as the rules transformer-engine-* of
// data/package_loads.json say them: each release's shape of transformer_engine/common/__init__.py
// (written by support/transformer_engine_source.h) is recognised by its rule's fingerprint and
// releases, a file that differs in a statement a fingerprint holds gets no rule (no verdict), and
// the steps are the release's. The import these rules predict is refereed in a chroot by
// tests/root (TransformerEngineLoads); the format's fields these rules brought are read here too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "environment/package_rules.h"
#include "fixtures/fixture.h"
#include "fixtures/transformer_engine_source.h"
#include "imports/package_loads.h"

namespace envdoctor::test {
namespace {

namespace fs = std::filesystem;
using environment::Condition;
using environment::Outcome;
using environment::PackageRule;
using environment::PackageRules;
using environment::Place;
using environment::Step;
using nlohmann::json;

const environment::PackageRules& shipped_rules() {
  static const PackageRules rules = [] {
    std::string error;
    std::optional<PackageRules> r = PackageRules::parse(
        json::parse(std::ifstream(std::string(ENVDOCTOR_SOURCE_DIR) + "/data/package_loads.json")), &error);
    if (!r) ADD_FAILURE() << error;
    return r.value_or(PackageRules{});
  }();
  return rules;
}

// The rule the engine takes for transformer_engine `version` whose common/__init__.py is `text`:
// the first of the table whose releases hold the version and whose fingerprint the text holds.
std::string rule_for(const std::string& version, const std::string& text) {
  for (const PackageRule& r : shipped_rules().rules) {
    if (std::find(r.packages.begin(), r.packages.end(), "transformer-engine") == r.packages.end()) continue;
    EXPECT_EQ(r.fingerprint_file, "transformer_engine/common/__init__.py") << r.id;
    if (!imports::in_releases(version, r.releases)) continue;
    if (std::all_of(r.fingerprint.begin(), r.fingerprint.end(),
                    [&](const std::string& s) { return text.find(s) != std::string::npos; }))
      return r.id;
  }
  return "";
}

const PackageRule& rule(const std::string& id) {
  for (const PackageRule& r : shipped_rules().rules)
    if (r.id == id) return r;
  ADD_FAILURE() << id;
  static const PackageRule none;
  return none;
}

// The steps of a rule, groups' steps in order after their group.
std::vector<const Step*> all_steps(const std::vector<Step>& steps) {
  std::vector<const Step*> out;
  for (const Step& s : steps) {
    out.push_back(&s);
    for (const Step* inner : all_steps(s.steps)) out.push_back(inner);
  }
  return out;
}

const Step* step(const PackageRule& r, const std::string& id) {
  for (const Step* s : all_steps(r.steps))
    if (s->id == id) return s;
  ADD_FAILURE() << r.id << ": " << id;
  return nullptr;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  while (at != std::string::npos) {
    text.replace(at, from.size(), to);
    at = text.find(from, at + to.size());
  }
  return text;
}

// The releases' shapes (support/transformer_engine_source.h): 2.4 puts the dot itself and greps
// every NVRTC line; 2.5 returns ".so"; 2.6 asks ldconfig for cuDNN too; 2.8 loads cuRAND; 2.9 checks
// the PyPI installation first; 2.10 reads every line of `ldconfig -p` itself.
const TePerLibraryShape k24{true, false, true, false, false, false};
const TePerLibraryShape k25{false, false, true, false, false, false};
const TePerLibraryShape k26{false, true, false, false, false, false};
const TePerLibraryShape k28{};
const TePerLibraryShape k29{false, true, false, true, false, true};
const TePerLibraryShape k210{false, true, false, true, true, true};

TEST(TransformerEngineRules, EachReleaseShapeGetsItsRule) {
  EXPECT_EQ(rule_for("2.4.0", te_per_library_init(k24)), "transformer-engine-2.4");
  EXPECT_EQ(rule_for("2.5.1", te_per_library_init(k25)), "transformer-engine-2.5");
  EXPECT_EQ(rule_for("2.6.0", te_per_library_init(k26)), "transformer-engine-2.6");
  EXPECT_EQ(rule_for("2.7.0", te_per_library_init(k26)), "transformer-engine-2.6");
  EXPECT_EQ(rule_for("2.8.0", te_per_library_init(k28)), "transformer-engine-2.8");
  EXPECT_EQ(rule_for("2.9.1", te_per_library_init(k29)), "transformer-engine-2.9");
  EXPECT_EQ(rule_for("2.10.0", te_per_library_init(k210)), "transformer-engine-2.10");
  EXPECT_EQ(rule_for("2.11.0", te_shared_init()), "transformer-engine-2.11");
  EXPECT_EQ(rule_for("2.18.0.dev0+d0067d0", te_shared_init()), "transformer-engine-2.11");
  // A release's file under another release's version, or a release before 2.4: no verdict.
  EXPECT_EQ(rule_for("2.8.0", te_per_library_init(k210)), "");
  EXPECT_EQ(rule_for("2.8.0", te_shared_init()), "");
  EXPECT_EQ(rule_for("2.11.0", te_per_library_init(k210)), "");
  EXPECT_EQ(rule_for("2.6.0", te_per_library_init(k25)), "");
  EXPECT_EQ(rule_for("2.3.0", te_per_library_init(k24)), "");
}

// A file that differs in a statement a fingerprint holds (another order, filter, grep, extension,
// search or error) gets no rule. A statement the fingerprint does not name (an added print()) is
// not seen: the fingerprint says which release's code this is, not that it is nothing else.
TEST(TransformerEngineRules, AnotherStatementTheFingerprintHoldsGivesNoRule) {
  std::string text = te_per_library_init(k28);
  ASSERT_EQ(rule_for("2.8.0", text), "transformer-engine-2.8");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"libs.sort(reverse=True, key=os.path.basename)", "libs.sort(key=os.path.basename)"},
           {"\"stub\" in x or \"libnvrtc-builtins\" in x", "\"stub\" in x and \"libnvrtc-builtins\" in x"},
           {"grep 'libcurand{_get_sys_extension()}'", "grep -i 'libcurand{_get_sys_extension()}'"},
           {"        return \".so\"\n", "        return \".dylib\"\n"},
           {"    return ctypes.CDLL(f\"libcurand{_get_sys_extension()}\", mode=ctypes.RTLD_GLOBAL)\n", ""},
           {"_load_nvidia_cuda_library(\"cuda_nvrtc\")", "_load_nvidia_cuda_library(\"nvrtc\")"},
           {"if \"NVTE_PROJECT_BUILDING\" not in os.environ", "if \"NVTE_BUILDING\" not in os.environ"}})
    EXPECT_EQ(rule_for("2.8.0", replaced(text, from, to)), "") << from << " -> " << to;
  // ROCm's fork runs the loads inside a try that swallows their errors: no verdict of NVIDIA's rules.
  std::string swallowed =
      replaced(te_per_library_init(k28), "\n    _CUDNN_LIB_CTYPES = _load_cudnn()\n",
               "\n    try:\n        _CUDNN_LIB_CTYPES = _load_cudnn()\n    except OSError:\n        pass\n");
  EXPECT_EQ(rule_for("2.8.0", swallowed), "");
  std::string shared = te_shared_init();
  for (
      const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
          {"libs = [lib for lib in libs if \"stub\" not in lib]", "libs = list(libs)"},
          {"        \"/usr/local/cuda\",\n", "        \"/opt/cuda\",\n"},
          {"raise RuntimeError(f\"{lib_name} shared object not found.\")", "raise RuntimeError(lib_name)"},
          {"load_libs_for_no_ctk = not system_nvrtc and not system_curand", "load_libs_for_no_ctk = False"},
          {"os.path.join(nvidia_dir, \"cu13\", lib_name)", "os.path.join(nvidia_dir, \"cu14\", lib_name)"},
          {"    load_libs_for_no_ctk = not system_nvrtc and not system_curand\n",
           "    try:\n        load_libs_for_no_ctk = not system_nvrtc and not system_curand\n    except NameError:\n        pass\n"}})
    EXPECT_EQ(rule_for("2.11.0", replaced(shared, from, to)), "") << from << " -> " << to;
}

// 2.11's one search: the paths tuple globbed recursively, stubs out, names in reverse, the first;
// then the unversioned name, its OSError caught; then the wheels' four folders, every match.
TEST(TransformerEngineRules, Release211SearchesTheSystemThenTheWheels) {
  const PackageRule& r = rule("transformer-engine-2.11");
  ASSERT_EQ(r.steps.size(), 1u);
  ASSERT_TRUE(r.steps[0].when);
  EXPECT_EQ(r.steps[0].when->kind, Condition::Kind::kAny);  // NVTE_PROJECT_BUILDING / NVTE_RELEASE_BUILD
  const Condition& release = r.steps[0].when->parts[1];
  EXPECT_EQ(release.test, Condition::Test::kInt);
  EXPECT_EQ(release.name, "NVTE_RELEASE_BUILD");
  EXPECT_EQ(release.fallback, "0");
  EXPECT_EQ(r.steps[0].when->parts[0].parts[0].test, Condition::Test::kPresent);
  for (const std::string lib : {"cudnn", "nvrtc", "curand"}) {
    const Step* system = step(r, lib + "-system");
    ASSERT_TRUE(system);
    EXPECT_EQ(system->names, std::vector<std::string>{"lib{lib}.so*"});
    ASSERT_EQ(system->places.size(), 5u);
    std::string up = lib == "cudnn" ? "CUDNN" : lib == "nvrtc" ? "NVRTC" : "CURAND";
    std::vector<std::vector<std::string>> variables{{up + "_HOME"}, {up + "_PATH"}, {"CUDA_HOME"}, {"CUDA_PATH"}};
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(system->places[i].kind, Place::Kind::kVariable);
      EXPECT_EQ(system->places[i].variables, variables[i]);
    }
    EXPECT_EQ(system->places[4].kind, Place::Kind::kPath);
    EXPECT_EQ(system->places[4].dirs, std::vector<std::string>{"/usr/local/cuda"});
    for (const Place& p : system->places) {
      EXPECT_TRUE(p.recursive);
      EXPECT_EQ(p.exclude, std::vector<std::string>{"stub"});
    }
    EXPECT_EQ(system->sort, Step::Sort::kNameDescending);
    EXPECT_TRUE(system->global);
    EXPECT_EQ(system->missing.kind, Outcome::Kind::kContinue);
    EXPECT_EQ(system->failing.kind, Outcome::Kind::kRaise);
    const Step* dlopen = step(r, lib + "-dlopen");
    ASSERT_TRUE(dlopen);
    EXPECT_EQ(dlopen->names, std::vector<std::string>{"lib{lib}.so"});
    EXPECT_EQ(dlopen->failing.kind, Outcome::Kind::kContinue);  // except OSError
    const Step* wheels = step(r, lib + "-wheels");
    ASSERT_TRUE(wheels);
    EXPECT_TRUE(wheels->every);
    ASSERT_EQ(wheels->places.size(), 4u);
    EXPECT_EQ(wheels->places[1].dirs, std::vector<std::string>{"nvidia/cu13/lib"});
    EXPECT_EQ(wheels->places[1].names, std::vector<std::string>{"lib{lib}*.so.*[0-9]"});
    EXPECT_EQ(wheels->missing.words, "RuntimeError: {lib} shared object not found.");
  }
  const Step* strict = step(r, "no-toolkit");
  ASSERT_TRUE(strict);
  std::vector<std::string> libs;
  for (const Step& s : strict->steps) libs.push_back(s.lib);
  EXPECT_EQ(libs, (std::vector<std::string>{"cublas", "cudart", "cudnn"}));
}

// 2.4 to 2.10: a function per library, each step only where the ones before it returned nothing;
// the ldconfig step through grep in a shell (2.4 to 2.9), whose status raises, or every line (2.10).
TEST(TransformerEngineRules, PerLibraryReleasesAskLdconfigAsTheyDo) {
  const PackageRule& r28 = rule("transformer-engine-2.8");
  const Step* home = step(r28, "cudnn-home");
  ASSERT_TRUE(home);
  ASSERT_EQ(home->places.size(), 2u);
  EXPECT_EQ(home->places[0].variables, (std::vector<std::string>{"CUDNN_HOME", "CUDNN_PATH"}));
  EXPECT_FALSE(home->places[0].fallback);
  EXPECT_EQ(home->places[1].fallback, "/usr/local/cuda");
  EXPECT_TRUE(home->places[1].exclude.empty());  // cuDNN's toolkit glob keeps stubs
  EXPECT_EQ(step(r28, "nvrtc-home")->places[0].exclude, (std::vector<std::string>{"stub", "libnvrtc-builtins"}));
  const Step* lines = step(r28, "cudnn-ldconfig");
  ASSERT_TRUE(lines);
  EXPECT_TRUE(lines->places[0].lines);
  EXPECT_EQ(lines->places[0].text, "libcudnn.so");
  std::vector<std::string> raised;
  for (const Step* s : all_steps(r28.steps))
    if (s->outcome) raised.push_back(s->outcome->words);
  EXPECT_NE(std::find(raised.begin(), raised.end(),
                      "subprocess.CalledProcessError: Command 'ldconfig -p | grep 'libcudnn.so'' returned non-zero "
                      "exit status 1."),
            raised.end());
  const Step* last = step(r28, "cudnn-dlopen");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->missing.kind, Outcome::Kind::kRaise);  // uncaught

  const Step* nvrtc24 = step(rule("transformer-engine-2.4"), "nvrtc-ldconfig");
  ASSERT_TRUE(nvrtc24);
  EXPECT_EQ(nvrtc24->places[0].text, "libnvrtc");
  EXPECT_EQ(nvrtc24->places[0].exclude, (std::vector<std::string>{"stub", "libnvrtc-builtins"}));
  for (const Step* s : all_steps(rule("transformer-engine-2.4").steps)) EXPECT_NE(s->id, "cudnn-ldconfig");

  std::vector<std::string> listed;
  for (const Step* s : all_steps(rule("transformer-engine-2.10").steps))
    if (s->outcome && s->lib == "cudnn") listed.push_back(s->outcome->words);
  EXPECT_EQ(listed,
            (std::vector<std::string>{
                "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'",
                "subprocess.CalledProcessError: Command '['ldconfig', '-p']' returned non-zero exit status 1."}));
}

json table_of(const json& rule) {
  return {{"schema", 1}, {"sources", {{"S", "a source"}}}, {"rules", json::array({rule})}};
}

std::string error_of(const json& rule) {
  std::string error;
  EXPECT_FALSE(PackageRules::parse(table_of(rule), &error)) << rule.dump();
  return error;
}

// The fields of the format these rules brought: a place's own names, a fixed place's recursive glob,
// an ldconfig place's lines, a step that opens nothing but its outcome, and the variable's presence,
// its value as int() reads it, and a program on PATH as conditions.
TEST(TransformerEngineRules, TheFormatReadsTheFieldsTheseRulesUse) {
  json rule = json::parse(R"({"id": "r", "package": ["p"], "moment": "import", "what": "w", "source": "S", "steps": [
    {"id": "a", "lib": "x", "names": ["libx.so*"], "places": [
      {"path": "/opt", "recursive": true, "exclude": ["stub"], "names": ["lib{lib}*.so.*[0-9]"]},
      {"ldconfig": "libx", "lines": true, "exclude": ["stub"]}]},
    {"lib": "x", "names": ["libx.so"], "when": {"all": [
       {"variable": "A", "present": true}, {"variable": "B", "int": true, "default": "1"},
       {"not": {"on_path": "ldconfig"}}]},
     "outcome": {"raise": "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'"}}]})");
  std::string error;
  std::optional<PackageRules> parsed = PackageRules::parse(table_of(rule), &error);
  ASSERT_TRUE(parsed) << error;
  const Step& a = parsed->rules[0].steps[0];
  EXPECT_TRUE(a.places[0].recursive);
  EXPECT_EQ(a.places[0].exclude, std::vector<std::string>{"stub"});
  EXPECT_EQ(a.places[0].names, std::vector<std::string>{"lib{lib}*.so.*[0-9]"});
  EXPECT_TRUE(a.places[1].lines);
  EXPECT_FALSE(a.outcome);
  const Step& b = parsed->rules[0].steps[1];
  ASSERT_TRUE(b.outcome);
  EXPECT_EQ(b.outcome->kind, Outcome::Kind::kRaise);
  EXPECT_TRUE(b.places.empty());
  const std::vector<Condition>& parts = b.when->parts;
  EXPECT_EQ(parts[0].test, Condition::Test::kPresent);
  EXPECT_EQ(parts[1].test, Condition::Test::kInt);
  EXPECT_EQ(parts[1].fallback, "1");
  EXPECT_EQ(parts[2].parts[0].kind, Condition::Kind::kOnPath);
  EXPECT_EQ(parts[2].parts[0].name, "ldconfig");

  auto with = [&](const char* path, const json& value) {
    json r = rule;
    r[json::json_pointer(path)] = value;
    return r;
  };
  EXPECT_EQ(error_of(with("/steps/1/when/all/0/set", true)),
            "rule r: steps[1].when.all[0].variable: one of set, present and int");
  EXPECT_EQ(error_of(with("/steps/1/when/all/0/default", "0")), "rule r: steps[1].when.all[0].default: only with int");
  EXPECT_NE(error_of(with("/steps/1/places", json::array({{{"path", "/x"}}})))
                .find("steps[1].places: a step with an outcome opens nothing"),
            std::string::npos);
  EXPECT_NE(error_of(with("/steps/1/outcome", {{"stop", true}})).find("steps[1].outcome: raise or fall_back"),
            std::string::npos);
  EXPECT_NE(error_of(with("/steps/0/places/0/lines", true)).find("not a field of this object"), std::string::npos);
  EXPECT_NE(error_of(with("/steps/0/places/1/names", json::array())).find("steps[0].places[1].names"),
            std::string::npos);
}

}  // namespace
}  // namespace envdoctor::test
