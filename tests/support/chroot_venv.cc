#include "support/chroot_venv.h"

#include <unistd.h>

#include <stdexcept>

#include "support/schema.h"

namespace envdoctor::test {

namespace {
const char* kDebianPython = "/usr/bin/python3.11";  // Debian's own, which the root copies
}  // namespace

void sh(const std::string& command) {
  CommandResult r = run("set -e; " + command);
  if (r.status != 0) throw std::runtime_error(command + "\n" + r.out + r.err);
}

void make_python_root(const std::string& root) {
  sh("R=" + quote(root) +
     "; mkdir -p $R/usr/bin $R/usr/lib/x86_64-linux-gnu $R/usr/lib64 $R/etc/ld.so.conf.d $R/usr/lib/python3.11"
     "; ln -s usr/lib $R/lib; ln -s usr/bin $R/bin; ln -s usr/lib64 $R/lib64"
     "; cp " +
     std::string(kDebianPython) +
     " $R/usr/bin/; ln -s python3.11 $R/usr/bin/python3"
     "; for l in $(ldd " +
     kDebianPython +
     " | awk '/=>/ {print $3}'); do cp -L $l $R/usr/lib/x86_64-linux-gnu/; done"
     "; cp -L /lib64/ld-linux-x86-64.so.2 $R/usr/lib/x86_64-linux-gnu/"
     "; ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 $R/usr/lib64/ld-linux-x86-64.so.2"
     "; cp /etc/ld.so.conf $R/etc/; cp /etc/ld.so.conf.d/x86_64-linux-gnu.conf $R/etc/ld.so.conf.d/"
     "; " +
     kDebianPython +
     " -c 'import sys; print(\"\\n\".join(m.__file__ for m in list(sys.modules.values()) if getattr(m, \"__file__\", None)))'"
     " | while read f; do cp -L --parents \"$f\" $R; done"
     "; cp -rL /usr/lib/python3.11/encodings $R/usr/lib/python3.11/"
     "; ldconfig -r $R");
}

bool make_chroot_venv_root(const TempDir& tmp, const std::string& root) {
  try {
    make_python_root(root);
    sh("R=" + quote(root) + "; mkdir -p $R/sbin $R/opt/drv $R/opt/venv/bin $R/opt/venv/lib/python3.11/site-packages" +
       "; cp /sbin/ldconfig $R/sbin/; echo /opt/drv > $R/etc/ld.so.conf.d/drv.conf"
       // The standard library whole (functools, subprocess, ctypes), and what _ctypes needs.
       "; cp -a /usr/lib/python3.11/. $R/usr/lib/python3.11/"
       "; for l in $(ldd /usr/lib/python3.11/lib-dynload/_ctypes.*.so | awk '/=>/ {print $3}'); do"
       " cp -L $l $R/usr/lib/x86_64-linux-gnu/; done"
       "; printf 'home = /usr/bin\\ninclude-system-site-packages = false\\nversion = 3.11.2\\n' > $R/opt/venv/pyvenv.cfg"
       "; ln -s /usr/bin/python3.11 $R/opt/venv/bin/python3; ln -s python3 $R/opt/venv/bin/python");
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    return false;
  }
  build_shared(root + "/opt/drv/libcuda.so.1", "int cuInit(unsigned f) { return (int)f; }", "-Wl,-soname,libcuda.so.1",
               tmp);
  return true;
}

CommandResult in_root(const std::string& root, const std::string& code, const std::string& variables) {
  CommandResult which = run("command -v chroot");
  std::string chroot = which.out.substr(0, which.out.find('\n'));
  return run("env -i PATH=/usr/bin:/bin " + variables + " " + chroot + " " + quote(root) +
             " /opt/venv/bin/python3 -c " + quote(code));
}

std::vector<nlohmann::json> venv_findings(const std::string& root, const std::string& package,
                                          const std::string& environment, const std::string& args,
                                          std::string* report) {
  CommandResult r = run("env " + environment + " " + quote(envdoctor()) + " check --json --root " + quote(root) +
                        " --prefix /opt/venv " + args);
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  expect_schema_valid("check", r.out);
  std::vector<nlohmann::json> out;
  nlohmann::json parsed = nlohmann::json::parse(r.out);
  for (const nlohmann::json& f : parsed["findings"])
    if (f["package"] == package) out.push_back(f);
  *report = r.out;
  return out;
}

void ChrootVenv::SetUp() {
  if (::geteuid() != 0 || !have_tool("chroot") || !have_tool("gcc") || !have_tool("ldconfig"))
    GTEST_SKIP() << "needs root, chroot, gcc and ldconfig";
  if (!make_chroot_venv_root(tmp, root)) GTEST_FAIL() << "the root could not be built";
}

}  // namespace envdoctor::test
