// `check --image`: real images made by real tools (umoci's layers and whiteouts, skopeo's docker
// and OCI archives, mksquashfs), a root with this machine's own Debian python3, and the suite's
// own wheels. Referee 1: every format gives the findings `check --root` gives on the root that
// `umoci unpack` (or `unsquashfs`) makes. Referee 2: `chroot ROOT python3 -c "import M"`.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "fixtures/chroot_venv.h"
#include "fixtures/fixture.h"
#include "fixtures/shared_fixture.h"
#include "fixtures/venv.h"
#include "image/gpu_container.h"
#include "image/image.h"
#include "image/requirements.h"
#include "image/shell_environment.h"

namespace envdoctor::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kPython = "/usr/bin/python3.11";  // Debian's own, which the image root copies
const char* kImagePath = "/opt/venv/bin:/usr/bin:/bin";
const char* kImageLibraryPath = "/usr/local/cuda/lib64:/opt/libs";

u64 file_size(const std::string& path) {
  std::error_code ec;
  return fs::file_size(path, ec);
}

// The images, built once for a ctest run (fixtures/shared_fixture.h) and never changed after: a
// test writes only into its own directory (ImageTest::scratch_).
struct Images {
  std::unique_ptr<TempDir> dir;  // where they were built
  std::string oci, oci_archive, docker_archive, squashfs;
  std::string unpacked;  // umoci unpack of oci:app
  std::string unsquashed;
  std::string sif, unsifted;      // Apptainer's image of the root, and siftool dump's partition unsquashed
  std::string gpu, gpu_unpacked;  // oci:gpu, and its root unpacked
  std::string sif_skip;           // why the SIF image cannot be made here
  std::string skip;               // why the images cannot be made here (a tool is missing)
  std::string error;              // a step that failed
};

// What the builder made, as the record that the other processes read back.
const std::pair<std::string Images::*, const char*> kRecordFields[] = {{&Images::oci, "oci"},
                                                                       {&Images::oci_archive, "oci_archive"},
                                                                       {&Images::docker_archive, "docker_archive"},
                                                                       {&Images::squashfs, "squashfs"},
                                                                       {&Images::unpacked, "unpacked"},
                                                                       {&Images::unsquashed, "unsquashed"},
                                                                       {&Images::sif, "sif"},
                                                                       {&Images::unsifted, "unsifted"},
                                                                       {&Images::gpu, "gpu"},
                                                                       {&Images::gpu_unpacked, "gpu_unpacked"},
                                                                       {&Images::sif_skip, "sif_skip"},
                                                                       {&Images::skip, "skip"},
                                                                       {&Images::error, "error"}};

json to_record(const Images& images) {
  json record = json::object();
  for (auto [field, key] : kRecordFields) record[key] = images.*field;
  return record;
}

void from_record(const json& record, Images& images) {
  for (auto [field, key] : kRecordFields) images.*field = record.at(key).get<std::string>();
}

// Package `name` 1.0 whose extension module _`name` needs `library` (gcc-built), unpacked from
// its wheel into `site` as an installer would leave it.
void install_module_package(const TempDir& tmp, const std::string& site, const std::string& name,
                            const std::string& library) {
  std::string lib = tmp / ("build/" + library);
  std::string fn = name + "_fn";
  build_shared(lib, "int " + fn + "(void) { return 1; }", "-Wl,-soname," + library, tmp);
  std::string ext = tmp / ("build/" + name + "/_" + name + ext_suffix());
  build_shared(ext, extension_source("_" + name, "int " + fn + "(void);", fn + "()"),
               "-I" + quote(python_include()) + " " + quote(lib), tmp);
  std::string wheel = make_wheel(tmp / "wheels", {{"name", name},
                                                  {"version", "1.0"},
                                                  {"tag", "cp311-cp311-linux_x86_64"},
                                                  {"purelib", false},
                                                  {"files", {{name + "/__init__.py", "from . import _" + name + "\n"}}},
                                                  {"paths", {{name + "/_" + name + ext_suffix(), ext}}}});
  sh("python3 -m zipfile -e " + quote(wheel) + " " + quote(site));
}

// DESIGN.md's first problem, installed into `site`: fake-cudnn-cu12 and fake-cudnn-cu13 both own
// fakenv/cudnn/lib/libfakecudnn.so.9, which faketorch's _C needs through its RPATH.
void install_two_owners(const TempDir& tmp, const std::string& site) {
  std::string lib = tmp / "build/libfakecudnn.so.9";
  build_shared(lib, "int cudnn_fn(void) { return 9; }", "-Wl,-soname,libfakecudnn.so.9", tmp);
  std::string ext = tmp / ("build/faketorch/_C" + ext_suffix());
  build_shared(ext, extension_source("_C", "int cudnn_fn(void);", "cudnn_fn()"),
               "-I" + quote(python_include()) + " " + quote(lib) + " -Wl,-rpath,'$ORIGIN/../fakenv/cudnn/lib'", tmp);
  for (const char* owner : {"fake-cudnn-cu12", "fake-cudnn-cu13"})
    sh("python3 -m zipfile -e " +
       quote(make_wheel(tmp / "wheels", {{"name", owner},
                                         {"version", "9.1"},
                                         {"tag", "py3-none-manylinux_2_17_x86_64"},
                                         {"purelib", false},
                                         {"paths", {{"fakenv/cudnn/lib/libfakecudnn.so.9", lib}}}})) +
       " " + quote(site));
  sh("python3 -m zipfile -e " +
     quote(make_wheel(tmp / "wheels", {{"name", "faketorch"},
                                       {"version", "2.0"},
                                       {"tag", "cp311-cp311-linux_x86_64"},
                                       {"purelib", false},
                                       {"requires", {"fake-cudnn-cu13"}},
                                       {"files", {{"faketorch/__init__.py", "from . import _C\n"}}},
                                       {"paths", {{"faketorch/_C" + ext_suffix(), ext}}}})) +
     " " + quote(site));
}

// DESIGN.md's second problem in a CUDA 13 image: cu12ext's extension was linked against
// libcudart.so.12 (its symbols versioned libcudart.so.12); the image has CUDA 13's runtime in
// /usr/local/cuda/lib64 (on its LD_LIBRARY_PATH) and a libcudart.so.12 -> libcudart.so.13 link.
void install_cuda12_extension(const TempDir& tmp, const std::string& rootfs, const std::string& site) {
  for (const char* major : {"12", "13"}) {
    std::string soname = std::string("libcudart.so.") + major;
    std::string script =
        tmp.write("build/" + soname + ".map", soname + " { global: cudaRuntimeGetVersion; local: *; };\n");
    build_shared(tmp / ("build/cuda" + std::string(major) + "/" + soname),
                 "int cudaRuntimeGetVersion(int* v) { *v = " + std::string(major) + "000; return 0; }",
                 "-Wl,-soname," + soname + " -Wl,--version-script=" + quote(script), tmp);
  }
  std::string ext = tmp / ("build/cu12ext/_cu12ext" + ext_suffix());
  build_shared(ext,
               extension_source("_cu12ext", "int cudaRuntimeGetVersion(int*);", "cudaRuntimeGetVersion(&(int){0})"),
               "-I" + quote(python_include()) + " " + quote(tmp / "build/cuda12/libcudart.so.12"), tmp);
  std::string cuda = rootfs + "/usr/local/cuda/lib64";
  sh("mkdir -p " + quote(cuda) + " && cp " + quote(tmp / "build/cuda13/libcudart.so.13") + " " + quote(cuda) +
     " && ln -s libcudart.so.13 " + quote(cuda + "/libcudart.so.12"));
  sh("python3 -m zipfile -e " +
     quote(make_wheel(tmp / "wheels", {{"name", "cu12ext"},
                                       {"version", "1.0"},
                                       {"tag", "cp311-cp311-linux_x86_64"},
                                       {"purelib", false},
                                       {"files", {{"cu12ext/__init__.py", "from . import _cu12ext\n"}}},
                                       {"paths", {{"cu12ext/_cu12ext" + ext_suffix(), ext}}}})) +
     " " + quote(site));
}

// oci:base (the Python root), oci:app (base; then /opt/libs with libimgfoo and libimgbar and a
// venv with imgfoo, imgbar and the two cuDNN owners with faketorch; then a layer whose
// whiteouts delete libimgbar and, as `pip uninstall fake-cudnn-cu12` does, the cuDNN both list), oci:other (base;
// then imgfoo alone), oci:cuda and oci:cuda-disabled (base, with NVIDIA_REQUIRE_CUDA).
void build(Images& images, const TempDir& t);
void build_sif(Images& images, const std::string& flat, const TempDir& t);

Images* build_images() {
  auto* images = new Images;
  SharedFixture built = shared_fixture("images", [](const TempDir& dir) {
    Images made;
    try {
      build(made, dir);
    } catch (const std::exception& e) {
      made.error = e.what();
    }
    return to_record(made).dump();
  });
  from_record(json::parse(built.record), *images);
  images->dir = std::move(built.dir);
  return images;
}

void build(Images& image_set, const TempDir& t) {
  Images* images = &image_set;
  for (const char* tool : {"umoci", "skopeo", "mksquashfs", "unsquashfs", "gcc", "ldconfig"})
    if (!have_tool(tool)) {
      images->skip = std::string("needs ") + tool + " (scripts/install-deps.sh --test)";
      return;
    }
  if (!fs::exists(kPython) || !fs::exists(python_include() + "/Python.h")) {
    images->skip = "needs Debian's python3.11 and Python.h";
    return;
  }
  fs::create_directories(t / "wheels");
  std::string rootless = ::geteuid() == 0 ? "" : " --rootless";
  std::string oci = t / "oci";
  auto unpack = [&](const std::string& tag, const std::string& bundle) {
    sh("umoci unpack" + rootless + " --image " + quote(oci + ":" + tag) + " " + quote(bundle) + " >/dev/null");
    return bundle + "/rootfs";
  };
  auto repack = [&](const std::string& tag, const std::string& bundle) {
    sh("umoci repack --image " + quote(oci + ":" + tag) + " " + quote(bundle));
  };
  auto env = [&](const std::string& tag, const std::vector<std::string>& vars) {
    std::string cmd = "umoci config --image " + quote(oci + ":" + tag);
    for (const std::string& v : vars) cmd += " --config.env " + quote(v);
    sh(cmd);
  };
  sh("umoci init --layout " + quote(oci) + " && umoci new --image " + quote(oci + ":base"));
  make_python_root(unpack("base", t / "b1"));
  repack("base", t / "b1");

  std::string rootfs = unpack("base", t / "b2");
  std::string site = rootfs + "/opt/venv/lib/python3.11/site-packages";
  sh("mkdir -p " + quote(rootfs + "/opt/libs") + " " + quote(site) + " " + quote(rootfs + "/opt/venv/bin") +
     "; printf 'home = /usr/bin\\ninclude-system-site-packages = false\\nversion = 3.11.2\\n' > " +
     quote(rootfs + "/opt/venv/pyvenv.cfg") + "; ln -s /usr/bin/python3.11 " + quote(rootfs + "/opt/venv/bin/python3") +
     "; ln -s python3 " + quote(rootfs + "/opt/venv/bin/python"));
  install_module_package(t, site, "imgfoo", "libimgfoo.so.1");
  install_module_package(t, site, "imgbar", "libimgbar.so.1");
  sh("cp " + quote(t / "build/libimgfoo.so.1") + " " + quote(t / "build/libimgbar.so.1") + " " +
     quote(rootfs + "/opt/libs/"));
  install_two_owners(t, site);
  install_cuda12_extension(t, rootfs, site);
  repack("app", t / "b2");
  std::string top = unpack("app", t / "b3");
  std::string top_site = top + "/opt/venv/lib/python3.11/site-packages";
  sh("rm -r " + quote(top + "/opt/libs/libimgbar.so.1") + " " + quote(top_site + "/fake_cudnn_cu12-9.1.dist-info") +
     " " + quote(top_site + "/fakenv/cudnn/lib/libfakecudnn.so.9"));
  repack("app", t / "b3");
  env("app",
      {std::string("PATH=") + kImagePath, std::string("LD_LIBRARY_PATH=") + kImageLibraryPath, "CUDA_VERSION=13.0.0"});

  std::string other = unpack("base", t / "b4");
  std::string other_site = other + "/opt/venv/lib/python3.11/site-packages";
  sh("mkdir -p " + quote(other + "/opt/libs") + " " + quote(other_site) + " " + quote(other + "/opt/venv/bin") +
     "; cp " + quote(rootfs + "/opt/venv/pyvenv.cfg") + " " + quote(other + "/opt/venv/") + "; cp -a " +
     quote(rootfs + "/opt/venv/bin/.") + " " + quote(other + "/opt/venv/bin/") + "; cp " +
     quote(t / "build/libimgfoo.so.1") + " " + quote(other + "/opt/libs/") + "; cp -a " + quote(site + "/.") + " " +
     quote(other_site + "/") + "; rm -r " + quote(other_site + "/imgbar") + " " + quote(other_site) + "/imgbar-*");
  repack("other", t / "b4");
  env("other", {std::string("PATH=") + kImagePath, "LD_LIBRARY_PATH=/opt/libs"});

  for (const char* tag : {"cuda", "cuda-disabled"}) {
    sh("umoci tag --image " + quote(oci + ":base") + " " + tag);
    env(tag, {std::string("PATH=") + kImagePath, "CUDA_VERSION=12.4.1",
              "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471"});
  }
  env("cuda-disabled", {"NVIDIA_DISABLE_REQUIRE=true"});

  // oci:gpu: app, then a layer that adds stalefoo, whose library is in /usr/local/lib, a directory
  // an ld.so.conf.d file names but no ldconfig run has read (the image's cache is stale), and
  // cuda-compat's forward-compatibility libcuda 575.57.08.
  sh("umoci tag --image " + quote(oci + ":app") + " gpu");
  std::string gpu = unpack("gpu", t / "b5");
  install_module_package(t, gpu + "/opt/venv/lib/python3.11/site-packages", "stalefoo", "libstalefoo.so.1");
  std::string compat = gpu + "/usr/local/cuda/compat";
  build_shared(compat + "/libcuda.so.575.57.08", "int cuInit(unsigned flags) { return (int)flags; }",
               "-Wl,-soname,libcuda.so.1", t);
  sh("mkdir -p " + quote(gpu + "/usr/local/lib") + " && cp " + quote(t / "build/libstalefoo.so.1") + " " +
     quote(gpu + "/usr/local/lib/") + " && echo /usr/local/lib > " + quote(gpu + "/etc/ld.so.conf.d/local.conf") +
     " && ln -s libcuda.so.575.57.08 " + quote(compat + "/libcuda.so.1"));
  // drvfoo's extension needs libcuda.so.1 itself, which only the driver provides.
  install_module_package(t, gpu + "/opt/venv/lib/python3.11/site-packages", "drvfoo", "libcuda.so.1");
  repack("gpu", t / "b5");
  images->gpu = oci + ":gpu";
  images->gpu_unpacked = unpack("gpu", t / "gpu-unpacked");
  sh("umoci tag --image " + quote(oci + ":gpu") + " gpu-utility");
  env("gpu-utility", {"NVIDIA_DRIVER_CAPABILITIES=utility"});

  images->oci = oci + ":app";
  images->oci_archive = t / "app-oci.tar";
  images->docker_archive = t / "app-docker.tar";
  sh("skopeo copy -q oci:" + quote(oci + ":app") + " oci-archive:" + quote(images->oci_archive + ":app"));
  sh("skopeo copy -q oci:" + quote(oci + ":app") + " docker-archive:" + quote(images->docker_archive + ":app:latest"));
  images->unpacked = unpack("app", t / "unpacked");
  // enroot's image: the root flattened, its environment in /etc/environment.
  std::string flat = unpack("app", t / "flat");
  sh(std::string("printf 'PATH=") + kImagePath + "\\nLD_LIBRARY_PATH=" + kImageLibraryPath + "\\n' > " +
     quote(flat + "/etc/environment"));
  images->squashfs = t / "app.sqsh";
  sh("mksquashfs " + quote(flat) + " " + quote(images->squashfs) + " -noappend -quiet -no-progress >/dev/null");
  images->unsquashed = t / "unsquashed";
  sh("unsquashfs -q -d " + quote(images->unsquashed) + " " + quote(images->squashfs) + " >/dev/null");
  build_sif(*images, unpack("app", t / "sifflat"), t);
}

// Apptainer's image of oci:app as `apptainer build` lays it out: the OCI configuration's Env in
// /.singularity.d/env/10-docker2singularity.sh, in its own shape; Apptainer's 99-base.sh (its
// if/else is not read); a definition file object before the primary system partition.
void build_sif(Images& images, const std::string& flat, const TempDir& t) {
  if (!have_tool("siftool")) {
    images.sif_skip = "needs siftool (scripts/install-deps.sh --test)";
    return;
  }
  std::string env = flat + "/.singularity.d/env";
  fs::create_directories(env);
  std::ofstream(env + "/10-docker2singularity.sh")
      << "#!/bin/sh\nexport PATH=\"" << kImagePath << "\"\nexport LD_LIBRARY_PATH=\"${LD_LIBRARY_PATH:-\""
      << kImageLibraryPath << "\"}\"\nexport CUDA_VERSION=\"${CUDA_VERSION:-\"13.0.0\"}\"\n";
  std::ofstream(env + "/90-environment.sh") << "#!/bin/sh\n# Custom environment shell code should follow\n";
  std::ofstream(env + "/99-base.sh") << "if [ -z \"${LD_LIBRARY_PATH:-}\" ]; then\n"
                                        "    LD_LIBRARY_PATH=\"/.singularity.d/libs\"\nelse\n"
                                        "    LD_LIBRARY_PATH=\"$LD_LIBRARY_PATH:/.singularity.d/libs\"\nfi\n"
                                        "export LD_LIBRARY_PATH PS1\n";
  fs::create_directories(flat + "/.singularity.d/libs");
  sh("ln -s .singularity.d/env/90-environment.sh " + quote(flat + "/environment"));
  std::string sqsh = t / "sif-root.sqsh";
  sh("mksquashfs " + quote(flat) + " " + quote(sqsh) + " -noappend -quiet -no-progress >/dev/null");
  images.sif = t / "app.sif";
  std::string def = t.write("app.def", "Bootstrap: docker\nFrom: app\n");
  sh("siftool new " + quote(images.sif) + " && siftool add --datatype 1 " + quote(images.sif) + " " + quote(def) +
     " && siftool add --datatype 4 --parttype 2 --partfs 1 --partarch 2 " + quote(images.sif) + " " + quote(sqsh));
  // The referee's root: the partition as siftool dumps it (descriptor 2), unsquashed.
  images.unsifted = t / "unsifted";
  sh("siftool dump 2 " + quote(images.sif) + " > " + quote(t / "dumped.sqsh") + " && unsquashfs -q -d " +
     quote(images.unsifted) + " " + quote(t / "dumped.sqsh") + " >/dev/null");
}

class ImageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    images_ = build_images();
    scratch_ = new TempDir;
  }
  static void TearDownTestSuite() {
    delete images_;
    images_ = nullptr;
    delete scratch_;
    scratch_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(images_->error.empty()) << images_->error;
    if (!images_->skip.empty()) GTEST_SKIP() << images_->skip;
  }

  // `envdoctor check --json ARGS` with the images' cache.
  static json check(const std::string& args, int* status = nullptr) {
    CommandResult r = run("env XDG_CACHE_HOME=" + quote(cache()) + " " + quote(envdoctor()) + " check --json " + args);
    if (status) *status = r.status;
    EXPECT_TRUE(r.status == 0 || r.status == 1) << args << "\n" << r.err;
    if (!r.out.empty()) expect_schema_valid("check", r.out);
    return json::parse(r.out.empty() ? "{}" : r.out);
  }

  static std::string chroot_program() {
    CommandResult r = run("command -v chroot");
    return r.out.substr(0, r.out.find('\n'));
  }

  // Referee 2: the import in a chroot, with the image's environment. "" when it succeeds.
  static std::string chroot_import(const std::string& root, const std::string& module, const std::string& ld_path) {
    // No bytecode written: the root is shared with tests running at the same time.
    return import_error(run(std::string("env -i PYTHONDONTWRITEBYTECODE=1 PATH=") + kImagePath +
                            (ld_path.empty() ? "" : " LD_LIBRARY_PATH=" + ld_path) + " " + chroot_program() + " " +
                            quote(root) + " /opt/venv/bin/python3 -c " + quote("import " + module)));
  }

  // This process's image cache (XDG_CACHE_HOME): a cache's state is what some tests check.
  static std::string cache() { return *scratch_ / "cache"; }

  static Images* images_;
  static TempDir* scratch_;  // this process's own: what a test writes goes here
};

Images* ImageTest::images_ = nullptr;
TempDir* ImageTest::scratch_ = nullptr;

TEST_F(ImageTest, EveryFormatGivesTheFindingsOfItsUnpackedRoot) {
  json referee =
      check("--root " + quote(images_->unpacked) + " --prefix /opt/venv --ld-library-path " + kImageLibraryPath);
  json referee_sqsh =
      check("--root " + quote(images_->unsquashed) + " --prefix /opt/venv --ld-library-path " + kImageLibraryPath);
  // libimgbar (a whiteout), libfakecudnn (an uninstall in a later layer) and the record that lost it.
  ASSERT_EQ(findings(referee, "missing-library").size(), 2u) << referee.dump(1);
  ASSERT_EQ(findings(referee, "record-missing-file").size(), 1u) << referee.dump(1);
  ASSERT_EQ(findings(referee, "missing-version").size(), 1u) << referee.dump(1);  // CUDA 12's cudart in 13's image
  EXPECT_EQ(plain(referee), plain(referee_sqsh));
  for (const std::string& ref : {images_->oci, images_->oci_archive, images_->docker_archive, images_->squashfs}) {
    json j = check("--image " + quote(ref));
    EXPECT_EQ(plain(j), plain(referee)) << ref << "\n" << j.dump(1);
    EXPECT_EQ(j["environment"]["packages"], referee["environment"]["packages"]) << ref;
    EXPECT_EQ(j["environment"]["elf_files"], referee["environment"]["elf_files"]) << ref;
  }
}

TEST_F(ImageTest, ErrorsAreTheImportsThatFailInAChroot) {
  if (::geteuid() != 0) GTEST_SKIP() << "chroot needs root";
  json j = check("--image " + quote(images_->oci));
  for (const char* module : {"imgfoo", "imgbar", "faketorch", "cu12ext"}) {
    std::string real = chroot_import(images_->unpacked, module, kImageLibraryPath);
    std::vector<std::string> predicted;
    for (const json& f : j["findings"])
      if (f["severity"] == "error" && f["package"] == module) predicted.push_back(f["message"]);
    if (real.empty()) {
      EXPECT_TRUE(predicted.empty()) << module << ": " << j.dump(1);
    } else {
      // The first error is the loader's (findings of one file in glibc's order). For cu12ext the
      // load checks also bind the symbol the missing version leaves unbound (undefined-symbol),
      // which ld.so never reaches: the version error stops it first.
      ASSERT_EQ(predicted.size(), std::string(module) == "cu12ext" ? 2u : 1u) << module << ": " << real << "\n"
                                                                              << j.dump(1);
      EXPECT_EQ(predicted[0], real) << module;
    }
  }
  // The whiteout removed libimgbar; libimgfoo is found only through the image's LD_LIBRARY_PATH.
  EXPECT_EQ(chroot_import(images_->unpacked, "imgbar", kImageLibraryPath),
            "libimgbar.so.1: cannot open shared object file: No such file or directory");
  EXPECT_EQ(chroot_import(images_->unpacked, "imgfoo", kImageLibraryPath), "");
  EXPECT_EQ(chroot_import(images_->unpacked, "cu12ext", kImageLibraryPath),
            "/usr/local/cuda/lib64/libcudart.so.12: version `libcudart.so.12' not found (required by "
            "/opt/venv/lib/python3.11/site-packages/cu12ext/_cu12ext" +
                ext_suffix() + ")");
  EXPECT_EQ(chroot_import(images_->unpacked, "faketorch", kImageLibraryPath),
            "libfakecudnn.so.9: cannot open shared object file: No such file or directory");
  std::string without = chroot_import(images_->unpacked, "imgfoo", "");
  EXPECT_EQ(without, "libimgfoo.so.1: cannot open shared object file: No such file or directory");
  json bare = check("--image " + quote(images_->oci) + " --ld-library-path ''");
  bool found = false;
  for (const json& f : bare["findings"])
    if (f["package"] == "imgfoo" && f["severity"] == "error") found = f["message"] == without;
  EXPECT_TRUE(found) << bare.dump(1);
}

// A GPU container: the NVIDIA container toolkit's hooks write their ld.so.conf.d drop-ins and run
// ldconfig before anything starts, so a library that only the image's stale cache misses loads
// there, and cuda-compat's libcuda is listed first when the node's driver branch is older.
// Referees: the import in a chroot of the root as it is, and after the hooks' steps done for
// real on a copy (the drop-ins, then `ldconfig -f /etc/ld.so.conf -C /etc/ld.so.cache`); the
// rebuilt cache as real ldconfig lists it.
TEST_F(ImageTest, AGpuContainerLoadsWhatTheToolkitsLdconfigFinds) {
  if (::geteuid() != 0) GTEST_SKIP() << "chroot needs root";
  auto stalefoo_errors = [](const json& j) {
    std::vector<std::string> out;
    for (const json& f : j["findings"])
      if (f["severity"] == "error" && f["package"] == "stalefoo") out.push_back(f["message"]);
    return out;
  };
  std::string plain = chroot_import(images_->gpu_unpacked, "stalefoo", kImageLibraryPath);
  ASSERT_EQ(plain, "libstalefoo.so.1: cannot open shared object file: No such file or directory");
  EXPECT_EQ(stalefoo_errors(check("--image " + quote(images_->gpu) + " --driver 535.104.05 --gpu sm_80")).size(), 0u);
  CommandResult no_driver =
      run("env XDG_CACHE_HOME=" + quote(cache()) + " " + quote(envdoctor()) + " check --image " + quote(images_->gpu));
  if (no_driver.out.find("as a GPU container") == std::string::npos) {  // no driver on this machine
    json j = check("--image " + quote(images_->gpu));
    EXPECT_EQ(stalefoo_errors(j), std::vector<std::string>{plain}) << j.dump(1);
  }

  for (const std::string driver : {"535.104.05", "580.65.06"}) {
    bool compat_used = driver == "535.104.05";  // 535 < 575: the hook's rule without an ELF note
    std::string started = *scratch_ / ("started-" + driver);
    ASSERT_EQ(run("cp -a " + quote(images_->gpu_unpacked) + " " + quote(started)).status, 0);
    std::string drop_ins = started + "/etc/ld.so.conf.d";
    std::ofstream(drop_ins + "/zz-nvcr-test.conf")
        << "/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n/lib\n/usr/lib\n";
    if (compat_used) std::ofstream(drop_ins + "/00-compat-test.conf") << "/usr/local/cuda/compat\n";
    // The host's ldconfig, run in the container's root, as the hook runs it.
    ASSERT_EQ(run("ldconfig -r " + quote(started) + " -f /etc/ld.so.conf -C /etc/ld.so.cache").status, 0);
    EXPECT_EQ(chroot_import(started, "stalefoo", kImageLibraryPath), "");
    CommandResult listed = run("ldconfig -r " + quote(started) + " -p");
    EXPECT_EQ(
        listed.out.find("libcuda.so.1 (libc6,x86-64) => /usr/local/cuda/compat/libcuda.so.1") != std::string::npos,
        compat_used)
        << listed.out;

    CommandResult text = run("env XDG_CACHE_HOME=" + quote(cache()) + " " + quote(envdoctor()) + " check --image " +
                             quote(images_->gpu) + " --driver " + driver + " --gpu sm_80");
    EXPECT_NE(
        text.out.find("note: as a GPU container on driver " + driver +
                      ", the NVIDIA container toolkit mounts all the driver's libraries (NVIDIA_DRIVER_CAPABILITIES "
                      "unset in a legacy image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA)) and rebuilds "
                      "/etc/ld.so.cache at start"),
        std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("libstalefoo.so.1 => /usr/local/lib/libstalefoo.so.1 (the image's cache: not listed)"),
              std::string::npos)
        << text.out;
    EXPECT_EQ(text.out.find("libcuda.so.1 => /usr/local/cuda/compat/libcuda.so.1") != std::string::npos, compat_used)
        << text.out;
    std::string verdict = std::string("note: cuda-compat's /usr/local/cuda/compat/libcuda.so.575.57.08 is ") +
                          (compat_used ? "used" : "not used") + " (the toolkit's enable-cuda-compat hook: driver " +
                          driver + "'s branch is " + (compat_used ? "" : "not ") + "older than 575)";
    EXPECT_NE(text.out.find(verdict), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("raises the driver the CUDA runtimes talk to from " + driver + " to 575.57.08") !=
                  std::string::npos,
              compat_used)
        << text.out;
  }
}

// The driver's libraries in a GPU container are those of the capabilities it asks for: an image
// that asks for `utility` alone has no libcuda.so.1. Referees: the import in a chroot of the root
// as the toolkit leaves it, with the driver's libcuda.so.1 (a stand-in built here) mounted into
// /usr/lib/x86_64-linux-gnu and the cache rebuilt, and without it.
TEST_F(ImageTest, AGpuContainerHasTheDriverLibrariesOfItsCapabilities) {
  if (::geteuid() != 0) GTEST_SKIP() << "chroot needs root";
  std::string layout = images_->gpu.substr(0, images_->gpu.rfind(':'));
  auto drvfoo = [&](const std::string& tag) {
    json j = check("--image " + quote(layout + ":" + tag) + " --driver 580.65.06 --gpu sm_80");
    std::vector<json> out;
    for (const json& f : j["findings"])
      if (f["package"] == "drvfoo") out.push_back(f);
    return out;
  };
  auto started = [&](const std::string& name, bool mounted) {
    std::string root = *scratch_ / name;
    EXPECT_EQ(run("cp -a " + quote(images_->gpu_unpacked) + " " + quote(root)).status, 0);
    if (mounted) fs::copy_file(*images_->dir / "build/libcuda.so.1", root + "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    EXPECT_EQ(run("ldconfig -r " + quote(root) + " -f /etc/ld.so.conf -C /etc/ld.so.cache").status, 0);
    return chroot_import(root, "drvfoo", kImageLibraryPath);
  };
  EXPECT_EQ(started("drv-mounted", true), "");
  EXPECT_TRUE(drvfoo("gpu").empty());  // every capability: libcuda.so.1 is mounted

  std::string unmounted = started("drv-unmounted", false);
  ASSERT_EQ(unmounted, "libcuda.so.1: cannot open shared object file: No such file or directory");
  std::vector<json> found = drvfoo("gpu-utility");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]["code"], "missing-library");
  EXPECT_EQ(found[0]["message"], unmounted);
  EXPECT_NE(
      found[0]["hint"].get<std::string>().find(
          "libcuda.so.1 is the NVIDIA driver's (compute capability), and the NVIDIA container toolkit mounts only "
          "the driver libraries of the capabilities the container asks for (NVIDIA_DRIVER_CAPABILITIES=utility); "
          "ask for compute too: NVIDIA_DRIVER_CAPABILITIES=compute,utility"),
      std::string::npos)
      << found[0].dump(1);
}

// A node's snapshot records the driver libraries its ld.so.cache lists (as the toolkit finds them
// to mount); checked on that node, an image whose module needs a driver library the node lacks
// fails to load it there. The node here is a root whose cache real ldconfig wrote, with the
// driver's NVML (a stand-in) and no libcuda; the referee of the load is the import in a chroot
// with what the node would mount.
TEST_F(ImageTest, ANodeProvidesTheDriverLibrariesItsSnapshotLists) {
  if (::geteuid() != 0) GTEST_SKIP() << "chroot needs root";
  std::string node = *scratch_ / "node-root";
  ASSERT_EQ(run("cp -a " + quote(images_->gpu_unpacked) + " " + quote(node)).status, 0);
  build_shared(node + "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.65.06", "int nvmlInit(void) { return 0; }",
               "-Wl,-soname,libnvidia-ml.so.1", *scratch_);
  ASSERT_EQ(run("ldconfig -r " + quote(node)).status, 0);
  std::string snap = *scratch_ / "node-with-nvml.snapshot";
  sh(quote(envdoctor()) + " snapshot --root " + quote(node) + " --prefix /opt/venv --driver 580.65.06 > " +
     quote(snap));
  std::ifstream in(snap);
  json recorded = json::parse(in);
  EXPECT_EQ(recorded["cuda"]["driver_libraries"], json::array({"libnvidia-ml.so.1"})) << recorded["cuda"].dump(1);

  std::string real = chroot_import(node, "drvfoo", kImageLibraryPath);  // the node mounts NVML, no libcuda
  ASSERT_EQ(real, "libcuda.so.1: cannot open shared object file: No such file or directory");
  std::vector<json> found;
  json on_node = check("--image " + quote(images_->gpu) + " --node " + quote(snap));
  for (const json& f : on_node["findings"])
    if (f["package"] == "drvfoo") found.push_back(f);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]["message"], real);
  EXPECT_NE(found[0]["hint"].get<std::string>().find("libcuda.so.1 is the NVIDIA driver's (compute capability), and "
                                                     "the node's driver 580.65.06 does not provide it (--node " +
                                                     snap + ": its snapshot lists libnvidia-ml.so.1)"),
            std::string::npos)
      << found[0].dump(1);
  // `diff` of that node against the same root without NVML names the change.
  std::string bare = *scratch_ / "node-bare.snapshot";
  sh(quote(envdoctor()) + " snapshot --root " + quote(images_->gpu_unpacked) +
     " --prefix /opt/venv --driver 580.65.06 > " + quote(bare));
  CommandResult d = run(quote(envdoctor()) + " diff " + quote(snap) + " " + quote(bare));
  EXPECT_NE(d.out.find("  ~ driver libraries: libnvidia-ml.so.1 \u2192 (none)\n"), std::string::npos) << d.out;
  // A snapshot that records none (an older one) leaves every driver library present.
  recorded["cuda"].erase("driver_libraries");
  std::string older = *scratch_ / "node-older.snapshot";
  std::ofstream(older) << recorded.dump();
  json on_older = check("--image " + quote(images_->gpu) + " --node " + quote(older));
  for (const json& f : on_older["findings"]) EXPECT_NE(f["package"], "drvfoo") << f.dump(1);
}

TEST_F(ImageTest, HeaderNamesTheImageItsDigestAndTheInterpreter) {
  std::string layout = images_->oci.substr(0, images_->oci.rfind(':'));
  json index = json::parse(std::ifstream(layout + "/index.json"));
  std::string digest;
  for (const json& m : index["manifests"])
    if (m["annotations"]["org.opencontainers.image.ref.name"] == "app") digest = m["digest"];
  json j = check("--image " + quote(images_->oci));
  const json& image = j["environment"]["image"];
  EXPECT_EQ(image["reference"], images_->oci);
  EXPECT_EQ(image["format"], "oci-layout");
  EXPECT_EQ(image["digest"], digest);
  EXPECT_EQ(image["layers"], 3);
  EXPECT_EQ(image["interpreter"], "/opt/venv/bin/python3");
  EXPECT_EQ(image["interpreter_from"], "PATH");
  EXPECT_EQ(image["prefix"], "/opt/venv");
  EXPECT_EQ(check("--image " + quote(images_->squashfs))["environment"]["image"]["format"], "squashfs");
  EXPECT_EQ(check("--image " + quote(images_->docker_archive))["environment"]["image"]["format"], "docker-archive");
  CommandResult text =
      run("env XDG_CACHE_HOME=" + quote(cache()) + " " + quote(envdoctor()) + " check --image " + quote(images_->oci));
  EXPECT_NE(text.out.find("image " + images_->oci + " (oci-layout, " + digest +
                          ", 3 layers): its Python is /opt/venv/bin/python3 (python3 on its PATH)\n"),
            std::string::npos)
      << text.out;
}

// Apptainer's SIF: its primary system partition read in place, its environment from the scripts
// Apptainer sources. Referee 1: `check --root` on the partition `siftool dump` gives, unsquashed;
// referee 2: the import in a chroot of that root.
TEST_F(ImageTest, SifGivesTheFindingsOfItsPartitionAndTheImportsOfItsRoot) {
  if (!images_->sif_skip.empty()) GTEST_SKIP() << images_->sif_skip;
  json referee =
      check("--root " + quote(images_->unsifted) + " --prefix /opt/venv --ld-library-path " + kImageLibraryPath);
  ASSERT_EQ(findings(referee, "missing-library").size(), 2u) << referee.dump(1);
  json j = check("--image " + quote(images_->sif));
  EXPECT_EQ(plain(j), plain(referee)) << j.dump(1);
  EXPECT_EQ(j["environment"]["packages"], referee["environment"]["packages"]);
  EXPECT_EQ(j["environment"]["elf_files"], referee["environment"]["elf_files"]);
  const json& image = j["environment"]["image"];
  EXPECT_EQ(image["format"], "sif");
  EXPECT_EQ(image["layers"], 1);
  EXPECT_TRUE(image["digest"].is_null());
  // python3 on the PATH that 10-docker2singularity.sh sets (Docker's default has no /opt/venv/bin).
  EXPECT_EQ(image["interpreter"], "/opt/venv/bin/python3");
  EXPECT_EQ(image["interpreter_from"], "PATH");
  if (::geteuid() != 0) GTEST_SKIP() << "the chroot half needs root";
  for (const char* module : {"imgfoo", "imgbar", "faketorch", "cu12ext"}) {
    std::string real = chroot_import(images_->unsifted, module, kImageLibraryPath);
    std::vector<std::string> predicted;
    for (const json& f : j["findings"])
      if (f["severity"] == "error" && f["package"] == module) predicted.push_back(f["message"]);
    if (real.empty()) EXPECT_TRUE(predicted.empty()) << module << ": " << j.dump(1);
    else EXPECT_TRUE(!predicted.empty() && predicted[0] == real) << module << ": " << real << "\n" << j.dump(1);
  }
  // libimgfoo is found only through the LD_LIBRARY_PATH of the image's script.
  EXPECT_EQ(chroot_import(images_->unsifted, "imgfoo", kImageLibraryPath), "");
  EXPECT_NE(chroot_import(images_->unsifted, "imgfoo", ""), "");
}

u64 le64_at(const std::string& b, size_t at) {
  u64 v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}
void put_le64(std::string& b, size_t at, u64 v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}

// A SIF image damaged or crafted: each a sentence that says what is wrong, exit status 2, and
// nothing of it cached.
TEST_F(ImageTest, SifDamagedOrCraftedIsAClearError) {
  if (!images_->sif_skip.empty()) GTEST_SKIP() << images_->sif_skip;
  std::ifstream in(images_->sif, std::ios::binary);
  std::string sif((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The partition's descriptor, found as the sif library finds it: type 0x4004, in use.
  u64 table = le64_at(sif, 96), total = le64_at(sif, 88);
  size_t at = 0;
  for (u64 i = 0; i < total && !at; ++i) {
    size_t d = table + i * 585;
    if (static_cast<unsigned char>(sif[d]) == 0x04 && static_cast<unsigned char>(sif[d + 1]) == 0x40 && sif[d + 4])
      at = d;
  }
  ASSERT_NE(at, 0u);
  u64 offset = le64_at(sif, at + 17), size = le64_at(sif, at + 25);
  TempDir tmp;
  auto refused = [&](const std::string& name, const std::string& bytes) {
    std::string path = tmp.write(name, bytes);
    CommandResult r =
        run("env XDG_CACHE_HOME=" + quote(tmp / "cache") + " " + quote(envdoctor()) + " check --image " + quote(path));
    EXPECT_EQ(r.status, 2) << name << "\n" << r.out;
    EXPECT_FALSE(fs::exists(tmp / "cache/envdoctor/images-v4/layers")) << name;
    std::string prefix = "envdoctor: --image " + path + ": " + path + ": ";
    return r.err.starts_with(prefix) ? r.err.substr(prefix.size()) : r.err;
  };
  std::string truncated = sif.substr(0, offset + size / 2);
  EXPECT_EQ(refused("truncated.sif", truncated), "descriptor 2 places its partition at offset " +
                                                     std::to_string(offset) + " with size " + std::to_string(size) +
                                                     ", past the end of the file (" + std::to_string(truncated.size()) +
                                                     " bytes): the image is truncated or damaged\n");
  std::string past = sif;
  put_le64(past, at + 17, sif.size() + 4096);
  EXPECT_EQ(refused("past.sif", past), "descriptor 2 places its partition at offset " +
                                           std::to_string(sif.size() + 4096) + " with size " + std::to_string(size) +
                                           ", past the end of the file (" + std::to_string(sif.size()) +
                                           " bytes): the image is truncated or damaged\n");
  std::string wrapped = sif;  // offset + size overflows 64 bits
  put_le64(wrapped, at + 25, ~u64{0} - offset + 2);
  EXPECT_NE(refused("wrapped.sif", wrapped).find("past the end of the file"), std::string::npos);
  EXPECT_EQ(refused("header.sif", sif.substr(0, 100)),
            "truncated SIF image: 100 bytes, shorter than its 128-byte global header\n");
  std::string counted = sif;
  put_le64(counted, 88, u64{1} << 62);
  EXPECT_EQ(refused("counted.sif", counted),
            "its header claims 4611686018427387904 descriptors: the image is damaged\n");
  put_le64(counted, 88, 60000);
  EXPECT_EQ(refused("counted.sif", counted), "its descriptor table (60000 descriptors at offset " +
                                                 std::to_string(table) + ") lies past the end of the file (" +
                                                 std::to_string(sif.size()) +
                                                 " bytes): the image is truncated or damaged\n");
  std::string system = sif;  // a system partition, but not the primary one
  system[at + 201 + 4] = 1;
  EXPECT_EQ(refused("system.sif", system),
            "no primary system partition (it has 1 other partition): Apptainer would find no root file system; "
            "`siftool setprim` marks one\n");
  std::string ext3 = sif;
  ext3[at + 201] = 2;
  EXPECT_EQ(refused("ext3.sif", ext3), "its primary system partition is ext3, and envdoctor reads squashfs only\n");
  std::string moved = sif;  // inside the file, but not at the squashfs
  put_le64(moved, at + 17, offset - 4096);
  EXPECT_EQ(refused("moved.sif", moved), "its primary system partition (descriptor 2, offset " +
                                             std::to_string(offset - 4096) + ") holds no squashfs superblock\n");
}

// NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471: CUDA 12.4 or a 470 driver.
TEST_F(ImageTest, RequirementsGetTheContainerToolkitsVerdicts) {
  std::string layout = images_->oci.substr(0, images_->oci.rfind(':'));
  auto unmet = [&](const std::string& tag, const std::string& driver) {
    json j = check("--image " + quote(layout + ":" + tag) + " --driver " + driver + " --gpu sm_80");
    return findings(j, "container-requirement-unmet");
  };
  EXPECT_TRUE(unmet("cuda", "550.54.15").empty());  // CUDA 12.4
  EXPECT_TRUE(unmet("cuda", "470.57.02").empty());  // the second alternative
  std::vector<json> refused = unmet("cuda", "460.32.03");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0]["message"],
            "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to "
            "a newer version, or use an earlier cuda container");
  EXPECT_EQ(refused[0]["severity"], "error");
  EXPECT_TRUE(unmet("cuda-disabled", "460.32.03").empty());
  int status = 0;
  check("--image " + quote(layout + ":cuda") + " --driver 460.32.03 --gpu sm_80", &status);
  EXPECT_EQ(status, 1);
}

// The cache: a second image that shares the first's base layer reads only its own layer, and an
// image read before reads no layer at all.
TEST_F(ImageTest, ASecondImageReadsOnlyItsNewLayers) {
  std::string layout = images_->oci.substr(0, images_->oci.rfind(':'));
  TempDir cache;
  auto open = [&](const std::string& tag) {
    image::ReadCounter counter;
    image::ImageOptions options;
    options.cache = cache.path().string();
    options.counter = &counter;
    std::string error;
    std::optional<image::OpenedImage> opened = image::open_image(layout + ":" + tag, options, &error);
    EXPECT_TRUE(opened) << error;
    return counter.bytes.load();
  };
  // The blobs an image's manifest names: its JSON documents and its layers.
  auto blobs = [&](const std::string& tag, u64* json_bytes) {
    json index = json::parse(std::ifstream(layout + "/index.json"));
    std::vector<std::string> layers;
    *json_bytes = file_size(layout + "/index.json");
    for (const json& m : index["manifests"]) {
      if (m["annotations"]["org.opencontainers.image.ref.name"] != tag) continue;
      std::string manifest_path = layout + "/blobs/sha256/" + m["digest"].get<std::string>().substr(7);
      json manifest = json::parse(std::ifstream(manifest_path));
      *json_bytes += file_size(manifest_path) +
                     file_size(layout + "/blobs/sha256/" + manifest["config"]["digest"].get<std::string>().substr(7));
      for (const json& l : manifest["layers"]) layers.push_back(l["digest"].get<std::string>().substr(7));
    }
    return layers;
  };
  u64 app_json = 0, other_json = 0;
  std::vector<std::string> app_layers = blobs("app", &app_json), other_layers = blobs("other", &other_json);
  ASSERT_EQ(app_layers.size(), 3u);
  ASSERT_EQ(other_layers.size(), 2u);
  ASSERT_EQ(app_layers[0], other_layers[0]);  // the shared base
  u64 base = file_size(layout + "/blobs/sha256/" + app_layers[0]);
  u64 own = file_size(layout + "/blobs/sha256/" + other_layers[1]);

  u64 first = open("app");
  EXPECT_GE(first, base);
  u64 second = open("other");
  EXPECT_LE(second, other_json + own);
  EXPECT_GE(second, other_json + own / 2);  // its own layer was read
  EXPECT_EQ(open("other"), other_json);     // cached: the JSON documents alone
}

// ENVDOCTOR_CACHE_MAX for one scope.
struct CacheBound {
  explicit CacheBound(const std::string& value) { ::setenv("ENVDOCTOR_CACHE_MAX", value.c_str(), 1); }
  ~CacheBound() { ::unsetenv("ENVDOCTOR_CACHE_MAX"); }
};

bool cached(const std::string& cache, const std::string& entry) { return fs::exists(cache + "/" + entry); }

// The cache's bound: entries evicted least recently used first, a layer with the roots made of
// it, never what a check holds, and an image whose layers were evicted read again.
TEST_F(ImageTest, ABoundedCacheEvictsTheLeastRecentlyUsedAndNeverWhatIsInUse) {
  std::string layout = images_->oci.substr(0, images_->oci.rfind(':'));
  TempDir tmp;
  std::string cache = tmp / "cache";
  auto open = [&](const std::string& ref, u64* bytes = nullptr) {
    image::ReadCounter counter;
    image::ImageOptions options;
    options.cache = cache;
    options.counter = &counter;
    std::string error;
    std::optional<image::OpenedImage> opened = image::open_image(ref, options, &error);
    EXPECT_TRUE(opened) << ref << ": " << error;
    if (bytes) *bytes = counter.bytes.load();
    ::usleep(20000);  // marker times a clock tick apart
    return opened;
  };
  auto roots = [&]() {
    std::vector<std::string> names;
    for (const fs::directory_entry& d : fs::directory_iterator(cache + "/roots"))
      if (d.is_directory() && !d.path().filename().string().starts_with(".")) names.push_back(d.path().filename());
    return names;
  };
  std::optional<image::OpenedImage> app = open(layout + ":app");
  ASSERT_TRUE(app);
  std::string app_root = fs::path(app->root).filename();
  std::set<std::string> app_layers;
  {
    std::ifstream in(cache + "/roots/" + app_root + ".entry");
    std::string line;
    std::getline(in, line);
    EXPECT_GT(std::stoull(line), 0u);  // its directories
    while (std::getline(in, line)) app_layers.insert(line);
  }
  ASSERT_EQ(app_layers.size(), 3u);
  app.reset();  // released: evictable from now on
  std::optional<image::OpenedImage> squashfs = open(images_->squashfs);
  ASSERT_TRUE(squashfs);
  std::string sqsh = fs::path(squashfs->root).filename();
  squashfs.reset();
  std::optional<image::OpenedImage> other = open(layout + ":other");
  ASSERT_TRUE(other);
  std::string other_root = fs::path(other->root).filename();
  other.reset();
  EXPECT_EQ(roots().size(), 3u);

  // The referee of sizes: the blocks du counts, once per inode, as the markers say.
  image::Eviction none = image::evict(cache, 0);
  EXPECT_TRUE(none.evicted.empty());
  CommandResult du =
      run("du -s -B1 " + quote(cache + "/layers") + " " + quote(cache + "/roots") + " | awk '{s += $1} END {print s}'");
  u64 on_disk = std::stoull(du.out);
  EXPECT_LE(none.before, on_disk);
  EXPECT_GE(none.before, on_disk * 9 / 10) << du.out;  // what markers leave out: the markers, index dirs

  // One byte less than everything: the oldest goes first, app's own layer with app's root;
  // the base layer, used since by `other`, and the squashfs image stay.
  image::Eviction one = image::evict(cache, none.before - 1);
  ASSERT_FALSE(one.evicted.empty());
  EXPECT_TRUE(std::count(one.evicted.begin(), one.evicted.end(), "roots/" + app_root)) << one.evicted[0];
  EXPECT_TRUE(one.evicted.back().starts_with("layers/") && app_layers.count(one.evicted.back().substr(7)))
      << one.evicted.back();
  EXPECT_LE(one.after, none.before - 1);
  EXPECT_TRUE(cached(cache, "roots/" + other_root));
  EXPECT_TRUE(cached(cache, "roots/" + sqsh));
  EXPECT_FALSE(cached(cache, "roots/" + app_root));

  // What a check holds is never evicted, even at a bound of one byte: the rest goes.
  other = open(layout + ":other");
  image::Eviction held = image::evict(cache, 1);
  EXPECT_TRUE(cached(cache, "roots/" + other_root));
  EXPECT_FALSE(cached(cache, "roots/" + sqsh));
  EXPECT_FALSE(cached(cache, "layers/" + sqsh));
  EXPECT_GT(held.after, 1u);
  for (const std::string& e : held.evicted) EXPECT_EQ(e.find(other_root), std::string::npos) << e;
  other.reset();

  // Evicted, read again: the check still works and reads the app's layers again.
  u64 bytes = 0;
  u64 layers = 0;  // app's own layers as stored (the base one is other's, and still cached)
  json index = json::parse(std::ifstream(layout + "/index.json"));
  for (const json& m : index["manifests"]) {
    if (m["annotations"]["org.opencontainers.image.ref.name"] != "app") continue;
    json manifest = json::parse(std::ifstream(layout + "/blobs/sha256/" + m["digest"].get<std::string>().substr(7)));
    for (size_t i = 1; i < manifest["layers"].size(); ++i)
      layers += file_size(layout + "/blobs/sha256/" + manifest["layers"][i]["digest"].get<std::string>().substr(7));
  }
  ASSERT_GT(layers, 0u);
  {
    CacheBound bound("64M");
    app = open(layout + ":app", &bytes);
  }
  ASSERT_TRUE(app);
  EXPECT_EQ(app->facts.interpreter, "/opt/venv/bin/python3");
  EXPECT_GE(bytes, layers);
  EXPECT_TRUE(fs::exists(app->root + "/opt/venv/pyvenv.cfg"));
  app.reset();
  {
    CacheBound bound("lots");
    std::string error;
    image::ImageOptions options;
    options.cache = cache;
    EXPECT_FALSE(image::open_image(layout + ":app", options, &error));
    EXPECT_EQ(error, "--image " + layout +
                         ":app: ENVDOCTOR_CACHE_MAX=lots: not a size (bytes, or a number with K, "
                         "M, G or T; 0 keeps everything)");
  }
  EXPECT_EQ(image::parse_size("20G"), u64{20} << 30);
  EXPECT_EQ(image::parse_size("512MiB"), u64{512} << 20);
  EXPECT_EQ(image::parse_size("1048576"), u64{1048576});
  EXPECT_EQ(image::parse_size("99999999999T"), std::nullopt);
}

// Two processes sharing a cache bounded to one byte: each evicts all that the other does not
// hold, and neither loses what it reads (the findings of each are its referee's, every time).
TEST_F(ImageTest, TwoChecksSharingATinyCacheNeverLoseWhatTheyRead) {
  json referee =
      check("--root " + quote(images_->unpacked) + " --prefix /opt/venv --ld-library-path " + kImageLibraryPath);
  TempDir tmp;
  std::string command = "env XDG_CACHE_HOME=" + quote(tmp / "cache") + " ENVDOCTOR_CACHE_MAX=1 " + quote(envdoctor()) +
                        " check --json --image ";
  for (int round = 0; round < 3; ++round) {
    std::string a = tmp / ("a" + std::to_string(round)), b = tmp / ("b" + std::to_string(round));
    CommandResult r = run(command + quote(images_->oci) + " > " + quote(a) + " & " + command +
                          quote(images_->squashfs) + " > " + quote(b) + "; wait");
    for (const std::string& out : {a, b}) {
      std::ifstream in(out);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      ASSERT_FALSE(text.empty()) << out << ": " << r.err;
      EXPECT_EQ(plain(json::parse(text)), plain(referee)) << out << "\n" << r.err;
    }
  }
}

// A node's snapshot carries its driver and GPUs to another machine's check of an image.
TEST_F(ImageTest, NodeSnapshotIsTheNodeChecked) {
  std::string layout = images_->oci.substr(0, images_->oci.rfind(':'));
  std::string snap = *scratch_ / "node.snapshot";
  sh("env XDG_CACHE_HOME=" + quote(cache()) + " " + quote(envdoctor()) + " snapshot --image " +
     quote(layout + ":base") + " --driver 460.32.03 --gpu sm_80 > " + quote(snap));
  std::ifstream taken(snap);
  EXPECT_TRUE(json::parse(taken)["cuda"]["driver_libraries"].is_null());  // an image's cache says nothing of a node
  std::vector<json> refused =
      findings(check("--image " + quote(layout + ":cuda") + " --node " + quote(snap)), "container-requirement-unmet");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0]["hint"].get<std::string>().find("driver 460.32.03 (--node " + snap + ")"), std::string::npos)
      << refused[0]["hint"];
  CommandResult both = run(quote(envdoctor()) + " check --image " + quote(layout + ":cuda") + " --node " + quote(snap) +
                           " --driver 550.54.15");
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err,
            "envdoctor: --node takes the driver and GPUs from its snapshot: give --node, or --gpu and --driver\n");
}

// A layout made by tests/fixtures/data/image/make_layout.py from `spec`, opened with a cache of its own
// (`--prefix /`: these roots hold no Python).
std::optional<image::OpenedImage> open_made_layout(const TempDir& tmp, const json& spec, std::string* error,
                                                   const std::string& prefix = "/") {
  CommandResult r =
      run("python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/fixtures/data/image/make_layout.py") + " " +
          quote(tmp / "layout") + " " + quote(spec.dump()));
  EXPECT_EQ(r.status, 0) << r.err;
  image::ImageOptions options;
  options.cache = tmp / "cache";
  options.prefix = prefix;
  return image::open_image(tmp / "layout:t", options, error);
}

// The Python a container would run: the configuration's command when it is one, else python3 on
// its PATH; a virtual environment by its pyvenv.cfg, a base interpreter by the file it resolves to.
TEST(ImageInterpreter, CommandThenPathThenLayout) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  json entries =
      json::array({{{"name", "opt/conda/bin/python3.11"}, {"data", "x"}, {"mode", 493}},
                   {{"name", "opt/conda/bin/python"}, {"type", "symlink"}, {"target", "python3.11"}},
                   {{"name", "usr/bin/python3.11"}, {"data", "x"}, {"mode", 493}},
                   {{"name", "usr/local/bin/python3"}, {"type", "symlink"}, {"target", "/usr/bin/python3.11"}},
                   {{"name", "v/bin/python3"}, {"type", "symlink"}, {"target", "/usr/bin/python3.11"}},
                   {{"name", "v/pyvenv.cfg"}, {"data", "home = /usr/bin\n"}}});
  json layers = json::array({{{"compression", "gzip"}, {"entries", entries}}});
  auto chosen = [&](json spec) {
    TempDir tmp;
    spec["layers"] = layers;
    std::string error;
    std::optional<image::OpenedImage> opened = open_made_layout(tmp, spec, &error, "");
    EXPECT_TRUE(opened) << error;
    return opened ? opened->facts.interpreter + " " + image::interpreter_source_name(opened->facts.interpreter_source) +
                        " " + opened->facts.prefix
                  : error;
  };
  EXPECT_EQ(chosen({{"env", {"PATH=/usr/local/bin:/usr/bin"}}, {"cmd", {"/opt/conda/bin/python", "-m", "serve"}}}),
            "/opt/conda/bin/python Cmd /opt/conda");
  EXPECT_EQ(chosen({{"env", {"PATH=/usr/local/bin:/usr/bin"}}, {"entrypoint", {"python"}}, {"cmd", {"x"}}}),
            "/usr/local/bin/python3 PATH /usr");  // no `python` on the PATH: then python3 there
  // An Entrypoint that is a wrapper (exec "$@") runs Cmd's Python.
  EXPECT_EQ(chosen({{"env", {"PATH=/usr/local/bin:/usr/bin"}},
                    {"entrypoint", {"/opt/nvidia/nvidia_entrypoint.sh"}},
                    {"cmd", {"/opt/conda/bin/python", "-m", "serve"}}}),
            "/opt/conda/bin/python Cmd /opt/conda");
  EXPECT_EQ(chosen({{"env", {"PATH=/usr/local/bin:/usr/bin"}}, {"cmd", {"/bin/sh", "-c", "python3 x.py"}}}),
            "/usr/local/bin/python3 PATH /usr");
  EXPECT_EQ(chosen({{"env", {"PATH=/v/bin:/usr/bin"}}}), "/v/bin/python3 PATH /v");
  TempDir tmp;
  std::string error;
  EXPECT_FALSE(open_made_layout(tmp, {{"env", {"PATH=/nowhere"}}, {"layers", layers}}, &error, ""));
  EXPECT_EQ(error, "--image " + (tmp / "layout:t") +
                       ": no python3 on the image's PATH (/nowhere): give --python with the interpreter's path in "
                       "the image, or --prefix");
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(ImageLayers, HostileEntriesStayInsideTheRoot) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  TempDir tmp;
  std::string marker = "envdoctor-escape-" + std::to_string(::getpid());
  json entries = json::array({
      {{"name", "ok/file"}, {"data", "x"}},
      {{"name", "../" + marker}, {"data", "evil"}},
      {{"name", "root"}, {"type", "symlink"}, {"target", "/"}},
      {{"name", "root/" + marker + "-abs"}, {"data", "a"}},
      {{"name", "up"}, {"type", "symlink"}, {"target", "../../../../../../../tmp"}},
      {{"name", "up/" + marker + "-rel"}, {"data", "b"}},
      {{"name", "hl"}, {"type", "hardlink"}, {"target", "../../etc/passwd"}},
      {{"name", "hl2"}, {"type", "hardlink"}, {"target", "missing"}},
  });
  std::string error;
  std::optional<image::OpenedImage> opened =
      open_made_layout(tmp, {{"layers", json::array({{{"compression", "gzip"}, {"entries", entries}}})}}, &error);
  ASSERT_TRUE(opened) << error;
  const std::string& root = opened->root;
  EXPECT_TRUE(fs::exists(root + "/ok/file"));
  EXPECT_TRUE(fs::exists(root + "/" + marker + "-abs"));      // through "root -> /": the image's /
  EXPECT_TRUE(fs::exists(root + "/tmp/" + marker + "-rel"));  // ".." stops at the image's root
  EXPECT_FALSE(fs::exists("/" + marker + "-abs"));
  EXPECT_FALSE(fs::exists("/tmp/" + marker + "-rel"));
  EXPECT_FALSE(fs::exists(fs::path(root).parent_path() / marker));
  EXPECT_FALSE(fs::exists(root + "/hl"));
  const std::vector<std::string>& problems = opened->facts.problems;
  EXPECT_TRUE(has(problems, "../" + marker + ": left out, the path leaves the root"))
      << ::testing::PrintToString(problems);
  EXPECT_TRUE(has(problems, "hl: left out, a hard link to ../../etc/passwd outside the root"));
  EXPECT_TRUE(has(problems, "/hl2: left out, a hard link to /missing, which is not there"));
}

// Whiteouts and an opaque directory (OCI image spec, "Whiteouts"), a hard link into a lower
// layer, and the three compressions; what the model does not read is a sparse file of its size.
TEST(ImageLayers, WhiteoutsOpaqueDirectoriesHardLinksAndCompressions) {
  if (!have_tool("python3") || !have_tool("zstd")) GTEST_SKIP() << "needs python3 and zstd";
  TempDir tmp;
  std::string big(100000, 'x');
  json lower = json::array({{{"name", "d"}, {"type", "dir"}},
                            {{"name", "d/a"}, {"data", "a"}},
                            {{"name", "d/b"}, {"data", "b"}},
                            {{"name", "keep"}, {"data", "kept"}},
                            {{"name", "gone"}, {"data", "gone"}},
                            {{"name", "big.txt"}, {"data", big}},
                            {{"name", "lib.so"}, {"data", "\u007fELF and the rest"}},
                            {{"name", "x.dist-info/RECORD"}, {"data", "x/__init__.py,,\n"}}});
  json middle = json::array({{{"name", ".wh.gone"}, {"data", ""}},
                             {{"name", "d/c"}, {"data", "c"}},
                             {{"name", "d/.wh..wh..opq"}, {"data", ""}},
                             {{"name", "keep2"}, {"type", "hardlink"}, {"target", "keep"}}});
  json upper = json::array({{{"name", "new"}, {"data", "new"}}});
  std::string error;
  std::optional<image::OpenedImage> opened =
      open_made_layout(tmp,
                       {{"layers", json::array({{{"compression", "gzip"}, {"entries", lower}},
                                                {{"compression", "zstd"}, {"entries", middle}},
                                                {{"compression", "none"}, {"entries", upper}}})}},
                       &error);
  ASSERT_TRUE(opened) << error;
  const std::string& root = opened->root;
  EXPECT_FALSE(fs::exists(root + "/gone"));
  EXPECT_FALSE(fs::exists(root + "/d/a"));
  EXPECT_FALSE(fs::exists(root + "/d/b"));
  EXPECT_TRUE(fs::exists(root + "/d/c"));  // the opaque marker hides only the layers below
  EXPECT_TRUE(fs::exists(root + "/new"));
  EXPECT_TRUE(fs::equivalent(root + "/keep", root + "/keep2"));
  struct stat st;
  ASSERT_EQ(::stat((root + "/big.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 100000);
  EXPECT_EQ(st.st_blocks, 0);  // sparse: its bytes were not kept
  std::ifstream elf(root + "/lib.so", std::ios::binary);
  std::string kept((std::istreambuf_iterator<char>(elf)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept,
            "\x7f"
            "ELF and the rest");
  std::ifstream record(root + "/x.dist-info/RECORD");
  std::string line;
  std::getline(record, line);
  EXPECT_EQ(line, "x/__init__.py,,");
  EXPECT_EQ(opened->facts.layers, 3u);
}

// The cache is keyed by digests, so each is checked against what it names before anything is
// kept: a layer whose configuration claims another layer's diff_id (cache poisoning: checked
// first, its files would be what every image with the real layer is checked against), a blob
// changed after its digest was taken, and a configuration changed so. Each is refused with the
// digest found and the one named, nothing is cached, and the real layer then reads as itself.
TEST(ImageLayers, ADigestThatIsNotTheContentsIsRefusedAndNothingIsCached) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  TempDir tmp;
  auto make = [&](const std::string& dir, const json& spec) {
    CommandResult r =
        run("python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/fixtures/data/image/make_layout.py") + " " +
            quote(tmp / dir) + " " + quote(spec.dump()));
    ASSERT_EQ(r.status, 0) << r.err;
  };
  auto open = [&](const std::string& dir, std::string* error) {
    image::ImageOptions options;
    options.cache = tmp / "cache";
    options.prefix = "/";
    return image::open_image(tmp / (dir + ":t"), options, error);
  };
  make("victim", {{"layers", json::array({{{"entries", json::array({{{"name", "victim"}, {"data", "v"}}})}}})}});
  json config;
  {
    json index = json::parse(std::ifstream(tmp / "victim/index.json"));
    std::string manifest =
        tmp / ("victim/blobs/sha256/" + index["manifests"][0]["digest"].get<std::string>().substr(7));
    std::string digest = json::parse(std::ifstream(manifest))["config"]["digest"];
    config = json::parse(std::ifstream(tmp / ("victim/blobs/sha256/" + digest.substr(7))));
  }
  std::string victim_id = config["rootfs"]["diff_ids"][0];
  make("crafted", {{"layers", json::array({{{"claim_diff_id", victim_id},
                                            {"entries", json::array({{{"name", "evil"}, {"data", "e"}}})}}})}});
  std::string error;
  EXPECT_FALSE(open("crafted", &error));
  EXPECT_NE(error.find("its uncompressed content is sha256:"), std::string::npos) << error;
  EXPECT_NE(error.find(", not the diff_id " + victim_id + " the image names it by"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(tmp / ("cache/layers/sha256-" + victim_id.substr(7))));
  std::optional<image::OpenedImage> real = open("victim", &error);
  ASSERT_TRUE(real) << error;
  EXPECT_TRUE(fs::exists(real->root + "/victim"));
  EXPECT_FALSE(fs::exists(real->root + "/evil"));

  make("corrupt", {{"layers", json::array({{{"corrupt", true},
                                            {"compression", "none"},
                                            {"entries", json::array({{{"name", "c"}, {"data", "c"}}})}}})}});
  error.clear();
  EXPECT_FALSE(open("corrupt", &error));
  EXPECT_NE(error.find("its stored content is sha256:"), std::string::npos) << error;
  EXPECT_NE(error.find("the image is damaged or was altered, and nothing of it was cached"), std::string::npos)
      << error;

  make("config", {{"corrupt_config", true},
                  {"layers", json::array({{{"entries", json::array({{{"name", "k"}, {"data", "k"}}})}}})}});
  error.clear();
  EXPECT_FALSE(open("config", &error));
  EXPECT_NE(error.find("its content is sha256:"), std::string::npos) << error;
  EXPECT_NE(error.find("the image is damaged or was altered"), std::string::npos) << error;
}

// cuda-compat's rule in the toolkit's enable-cuda-compat hook, read from its source
// (cmd/nvidia-cdi-hook/cudacompat): with a .note.cuda.fwd_compatibility note, the host driver's
// branch must be listed and the library newer; without one (or with one the hook cannot read),
// the host branch must be older than the library's. The note is made as NVIDIA's libcuda carries
// it (an SHT_NOTE section, 4-byte aligned), which readelf confirms.
TEST(GpuContainerCompat, TheNoteDecidesWhereThereIsOneAndTheBranchElsewhere) {
  if (!have_tool("gcc") || !have_tool("objcopy") || !have_tool("readelf")) GTEST_SKIP() << "needs gcc and binutils";
  TempDir tmp;
  auto make_root = [&](const std::string& name, const std::string& file, const std::string& description) {
    std::string root = tmp / name, lib = root + "/usr/local/cuda/compat/" + file;
    build_shared(lib, "int cuInit(unsigned flags) { return (int)flags; }", "-Wl,-soname,libcuda.so.1", tmp);
    if (description.empty()) return root;
    std::string note;
    auto u32le = [&](u32 v) { note.append(reinterpret_cast<const char*>(&v), 4); };
    u32le(19);
    u32le(static_cast<u32>(description.size()));
    u32le(1);
    note += std::string("NVIDIA Corporation\0", 19) + std::string(1, '\0') + description;
    std::string bytes = tmp.write(name + ".note", note);
    // objcopy sets an added section's alignment only in a second run.
    EXPECT_EQ(run("objcopy --add-section .note.cuda.fwd_compatibility=" + quote(bytes) + " " + quote(lib) +
                  " && objcopy --set-section-alignment .note.cuda.fwd_compatibility=4 " + quote(lib))
                  .status,
              0);
    CommandResult sections = run("readelf -SW " + quote(lib));
    EXPECT_NE(sections.out.find(".note.cuda.fwd_compatibility NOTE"), std::string::npos) << sections.out;
    EXPECT_NE(sections.out.find(" 0   0  4\n"), std::string::npos) << sections.out;
    return root;
  };
  auto used = [&](const std::string& root, const std::string& driver) {
    loader::ObjectStore store(root);
    image::GpuContainerStart plan =
        image::plan_gpu_container_start(support::FileRoot(root), store, *cuda::DriverVersion::parse(driver));
    EXPECT_TRUE(plan.compat) << root;
    bool on = plan.compat && plan.compat->used;
    // Used means the hook's drop-in names the library's directory, ahead of the system's.
    EXPECT_EQ(plan.ldconfig.added_files.count("/etc/ld.so.conf.d/00-compat-envdoctor.conf") == 1, on);
    return on;
  };
  std::string plain = make_root("plain", "libcuda.so.575.57.08", "");
  if (HasFatalFailure()) return;
  EXPECT_TRUE(used(plain, "535.104.05"));
  EXPECT_TRUE(used(plain, "560.35.03"));
  EXPECT_FALSE(used(plain, "575.51.03"));  // the same branch: not older
  EXPECT_FALSE(used(plain, "580.65.06"));

  std::string noted = make_root("noted", "libcuda.so.575.57.08",
                                R"({"Format": 1, "CUDA Version": "12.9", "Driver": [535, 550], "Device": []})");
  if (HasFatalFailure()) return;
  EXPECT_TRUE(used(noted, "535.104.05"));
  EXPECT_TRUE(used(noted, "550.54.15"));
  EXPECT_FALSE(used(noted, "560.35.03"));  // older, but not a listed branch
  EXPECT_FALSE(used(noted, "580.65.06"));

  std::string same = make_root("same", "libcuda.so.575.57.08", R"({"driver": [575]})");  // Go folds the case
  if (HasFatalFailure()) return;
  EXPECT_TRUE(used(same, "575.51.03"));
  EXPECT_FALSE(used(same, "575.64.05"));  // listed, but not newer

  // A description the hook cannot unmarshal: its warning, then the branch rule.
  std::string broken = make_root("broken", "libcuda.so.575.57.08", R"({"Driver": ["535"]})");
  if (HasFatalFailure()) return;
  EXPECT_TRUE(used(broken, "560.35.03"));

  // Two libraries: "Unexpected number of CUDA compat libraries", nothing used.
  build_shared(plain + "/usr/local/cuda/compat/libcuda.so.570.124.06", "int cuInit(unsigned f) { return 0; }",
               "-Wl,-soname,libcuda.so.1", tmp);
  loader::ObjectStore store(plain);
  EXPECT_FALSE(
      image::plan_gpu_container_start(support::FileRoot(plain), store, *cuda::DriverVersion::parse("535.104.05"))
          .compat);
}

TEST(ImageReference, SaysWhatIsWrong) {
  TempDir tmp;
  std::string error;
  image::ImageOptions options;
  options.cache = tmp / "cache";
  EXPECT_FALSE(image::open_image(tmp / "nothing", options, &error));
  EXPECT_EQ(error, "--image " + (tmp / "nothing") + ": no such file or directory");
  fs::create_directories(tmp / "empty");
  EXPECT_FALSE(image::open_image(tmp / "empty", options, &error));
  EXPECT_EQ(error, "--image " + (tmp / "empty") + ": not an OCI image layout (no index.json)");
  tmp.write("layout/index.json", R"({"manifests": [{"digest": "sha256:../../etc/passwd"}]})");
  EXPECT_FALSE(image::open_image(tmp / "layout", options, &error));
  EXPECT_EQ(error,
            "--image " + (tmp / "layout") + ": " + (tmp / "layout") + ": a manifest descriptor without a valid digest");
  tmp.write("plain.txt", "hello");
  EXPECT_FALSE(image::open_image(tmp / "plain.txt", options, &error));
  EXPECT_NE(error.find("--image " + (tmp / "plain.txt") + ": "), std::string::npos) << error;
}

// Apptainer's environment scripts, read as the shell would run their top level.
TEST(SingularityEnvironment, ReadsTheAssignmentsApptainerWritesAndNothingItWouldHaveToRun) {
  image::Environment env;
  std::vector<std::string> skipped;
  image::apply_shell_environment("/.singularity.d/env/10-docker2singularity.sh",
                                 "#!/bin/sh\nexport PATH=\"/opt/venv/bin:/usr/bin\"\n"
                                 "export LD_LIBRARY_PATH=\"${LD_LIBRARY_PATH:-\"/opt/libs\"}\"\n"
                                 "export QUOTED=\"${QUOTED:-\"a \\\"b\\\" \\$c\"}\"\n",
                                 env, &skipped);
  image::apply_shell_environment("/.singularity.d/env/90-environment.sh",
                                 "A=1 B='two words'; export C=$A-${B}\nD=x cmd\nunset B\n"
                                 "if [ -z \"${E:-}\" ]; then\n  E=inside\nfi\n[ -n \"$A\" ] && F=cond\n"
                                 "f() {\n  G=function\n}\nH=$(uname)\nexport I=\"$HOME\" J=\"${A:+set}\"\n",
                                 env, &skipped);
  image::Environment expected = {{"PATH", "/opt/venv/bin:/usr/bin"},
                                 {"LD_LIBRARY_PATH", "/opt/libs"},
                                 {"QUOTED", "a \"b\" $c"},
                                 {"A", "1"},
                                 {"C", "1-two words"},
                                 {"I", ""},
                                 {"J", "set"}};
  EXPECT_EQ(env, expected);
  EXPECT_EQ(skipped, std::vector<std::string>{"/.singularity.d/env/90-environment.sh:11: H left out: a command "
                                              "substitution (not modelled)"});
}

TEST(ImageEnvironmentFile, ReadsAsEnrootWritesIt) {
  auto env = image::parse_environment_file("# comment\nPATH=/usr/bin:/bin\nexport CUDA_VERSION=\"12.4.1\"\n\nX\n");
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0], std::make_pair(std::string("PATH"), std::string("/usr/bin:/bin")));
  EXPECT_EQ(env[1], std::make_pair(std::string("CUDA_VERSION"), std::string("12.4.1")));
}

// libnvidia-container's src/cli/dsl.c, case by case.
TEST(ContainerRequirements, CompareVersionsAsDslDoes) {
  EXPECT_EQ(image::compare_versions("12.4", ">=", "12.4"), 1);
  EXPECT_EQ(image::compare_versions("12.4", ">=", "12.4.0"), 1);
  EXPECT_EQ(image::compare_versions("12.3", ">=", "12.4"), 0);
  EXPECT_EQ(image::compare_versions("470.57.02", "<", "471"), 1);
  EXPECT_EQ(image::compare_versions("470.57.02", ">=", "470"), 1);
  EXPECT_EQ(image::compare_versions("470", "=", "470.0"), 1);
  EXPECT_EQ(image::compare_versions("470.1", "=", "470"), 0);
  EXPECT_EQ(image::compare_versions("12.4", ">=", "12.x"), -1);
}

TEST(ContainerRequirements, AlternativesAndConditions) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"NVIDIA_REQUIRE_CUDA", "cuda>=12.4 brand=tesla,driver>=470,driver<471"}};
  image::NodeFacts node;
  node.driver = "535.54.03";
  node.cuda = "12.2";
  image::RequirementVerdict v = image::evaluate_requirements(env, node);
  EXPECT_TRUE(v.refused);
  EXPECT_EQ(v.failed_condition, "driver<471");
  node.devices = {{"8.0", std::string("geforce")}};
  node.driver = "470.57.02";
  node.cuda = "11.4";
  EXPECT_TRUE(image::evaluate_requirements(env, node).refused);  // brand=tesla fails on a GeForce
  node.devices = {{"8.0", std::string("Tesla")}};
  EXPECT_FALSE(image::evaluate_requirements(env, node).refused);  // brands compare without case
  // Legacy images: CUDA_VERSION alone requires its major.minor.
  node.cuda = "12.2";
  image::RequirementVerdict legacy = image::evaluate_requirements({{"CUDA_VERSION", "12.4.1"}}, node);
  EXPECT_TRUE(legacy.refused);
  EXPECT_EQ(legacy.requirement, "cuda>=12.4");
  EXPECT_FALSE(
      image::evaluate_requirements({{"CUDA_VERSION", "12.4.1"}, {"NVIDIA_DISABLE_REQUIRE", "1"}}, node).refused);
  EXPECT_EQ(image::evaluate_requirements({{"NVIDIA_REQUIRE_X", "cuda=>12"}}, node).message,
            "nvidia-container-cli: requirement error: invalid expression");
  EXPECT_FALSE(image::evaluate_requirements({{"NVIDIA_REQUIRE_JETPACK", "cuda>=99"}}, node).refused);
  // arch= compares the GPU's compute capability.
  EXPECT_TRUE(image::evaluate_requirements({{"NVIDIA_REQUIRE_ARCH", "arch>=9.0"}}, node).refused);
}

}  // namespace
}  // namespace envdoctor::test
