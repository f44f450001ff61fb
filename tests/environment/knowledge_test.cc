// data/sonames.json is read as untrusted input: a malformed field is the tool's error (exit 2)
// naming the file, the entry and the field, never an exception that ends the process.
#include "environment/knowledge.h"

#include <gtest/gtest.h>

#include "fixtures/fixture.h"

namespace envdoctor::environment {
namespace {

std::string load_error(const std::string& libraries) {
  test::TempDir tmp;
  tmp.write("sonames.json", R"({"schema": 1, "libraries": )" + libraries + "}");
  std::string error;
  EXPECT_FALSE(Knowledge::load(tmp.path().string(), &error));
  return error.substr(tmp.path().string().size() + 1);
}

TEST(Knowledge, ACudaMajorThatIsNotANumberNamesItsEntryAndField) {
  EXPECT_EQ(load_error(R"([{"soname": "a.so.1", "package": "a", "cuda": "12"},
                          {"soname": "b.so.1", "package": "b", "cuda": "1x"}])"),
            "sonames.json: libraries[1].cuda: \"1x\" is not a CUDA major");
  EXPECT_EQ(load_error(R"([{"soname": "b.so.1", "package": "b", "cuda": "99999999999"}])"),
            "sonames.json: libraries[0].cuda: \"99999999999\" is not a CUDA major");
}

TEST(Knowledge, AFieldOfTheWrongTypeIsAnError) {
  std::string error = load_error(R"([{"soname": 7, "package": "b"}])");
  EXPECT_EQ(error.rfind("sonames.json: ", 0), 0u) << error;
}

TEST(Knowledge, TheShippedTableLoads) {
  std::string error;
  auto k = Knowledge::load(std::string(ENVDOCTOR_SOURCE_DIR) + "/data", &error);
  ASSERT_TRUE(k) << error;
  EXPECT_EQ(k->cuda_major("libcudart.so.12"), 12);
}

// data/driver_libraries.json, the NVIDIA container toolkit's list: a name matches a prefix that it
// equals or that a version follows, as the toolkit matches ld.so.cache entries (nvc_info.c).
TEST(Knowledge, DriverLibrariesMatchByPrefixAndVersion) {
  std::string error;
  auto k = Knowledge::load(std::string(ENVDOCTOR_SOURCE_DIR) + "/data", &error);
  ASSERT_TRUE(k) << error;
  ASSERT_TRUE(k->driver_library("libcuda.so.1"));
  EXPECT_EQ(k->driver_library("libcuda.so.1")->capability, "compute");
  EXPECT_EQ(k->driver_library("libnvidia-ml.so.1")->capability, "utility");
  EXPECT_EQ(k->driver_library("libnvidia-ptxjitcompiler.so.1")->capability, "compute");
  EXPECT_EQ(k->driver_library("libnvcuvid.so.1")->capability, "video");
  EXPECT_TRUE(k->driver_library("libcuda.so"));
  EXPECT_TRUE(k->driver_library("libcuda.so.595.45.04"));
  EXPECT_TRUE(k->driver_library("libnvidia-pkcs11-openssl3.so.595.45.04"));
  EXPECT_FALSE(k->driver_library("libcudart.so.13"));  // the runtime comes with the toolkit or a wheel
  EXPECT_FALSE(k->driver_library("libcudadebugger_x.so.1"));
  EXPECT_FALSE(k->driver_library("libnvidia-ml.so-old"));
}

// data/plugins.json: a row names a file of one of its distributions by the last components of
// its path; a library of the same package that the table does not name keeps its errors.
TEST(Knowledge, PluginsMatchTheirPackagesFilesByTheirPathsLastComponents) {
  std::string error;
  auto k = Knowledge::load(std::string(ENVDOCTOR_SOURCE_DIR) + "/data", &error);
  ASSERT_TRUE(k) << error;
  struct Case {
    const char* package;
    const char* file;  // below site-packages
    bool plugin;
  };
  for (const Case& c :
       std::vector<Case>{{"nvidia-nvshmem-cu13", "nvidia/nvshmem/lib/nvshmem_bootstrap_mpi.so.3", true},
                         {"nvidia-nvshmem-cu13", "nvidia/nvshmem/lib/nvshmem_transport_ibgda.so.3", true},
                         {"nvidia-nvshmem-cu13", "nvidia/nvshmem/lib/libnvshmem_host.so.3", false},
                         {"somepkg", "nvidia/nvshmem/lib/nvshmem_bootstrap_mpi.so.3", false},
                         {"nvidia-cufile", "nvidia/cu13/lib/libcufile_rdma.so.1", true},
                         {"nvidia-cufile", "nvidia/cu13/lib/libcufile.so.0", false},
                         {"nvidia-cufile", "other/cu13/lib/libcufile_rdma.so.1", false},
                         {"bitsandbytes", "bitsandbytes/libbitsandbytes_cuda130.so", true},
                         {"bitsandbytes", "bitsandbytes/libbitsandbytes_rocm64.so", true},
                         {"bitsandbytes", "bitsandbytes/sub/libbitsandbytes_cuda130.so", false},
                         {"onnxruntime-gpu", "onnxruntime/capi/libonnxruntime_providers_tensorrt.so", true},
                         {"onnxruntime-gpu", "onnxruntime/capi/libonnxruntime_providers_cuda.so", false}})
    EXPECT_EQ(k->plugin(c.package, std::string("/v/lib/python3.11/site-packages/") + c.file) != nullptr, c.plugin)
        << c.package << " " << c.file;
}

}  // namespace
}  // namespace envdoctor::environment
