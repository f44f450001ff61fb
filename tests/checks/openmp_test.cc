// openmp-runtime-mix against the referee: gcc's own libgomp (an extension built with -fopenmp) and
// a vendored runtime under an auditwheel-style hashed SONAME, in two wheels; a real import of both
// maps both runtimes (/proc/self/maps says so), and envdoctor must say which package brings which.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class OpenmpTest : public VenvTest {};

TEST_F(OpenmpTest, SystemLibgompAndAVendoredHashedCopy) {
  // gnupkg: built with gcc's OpenMP, so it needs the system's libgomp.so.1.
  std::string gnu = tmp_ / ("build/gnupkg/_gnu" + suffix_);
  build_ext(gnu, "_gnu", "#include <omp.h>", "omp_get_max_threads()", "-fopenmp");
  std::string gnu_wheel = make_wheel(tmp_ / "wheels", {{"name", "gnupkg"},
                                                       {"version", "1.0"},
                                                       {"tag", "cp311-cp311-linux_x86_64"},
                                                       {"purelib", false},
                                                       {"files", {{"gnupkg/__init__.py", "from . import _gnu\n"}}},
                                                       {"paths", {{"gnupkg/_gnu" + suffix_, gnu}}}});
  // vendpkg: its own runtime, the GNU entry points under a hashed SONAME, as auditwheel vendors one.
  std::string runtime = tmp_ / "build/vendpkg.libs/libgomp-a34b3233.so.1";
  build_shared(runtime,
               "int omp_get_num_threads(void) { return 1; }\n"
               "void GOMP_parallel(void (*fn)(void*), void* data, unsigned n, unsigned flags) { fn(data); }\n",
               "-Wl,-soname,libgomp-a34b3233.so.1", tmp_);
  std::string vend = tmp_ / ("build/vendpkg/_vend" + suffix_);
  build_ext(vend, "_vend", "int omp_get_num_threads(void);", "omp_get_num_threads()",
            quote(runtime) + " -Wl,-rpath,'$ORIGIN/../vendpkg.libs'");
  std::string vend_wheel =
      make_wheel(tmp_ / "wheels",
                 {{"name", "vendpkg"},
                  {"version", "2.0"},
                  {"tag", "cp311-cp311-linux_x86_64"},
                  {"purelib", false},
                  {"files", {{"vendpkg/__init__.py", "from . import _vend\n"}}},
                  {"paths", {{"vendpkg.libs/libgomp-a34b3233.so.1", runtime}, {"vendpkg/_vend" + suffix_, vend}}}});

  Venv venv(tmp_, "openmp");
  venv.install({gnu_wheel});
  json one = venv.check();
  EXPECT_TRUE(findings(one, "openmp-runtime-mix").empty()) << one.dump(1);

  venv.install({vend_wheel});
  // The referee: both runtimes mapped into one process.
  CommandResult maps = run(quote(venv.python()) +
                           " -c 'import gnupkg, vendpkg\nprint(sorted({l.split()[-1].rsplit(\"/\", 1)[-1] for l in "
                           "open(\"/proc/self/maps\") if \"gomp\" in l}))'");
  ASSERT_EQ(maps.status, 0) << maps.err;
  ASSERT_EQ(maps.out, "['libgomp-a34b3233.so.1', 'libgomp.so.1.0.0']\n");

  json report = venv.check();
  auto mix = findings(report, "openmp-runtime-mix");
  ASSERT_EQ(mix.size(), 1u) << report.dump(1);
  EXPECT_EQ(mix[0]["severity"], "warning");
  std::string message = mix[0]["message"];
  EXPECT_EQ(message.find("2 OpenMP runtimes can load into one process: "), 0u) << message;
  EXPECT_NE(message.find("libgomp-a34b3233.so.1 (GNU libgomp, " + venv.site() +
                         "/vendpkg.libs/libgomp-a34b3233.so.1, vendpkg 2.0) loaded by vendpkg"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("libgomp.so.1 (GNU libgomp, "), std::string::npos) << message;
  EXPECT_NE(message.find(") loaded by gnupkg"), std::string::npos) << message;
}

}  // namespace
}  // namespace envdoctor::test
