#include "image/gpu_container.h"

#include <elf.h>
#include <glob.h>
#include <strings.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "cuda/driver.h"

namespace envdoctor::image {

namespace {

// cuda-elf-header.go's trim(): data[from, from + n), both clamped to the data, NULs trimmed
// from both ends.
std::string trimmed(std::string_view data, u64 from, u64 n) {
  if (data.empty()) return "";
  from = std::min<u64>(data.size() - 1, from);
  std::string_view v = data.substr(from, std::min<u64>(data.size(), from + n) - from);
  while (!v.empty() && v.front() == '\0') v.remove_prefix(1);
  while (!v.empty() && v.back() == '\0') v.remove_suffix(1);
  return std::string(v);
}

// The member Go's json.Unmarshal puts in the struct field `name`: the key spelled so, else one
// equal to it but for case (encoding/json matches field names case-insensitively).
const nlohmann::json* field(const nlohmann::json& j, std::string_view name) {
  if (auto it = j.find(name); it != j.end()) return &*it;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key().size() == name.size() && ::strncasecmp(it.key().c_str(), name.data(), name.size()) == 0) return &*it;
  return nullptr;
}

// Whether that member, when present and not null, fits the field's type; a mismatch fails the
// whole unmarshalling.
bool field_fits(const nlohmann::json& j, const char* key, bool (*fits)(const nlohmann::json&)) {
  const nlohmann::json* v = field(j, key);
  return !v || v->is_null() || fits(*v);
}
bool int_list(const nlohmann::json& v) {
  return v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_number_integer(); });
}

// The branches a `.note.cuda.fwd_compatibility` note lists ("Driver"), as the hook reads it
// (cuda-elf-header.go): the first SHT_NOTE section of that name; a 12-byte note header; the name
// over alignUp(namesz, the section's alignment), which must be "NVIDIA Corporation"; then the
// description, JSON of Format, "CUDA Version", Driver and Device. nullopt when the hook finds no
// header there (no note, another name, a description that does not unmarshal): it then applies
// the file name's rule.
std::optional<std::vector<int>> noted_driver_branches(const elf::ElfFile& elf) {
  for (const elf::Section& s : elf.sections()) {
    if (s.type != SHT_NOTE || s.name != ".note.cuda.fwd_compatibility") continue;
    Bytes all = elf.bytes();
    if (s.offset > all.size() || s.size > all.size() - s.offset || s.size < 12) return std::nullopt;
    std::string_view data(reinterpret_cast<const char*>(all.data() + s.offset), s.size);
    u32 namesz, descsz;
    std::memcpy(&namesz, data.data(), 4);
    std::memcpy(&descsz, data.data() + 4, 4);
    if (namesz == 0 || descsz == 0) return std::nullopt;
    // alignUp in the note's 32-bit arithmetic: (size + to - 1) &^ (to - 1).
    u32 to = static_cast<u32>(s.addralign);
    u32 padded = (namesz + to - 1) & ~(to - 1);
    if (trimmed(data, 12, padded) != "NVIDIA Corporation") return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(trimmed(data, u64{12} + padded, descsz), nullptr, false);
    if (!j.is_object() || !field_fits(j, "Driver", int_list) || !field_fits(j, "Device", int_list) ||
        !field_fits(j, "Format", [](const nlohmann::json& v) { return v.is_number_integer(); }) ||
        !field_fits(j, "CUDA Version", [](const nlohmann::json& v) { return v.is_string(); }))
      return std::nullopt;  // "failed to get ELF header from CUDA compat library"
    std::vector<int> branches;
    if (const nlohmann::json* drivers = field(j, "Driver"); drivers && drivers->is_array())
      for (const nlohmann::json& d : *drivers) branches.push_back(d.get<int>());
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

bool DriverCapabilities::has(const std::string& capability) const {
  return all || std::find(names.begin(), names.end(), capability) != names.end();
}

DriverCapabilities driver_capabilities(const ImageFacts& image) {
  DriverCapabilities caps;
  std::optional<std::string> set = image.env_value("NVIDIA_DRIVER_CAPABILITIES");
  std::set<std::string> names;
  if (set && !set->empty()) {
    caps.source = "NVIDIA_DRIVER_CAPABILITIES=" + *set;
    std::string_view rest = *set;
    while (true) {  // strings.Split on ',', each trimmed
      size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
      while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
      if (item == "all") caps.all = true;
      if (!item.empty()) names.insert(std::string(item));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
  } else if (!set && !image.env_value("CUDA_VERSION").value_or("").empty() &&
             image.env_value("NVIDIA_REQUIRE_CUDA").value_or("").empty()) {
    caps.all = true;
    caps.source = "NVIDIA_DRIVER_CAPABILITIES unset in a legacy image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA)";
  } else {
    names = {"compute", "utility"};
    caps.source =
        std::string("NVIDIA_DRIVER_CAPABILITIES ") + (set ? "empty" : "unset") + ": the default utility,compute";
  }
  if (!caps.all) caps.names.assign(names.begin(), names.end());
  return caps;
}

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
