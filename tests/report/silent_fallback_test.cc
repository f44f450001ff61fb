// A silent fallback in every renderer of `check` (docs/findings.md, silent-fallback; docs/fleet.md):
// the text's summary names the packages that would run without their GPU path, at a glance and
// under --only-errors; `--format nhc` names the first on a GPU node (a drain reason, status 1) and
// says OK on a node without the driver; `--format prom` counts them and names each; the JSON holds to
// check.schema.json. The findings are synthetic, as the checks make them
// (checks/package_load_findings.cc): a warning, the package, the library it could not load, the
// package's own words.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>

#include "report/machine.h"
#include "report/report.h"
#include "support/schema.h"

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

}  // namespace
}  // namespace envdoctor::test
