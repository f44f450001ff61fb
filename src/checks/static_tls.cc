#include "checks/static_tls.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_set>

#include "imports/python_process.h"
#include "loader/process.h"
#include "loader/static_tls.h"
#include "loader/symbols.h"
#include "support/text.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;
using environment::normalize_path;

namespace fs = std::filesystem;
using loader::Process;
using loader::StaticTls;
using loader::TlsBlock;
using loader::TlsTunables;

namespace {

// One request ld.so makes of the static TLS block while the modelled process imports: place the
// block of `object` (an index into the process), for an initial-exec relocation or, `optional`,
// for a TLS descriptor.
struct Request {
  int object = -1;
  TlsBlock block;
  bool optional = false;
  size_t module = 0;  // the import (index into the import order) that made it
};

// The interpreter started: what it placed in the static TLS block at start-up.
class Startup {
 public:
  Startup(const Environment& env, Process process, loader::TlsAbi abi)
      : env_(env), process_(std::move(process)), abi_(abi) {
    for (const loader::LoadedObject& o : process_.objects()) {
      // Module ids are handed out in load order (elf/rtld.c, elf/dl-load.c), and
      // _dl_determine_tlsoffset lays the blocks out in module-id order.
      if (o.elf && o.elf->tls) initial_.push_back(TlsBlock::of(*o.elf->tls));
      started_.insert(o.elf.get());
    }
  }
  const Environment& env() const { return env_; }
  const Process& process() const { return process_; }
  const loader::TlsAbi& abi() const { return abi_; }
  const std::vector<TlsBlock>& initial() const { return initial_; }
  bool started(const elf::ElfFile* file) const { return started_.count(file) != 0; }
  size_t objects() const { return process_.objects().size(); }

 private:
  const Environment& env_;
  Process process_;
  loader::TlsAbi abi_;
  std::vector<TlsBlock> initial_;
  std::unordered_set<const elf::ElfFile*> started_;
};

std::optional<Startup> start(const Environment& env) {
  imports::ImportModel::Interpreter python = imports::ImportModel::start_in(env, env.loader);
  const Process& p = python.process;
  if (!python.loaded || p.objects().empty() || !p.objects()[0].elf) return std::nullopt;
  std::optional<loader::TlsAbi> abi = loader::TlsAbi::for_machine(p.objects()[0].elf->machine);
  if (!abi) return std::nullopt;
  return Startup(env, std::move(python.process), *abi);
}

bool defines_tls(const elf::ElfFile& file, const elf::SymbolKey& key, std::vector<u32>& scratch) {
  return file.tls && loader::defines(file, key, std::nullopt, scratch);
}

// An upper bound of what the objects the load checks resolved can take, against the room: each
// initial-exec block with its worst alignment padding, and the TLS descriptors' blocks up to the
// optional surplus. False when everything surely fits, which is the answer for nearly every
// environment, reached without modelling a process.
bool may_run_out(const Startup& s, const ResolutionMap& resolutions, const TlsTunables& tunables) {
  const Environment& env = s.env();
  std::set<const elf::ElfFile*> files;
  auto add = [&](const std::shared_ptr<const loader::OpenResult>& opened) {
    if (opened && opened->status == loader::OpenResult::Status::kOk && opened->elf && !s.started(opened->elf.get()))
      files.insert(opened->elf.get());
  };
  for (const ElfRecord& r : env.elf_files)
    if (r.extension_module && !r.executable) add(r.opened);
  for (const auto& [soname, by_path] : resolutions)
    for (const auto& [path, consumers] : by_path) add(env.store->open(path));

  std::vector<const elf::ElfFile*> with_tls;
  for (const elf::ElfFile* f : files)
    if (f->tls) with_tls.push_back(f);
  std::set<const elf::ElfFile*> needed, optional;
  std::vector<u32> scratch;
  for (const elf::ElfFile* f : files) {
    for (const loader::StaticTlsTarget& t : loader::static_tls_targets(*f)) {
      const elf::ElfFile* owner = nullptr;
      if (t.symbol.empty()) {
        owner = f->tls ? f : nullptr;
      } else {
        elf::SymbolKey key(t.symbol);
        bool at_start = false;
        for (const loader::LoadedObject& o : s.process().objects())
          if (o.elf && defines_tls(*o.elf, key, scratch)) at_start = true;
        for (const elf::ElfFile* g : with_tls)
          if (!at_start && !owner && defines_tls(*g, key, scratch)) owner = g;
      }
      if (owner) (t.optional ? optional : needed).insert(owner);
    }
  }
  if (needed.empty()) return false;
  StaticTls area(s.abi(), tunables, s.initial());
  auto worst = [](const elf::ElfFile* f) {
    TlsBlock b = TlsBlock::of(*f->tls);
    return b.blocksize + b.firstbyte_offset + b.align - 1;
  };
  u64 bound = 0, optional_bound = 0;
  for (const elf::ElfFile* f : needed) {
    if (TlsBlock::of(*f->tls).align > area.align()) return true;
    bound += worst(f);
  }
  for (const elf::ElfFile* f : optional) optional_bound += worst(f);
  return bound + std::min(optional_bound, area.optional_left()) > area.free_bytes();
}

// The object whose TLS block a relocation of `object` against `symbol` reaches: glibc's scope for
// an RTLD_LOCAL dlopen is the global scope (the interpreter's objects), then the dlopen'd
// object's own search list (elf/dl-open.c, elf/dl-lookup.c).
int tls_definer(const Process& p, size_t started, int object, std::string_view symbol, std::vector<u32>& scratch) {
  elf::SymbolKey key(symbol);
  auto defines = [&](int i) { return p.objects()[i].elf && defines_tls(*p.objects()[i].elf, key, scratch); };
  for (size_t i = 0; i < started; ++i)
    if (defines(static_cast<int>(i))) return static_cast<int>(i);
  int root = p.objects()[object].local_root;
  if (root >= 0)
    for (int i : p.objects()[root].searchlist)
      if (defines(i)) return i;
  return -1;
}

// Every extension module dlopen'd in the modelled order into one process, and the static TLS
// requests of each new object, dependencies relocated first (elf/dl-open.c, dl_open_worker_begin
// relocates l_initfini from its end). An import that fails for another reason (a missing library)
// maps nothing that stays, and is the load checks' finding.
struct Imports {
  Process process;
  std::vector<const ElfRecord*> modules;
  std::vector<Request> requests;
};

// Every package imported in the model's order (imports/python_process.h: each after what it
// requires, torch's preload included), then the modules no package owns, by path. A module two
// packages own is imported once, with the first.
Imports import_all(const Startup& s, const imports::ImportModel& model) {
  Imports run{s.process(), {}, {}};
  std::set<std::pair<int, bool>> asked;
  std::vector<u32> scratch;
  auto requests_of = [&](const Process::DlopenResult& r, size_t m) {
    if (r.object < 0) return;
    for (auto it = r.new_objects.rbegin(); it != r.new_objects.rend(); ++it) {
      const loader::LoadedObject& o = run.process.objects()[*it];
      if (!o.elf) continue;
      for (const loader::StaticTlsTarget& t : loader::static_tls_targets(*o.elf)) {
        int owner =
            t.symbol.empty() ? (o.elf->tls ? *it : -1) : tls_definer(run.process, s.objects(), *it, t.symbol, scratch);
        if (owner < 0 || static_cast<size_t>(owner) < s.objects()) continue;  // placed at start-up
        // An initial-exec request after another for the same block adds nothing; a descriptor's
        // after a failed one of its own kind neither.
        if (asked.count({owner, false}) || !asked.insert({owner, t.optional}).second) continue;
        run.requests.push_back({owner, TlsBlock::of(*run.process.objects()[owner].elf->tls), t.optional, m});
      }
    }
  };
  std::set<const ElfRecord*> imported;
  for (const python::Distribution* d : model.import_order())
    model.import(run.process, 0, *d, [&](const ElfRecord* module, const std::string&, const Process::DlopenResult& r) {
      if (!module) return requests_of(r, run.modules.size());  // torch's preload: before its module
      if (!imported.insert(module).second) return;
      run.modules.push_back(module);
      requests_of(r, run.modules.size() - 1);
    });
  for (const ElfRecord& r : s.env().elf_files) {  // sorted by path
    if (!r.extension_module || !r.owners.empty()) continue;
    run.modules.push_back(&r);
    requests_of(run.process.dlopen(r.path, false, 0), run.modules.size() - 1);
  }
  // A preload whose package's modules were all imported before it counts with the last import.
  for (Request& r : run.requests) r.module = std::min(r.module, run.modules.size() - 1);
  return run;
}

// The requests replayed against a static TLS block made with `tunables`: the index of the first
// initial-exec request that does not fit, which is where dlopen fails.
std::optional<size_t> first_failure(const Startup& s, const std::vector<Request>& requests,
                                    const TlsTunables& tunables) {
  StaticTls area(s.abi(), tunables, s.initial());
  std::unordered_set<int> placed;
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    if (placed.count(r.object)) continue;
    if (area.try_allocate(r.block, r.optional)) placed.insert(r.object);
    else if (!r.optional) return i;
  }
  return std::nullopt;
}

// The smallest glibc.rtld.optional_static_tls at which every request fits (each byte above the
// default adds one to the surplus); nullopt when none does (an alignment above the block's).
std::optional<u64> fitting_optional_tls(const Startup& s, const std::vector<Request>& requests, TlsTunables tunables) {
  u64 lo = tunables.optional_static_tls;
  u64 hi = lo + s.abi().tcb_alignment;
  for (const Request& r : requests) hi += r.block.blocksize + r.block.firstbyte_offset + r.block.align;
  tunables.optional_static_tls = hi;
  if (first_failure(s, requests, tunables)) return std::nullopt;
  while (hi - lo > 1) {
    u64 mid = lo + (hi - lo) / 2;
    tunables.optional_static_tls = mid;
    (first_failure(s, requests, tunables) ? lo : hi) = mid;
  }
  return hi;
}

// "torch._C" for site-packages/torch/_C.cpython-311-x86_64-linux-gnu.so: what `import` names.
std::string module_name(const Environment& env, const std::string& path) {
  fs::path rel = fs::path(path).filename();
  for (const std::string& site : env.inventory.site_dirs)
    if (path.starts_with(site + "/")) rel = fs::path(path.substr(site.size() + 1));
  std::string out;
  for (auto it = rel.begin(); it != rel.end(); ++it) {
    std::string part = it->string();
    if (std::next(it) == rel.end()) part = part.substr(0, part.find('.'));
    out += (out.empty() ? "" : ".") + part;
  }
  return out;
}

std::string tunables_text(const TlsTunables& t) {
  return "glibc.rtld.nns=" + std::to_string(t.nns) +
         " and glibc.rtld.optional_static_tls=" + std::to_string(t.optional_static_tls);
}

Finding exhausted(const Startup& s, const Imports& run, size_t failed, const TlsTunables& tunables) {
  const Environment& env = s.env();
  const Process& p = run.process;
  const loader::LoadedObject& failing = p.objects()[run.requests[failed].object];
  Finding f;
  f.code = Code::kStaticTlsExhausted;
  f.severity = Severity::kError;
  f.file = normalize_path(failing.path);
  const python::Distribution* owner = env.owner(f.file);
  if (!owner) owner = env.owner(run.modules[run.requests[failed].module]->path);
  if (owner) f.package = owner->name;
  f.library = failing.elf->soname ? std::string(*failing.elf->soname) : fs::path(failing.path).filename().string();
  // _dl_allocate_static_tls: _dl_signal_error with the object's l_name, as dlerror() words it.
  f.message = failing.path + ": cannot allocate memory in static TLS block";

  // Every block initial-exec relocations ask for, in the modelled order, and the imports that ask.
  // TLS descriptors' blocks take the optional part of the surplus first, where they fit.
  std::vector<std::string> takers, descriptors, imports;
  std::set<std::string> packages;
  std::set<size_t> modules;
  u64 total = 0;
  const loader::LoadedObject* largest = nullptr;
  for (const Request& r : run.requests) {
    if (modules.insert(r.module).second) imports.push_back(module_name(env, run.modules[r.module]->path));
    const loader::LoadedObject& o = p.objects()[r.object];
    std::string path = normalize_path(o.path);
    std::string taker = path + " (" + std::to_string(r.block.blocksize) + " bytes, " + env.owner_label(path) + ")";
    if (r.optional) {
      descriptors.push_back(taker);
      continue;
    }
    takers.push_back(taker);
    if (const python::Distribution* d = env.owner(path)) packages.insert(d->name);
    total += r.block.blocksize;
    if (!largest || r.block.blocksize > largest->elf->tls->memsz) largest = &o;
  }
  f.packages.assign(packages.begin(), packages.end());
  StaticTls area(s.abi(), tunables, s.initial());
  std::string hint =
      "one process that imports all of them (modelled order: `import " + support::join(imports, ", ") + "`) loads " +
      std::to_string(takers.size()) +
      " objects by dlopen whose initial-exec TLS must go in the static TLS block: " + support::join(takers, "; ") +
      "; together " + std::to_string(total) + " bytes" +
      (descriptors.empty() ? ""
                           : ", after the TLS descriptors of " + support::join(descriptors, "; ") +
                                 " took what they could of the optional part") +
      ", where glibc 2.36 keeps " + std::to_string(area.free_bytes()) + " bytes free after start-up (a surplus of " +
      std::to_string(area.surplus()) + " bytes with " + tunables_text(tunables) + "). In this order " +
      f.library.value() + " is the one that does not fit; another order fails at another of them";
  std::string current = env.loader.glibc_tunables.empty() ? "" : env.loader.glibc_tunables + ":";
  if (std::optional<u64> n = fitting_optional_tls(s, run.requests, tunables))
    hint += ". Start Python with GLIBC_TUNABLES=" + current + "glibc.rtld.optional_static_tls=" + std::to_string(*n) +
            " (the surplus grows with it), or";
  else hint += ". No surplus fits them (an alignment above the block's " + std::to_string(area.align()) + "):";
  hint += " preload the largest (LD_PRELOAD=" + normalize_path(largest->path) +
          ") so that ld.so places its TLS at start-up, outside the surplus";
  f.hint = hint;
  return f;
}

}  // namespace

std::vector<Finding> check_static_tls(const Context& ctx, const ResolutionMap& resolutions) {
  const Environment& env = ctx.env;
  std::optional<Startup> s = start(env);
  if (!s) return {};
  TlsTunables tunables = TlsTunables::parse(env.loader.glibc_tunables);
  if (!may_run_out(*s, resolutions, tunables)) return {};
  Imports run = import_all(*s, ctx.model());
  std::optional<size_t> failed = first_failure(*s, run.requests, tunables);
  if (!failed) return {};
  return {exhausted(*s, run, *failed, tunables)};
}

}  // namespace envdoctor::checks
