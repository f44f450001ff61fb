#include "cuda/driver.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "cuda/arch.h"
#include "support/subprocess.h"

namespace envdoctor::cuda {

namespace fs = std::filesystem;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// NVML, loaded at run time so that envdoctor needs no NVIDIA package to build or run. Signatures
// from nvml.h; NVML_SUCCESS is 0.
class Nvml {
 public:
  explicit Nvml(const std::string& library) {
    if (library.empty()) return;
    handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) return;
    init_ = sym<int (*)()>("nvmlInit_v2");
    shutdown_ = sym<int (*)()>("nvmlShutdown");
    driver_version_ = sym<int (*)(char*, unsigned)>("nvmlSystemGetDriverVersion");
    cuda_version_ = sym<int (*)(int*)>("nvmlSystemGetCudaDriverVersion_v2");
    count_ = sym<int (*)(unsigned*)>("nvmlDeviceGetCount_v2");
    handle_by_index_ = sym<int (*)(unsigned, void**)>("nvmlDeviceGetHandleByIndex_v2");
    name_ = sym<int (*)(void*, char*, unsigned)>("nvmlDeviceGetName");
    capability_ = sym<int (*)(void*, int*, int*)>("nvmlDeviceGetCudaComputeCapability");
    initialized_ = init_ && shutdown_ && init_() == 0;
  }
  ~Nvml() {
    if (initialized_) shutdown_();
    if (handle_) dlclose(handle_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ok() const { return initialized_; }

  std::optional<DriverVersion> driver_version() const {
    char buf[96] = {};
    if (!driver_version_ || driver_version_(buf, sizeof buf) != 0) return std::nullopt;
    return DriverVersion::parse(trim(buf));
  }

  std::optional<MajorMinor> cuda_version() const {
    int v = 0;
    if (!cuda_version_ || cuda_version_(&v) != 0 || v < 1000) return std::nullopt;
    return MajorMinor{v / 1000, (v % 1000) / 10};
  }

  std::vector<Gpu> gpus() const {
    std::vector<Gpu> out;
    unsigned n = 0;
    if (!count_ || !handle_by_index_ || !name_ || !capability_ || count_(&n) != 0) return out;
    for (unsigned i = 0; i < n && i < 1024; ++i) {
      void* dev = nullptr;
      char name[256] = {};
      int major = 0, minor = 0;
      if (handle_by_index_(i, &dev) != 0) continue;
      if (name_(dev, name, sizeof name - 1) != 0) name[0] = 0;
      if (capability_(dev, &major, &minor) != 0) continue;
      out.push_back({name, major * 10 + minor});
    }
    return out;
  }

 private:
  template <typename F>
  F sym(const char* name) {
    return reinterpret_cast<F>(dlsym(handle_, name));
  }

  void* handle_ = nullptr;
  bool initialized_ = false;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*driver_version_)(char*, unsigned) = nullptr;
  int (*cuda_version_)(int*) = nullptr;
  int (*count_)(unsigned*) = nullptr;
  int (*handle_by_index_)(unsigned, void**) = nullptr;
  int (*name_)(void*, char*, unsigned) = nullptr;
  int (*capability_)(void*, int*, int*) = nullptr;
};

// libcuda.so.1 in the first directory that has it, with the version its real name carries.
std::optional<std::pair<DriverVersion, std::string>> libcuda_version(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    fs::path link = fs::path(dir) / "libcuda.so.1";
    std::error_code ec;
    if (!fs::exists(link, ec)) continue;
    fs::path real = fs::canonical(link, ec);
    if (ec) continue;
    if (std::optional<DriverVersion> v = parse_libcuda_file_name(real.filename().string()))
      return std::pair(*v, real.string());
  }
  return std::nullopt;
}

void note_version(DriverInfo& info, const std::optional<DriverVersion>& v, const std::string& source) {
  if (!v) return;
  if (!info.version) {
    info.version = v;
    info.version_source = source;
  } else if (*info.version != *v) {
    info.problems.push_back(source + " says driver " + v->text + " but " + info.version_source + " says " +
                            info.version->text + ": CUDA calls fail with \"Driver/library version mismatch\"");
  }
}

}  // namespace

std::optional<DriverVersion> parse_proc_driver_version(std::string_view text) {
  // The kernel module prints "NVRM version: NVIDIA UNIX <arch> Kernel Module  <version>  <date>"
  // (the open modules: "NVIDIA UNIX Open Kernel Module for <arch>  <version>  Release Build ...").
  size_t at = text.find("Kernel Module");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at);
  rest = rest.substr(0, rest.find('\n'));
  while (!rest.empty()) {
    size_t start = rest.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    size_t end = rest.find_first_of(" \t");
    std::string_view word = rest.substr(0, end);
    if (word.find('.') != std::string_view::npos)
      if (std::optional<DriverVersion> v = DriverVersion::parse(word)) return v;
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end);
  }
  return std::nullopt;
}

std::optional<DriverVersion> parse_libcuda_file_name(std::string_view name) {
  size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  constexpr std::string_view kPrefix = "libcuda.so.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view version = name.substr(kPrefix.size());
  // libcuda.so.1 is the SONAME link, not a version.
  if (version.find('.') == std::string_view::npos) return std::nullopt;
  return DriverVersion::parse(version);
}

std::vector<Gpu> parse_nvidia_smi_gpus(std::string_view text, std::vector<std::string>* problems) {
  std::vector<Gpu> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    // The name comes first and may itself hold a comma; the capability is the last field.
    size_t comma = line.rfind(',');
    std::optional<int> sm;
    if (comma != std::string_view::npos) sm = parse_compute_capability(trim(line.substr(comma + 1)));
    if (!sm) {
      if (problems) problems->push_back("nvidia-smi: cannot read GPU line \"" + std::string(line) + "\"");
      continue;
    }
    out.push_back({std::string(trim(line.substr(0, comma))), *sm});
  }
  return out;
}

DriverInfo detect_driver(const DriverProbe& probe) {
  DriverInfo info;
  if (!probe.proc_version.empty())
    if (std::optional<std::string> text = read_text(probe.proc_version))
      note_version(info, parse_proc_driver_version(*text), probe.proc_version);

  Nvml nvml(probe.nvml_library);
  if (nvml.ok()) {
    note_version(info, nvml.driver_version(), "NVML");
    info.cuda = nvml.cuda_version();
    info.gpus = nvml.gpus();
    info.gpus_source = "NVML";
  }

  if (auto lib = libcuda_version(probe.libcuda_dirs)) note_version(info, lib->first, lib->second);

  if (info.gpus_source.empty() && !probe.nvidia_smi.empty()) {
    if (std::optional<std::string> smi = support::find_program(probe.nvidia_smi)) {
      // A wedged driver can hang nvidia-smi; it gets the time NHC gives a whole check.
      std::string error;
      auto run = support::run_process({*smi, "--query-gpu=name,compute_cap", "--format=csv,noheader"},
                                      std::chrono::seconds(5), 1 << 20, &error);
      if (!run) {
        info.problems.push_back("nvidia-smi: " + error);
      } else if (run->status != 0) {
        std::string_view said = trim(run->out.empty() ? run->err : run->out);
        said = said.substr(0, said.find('\n'));
        info.problems.push_back("nvidia-smi exited with status " + std::to_string(run->status) +
                                (said.empty() ? "" : ": " + std::string(said)));
      } else {
        info.gpus = parse_nvidia_smi_gpus(run->out, &info.problems);
        info.gpus_source = "nvidia-smi";
      }
    }
  }
  return info;
}

}  // namespace envdoctor::cuda
