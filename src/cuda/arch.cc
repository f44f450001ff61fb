#include "cuda/arch.h"

#include <charconv>

#include <algorithm>
#include <set>

namespace envdoctor::cuda {

namespace {

int major_of(int sm) { return sm / 10; }
int minor_of(int sm) { return sm % 10; }

// Same major, equal or higher minor: the binary-compatibility rule.
bool same_major_not_older(int sm, int gpu_sm) {
  return major_of(sm) == major_of(gpu_sm) && minor_of(gpu_sm) >= minor_of(sm);
}

// The GPUs an `f` build runs on, from NVIDIA's family table (Programming Guide table 28; the
// CUDA 12.9 blog: "runs on same major CC with equal or higher minor CC, within the family").
// sm and gpu_sm are already in the current numbering. A family the table lacks is trusted on its
// own GPU alone.
bool in_family(const CudaTables& tables, int sm, int gpu_sm) {
  if (const std::vector<int>* runs_on = tables.family(sm))
    return std::find(runs_on->begin(), runs_on->end(), gpu_sm) != runs_on->end();
  return sm == gpu_sm;
}

bool loadable(const FatbinEntry& e) {
  return !e.relocatable && (e.kind == FatbinEntry::Kind::kSass || e.kind == FatbinEntry::Kind::kPtx);
}

// Whether the driver can JIT this PTX: nullopt when that cannot be told (ISA beyond the table).
std::optional<bool> driver_can_jit(const FatbinEntry& e, const std::optional<DriverVersion>& driver,
                                   const CudaTables& tables) {
  if (!driver) return true;
  std::optional<DriverVersion> need = tables.driver_for_ptx_isa({e.ptx_isa_major, e.ptx_isa_minor});
  if (need) return *driver >= *need;
  // An ISA newer than the table: it needs at least the newest driver the table knows, so an older
  // driver certainly cannot JIT it; a newer one may.
  std::optional<DriverVersion> newest = tables.newest_driver();
  if (newest && *driver < *newest) return false;
  return std::nullopt;
}

std::string names(const std::vector<FatbinEntry>& entries) {
  std::set<std::string> seen;
  std::string out;
  for (const FatbinEntry& e : entries) {
    std::string n = e.arch_name();
    if (!seen.insert(n).second) continue;
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string ptx_isa_name(const FatbinEntry& e) {
  return std::to_string(e.ptx_isa_major) + "." + std::to_string(e.ptx_isa_minor);
}

// Which loadable entries of each module run; counts the modules with none.
void count_modules(const FatbinInfo& info, int gpu_sm, const std::optional<DriverVersion>& driver,
                   const CudaTables& tables, Coverage& c) {
  std::set<u32> modules, covered;
  for (const FatbinEntry& e : info.entries) {
    if (!loadable(e)) continue;
    modules.insert(e.container);
    bool runs = e.kind == FatbinEntry::Kind::kSass ? sass_runs_on(tables, e.sm, e.variant, gpu_sm)
                                                   : ptx_compiles_for(tables, e.sm, e.variant, gpu_sm) &&
                                                         driver_can_jit(e, driver, tables).value_or(true);
    if (runs) covered.insert(e.container);
  }
  c.modules = static_cast<u32>(modules.size());
  c.modules_without_code = static_cast<u32>(modules.size() - covered.size());
}

}  // namespace

// The integrated GPUs of NVIDIA's Tegra/Jetson line: TX1 5.3, TX2 6.2, Xavier 7.2, Orin 8.7, Thor
// (10.1 before CUDA 13, 11.0 since).
bool is_tegra(int sm) { return sm == 53 || sm == 62 || sm == 72 || sm == 87 || sm == 101 || sm == 110; }

bool sass_runs_on(const CudaTables& tables, int sm, char variant, int gpu_sm) {
  sm = tables.current_sm(sm);
  gpu_sm = tables.current_sm(gpu_sm);
  if (variant == 'a') return sm == gpu_sm;
  if (variant == 'f') return in_family(tables, sm, gpu_sm);
  // The programming guide's binary compatibility (X.y runs on X.z, z >= y) holds for desktop GPUs
  // only: not on Tegra, and not between desktop and Tegra.
  if (is_tegra(sm) || is_tegra(gpu_sm)) return sm == gpu_sm;
  return same_major_not_older(sm, gpu_sm);
}

bool ptx_compiles_for(const CudaTables& tables, int sm, char variant, int gpu_sm) {
  sm = tables.current_sm(sm);
  gpu_sm = tables.current_sm(gpu_sm);
  if (variant == 'a') return sm == gpu_sm;
  if (variant == 'f') return in_family(tables, sm, gpu_sm);
  return gpu_sm >= sm;
}

std::optional<int> parse_compute_capability(std::string_view cc) {
  std::optional<MajorMinor> v = MajorMinor::parse(cc);
  if (!v || cc.find('.') == std::string_view::npos || v->minor > 9 || v->major > 99 || v->major < 1)
    return std::nullopt;
  return v->major * 10 + v->minor;
}

std::string compute_capability_name(int sm) {
  return std::to_string(major_of(sm)) + "." + std::to_string(minor_of(sm));
}

const char* coverage_kind_name(Coverage::Kind kind) {
  switch (kind) {
    case Coverage::Kind::kSass: return "sass";
    case Coverage::Kind::kPtxJit: return "ptx-jit";
    case Coverage::Kind::kUnsupported: return "unsupported";
    case Coverage::Kind::kNoDeviceCode: return "none";
    case Coverage::Kind::kUnknown: return "unknown";
  }
  return "none";
}

Coverage classify(const FatbinInfo& info, int gpu_sm, std::optional<DriverVersion> driver, const CudaTables& tables) {
  Coverage c;
  std::string gpu = compute_capability_name(gpu_sm);
  if (tables.gpu_beyond_table(gpu_sm)) {
    c.kind = Coverage::Kind::kUnknown;
    c.reason = gpu + " is newer than the architectures this envdoctor knows (up to " +
               compute_capability_name(tables.newest_sm()) + ")";
    return c;
  }
  count_modules(info, gpu_sm, driver, tables, c);

  std::vector<FatbinEntry> sass_sure, sass_maybe, sass_all, ptx_all, ptx_fit_arch, ptx_ok, ptx_unknown;
  for (const FatbinEntry& e : info.entries) {
    if (!loadable(e)) continue;
    if (e.kind == FatbinEntry::Kind::kSass) {
      sass_all.push_back(e);
      if (!sass_runs_on(tables, e.sm, e.variant, gpu_sm)) continue;
      // An unflagged compressed cubin might be an `a` build, which runs only on its own GPU.
      bool sure = e.variant_known || e.sm == gpu_sm;
      (sure ? sass_sure : sass_maybe).push_back(e);
      continue;
    }
    ptx_all.push_back(e);
    if (!ptx_compiles_for(tables, e.sm, e.variant, gpu_sm)) continue;
    ptx_fit_arch.push_back(e);
    std::optional<bool> jit = driver_can_jit(e, driver, tables);
    if (!jit) ptx_unknown.push_back(e);
    else if (*jit) ptx_ok.push_back(e);
  }

  if (!sass_sure.empty() || !sass_maybe.empty()) {
    c.kind = Coverage::Kind::kSass;
    c.variant_uncertain = sass_sure.empty();
    c.deciding = sass_sure.empty() ? sass_maybe : sass_sure;
    c.reason = "SASS " + names(c.deciding) + " runs on " + gpu;
    if (c.variant_uncertain) c.reason += " unless it is an arch-specific (a) build, which the compressed image hides";
    return c;
  }
  if (!ptx_ok.empty() || !ptx_unknown.empty()) {
    c.kind = Coverage::Kind::kPtxJit;
    c.ptx_isa_unknown = ptx_ok.empty();
    c.deciding = ptx_ok.empty() ? ptx_unknown : ptx_ok;
    c.reason = "no SASS for " + gpu + "; PTX " + names(c.deciding) + " is JIT-compiled on first use";
    if (c.ptx_isa_unknown)
      c.reason += " (PTX ISA " + ptx_isa_name(c.deciding.front()) + " is newer than the known table)";
    return c;
  }
  if (sass_all.empty() && ptx_all.empty()) {
    c.kind = Coverage::Kind::kNoDeviceCode;
    c.reason = "no GPU code";
    return c;
  }
  c.kind = Coverage::Kind::kUnsupported;
  c.reason = "no SASS for " + gpu;
  if (!sass_all.empty()) c.reason += " (has " + names(sass_all) + ")";
  if (!ptx_fit_arch.empty()) {
    // The PTX fits the GPU but the driver is older than the ISA it was written in.
    c.deciding = ptx_fit_arch;
    const FatbinEntry& e = ptx_fit_arch.front();
    std::optional<DriverVersion> need = tables.driver_for_ptx_isa({e.ptx_isa_major, e.ptx_isa_minor});
    // Past the table only a lower bound is known: newer than every driver the table names.
    std::string needs = need ? "needs driver " + need->text + " or newer"
                             : "needs a driver newer than " + tables.newest_driver().value_or(DriverVersion{}).text;
    c.reason += "; PTX " + names(ptx_fit_arch) + " is ISA " + ptx_isa_name(e) + ", which " + needs +
                ", and the driver is " + driver->text;
  } else if (!ptx_all.empty()) {
    c.reason += " and no PTX it can JIT (has " + names(ptx_all) + ")";
  } else {
    c.reason += " and no PTX";
  }
  return c;
}

std::optional<int> parse_gpu_arch(std::string_view text) {
  for (std::string_view prefix : {"sm_", "compute_"})
    if (text.substr(0, prefix.size()) == prefix) {
      text.remove_prefix(prefix.size());
      break;
    }
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) text.remove_suffix(1);
  if (text.find('.') != std::string_view::npos) return parse_compute_capability(text);
  int sm = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), sm);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || sm < 10 || sm > 999) return std::nullopt;
  return sm;
}

bool gpu_arch_possible(const CudaTables& tables, int sm, std::string* why) {
  // Compute capabilities before Turing, from the CUDA Programming Guide's table of features per
  // compute capability (the 10.x and 11.x editions, which still listed them).
  static constexpr int kOlder[] = {10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72};
  int current = tables.current_sm(sm);
  int newest = tables.newest_sm();
  bool listed = std::any_of(tables.architectures.begin(), tables.architectures.end(),
                            [&](const Architecture& a) { return a.sm == current; });
  bool older = std::find(std::begin(kOlder), std::end(kOlder), sm) != std::end(kOlder);
  int oldest = tables.architectures.empty() ? 0 : tables.architectures.front().sm;
  if (listed || older || (sm > oldest && sm / 10 <= newest / 10 + 2)) return true;
  if (why) {
    *why = "compute capability " + compute_capability_name(sm) +
           (sm > newest ? " is beyond any GPU: the newest this envdoctor knows is " + compute_capability_name(newest)
                        : " is not a GPU NVIDIA has made");
  }
  return false;
}

}  // namespace envdoctor::cuda
