// The other environments of a root (python/site_environments.h): conda's base and its envs, a venv
// in a project's directory, the system Python, each found without running anything, in the order
// found, the one checked left out.
#include "python/site_environments.h"

#include <sys/stat.h>

#include "fixtures/python_fixture.h"

namespace envdoctor::python {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

// An interpreter of version `xy` at PREFIX/bin (a file whose PY_VERSION is "xy.4"), its standard
// library and its site-packages holding `dists` distributions.
void make_prefix(const TempDir& tmp, const std::string& prefix, const std::string& xy, int dists) {
  std::string bin = tmp.write(prefix + "/bin/python" + xy, std::string("\0", 1) + xy + ".4" + std::string("\0", 1));
  ::chmod(bin.c_str(), 0755);
  fs::create_symlink("python" + xy, tmp.path() / (prefix + "/bin/python3"));
  tmp.write(prefix + "/lib/python" + xy + "/os.py", "");
  for (int i = 0; i < dists; ++i)
    fs::create_directories(tmp.path() /
                           (prefix + "/lib/python" + xy + "/site-packages/d" + std::to_string(i) + "-1.0.dist-info"));
}

TEST(SiteEnvironments, CondasBaseAndEnvsAVenvAndTheSystemPython) {
  TempDir tmp;
  make_prefix(tmp, "opt/conda", "3.12", 3);
  fs::create_directories(tmp.path() / "opt/conda/conda-meta");
  make_prefix(tmp, "opt/conda/envs/ml", "3.11", 2);
  fs::create_directories(tmp.path() / "opt/conda/envs/ml/conda-meta");
  make_prefix(tmp, "usr", "3.10", 0);
  // A venv without a bin/python of its own: its base interpreter, where pyvenv.cfg's home says.
  tmp.write("app/.venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.10.4\n");
  fs::create_directories(tmp.path() / "app/.venv/lib/python3.10/site-packages/x-1.0.dist-info");
  support::FileRoot root(tmp.path().string());

  std::vector<OtherEnvironment> others = find_other_environments(root, "/opt/conda/bin:/usr/bin", "/opt/conda/envs/ml");
  std::vector<std::string> seen;
  for (const OtherEnvironment& o : others)
    seen.push_back(o.prefix + " " + o.python + " " + o.version + " " + std::to_string(o.packages) + " " + o.problem);
  EXPECT_EQ(seen,
            (std::vector<std::string>{"/opt/conda /opt/conda/bin/python3 3.12.4 3 ", "/usr /usr/bin/python3 3.10.4 0 ",
                                      "/app/.venv /usr/bin/python3.10 3.10.4 1 "}));
  // The one checked is never among the others; nor, under another name, a prefix already named.
  others = find_other_environments(root, "/opt/conda/bin:/usr/bin", "/usr");
  ASSERT_EQ(others.size(), 3u);
  EXPECT_EQ(others[2].prefix, "/opt/conda/envs/ml");
  EXPECT_EQ(shell_quoted("/opt/my env"), "'/opt/my env'");
  EXPECT_EQ(shell_quoted("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quoted("/opt/conda"), "/opt/conda");
}

}  // namespace
}  // namespace envdoctor::python
