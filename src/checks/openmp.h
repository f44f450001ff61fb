// openmp-runtime-mix: more than one OpenMP runtime reachable in one process.
//
// Each OpenMP runtime keeps its own thread pool and its own idea of omp_get_max_threads(); two in
// one process oversubscribe the cores, and mixing GNU's libgomp with LLVM's libomp or Intel's
// libiomp5 is a known cause of hangs and of "OMP: Error #15: Initializing libiomp5.so, but found
// libomp.so already initialized". Wheels vendor their runtime under auditwheel's hashed names
// (libgomp-a34b3233.so.1), so a runtime is recognised by its SONAME (lib[g|i]omp...) and by the
// entry points it defines, never by its file name: GOMP_parallel for GNU's, __kmpc_fork_call for
// LLVM's and Intel's (which define GOMP_* too, for compatibility), and omp_get_num_threads for all.
//
// Only runtimes that some object of the environment actually loads (the load checks'
// resolutions) count: a copy nobody needs cannot end up in a process.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "checks/load_checks.h"
#include "environment/environment.h"

namespace envdoctor::checks {

// "GNU libgomp", "LLVM libomp" or "Intel libiomp5" when `file` is an OpenMP runtime.
std::optional<std::string> openmp_runtime(const elf::ElfFile& file);

// One runtime that meets others in a process: its file, SONAME, kind, who owns it ("vendpkg 2.0",
// "no package"; "" when no environment is known) and who loads it (packages; may be empty).
struct OpenmpRuntime {
  std::string path, soname, kind, owner;
  std::set<std::string> users;
  std::string package;  // the owning distribution's name, "" for none
};

// The openmp-runtime-mix finding for runtimes (distinct files) that meet in one process, `where`
// they do: "can load into one process" (check) or "are loaded in process 42" (ps). nullopt for
// fewer than two. The one verdict check and ps share.
std::optional<Finding> openmp_runtime_mix(const std::vector<OpenmpRuntime>& runtimes, const std::string& where);

std::vector<Finding> check_openmp_runtimes(const Context& ctx, const ResolutionMap& resolutions);

}  // namespace envdoctor::checks
