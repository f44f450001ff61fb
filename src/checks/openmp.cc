#include "checks/openmp.h"

#include <filesystem>
#include <map>
#include <set>

#include "loader/symbols.h"

namespace envdoctor::checks {

using environment::Environment;

namespace fs = std::filesystem;

namespace {

bool defines_symbol(const elf::ElfFile& file, std::string_view name) {
  std::vector<u32> scratch;
  return loader::defines(file, elf::SymbolKey(name), std::nullopt, scratch);
}

// The packages whose files load `path`, or "no package" for consumers nobody owns.
std::set<std::string> consumer_packages(const Environment& env, const std::set<std::string>& consumers) {
  std::set<std::string> out;
  for (const std::string& c : consumers) {
    const python::Distribution* d = env.owner(c);
    out.insert(d ? d->name : fs::path(c).filename().string());
  }
  return out;
}

}  // namespace

std::optional<std::string> openmp_runtime(const elf::ElfFile& file) {
  if (!file.soname) return std::nullopt;
  std::string_view soname = *file.soname;
  bool named = soname.starts_with("libgomp") || soname.starts_with("libiomp") || soname.starts_with("libomp");
  if (!named || !defines_symbol(file, "omp_get_num_threads")) return std::nullopt;
  if (defines_symbol(file, "__kmpc_fork_call")) return soname.starts_with("libiomp") ? "Intel libiomp5" : "LLVM libomp";
  if (defines_symbol(file, "GOMP_parallel") || defines_symbol(file, "GOMP_parallel_start")) return "GNU libgomp";
  return std::nullopt;
}

std::optional<Finding> openmp_runtime_mix(const std::vector<OpenmpRuntime>& runtimes, const std::string& where) {
  if (runtimes.size() < 2) return std::nullopt;
  Finding f;
  f.code = Code::kOpenmpRuntimeMix;
  f.severity = Severity::kWarning;
  f.file = runtimes.front().path;
  f.library = runtimes.front().soname;
  if (!runtimes.front().package.empty()) f.package = runtimes.front().package;
  std::string list;
  std::set<std::string> kinds;
  for (const OpenmpRuntime& r : runtimes) {
    kinds.insert(r.kind);
    std::string users;
    for (const std::string& u : r.users) users += (users.empty() ? "" : ", ") + u;
    list += (list.empty() ? "" : "; ") + r.soname + " (" + r.kind + ", " + r.path +
            (r.owner.empty() ? "" : ", " + r.owner) + ")" + (users.empty() ? "" : " loaded by " + users);
    if (!r.package.empty()) f.packages.push_back(r.package);
  }
  f.message = std::to_string(runtimes.size()) + " OpenMP runtimes " + where + ": " + list;
  f.hint = kinds.size() > 1
               ? "GNU and LLVM/Intel OpenMP runtimes in one process are known to hang or abort (OMP: Error #15); "
                 "use builds of these packages made with one OpenMP runtime, or import only one of them per process"
               : "each runtime keeps its own thread pool, so together they oversubscribe the cores: set "
                 "OMP_NUM_THREADS, or use builds of these packages that share one runtime";
  return f;
}

std::vector<Finding> check_openmp_runtimes(const Context& ctx, const ResolutionMap& resolutions) {
  const Environment& env = ctx.env;
  // Runtimes by file identity: one file reached by two paths is one runtime.
  std::map<std::pair<dev_t, ino_t>, OpenmpRuntime> runtimes;
  for (const auto& [soname, by_path] : resolutions) {
    if (!(soname.starts_with("libgomp") || soname.starts_with("libiomp") || soname.starts_with("libomp"))) continue;
    for (const auto& [path, consumers] : by_path) {
      std::shared_ptr<const loader::OpenResult> opened = env.store->open(path);
      if (opened->status != loader::OpenResult::Status::kOk) continue;
      std::optional<std::string> kind = openmp_runtime(*opened->elf);
      if (!kind) continue;
      OpenmpRuntime& r = runtimes[{opened->id.dev, opened->id.ino}];
      if (r.path.empty()) {
        const python::Distribution* d = env.owner(path);
        r = OpenmpRuntime{path, soname, *kind, env.owner_label(path), {}, d ? d->name : ""};
      }
      std::set<std::string> users = consumer_packages(env, consumers);
      r.users.insert(users.begin(), users.end());
    }
  }
  std::vector<OpenmpRuntime> list;
  for (auto& [id, r] : runtimes) list.push_back(std::move(r));
  std::optional<Finding> f = openmp_runtime_mix(list, "can load into one process");
  if (!f) return {};
  return {*f};
}

}  // namespace envdoctor::checks
