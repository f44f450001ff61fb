// The corpus of real wheels (tests/requirements/corpus.txt), installed by the real uv and the real
// pip into real venvs, offline from the tests' cache, and envdoctor held to two referees on them:
//
// - every extension module (a file named as Python imports it that defines PyInit_<name>): the
//   verdict of `envdoctor why FILE` (will_not_load, and the error's words) against a real
//   `python -c "import M"` (these import without a GPU);
// - every ELF file: `envdoctor ldd` and `ldd -r` against ld.so, by the differential test
//   (tests/differential) pointed at the venv's site-packages.
//
// Each venv is built once a ctest run (fixtures/shared_fixture.h); the wheels are fetched once for
// every run by scripts/install-test-tools.sh, and uv installs them from its cache in the tests'
// cache (hard links), so a venv of torch costs seconds.
#include <algorithm>
#include <atomic>
#include <thread>

#include "fixtures/referees.h"
#include "fixtures/shared_fixture.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

struct RealEnv {
  std::string name;
  std::string installer;  // "uv" or "pip"
  std::vector<std::string> requirements;
  // Modules whose real import fails where envdoctor predicts it loads, each with why: what the
  // model does not see. The test fails when this list is wrong either way.
  std::map<std::string, std::string> known_misses;
  // Modules whose real import fails in Python's own words (no load involved), predicted to load;
  // held the same way.
  std::set<std::string> python_failures;
};

void PrintTo(const RealEnv& env, std::ostream* out) { *out << env.name; }

const std::string kCutensorMiss =
    "its module initialisation imports cupy_backends.cuda.libs.cutensor (a Cython cimport), which cannot "
    "load libcutensor.so.2; envdoctor does not model one module importing another";

const std::vector<RealEnv>& real_envs() {
  static const std::vector<RealEnv> envs = {
      {"torch", "uv", {"torch==2.11.0", "bitsandbytes==0.50.2", "numpy"}, {}},
      {"cupy12",
       "pip",
       {"cupy-cuda12x==14.2.0", "nvidia-cuda-runtime-cu12==12.9.79", "nvidia-cuda-nvrtc-cu12==12.9.86"},
       {{"cupyx._cutensor", kCutensorMiss}}},
      {"cupy13", "uv", {"cupy-cuda13x==14.2.0"}, {{"cupyx._cutensor", kCutensorMiss}}},
      {"ort", "pip", {"onnxruntime-gpu==1.31.1"}, {}},
      {"jax",
       "uv",
       {"jax==0.10.2", "jaxlib==0.10.2", "jax-cuda12-plugin==0.10.2", "jax-cuda13-plugin==0.10.2"},
       {},
       // A circular import when imported alone; initialised before jaxlib itself.
       {"scipy.linalg._matfuncs_sqrtm_triu", "jaxlib._sdy_mpmd"}},
  };
  return envs;
}

std::string build_venv(const RealEnv& env, const std::string& uv, const TempDir& dir);

// The venv of `env`, built once a ctest run with the real installer from the corpus, offline.
// "" with `why` set when the referees cannot be had or the install fails.
std::string real_venv(const RealEnv& env, std::string* why) {
  std::string uv = pinned_tool("uv", why);
  if (uv.empty()) return "";
  std::string wheel = corpus_wheel(env.requirements[0].substr(0, env.requirements[0].find("==")), why);
  if (wheel.empty()) return "";
  // Kept for the life of the process: outside ctest the fixture's directory goes with it.
  static std::map<std::string, SharedFixture> kept;
  auto found = kept.find(env.name);
  if (found == kept.end())
    found = kept.emplace(env.name, shared_fixture("real-" + env.name,
                                                  [&](const TempDir& dir) { return build_venv(env, uv, dir); }))
                .first;
  const SharedFixture& built = found->second;
  if (built.record.rfind("error: ", 0) == 0) {
    *why = built.record;
    return "";
  }
  return built.record;
}

// uv's venv and uv's install, or python3's venv and pip's install, from the corpus, offline.
std::string build_venv(const RealEnv& env, const std::string& uv, const TempDir& dir) {
  std::string venv = dir / "venv", python = venv + "/bin/python";
  std::string reqs;
  for (const std::string& r : env.requirements) reqs += " " + quote(r);
  std::string cache = "UV_CACHE_DIR=" + quote(test_cache_dir() + "/uv-cache") + " ";
  bool by_uv = env.installer == "uv";
  std::string make =
      by_uv ? cache + quote(uv) + " venv -q -p python3 " + quote(venv) : "python3 -m venv --without-pip " + quote(venv);
  std::string install = by_uv ? cache + quote(uv) + " pip install -q --offline --no-index --find-links " +
                                    quote(corpus_dir()) + " --python " + quote(python) + reqs
                              : "python3 -m pip --python " + quote(python) +
                                    " install -q --no-index --disable-pip-version-check --find-links " +
                                    quote(corpus_dir()) + reqs;
  for (const std::string& command : {make, install}) {
    CommandResult r = run(command);
    if (r.status != 0) return "error: " + command + ": " + r.err;
  }
  return venv;
}

struct Module {
  std::string file, name;
};

// The extension modules below `site`: files named NAME.cpython-*.so, NAME.abi3.so or NAME.so in a
// package directory (no '.' or '-' in its path: not a .libs or .data directory) that define
// PyInit_NAME, as Python's import needs.
std::vector<Module> extension_modules(const std::string& site) {
  std::vector<Module> out;
  for (auto it = fs::recursive_directory_iterator(site); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = it->path().lexically_relative(site).string();
    if (it->is_directory()) {
      if (rel.find_first_of(".-") != std::string::npos) it.disable_recursion_pending();
      continue;
    }
    std::string base = it->path().filename().string();
    if (!it->is_regular_file() || !base.ends_with(".so") || base.starts_with("lib")) continue;
    std::string stem = base.substr(0, base.find('.'));
    std::string tag = base.substr(stem.size());
    if (tag != ".so" && tag != ".abi3.so" && !tag.starts_with(".cpython-")) continue;
    if (slurp(it->path()).find("PyInit_" + stem + '\0') == std::string::npos) continue;
    std::string dir = fs::path(rel).parent_path().string();
    std::replace(dir.begin(), dir.end(), '/', '.');
    out.push_back({it->path().string(), dir.empty() ? stem : dir + "." + stem});
  }
  std::sort(out.begin(), out.end(), [](const Module& a, const Module& b) { return a.name < b.name; });
  return out;
}

// Words the loader says (dlerror's, as ImportError carries them): a failure in these words is
// native, anything else (a circular import, an exception of the module's own) is Python's.
bool loader_words(const std::string& message) {
  for (const char* w : {"cannot open shared object file", "undefined symbol: ", "version `", "wrong ELF class",
                        "cannot allocate memory in static TLS block", "file too short", "invalid ELF header"})
    if (message.find(w) != std::string::npos) return true;
  return false;
}

class RealCorpus : public ::testing::TestWithParam<RealEnv> {
 protected:
  void SetUp() override {
    std::string why;
    venv_ = real_venv(GetParam(), &why);
    if (venv_.empty()) GTEST_SKIP() << why;
  }
  std::string venv_;
};

// Each module's real import against envdoctor's verdict on it, two at a time.
TEST_P(RealCorpus, EveryExtensionModuleImportsAsPredicted) {
  Venv venv = Venv::existing(venv_);
  std::vector<Module> modules = extension_modules(venv.site());
  ASSERT_FALSE(modules.empty());
  struct Outcome {
    std::string real;                // the ImportError's words, "" when it imports
    bool predicted = false;          // will_not_load
    std::vector<std::string> words;  // the errors' messages
  };
  std::vector<Outcome> outcomes(modules.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < modules.size();) {
      outcomes[i].real = venv.import(modules[i].name);
      CommandResult w = venv.envdoctor_run("why --json", quote(modules[i].file));
      json answer = json::parse(w.out, nullptr, false);
      if (answer.is_discarded()) {
        outcomes[i].words.push_back("envdoctor why failed: " + w.err);
        continue;
      }
      outcomes[i].predicted = answer.value("will_not_load", false);
      for (const json& f : answer["findings"])
        if (f["severity"] == "error") outcomes[i].words.push_back(f["message"]);
    }
  };
  std::thread other(worker);
  worker();
  other.join();

  size_t agree = 0;
  std::map<std::string, std::string> misses, python_level;
  for (size_t i = 0; i < modules.size(); ++i) {
    const Outcome& o = outcomes[i];
    SCOPED_TRACE(modules[i].name);
    if (o.predicted) {
      EXPECT_NE(o.real, "") << "false alarm: envdoctor says it will not load, and it imports: "
                            << testing::PrintToString(o.words);
      // The words: the first error the loader reports is the one Python raises.
      if (!o.real.empty())
        EXPECT_NE(std::find(o.words.begin(), o.words.end(), o.real), o.words.end())
            << "the import says: " << o.real << "\nenvdoctor: " << testing::PrintToString(o.words);
      agree += !o.real.empty();
    } else if (o.real.empty()) {
      ++agree;
    } else if (!loader_words(o.real)) {
      python_level[modules[i].name] = o.real;  // the module's own exception, not a load
    } else {
      misses[modules[i].name] = o.real;
    }
  }
  std::map<std::string, std::string> expected_misses = GetParam().known_misses;
  std::set<std::string> got, want;
  for (const auto& [m, words] : misses) got.insert(m);
  for (const auto& [m, why] : expected_misses) want.insert(m);
  EXPECT_EQ(got, want) << "misses (a module that fails in the loader's words, predicted to load): "
                       << testing::PrintToString(misses);
  std::set<std::string> python_got;
  for (const auto& [m, words] : python_level) python_got.insert(m);
  EXPECT_EQ(python_got, GetParam().python_failures)
      << "modules failing in Python's own words: " << testing::PrintToString(python_level);
  // check's errors, held to the same referee: each is about a module whose real import fails (the
  // libraries nothing here opens unasked, data/plugins.json, are warnings).
  std::set<std::string> failing;
  for (size_t i = 0; i < modules.size(); ++i)
    if (!outcomes[i].real.empty()) failing.insert(modules[i].file);
  CommandResult checked = venv.envdoctor_run("check --json", "");
  json report = json::parse(checked.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << checked.err;
  for (const json& f : report["findings"])
    if (f["severity"] == "error")
      EXPECT_TRUE(f["file"].is_string() && failing.count(f["file"].get<std::string>()))
          << "check reports an error where no import fails: " << f.dump(1);
  std::cout << GetParam().name << ": " << modules.size() << " extension modules, " << agree
            << " as predicted, 0 false alarms, " << misses.size() << " known misses, " << python_level.size()
            << " failing in Python's own words\n";
  RecordProperty("modules", static_cast<int>(modules.size()));
}

// ld.so against envdoctor's ldd on every ELF file of the venv: the differential test, on its
// site-packages.
TEST_P(RealCorpus, LddAgreesWithLdSoOnEveryFile) {
  std::string differential = (fs::path(envdoctor()).parent_path() / "tests/test_differential").string();
  if (!fs::exists(differential)) GTEST_SKIP() << "needs tests/test_differential, built beside envdoctor";
  Venv venv = Venv::existing(venv_);
  CommandResult r = run("ENVDOCTOR_DIFFERENTIAL_DIRS=" + quote(venv.site()) + " " + quote(differential) +
                        " --gtest_filter=LddDifferential.SameLinesAsLdSoOnEveryLibrary");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[  PASSED  ] 1 test"), std::string::npos) << r.out;
  size_t at = r.out.find("differential: ");
  if (at != std::string::npos)
    std::cout << GetParam().name << ": " << r.out.substr(at, r.out.find('\n', at) - at) << "\n";
}

INSTANTIATE_TEST_SUITE_P(Corpus, RealCorpus, ::testing::ValuesIn(real_envs()),
                         [](const testing::TestParamInfo<RealEnv>& info) { return info.param.name; });

}  // namespace
}  // namespace envdoctor::test
