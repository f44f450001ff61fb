#include "advice/load_failure.h"

namespace envdoctor::advice {

LoadFailure load_failure(const loader::Process& p, const loader::LoadError& e) {
  LoadFailure out;
  out.error = e;
  const std::vector<loader::LoadedObject>& objects = p.objects();
  out.is_64 = objects.empty() || !objects[0].elf || objects[0].elf->is_64();
  if (e.object < 0 || static_cast<size_t>(e.object) >= objects.size()) return out;
  out.consumer = objects[e.object];
  // What the advice reads of the consumer's dependencies: their files and how each was found, not
  // their own dependencies.
  out.consumer->searchlist.clear();
  for (loader::Resolution& r : out.consumer->deps) {
    r.attempts.clear();
    if (r.object < 0) {
      out.deps.emplace_back();
      continue;
    }
    loader::LoadedObject dep = objects[r.object];
    dep.deps.clear();
    dep.searchlist.clear();
    out.deps.push_back(std::move(dep));
  }
  if (!p.config().ld_library_path.empty()) out.config = std::make_shared<loader::LoaderConfig>(p.config());
  return out;
}

}  // namespace envdoctor::advice
