// LD_PRELOAD and /etc/ld.so.preload against glibc's ld.so: which names it takes and in what
// order, its words for a name it cannot preload (and that it goes on without it), where a
// preloaded object stands in the scope (right after the main program: it interposes), and a
// preload's own missing dependency. Referees: ld.so in trace mode (what ldd runs) with the same
// LD_PRELOAD, LD_DEBUG=scopes, `chroot ROOT PROGRAM` for a root's /etc/ld.so.preload, and a real
// Python started with LD_PRELOAD against `check`'s preload-ignored.
//
// envdoctor reads LD_PRELOAD from its own environment, as the processes it models would, so the
// real ld.so preloads the same names into envdoctor itself when it starts: what that start prints
// is taken first (own_start) and expected before the model's own lines.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "fixtures/fixture.h"
#include "fixtures/loader_referee.h"
#include "fixtures/venv.h"
#include "loader/preload.h"
#include "loader/process.h"
#include "loader/symbols.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class Preload : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc") || access(kLdSo, X_OK) != 0) GTEST_SKIP() << "needs gcc and " << kLdSo;
  }

  // What ld.so prints on stderr when it starts envdoctor itself with `preload`.
  static std::string own_start(const std::string& preload) {
    return run("env LD_PRELOAD=" + quote(preload) + " " + quote(envdoctor()) + " explain preload-ignored >/dev/null")
        .err;
  }

  // ld.so's trace mode (LD_TRACE_LOADED_OBJECTS, plain ldd) of `file` with LD_PRELOAD.
  static CommandResult referee(const std::string& file, const std::string& preload, bool relocate = false) {
    std::string env = "env -u LD_LIBRARY_PATH LD_TRACE_LOADED_OBJECTS=1 LD_PRELOAD=" + quote(preload) + " ";
    if (relocate) env += "LD_WARN=yes LD_BIND_NOW=yes ";
    CommandResult r = run(env + kLdSo + " " + quote(file));
    r.out = strip_addresses(r.out);
    return r;
  }

  static CommandResult ldd(const std::string& file, const std::string& preload, bool relocate = false) {
    return run("env -u LD_LIBRARY_PATH LD_PRELOAD=" + quote(preload) + " " + quote(envdoctor()) + " ldd " +
               (relocate ? "-r --exact " : "") + quote(file));
  }

  TempDir tmp;
};

TEST(PreloadLists, SplitAsRtldDoes) {
  using V = std::vector<std::string>;
  EXPECT_EQ(loader::split_ld_preload("a.so b.so:c.so  ::/x/d.so:"), (V{"a.so", "b.so", "c.so", "/x/d.so"}));
  EXPECT_EQ(loader::split_ld_preload("a.so /x/d.so", /*secure=*/true), (V{"a.so"}));
  EXPECT_EQ(loader::split_ld_preload(std::string(4096, 'x') + " b.so"), (V{"b.so"}));
  // rtld.c looks for each later comment in as many bytes from the file's start as are left after
  // the one before: "#z.so" is found there but blanked for 3 bytes only, and "so" stays a name.
  EXPECT_EQ(loader::split_ld_so_preload("# shims\n/lib/x.so libz.so.1\t:y.so #z.so\nlast"),
            (V{"/lib/x.so", "libz.so.1", "y.so", "so", "last"}));
  EXPECT_EQ(loader::split_ld_so_preload("a.so\n# one\n# two\nb.so"), (V{"a.so", "#", "two", "b.so"}));
}

// Every kind of name ld.so cannot preload, in its order and words, and the names it can: one
// found through the main program's RUNPATH (a name is searched as the program's own need), one
// given twice, one given by path.
TEST_F(Preload, NamesItCannotPreloadAreSaidInLdSosWordsAndIgnored) {
  build_shared(tmp / "libs/libpre.so", "int pre_fn(void) { return 1; }", "-Wl,-soname,libpre.so", tmp);
  build_executable(tmp / "main", "int main(void) { return 0; }", "-Wl,-rpath," + tmp / "libs", tmp);
  tmp.write("short.so", "not an ELF file\n");
  tmp.write("header.so", std::string(128, 'x'));
  std::string preload = "libnothere.so " + tmp / "missing/libx.so" + ":" + tmp / "short.so" + " " + tmp / "header.so" +
                        " libpre.so libpre.so  " + tmp / "libs/libpre.so";
  if (run("echo 'int f(void){return 0;}' | gcc -m32 -shared -x c - -o " + quote(tmp / "lib32.so")).status == 0)
    preload += " " + tmp / "lib32.so";
  CommandResult real = referee(tmp / "main", preload);
  ASSERT_EQ(real.status, 0) << real.err;
  ASSERT_NE(real.err.find("ERROR: ld.so: object 'libnothere.so' from LD_PRELOAD cannot be preloaded (cannot open "
                          "shared object file): ignored.\n"),
            std::string::npos)
      << real.err;
  ASSERT_NE(real.out.find("\tlibpre.so => " + tmp / "libs/libpre.so\n"), std::string::npos) << real.out;
  CommandResult mine = ldd(tmp / "main", preload);
  EXPECT_EQ(mine.status, 0) << mine.err;
  EXPECT_EQ(mine.out, real.out);
  EXPECT_EQ(mine.err, own_start(preload) + real.err);
}

// A preloaded object stands right after the main program in its scope (LD_DEBUG=scopes) and so
// interposes: libfake's greet binds before libreal's (LD_DEBUG=bindings), and libextra's need of
// `extra`, which only libfake defines, binds (ldd -r: no undefined symbol) where without the
// preload it does not.
TEST_F(Preload, APreloadedObjectInterposes) {
  build_shared(tmp / "libreal.so", "const char* greet(void) { return \"real\"; }", "-Wl,-soname,libreal.so", tmp);
  build_shared(tmp / "libextra.so", "int extra(void); int use_extra(void) { return extra(); }",
               "-Wl,-soname,libextra.so", tmp);
  std::string fake = tmp / "fake/libfake.so";
  build_shared(fake, "const char* greet(void) { return \"fake\"; } int extra(void) { return 7; }", "", tmp);
  build_executable(tmp / "main",
                   "const char* greet(void); int use_extra(void); int main(void) { return greet()[0] + use_extra(); }",
                   "-L" + quote(tmp.path()) + " -lreal -lextra -Wl,-rpath,'$ORIGIN' -Wl,--allow-shlib-undefined", tmp);

  std::string main = tmp / "main";
  CommandResult scopes =
      run("env LD_DEBUG=scopes,bindings LD_PRELOAD=" + quote(fake) + " " + quote(main) + " 2>&1 >/dev/null");
  size_t at = scopes.out.find("scope 0: ");
  ASSERT_NE(at, std::string::npos) << scopes.out;
  std::string real_scope = scopes.out.substr(at + 9, scopes.out.find('\n', at) - at - 9);
  EXPECT_NE(scopes.out.find("binding file " + main + " [0] to " + fake + " [0]: normal symbol `greet'"),
            std::string::npos)
      << scopes.out;

  loader::LoaderConfig config = loader::LoaderConfig::for_host();
  config.ld_preload = fake;
  config.ld_so_preload.reset();
  loader::ObjectStore store;
  loader::Process p(config, store);
  ASSERT_TRUE(p.load_main(main));
  std::string model_scope;
  for (int o : p.objects()[0].searchlist) model_scope += (model_scope.empty() ? "" : " ") + p.objects()[o].path;
  EXPECT_EQ(model_scope, real_scope);
  // The main program's reference binds to the first object of that scope that defines it
  // (elf/dl-lookup.c), as LD_DEBUG=bindings showed: the preload.
  std::string provider;
  std::vector<u32> scratch;
  for (int o : p.objects()[0].searchlist)
    if (provider.empty() && loader::defines(*p.objects()[o].elf, elf::SymbolKey("greet"), std::nullopt, scratch))
      provider = p.objects()[o].path;
  EXPECT_EQ(provider, fake);
  EXPECT_EQ(p.preloaded().size(), 1u);
  EXPECT_TRUE(p.errors().empty()) << p.errors().front().message;

  // Without the preload `extra` binds nowhere; with it, libfake defines it.
  CommandResult without = referee(tmp / "main", "", true);
  ASSERT_NE(without.err.find("undefined symbol: extra"), std::string::npos) << without.err;
  EXPECT_EQ(ldd(tmp / "main", "", true).err, without.err);
  CommandResult with = referee(tmp / "main", fake, true);
  EXPECT_EQ(with.err, "");
  CommandResult mine = ldd(tmp / "main", fake, true);
  EXPECT_EQ(mine.out, with.out);
  EXPECT_EQ(mine.err, "");
  EXPECT_EQ(mine.status, 0);
}

// A root's /etc/ld.so.preload (a comment ld.so removes and one it reads as names, names on
// several lines, one missing, one whose own dependency is missing): `chroot ROOT /main` says what
// ld.so says and dies of the dependency, and trace mode lists it not found, as `envdoctor ldd
// --root` does.
TEST_F(Preload, ARootsLdSoPreload) {
  if (::geteuid() != 0 || !have_tool("chroot") || !have_tool("ldconfig")) GTEST_SKIP() << "chroot needs root";
  std::string root = tmp / "root";
  CommandResult made = run(
      "set -e; R=" + quote(root) +
      "; mkdir -p $R/usr/lib/x86_64-linux-gnu $R/usr/lib64 $R/etc/ld.so.conf.d $R/opt/shim"
      "; ln -s usr/lib $R/lib; ln -s usr/lib64 $R/lib64"
      "; cp -L /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 $R/usr/lib/x86_64-linux-gnu/"
      "; ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 $R/usr/lib64/ld-linux-x86-64.so.2"
      "; cp /etc/ld.so.conf $R/etc/; cp /etc/ld.so.conf.d/x86_64-linux-gnu.conf $R/etc/ld.so.conf.d/");
  ASSERT_EQ(made.status, 0) << made.err;
  build_shared(tmp / "build/libneeds.so", "int needs(void) { return 1; }", "-Wl,-soname,libneeds.so", tmp);
  build_shared(root + "/opt/shim/libshim.so", "int needs(void); int shim(void) { return needs(); }",
               quote(tmp / "build/libneeds.so"), tmp);
  build_shared(root + "/usr/lib/x86_64-linux-gnu/libok.so", "int ok(void) { return 1; }", "-Wl,-soname,libok.so", tmp);
  build_executable(root + "/main", "int main(void) { return 0; }", "", tmp);
  ASSERT_EQ(run("ldconfig -r " + quote(root)).status, 0);
  tmp.write("root/etc/ld.so.preload", "# the site's shims\nlibnothere.so libok.so\n/opt/shim/libshim.so # for all\n");

  CommandResult real = run("chroot " + quote(root) + " /main");
  EXPECT_EQ(real.status, 127);
  auto ignored = [](const std::string& name) {
    return "ERROR: ld.so: object '" + name +
           "' from /etc/ld.so.preload cannot be preloaded (cannot open shared object file): ignored.\n";
  };
  EXPECT_EQ(real.err, ignored("libnothere.so") + ignored("#") + ignored("for") + ignored("all") +
                          "/main: error while loading shared libraries: libneeds.so: cannot open shared object "
                          "file: No such file or directory\n");
  // ldd's trace mode inside the root: a static program that sets LD_TRACE_LOADED_OBJECTS and
  // runs /main (the variable given to chroot would trace chroot itself).
  build_executable(root + "/trace",
                   "#include <stdlib.h>\n#include <unistd.h>\nint main(void) { setenv(\"LD_TRACE_LOADED_OBJECTS\", "
                   "\"1\", 1); execl(\"/main\", \"/main\", (char*)0); return 126; }",
                   "-static", tmp);
  CommandResult traced = run("chroot " + quote(root) + " /trace");
  traced.out = strip_addresses(traced.out);
  CommandResult mine = run("env -u LD_PRELOAD " + quote(envdoctor()) + " ldd --root " + quote(root) + " /main");
  EXPECT_EQ(mine.out, traced.out);
  EXPECT_EQ(mine.err, real.err);
  EXPECT_EQ(mine.status, 1);
}

// --image: an enroot-style squashfs whose /etc/environment sets LD_PRELOAD (a name found nowhere
// in the image, and a library it has). Its interpreter started in a chroot of the root with that
// LD_PRELOAD (by a static launcher, so that the host's chroot is not preloaded) prints ld.so's
// line for the missing name first, and check --image gives it as preload-ignored. A preload whose
// own dependency is missing is an error: the interpreter dies of it, and check says so.
TEST_F(Preload, AnImagesEnvPreloads) {
  if (::geteuid() != 0 || !have_tool("chroot") || !have_tool("ldconfig") || !have_tool("mksquashfs"))
    GTEST_SKIP() << "needs root for chroot, ldconfig and mksquashfs";
  const char* python = "/usr/bin/python3.11";
  if (access(python, X_OK) != 0) GTEST_SKIP() << "needs Debian's " << python;
  std::string root = tmp / "root";
  CommandResult made = run(
      "set -e; R=" + quote(root) +
      "; mkdir -p $R/usr/bin $R/usr/lib/x86_64-linux-gnu $R/usr/lib64 $R/usr/lib/python3.11 $R/etc/ld.so.conf.d $R/opt"
      "; ln -s usr/lib $R/lib; ln -s usr/bin $R/bin; ln -s usr/lib64 $R/lib64; cp " +
      std::string(python) + " $R/usr/bin/; ln -s python3.11 $R/usr/bin/python3; for l in $(ldd " + python +
      " | awk '/=>/ {print $3}'); do cp -L $l $R/usr/lib/x86_64-linux-gnu/; done"
      "; cp -L /lib64/ld-linux-x86-64.so.2 $R/usr/lib/x86_64-linux-gnu/"
      "; ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 $R/usr/lib64/ld-linux-x86-64.so.2"
      "; touch $R/usr/lib/python3.11/os.py; cp /etc/ld.so.conf $R/etc/"
      "; cp /etc/ld.so.conf.d/x86_64-linux-gnu.conf $R/etc/ld.so.conf.d/; ldconfig -r $R"
      "; printf 'PATH=/usr/bin:/bin\\nLD_PRELOAD=libnothere.so /opt/libpre.so\\n' > $R/etc/environment");
  ASSERT_EQ(made.status, 0) << made.err;
  build_shared(root + "/opt/libpre.so", "int pre_fn(void) { return 1; }", "", tmp);
  build_executable(root + "/launch",
                   "#include <stdlib.h>\n#include <unistd.h>\nint main(int argc, char** argv) { (void)argc; "
                   "setenv(\"LD_PRELOAD\", argv[1], 1); execv(argv[2], argv + 2); return 126; }",
                   "-static", tmp);
  std::string line =
      "ERROR: ld.so: object 'libnothere.so' from LD_PRELOAD cannot be preloaded (cannot open shared object file): "
      "ignored.";
  // The root has no standard library: the interpreter stops after ld.so has spoken.
  CommandResult real = run("env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot " + quote(root) +
                           " /launch 'libnothere.so /opt/libpre.so' " + python + " -S -c pass");
  EXPECT_EQ(real.err.substr(0, real.err.find('\n')), line) << real.err;
  std::string image = tmp / "image.sqsh";
  ASSERT_EQ(run("mksquashfs " + quote(root) + " " + quote(image) + " -comp lzo -noD -noappend -quiet").status, 0);
  CommandResult r = run("env -u LD_PRELOAD XDG_CACHE_HOME=" + quote(tmp / "cache") + " " + quote(envdoctor()) +
                        " check --json --image " + quote(image));
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  json j = json::parse(r.out);
  std::vector<json> ignored = findings(j, "preload-ignored");
  ASSERT_EQ(ignored.size(), 1u) << j.dump(1);
  EXPECT_EQ(ignored[0]["message"], line);
  EXPECT_EQ(ignored[0]["file"], python);
  EXPECT_EQ(j["summary"]["errors"], 0) << j.dump(1);

  // A preload that loads but whose own dependency is nowhere: the interpreter never starts.
  build_shared(tmp / "build/libneeds.so", "int needs(void) { return 1; }", "-Wl,-soname,libneeds.so", tmp);
  build_shared(root + "/opt/libshim.so", "int needs(void); int shim(void) { return needs(); }",
               quote(tmp / "build/libneeds.so"), tmp);
  tmp.write("root/etc/environment", "PATH=/usr/bin:/bin\nLD_PRELOAD=/opt/libshim.so\n");
  CommandResult dies = run("env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot " + quote(root) +
                           " /launch /opt/libshim.so " + python + " -S -c pass");
  EXPECT_EQ(dies.status, 127);
  std::string words = "libneeds.so: cannot open shared object file: No such file or directory";
  EXPECT_EQ(dies.err, std::string(python) + ": error while loading shared libraries: " + words + "\n");
  std::string fatal = tmp / "fatal.sqsh";
  ASSERT_EQ(run("mksquashfs " + quote(root) + " " + quote(fatal) + " -comp lzo -noD -noappend -quiet").status, 0);
  json k = json::parse(run("env -u LD_PRELOAD XDG_CACHE_HOME=" + quote(tmp / "cache") + " " + quote(envdoctor()) +
                           " check --json --image " + quote(fatal))
                           .out);
  std::vector<json> missing = findings(k, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << k.dump(1);
  EXPECT_EQ(missing[0]["message"], words);
  EXPECT_EQ(missing[0]["file"], "/opt/libshim.so");
}

// `check`: the environment's interpreter started with LD_PRELOAD naming a library that is
// nowhere is a preload-ignored warning in ld.so's words, and the real interpreter prints those
// words and imports as before.
TEST_F(Preload, CheckSaysWhatTheInterpreterPrints) {
  std::string venv = tmp / "venv";
  ASSERT_EQ(run("python3 -m venv --without-pip " + quote(venv)).status, 0);
  CommandResult python = run("env LD_PRELOAD=libnothere.so " + quote(venv + "/bin/python") + " -c 'import zlib'");
  EXPECT_EQ(python.status, 0);
  std::string line =
      "ERROR: ld.so: object 'libnothere.so' from LD_PRELOAD cannot be preloaded (cannot open shared "
      "object file): ignored.";
  EXPECT_EQ(python.err, line + "\n");
  CommandResult r = run("env LD_PRELOAD=libnothere.so " + quote(envdoctor()) + " check --json --python " +
                        quote(venv + "/bin/python"));
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  json j = json::parse(r.out);
  std::vector<json> ignored = findings(j, "preload-ignored");
  ASSERT_EQ(ignored.size(), 1u) << j.dump(1);
  EXPECT_EQ(ignored[0]["message"], line);
  EXPECT_EQ(ignored[0]["severity"], "warning");
  EXPECT_EQ(ignored[0]["library"], "libnothere.so");
  // Without it, nothing.
  json clean = json::parse(
      run("env -u LD_PRELOAD " + quote(envdoctor()) + " check --json --python " + quote(venv + "/bin/python")).out);
  for (const json& f : clean["findings"]) EXPECT_NE(f["code"], "preload-ignored") << f.dump();
}

}  // namespace
}  // namespace envdoctor::test
