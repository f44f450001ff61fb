#include "image/gpu_container.h"

#include <elf.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cuda/driver.h"

namespace envdoctor::image {

namespace {

// The branches a `.note.cuda.fwd_compatibility` note lists ("Driver"), as the hook reads it
// (cuda-elf-header.go): a 12-byte note header, the name padded to the section's alignment, then
// the JSON description. nullopt when the library has no such note (or one the hook ignores).
std::optional<std::vector<int>> noted_driver_branches(const elf::ElfFile& elf) {
  for (const elf::Section& s : elf.sections()) {
    if (s.type != SHT_NOTE || s.name != ".note.cuda.fwd_compatibility") continue;
    Bytes all = elf.bytes();
    if (s.offset > all.size() || s.size > all.size() - s.offset || s.size < 12) return std::nullopt;
    const u8* p = all.data() + s.offset;
    u32 namesz, descsz;
    std::memcpy(&namesz, p, 4);
    std::memcpy(&descsz, p + 4, 4);
    if (namesz == 0 || descsz == 0) return std::nullopt;
    u64 name_end = 12 + ((u64{namesz} + 3) & ~u64{3});
    std::string name(reinterpret_cast<const char*>(p + 12), std::min<u64>(namesz, s.size - 12));
    name.erase(std::find(name.begin(), name.end(), '\0'), name.end());
    if (name != "NVIDIA Corporation" || name_end > s.size) return std::nullopt;
    std::string desc(reinterpret_cast<const char*>(p + name_end), std::min<u64>(descsz, s.size - name_end));
    desc.erase(std::find(desc.begin(), desc.end(), '\0'), desc.end());
    nlohmann::json j = nlohmann::json::parse(desc, nullptr, false);
    if (!j.is_object()) return std::nullopt;  // the hook warns and falls back to the file name's rule
    std::vector<int> branches;
    if (j.contains("Driver") && j["Driver"].is_array())
      for (const nlohmann::json& d : j["Driver"])
        if (d.is_number_integer()) branches.push_back(d.get<int>());
    return branches;
  }
  return std::nullopt;
}

std::optional<CompatLibcuda> find_compat(const support::FileRoot& root, loader::ObjectStore& store,
                                         const cuda::DriverVersion& host) {
  std::string dir = root.canonical("/usr/local/cuda/compat");
  std::string host_dir = root.host(dir);
  glob_t gl;
  std::vector<std::string> files;
  if (::glob((host_dir + "/libcuda.so.*.*").c_str(), 0, nullptr, &gl) == 0)
    for (size_t i = 0; i < gl.gl_pathc; ++i) {
      struct stat st;
      if (::stat(gl.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode))
        files.push_back(dir + std::string(std::strrchr(gl.gl_pathv[i], '/')));
    }
  ::globfree(&gl);
  if (files.size() != 1) return std::nullopt;  // none, or "Unexpected number of CUDA compat libraries"
  std::optional<cuda::DriverVersion> version = cuda::parse_libcuda_file_name(files[0]);
  if (!version) return std::nullopt;
  CompatLibcuda compat{files[0], *version, false, ""};
  std::shared_ptr<const loader::OpenResult> op = store.open(files[0]);
  std::optional<std::vector<int>> branches = op->elf ? noted_driver_branches(*op->elf) : std::nullopt;
  std::string host_text = "driver " + host.text;
  if (branches) {
    bool listed = std::find(branches->begin(), branches->end(), host.major) != branches->end();
    compat.used = listed && *version > host;
    compat.why = !listed ? "its note does not list the " + std::to_string(host.major) + " branch of " + host_text
                 : compat.used
                     ? "its note lists the " + std::to_string(host.major) + " branch, and it is newer than " + host_text
                     : "it is not newer than " + host_text;
  } else {
    compat.used = host.major < version->major;
    compat.why = compat.used ? host_text + "'s branch is older than " + std::to_string(version->major)
                             : host_text + "'s branch is not older than " + std::to_string(version->major);
  }
  return compat;
}

}  // namespace

GpuContainerStart plan_gpu_container_start(const support::FileRoot& root, loader::ObjectStore& store,
                                           const cuda::DriverVersion& host_driver) {
  GpuContainerStart plan;
  plan.compat = find_compat(root, store, host_driver);
  std::map<std::string, std::string>& added = plan.ldconfig.added_files;
  struct stat st;
  if (::stat(root.host("/etc/ld.so.conf").c_str(), &st) != 0)
    added["/etc/ld.so.conf"] = "include /etc/ld.so.conf.d/*.conf\n";
  if (plan.compat && plan.compat->used)
    added["/etc/ld.so.conf.d/00-compat-envdoctor.conf"] =
        plan.compat->path.substr(0, plan.compat->path.rfind('/')) + "\n";
  bool debian_like = ::stat(root.host("/etc/debian_version").c_str(), &st) == 0;
  added["/etc/ld.so.conf.d/zz-nvcr-envdoctor.conf"] =
      debian_like ? "/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n/lib\n/usr/lib\n"
                  : "/lib\n/usr/lib\n/lib64\n/usr/lib64\n/libx32\n/usr/libx32\n";
  return plan;
}

}  // namespace envdoctor::image
