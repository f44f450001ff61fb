// A silent fallback in every renderer of `check` (docs/findings.md, silent-fallback; docs/fleet.md):
// the text's summary names the packages that would run without their GPU path, at a glance and
// under --only-errors; `--format nhc` names the first on a GPU node (a drain reason, status 1) and
// says OK on a node without the driver; `--format prom` counts them and names each; the JSON holds to
// check.schema.json. The findings are synthetic, as the checks make them
// (checks/package_load_findings.cc): a warning, the package, the library it could not load, the
// package's own words.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fixtures/schema.h"
#include "fixtures/venv.h"
#include "report/machine.h"
#include "report/report.h"

namespace envdoctor::test {
namespace {

using checks::Code;
using checks::Finding;
using checks::Severity;
using report::Report;

const std::string kSite = "/v/lib/python3.11/site-packages";

Finding finding(Code code, Severity severity, const std::string& file, const std::string& package,
                const std::string& library, const std::string& message) {
  Finding f;
  f.code = code;
  f.severity = severity;
  f.file = kSite + "/" + file;
  f.package = package;
  f.library = library;
  f.message = message;
  return f;
}

// ONNX Runtime 1.31.1's CUDA provider without libcublasLt.so.13 (docs/findings.md's example).
Finding onnxruntime_fallback() {
  std::string provider = "onnxruntime/capi/libonnxruntime_providers_cuda.so";
  Finding f = finding(Code::kSilentFallback, Severity::kWarning, provider, "onnxruntime-gpu",
                      "libonnxruntime_providers_cuda.so",
                      "Failed to load library " + kSite + "/" + provider +
                          " with error: libcublasLt.so.13: cannot open shared object file: No such file or directory");
  f.hint = "onnxruntime-gpu goes on without it and runs on the CPU";
  return f;
}

Finding jax_fallback() {
  return finding(Code::kSilentFallback, Severity::kWarning, "jax_plugins/xla_cuda12/__init__.py", "jax-cuda12-plugin",
                 "libcudart.so.12", "Unable to load CUDA. Is it installed?");
}

Finding missing_library() {
  return finding(Code::kMissingLibrary, Severity::kError, "gamma/_ext.cpython-311-x86_64-linux-gnu.so", "gamma",
                 "libgamma.so.1", "libgamma.so.1: cannot open shared object file: No such file or directory");
}

Finding duplicate_library() {
  return finding(Code::kDuplicateLibrary, Severity::kWarning, "delta/lib/libz.so.1", "delta", "libz.so.1",
                 "two copies of libz.so.1");
}

Report report_of(std::vector<Finding> findings) {
  Report r;
  r.python = "/v/bin/python";
  r.version = "3.11.7";
  r.site_packages = {kSite};
  r.packages = 3;
  r.elf_files = 12;
  r.findings = std::move(findings);
  checks::sort_and_dedupe(r.findings);
  return r;
}

// The text after the last package's findings: the counts and what follows them.
std::string summary(const std::string& text) {
  size_t at = text.rfind("\n\n");
  return at == std::string::npos ? text : text.substr(at + 2);
}

TEST(SilentFallbackText, TheSummarySaysTheEnvironmentImportsAndWhichPackageRunsWithoutItsGpuPath) {
  Report r = report_of({onnxruntime_fallback()});
  std::string text = report::render_text(r, {});
  EXPECT_EQ(summary(text),
            "0 errors, 1 warning\n"
            "Every library here will load, but 1 package falls back silently and runs without its GPU path:\n"
            "  onnxruntime-gpu (silent-fallback)\n"
            "what these mean: envdoctor explain silent-fallback\n")
      << text;
  // The finding itself, under its package, in the package's words.
  EXPECT_NE(text.find("\nonnxruntime-gpu\n  warning silent-fallback\n    " + r.findings[0].file + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("libcublasLt.so.13: cannot open shared object file: No such file or directory\n"),
            std::string::npos)
      << text;

  // --only-errors lists no warning, and the summary still names the package.
  report::TextOptions only_errors;
  only_errors.only_errors = true;
  std::string errors_only = report::render_text(r, only_errors);
  EXPECT_EQ(errors_only.find("warning silent-fallback"), std::string::npos) << errors_only;
  EXPECT_NE(errors_only.find("runs without its GPU path:\n  onnxruntime-gpu (silent-fallback)\n"), std::string::npos)
      << errors_only;

  // Colour: the line in the warnings' yellow.
  report::TextOptions color;
  color.color = true;
  color.width = 300;
  EXPECT_NE(report::render_text(r, color).find(
                "\x1b[1;33mEvery library here will load, but 1 package falls back silently and runs without "
                "its GPU path: onnxruntime-gpu (silent-fallback)\x1b[0m\n"),
            std::string::npos);

  // Without a driver, the all-clear's own words.
  r.needs_absent_driver = true;
  report::TextOptions wide;
  wide.width = 300;
  EXPECT_NE(report::render_text(r, wide).find("0 errors, 1 warning\nEvery library here will load where the NVIDIA "
                                              "driver is, but 1 package falls back silently"),
            std::string::npos);
}

TEST(SilentFallbackText, SeveralPackagesAndErrorsBeside) {
  report::TextOptions wide;
  wide.width = 300;
  // Two findings of one package are one package.
  Finding second = onnxruntime_fallback();
  second.library = "libonnxruntime_providers_tensorrt.so";
  second.file = kSite + "/onnxruntime/capi/libonnxruntime_providers_tensorrt.so";
  Report r = report_of({onnxruntime_fallback(), jax_fallback(), second, missing_library()});
  EXPECT_EQ(summary(report::render_text(r, wide)),
            "1 error, 3 warnings\n"
            "2 packages fall back silently and run without their GPU path: jax-cuda12-plugin, onnxruntime-gpu "
            "(silent-fallback)\n"
            "what these mean: envdoctor explain missing-library silent-fallback\n");
  // Other warnings alone: no such line.
  std::string plain = report::render_text(report_of({duplicate_library()}), wide);
  EXPECT_EQ(plain.find("GPU path"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("Every library here will load"), std::string::npos) << plain;
}

TEST(SilentFallbackNhc, AGpuNodeDrainsWithThePackageNamed) {
  Report r = report_of({onnxruntime_fallback(), duplicate_library()});
  // A node without the driver: a GPU package on the CPU is what it is meant to do there.
  EXPECT_EQ(report::render_nhc(r), "envdoctor: OK\n");
  EXPECT_EQ(report::nhc_status(r), 0);
  r.gpu_node = true;
  EXPECT_EQ(report::render_nhc(r), "envdoctor: silent-fallback libonnxruntime_providers_cuda.so onnxruntime-gpu\n");
  EXPECT_EQ(report::nhc_status(r), 1);
  // The others counted, one per package.
  Finding second = onnxruntime_fallback();
  second.library = "libonnxruntime_providers_tensorrt.so";
  second.file = kSite + "/onnxruntime/capi/libonnxruntime_providers_tensorrt.so";
  r = report_of({onnxruntime_fallback(), second, jax_fallback()});
  r.gpu_node = true;
  EXPECT_EQ(report::render_nhc(r), "envdoctor: silent-fallback libcudart.so.12 jax-cuda12-plugin (+1 more)\n");
  // An error comes first, with or without the driver.
  r = report_of({onnxruntime_fallback(), missing_library()});
  for (bool gpu : {false, true}) {
    r.gpu_node = gpu;
    EXPECT_EQ(report::render_nhc(r), "envdoctor: missing-library libgamma.so.1 gamma\n");
    EXPECT_EQ(report::nhc_status(r), 1);
  }
  // Other warnings alone stay OK on a GPU node.
  r = report_of({duplicate_library()});
  r.gpu_node = true;
  EXPECT_EQ(report::render_nhc(r), "envdoctor: OK\n");
  EXPECT_EQ(report::nhc_status(r), 0);
}

// Every family declared once, each sample after its family's TYPE line, as the exposition format
// wants (node_exporter's textfile collector refuses a file that breaks it: tests/fleet).
void expect_families_well_formed(const std::string& text) {
  std::set<std::string> declared;
  std::string current;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      current = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(declared.insert(current).second) << "declared twice: " << current;
    } else if (line.rfind("# HELP ", 0) != 0) {
      EXPECT_EQ(line.substr(0, line.find('{')), current) << line;
    }
  }
}

TEST(SilentFallbackProm, CountedAndEachPackageNamed) {
  Report r = report_of({onnxruntime_fallback(), jax_fallback(), duplicate_library()});
  std::string env = "environment=\"/v/bin/python\"";
  std::string text = report::render_prom(r, {0.25, "sha256:00"});
  EXPECT_NE(text.find("# HELP envdoctor_silent_fallbacks Packages that import but fall back silently and run without "
                      "their GPU path (silent-fallback).\n# TYPE envdoctor_silent_fallbacks gauge\n"
                      "envdoctor_silent_fallbacks{" +
                      env + "} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE envdoctor_silent_fallback_info gauge\n"
                      "envdoctor_silent_fallback_info{" +
                      env +
                      ",package=\"jax-cuda12-plugin\",subject=\"libcudart.so.12\"} 1\n"
                      "envdoctor_silent_fallback_info{" +
                      env + ",package=\"onnxruntime-gpu\",subject=\"libonnxruntime_providers_cuda.so\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("envdoctor_findings{" + env + ",code=\"silent-fallback\",severity=\"warning\"} 2\n"),
            std::string::npos)
      << text;
  // No error: the check is OK, the fallbacks notwithstanding.
  EXPECT_NE(text.find("envdoctor_check_ok{" + env + "} 1\n"), std::string::npos) << text;
  expect_families_well_formed(text);

  // None: a zero, and no info family.
  std::string none = report::render_prom(report_of({duplicate_library()}), {0.25, "sha256:00"});
  EXPECT_NE(none.find("envdoctor_silent_fallbacks{" + env + "} 0\n"), std::string::npos) << none;
  EXPECT_EQ(none.find("envdoctor_silent_fallback_info"), std::string::npos) << none;
  EXPECT_NE(none.find("envdoctor_findings{" + env + ",code=\"silent-fallback\",severity=\"warning\"} 0\n"),
            std::string::npos);
  expect_families_well_formed(none);
}

TEST(SilentFallbackJson, HoldsToTheCheckSchema) {
  if (!have_jsonschema()) GTEST_SKIP() << "needs python3-jsonschema (scripts/install-deps.sh)";
  Report r = report_of({onnxruntime_fallback(), missing_library()});
  std::string document = report::render_json(r);
  nlohmann::json j = nlohmann::json::parse(document);
  ASSERT_EQ(j["findings"].size(), 2u) << document;
  EXPECT_EQ(j["findings"][1]["code"], "silent-fallback");
  EXPECT_EQ(j["findings"][1]["severity"], "warning");
  EXPECT_EQ(schema_errors("check", document), "");
}

// End to end, with a package of our own that falls back as ONNX Runtime does, and a rule for it in
// a copy of data/ (ENVDOCTOR_DATA_DIR): `import gpuish` opens gpuish/lib/libgpuish_cuda.so with
// ctypes and, where it does not load, says so on stderr and runs on the CPU. The referee is the
// real import: it works either way, and its stderr is the finding's message. `check` exits 0 in
// every format but nhc, whose line drains where the node has the driver (--driver).
class SilentFallbackCli : public VenvTest {
 protected:
  // gpuish 1.0: its extension module, and its backend, which needs libgpuish_blas.so.1 beside it
  // (RUNPATH $ORIGIN): shipped where `healthy`, else not.
  std::string gpuish(bool healthy) {
    std::string dir = tmp_ / (healthy ? "build/healthy" : "build/broken");
    std::string blas = dir + "/libgpuish_blas.so.1", backend = dir + "/libgpuish_cuda.so";
    build_shared(blas, "int blas_fn(void) { return 1; }", "-Wl,-soname,libgpuish_blas.so.1", tmp_);
    build_shared(backend, "int blas_fn(void);\nint cuda_fn(void) { return blas_fn(); }",
                 quote(blas) + " -Wl,-rpath,'$ORIGIN'", tmp_);
    std::string ext = dir + "/_core" + suffix_;
    build_ext(ext, "_core", "", "0", "");
    nlohmann::json paths = {{"gpuish/_core" + suffix_, ext}, {"gpuish/lib/libgpuish_cuda.so", backend}};
    if (healthy) paths["gpuish/lib/libgpuish_blas.so.1"] = blas;
    return platlib_wheel(
        "gpuish", "1.0", paths,
        {{"gpuish/__init__.py",
          "import ctypes, os, sys\n"
          "from . import _core\n"
          "try:\n"
          "    ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'lib', 'libgpuish_cuda.so'))\n"
          "    device = 'cuda'\n"
          "except OSError as e:\n"
          "    print('gpuish: CUDA backend unavailable (%s); running on the CPU' % e, file=sys.stderr)\n"
          "    device = 'cpu'\n"}});
  }

  // data/ with gpuish's rule added.
  std::string data_dir() {
    std::string dir = tmp_ / "data";
    fs::copy(std::string(ENVDOCTOR_SOURCE_DIR) + "/data", dir, fs::copy_options::recursive);
    nlohmann::json table = nlohmann::json::parse(slurp(dir + "/package_loads.json"));
    table["sources"]["TEST_GPUISH"] = "tests/report/silent_fallback_test.cc: gpuish/__init__.py, written there";
    nlohmann::json words = "gpuish: CUDA backend unavailable ({dlerror}); running on the CPU";
    table["rules"].push_back(
        {{"id", "gpuish-cuda-backend"},
         {"package", {"gpuish"}},
         {"fingerprint", {{"file", "gpuish/__init__.py"}, {"contains", {"'libgpuish_cuda.so'", "running on the CPU"}}}},
         {"moment", "import"},
         {"what", "gpuish/__init__.py opens lib/libgpuish_cuda.so by path, and runs on the CPU where it does not load"},
         {"source", "TEST_GPUISH"},
         {"steps",
          {{{"lib", "gpuish_cuda"},
            {"names", {"libgpuish_cuda.so"}},
            {"places", {{{"package", "lib"}}}},
            {"mode", "local"},
            {"missing", {{"fall_back", words}, {"to", "the CPU"}}},
            {"failing", {{"fall_back", words}, {"to", "the CPU"}}}}}}});
    std::ofstream(dir + "/package_loads.json") << table.dump(2);
    return dir;
  }

  // The referee: the real import, which prints the device it took.
  CommandResult import_gpuish(const Venv& venv) {
    return run("cd / && " + quote(venv.python()) + " -c " + quote("import gpuish; print(gpuish.device)"));
  }

  CommandResult check(const Venv& venv, const std::string& data, const std::string& args) {
    return run("ENVDOCTOR_DATA_DIR=" + quote(data) + " " + quote(envdoctor()) + " check --python " +
               quote(venv.python()) + " " + args);
  }
};

TEST_F(SilentFallbackCli, EveryFormatSaysItAndNhcDrainsAGpuNode) {
  std::string data = data_dir();
  Venv venv(tmp_, "broken");
  venv.install({gpuish(false)});
  CommandResult real = import_gpuish(venv);
  ASSERT_EQ(real.status, 0) << real.err;
  EXPECT_EQ(real.out, "cpu\n");
  std::string words = real.err.substr(0, real.err.find('\n'));
  EXPECT_EQ(words,
            "gpuish: CUDA backend unavailable (libgpuish_blas.so.1: cannot open shared object file: No such file or "
            "directory); running on the CPU");

  CommandResult json_run = check(venv, data, "--json");
  EXPECT_EQ(json_run.status, 0) << json_run.out << json_run.err;
  expect_schema_valid("check", json_run.out);
  nlohmann::json report = nlohmann::json::parse(json_run.out);
  // The backend's own load is the load checks' (a warning: the import works); the fallback is one.
  EXPECT_EQ(report["summary"]["errors"], 0) << report.dump(1);
  std::vector<nlohmann::json> fallbacks;
  for (const nlohmann::json& f : report["findings"])
    if (f["code"] == "silent-fallback") fallbacks.push_back(f);
  ASSERT_EQ(fallbacks.size(), 1u) << report.dump(1);
  const nlohmann::json& f = fallbacks.front();
  EXPECT_EQ(f["code"], "silent-fallback");
  EXPECT_EQ(f["severity"], "warning");
  EXPECT_EQ(f["package"], "gpuish");
  EXPECT_EQ(f["library"], "libgpuish_cuda.so");
  EXPECT_EQ(f["message"], words);

  CommandResult text = check(venv, data, "");
  EXPECT_EQ(text.status, 0) << text.err;
  // The fallback follows from the library its provider's load misses first: one cause.
  EXPECT_NE(text.out.find(" warnings (1 cause, 1 consequence)\nEvery library here will load"), std::string::npos)
      << text.out;
  EXPECT_EQ(f["caused_by"]["code"], "missing-library") << f.dump(1);
  EXPECT_NE(text.out.find("1 package falls back silently and runs without its GPU path:"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("gpuish (silent-fallback)\n"), std::string::npos) << text.out;

  CommandResult nhc = check(venv, data, "--format nhc --driver 595.45.04");
  EXPECT_EQ(nhc.status, 1) << nhc.err;
  EXPECT_EQ(nhc.out, "envdoctor: silent-fallback libgpuish_cuda.so gpuish\n");
  if (!fs::exists("/proc/driver/nvidia/version")) {
    CommandResult cpu_node = check(venv, data, "--format nhc");
    EXPECT_EQ(cpu_node.status, 0) << cpu_node.err;
    EXPECT_EQ(cpu_node.out, "envdoctor: OK\n");
  }
  CommandResult prom = check(venv, data, "--format prom --driver 595.45.04");
  EXPECT_EQ(prom.status, 0) << prom.err;
  std::string env = "environment=\"" + venv.python() + "\"";
  EXPECT_NE(prom.out.find("envdoctor_silent_fallbacks{" + env + "} 1\n"), std::string::npos) << prom.out;
  EXPECT_NE(
      prom.out.find("envdoctor_silent_fallback_info{" + env + ",package=\"gpuish\",subject=\"libgpuish_cuda.so\"} 1\n"),
      std::string::npos)
      << prom.out;
  expect_families_well_formed(prom.out);
}

// The backend loads: the real import takes the GPU path, and check has nothing to say.
TEST_F(SilentFallbackCli, ABackendThatLoadsIsNoFinding) {
  std::string data = data_dir();
  Venv venv(tmp_, "healthy");
  venv.install({gpuish(true)});
  CommandResult real = import_gpuish(venv);
  ASSERT_EQ(real.status, 0) << real.err;
  EXPECT_EQ(real.out, "cuda\n");
  EXPECT_EQ(real.err, "");
  CommandResult nhc = check(venv, data, "--format nhc --driver 595.45.04");
  EXPECT_EQ(nhc.status, 0) << nhc.err;
  EXPECT_EQ(nhc.out, "envdoctor: OK\n");
  CommandResult json_run = check(venv, data, "--json");
  EXPECT_EQ(json_run.status, 0);
  EXPECT_EQ(nlohmann::json::parse(json_run.out)["findings"], nlohmann::json::array()) << json_run.out;
}

}  // namespace
}  // namespace envdoctor::test
