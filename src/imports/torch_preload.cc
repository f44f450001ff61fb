#include "imports/torch_preload.h"

#include <cctype>
#include <regex>

namespace envdoctor::imports {

namespace {

using Library = TorchPreload::Library;

// The lists of torch/__init__.py's `cuda_libs`, in its order (docs/torch.md: a source per row).
std::vector<Library> list_2_0() {
  return {{"cublas", "libcublas.so.*[0-9]"},     {"cudnn", "libcudnn.so.*[0-9]"},
          {"cuda_nvrtc", "libnvrtc.so.*[0-9]"},  {"cuda_runtime", "libcudart.so.*[0-9]"},
          {"cuda_cupti", "libcupti.so.*[0-9]"},  {"cufft", "libcufft.so.*[0-9]"},
          {"curand", "libcurand.so.*[0-9]"},     {"cusolver", "libcusolver.so.*[0-9]"},
          {"cusparse", "libcusparse.so.*[0-9]"}, {"nccl", "libnccl.so.*[0-9]"},
          {"nvtx", "libnvToolsExt.so.*[0-9]"}};
}

void insert_before(std::vector<Library>& list, const char* folder, Library lib) {
  auto it = list.begin();
  while (it != list.end() && std::string(it->folder) != folder) ++it;
  list.insert(it, lib);
}

void insert_after(std::vector<Library>& list, const char* folder, Library lib) {
  auto it = list.begin();
  while (it != list.end() && std::string(it->folder) != folder) ++it;
  list.insert(it == list.end() ? it : it + 1, lib);
}

// pytorch#131295: nvJitLink, which cuSPARSE needs and finds through no RPATH.
std::vector<Library> list_2_5() {
  std::vector<Library> l = list_2_0();
  insert_before(l, "cusparse", {"nvjitlink", "libnvJitLink.so.*[0-9]"});
  return l;
}
// pytorch#144477: cuSPARSELt.
std::vector<Library> list_2_6() {
  std::vector<Library> l = list_2_5();
  insert_after(l, "cusparse", {"cusparselt", "libcusparseLt.so.*[0-9]"});
  return l;
}
// pytorch#148137: cuFile.
std::vector<Library> list_2_7() {
  std::vector<Library> l = list_2_6();
  insert_after(l, "curand", {"cufile", "libcufile.so.*[0-9]"});
  return l;
}
// pytorch#153010: NVSHMEM (taken off the 2.8 branch only, pytorch#158925).
std::vector<Library> list_2_9() {
  std::vector<Library> l = list_2_7();
  insert_after(l, "nccl", {"nvshmem", "libnvshmem_host.so.*[0-9]"});
  return l;
}
// pytorch#167614: NVRTC's builtins, which cuDNN opens by name.
std::vector<Library> list_2_10() {
  std::vector<Library> l = list_2_9();
  insert_after(l, "cuda_nvrtc", {"cuda_nvrtc", "libnvrtc-builtins.so.*[0-9]"});
  return l;
}
// The list as a list of pairs (cuBLASLt first, pytorch#174320), NVTX optional.
std::vector<Library> list_2_11() {
  return {{"cublas", "libcublasLt.so.*[0-9]"},
          {"cublas", "libcublas.so.*[0-9]"},
          {"cudnn", "libcudnn.so.*[0-9]"},
          {"cuda_nvrtc", "libnvrtc.so.*[0-9]"},
          {"cuda_nvrtc", "libnvrtc-builtins.so.*[0-9]"},
          {"cuda_runtime", "libcudart.so.*[0-9]"},
          {"cuda_cupti", "libcupti.so.*[0-9]"},
          {"cufft", "libcufft.so.*[0-9]"},
          {"curand", "libcurand.so.*[0-9]"},
          {"nvjitlink", "libnvJitLink.so.*[0-9]"},
          {"cusparse", "libcusparse.so.*[0-9]"},
          {"cusparselt", "libcusparseLt.so.*[0-9]"},
          {"cusolver", "libcusolver.so.*[0-9]"},
          {"nccl", "libnccl.so.*[0-9]"},
          {"nvshmem", "libnvshmem_host.so.*[0-9]"},
          {"cufile", "libcufile.so.*[0-9]"},
          {"nvtx", "libnvToolsExt.so.*[0-9]", false}};
}

// pytorch#141063, #145582, #145638: NVRTC then nvJitLink, after a wheel's libcudart loaded.
std::vector<Library> nvrtc_and_nvjitlink() {
  return {{"cuda_nvrtc", "libnvrtc.so.*[0-9]"}, {"nvjitlink", "libnvJitLink.so.*[0-9]"}};
}

std::vector<TorchPreload> releases() {
  using S = TorchPreload::Search;
  using W = TorchPreload::When;
  std::vector<TorchPreload> out;
  // 1.13.0 preloads nothing.
  out.push_back({"0", {}, S::kNvidia, W::kNever, {}, false});
  // pytorch#90411 (1.13.1): cuBLAS and cuDNN by their fixed names.
  out.push_back(
      {"1.13.1", {{"cublas", "libcublas.so.11"}, {"cudnn", "libcudnn.so.8"}}, S::kNvidia, W::kNever, {}, false});
  // pytorch#92122, #94355 (2.0): the table of patterns.
  out.push_back({"2.0", list_2_0(), S::kNvidia, W::kNever, {}, false});
  out.push_back({"2.5", list_2_5(), S::kNvidia, W::kNever, {}, false});
  out.push_back({"2.6", list_2_6(), S::kNvidiaThenFolder, W::kWheelCudart, nvrtc_and_nvjitlink(), false});
  // pytorch#149808 (2.7): each sys.path entry searched whether it has nvidia/ or not.
  out.push_back({"2.7", list_2_7(), S::kNvidiaOrFolder, W::kWheelCudart, nvrtc_and_nvjitlink(), false});
  out.push_back({"2.8", list_2_7(), S::kNvidiaOrFolder, W::kWheelCudart, nvrtc_and_nvjitlink(), false});
  // pytorch#163661 (2.9): CUDA 13's wheels keep their libraries in nvidia/cu13/lib.
  out.push_back({"2.9", list_2_9(), S::kNvidiaCudaOrFolder, W::kWheelCudart, nvrtc_and_nvjitlink(), false});
  // pytorch#167046 (2.10): the whole list after any libcudart.
  out.push_back({"2.10", list_2_10(), S::kNvidiaCudaOrFolder, W::kAnyCudart, list_2_10(), false});
  out.push_back({"2.11", list_2_11(), S::kNvidiaCudaOrFolder, W::kAnyCudart, list_2_11(), false});
  // pytorch#186450 (2.13): the opportunistic preload takes each library on its own.
  out.push_back({"2.13", list_2_11(), S::kNvidiaCudaOrFolder, W::kAnyCudart, list_2_11(), true});
  return out;
}

}  // namespace

std::optional<TorchPreload> torch_preload_for(const std::string& version) {
  std::optional<python::Version> v = python::Version::parse(version);
  if (!v) return std::nullopt;
  python::Version release = v->public_version();
  // A pre-release of X.Y behaves as X.Y's branch: 2.10.0.dev20251201 already has 2.10's code.
  release.pre_kind = 0;
  release.pre = 0;
  release.dev.reset();
  // Built once: every import of torch in every context asks.
  static const std::vector<std::pair<python::Version, TorchPreload>> kTable = [] {
    std::vector<std::pair<python::Version, TorchPreload>> out;
    for (TorchPreload& r : releases()) out.emplace_back(*python::Version::parse(r.since), std::move(r));
    return out;
  }();
  const TorchPreload* found = nullptr;
  for (const auto& [since, r] : kTable)
    if (python::compare(release, since) >= 0) found = &r;
  return found ? std::optional<TorchPreload>(*found) : std::nullopt;
}

std::optional<int> torch_cuda_major(const std::string& version_py) {
  // torch/version.py, written by its build: `cuda: Optional[str] = '12.8'` (or `cuda = None`).
  static const std::regex kCuda(R"re((?:^|\n)cuda\s*(?::[^=\n]*)?=\s*['"](\d+)\.)re");
  std::smatch m;
  if (!std::regex_search(version_py, m, kCuda)) return std::nullopt;
  return std::stoi(m[1].str());
}

bool names_a_preloaded_library(const TorchPreload& preload, const std::string& error_text) {
  for (const Library& lib : preload.libraries) {
    std::string stem(lib.pattern);
    stem = stem.substr(0, stem.find('.'));
    if (error_text.find(stem) != std::string::npos) return true;
  }
  return false;
}

}  // namespace envdoctor::imports
