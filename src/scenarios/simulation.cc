#include "scenarios/simulation.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <unordered_set>

#include "python/laid_out.h"
#include "python/metadata_file.h"
#include "python/pip.h"
#include "python/tags.h"
#include "python/wheel.h"

namespace envdoctor::scenarios {

using checks::CheckRun;
using checks::CheckSettings;
using checks::Code;
using checks::Finding;
using checks::LoadMemo;
using checks::run_checks;
using checks::Severity;
using checks::sort_and_dedupe;

using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;
using environment::sha256_bytes;

namespace fs = std::filesystem;

const char* installer_name(Installer installer) { return installer == Installer::kUv ? "uv" : "pip"; }

namespace {

// Members larger than this are not read into memory; a shared library that big (libcublasLt is
// 540 MB) still fits.
constexpr u64 kMaxMemberRead = u64{2} << 30;

// The directories of the environment's scheme, where a wheel may write: uv removes a RECORD path
// only below one of them (uninstall.rs, is_path_in_scheme; a venv's data directory is its prefix,
// its headers pip's include/site/pythonX.Y, as uv's get_interpreter_info.py has them), and warns
// about any other ("escapes the Python environment").
std::vector<fs::path> uv_scheme_dirs(const Environment& env) {
  const python::SysconfigPaths& p = env.python.paths;
  python::InstallScheme scheme = python::install_scheme(env.python, "");
  std::vector<fs::path> out;
  for (const fs::path& dir :
       {fs::path(p.purelib), fs::path(p.platlib), fs::path(p.scripts), fs::path(p.data), scheme.headers.parent_path()})
    if (!dir.empty()) out.push_back(dir.lexically_normal());
  return out;
}

void uninstall(Environment& env, const python::Distribution& dist, Installer installer) {
  const std::vector<fs::path> scheme = installer == Installer::kUv ? uv_scheme_dirs(env) : std::vector<fs::path>{};
  for (const python::RecordEntry& e : dist.record) {
    std::string path = e.resolved.string();
    if (installer == Installer::kUv) {
      if (std::none_of(scheme.begin(), scheme.end(),
                       [&](const fs::path& d) { return python::path_within(e.resolved, d); }))
        continue;
      // uv unlinks the path, and where that fails because it is a directory, removes the tree.
      if (env.files.is_directory(path)) {
        for (const std::string& gone : env.files.remove_tree(path)) env.store->add_removal(gone);
        continue;
      }
    }
    env.files.remove(path);
    env.store->add_removal(path);
  }
  std::string dir = dist.metadata_dir.string();
  env.removed.push_back(dist);
  std::erase_if(env.inventory.distributions,
                [&](const python::Distribution& d) { return d.metadata_dir.string() == dir; });
}

bool looks_loadable(const std::string& member) { return member.find(".so") != std::string::npos; }

Finding unsupported_wheel(const Environment& env, const python::Wheel& wheel) {
  Finding f;
  f.code = Code::kWheelTagUnsupported;
  f.severity = Severity::kError;
  f.file = fs::absolute(wheel.path()).lexically_normal().string();
  f.package = wheel.metadata().name;
  // pip's own words.
  f.message = wheel.path().filename().string() + " is not a supported wheel on this platform.";
  std::vector<python::Tag> tags = python::supported_tags(env.python);
  std::string best = tags.empty() ? "" : tags.front().str();
  f.hint = "this interpreter (Python " + env.python.version_info.short_str() + ", glibc " + env.python.glibc_version +
           ") installs wheels tagged like " + best + ": get the build of " + wheel.metadata().name + " for it";
  f.is_new = true;
  return f;
}

// One file an install writes: where it goes, and how to read it when its bytes are needed.
struct Placement {
  std::string member;  // its name in the source (a wheel member, a path of a laid-out directory)
  u64 size = 0;
  std::string target;  // lexically normal
};
using ReadMember = std::function<std::optional<std::vector<u8>>(const std::string& member, std::string* error)>;

// Lays `files` into the environment as pip or uv would write them: existing files overwritten,
// the loadable ones (and __init__.py, which says what a package imports first) read into memory
// and served under their install paths.
bool lay_in(Environment& env, const std::vector<Placement>& files, const ReadMember& read, bool hash_members,
            std::string* error) {
  std::unordered_set<std::string> elf_paths;
  for (const ElfRecord& r : env.elf_files) elf_paths.insert(r.path);
  for (const Placement& file : files) {
    const std::string& target = file.target;
    // A member the loader may open: a shared object by name, or anything written over a file
    // the ELF index holds (an empty or broken file in its place is what the loader then reads).
    bool replaces_elf = elf_paths.count(target) != 0;
    bool loadable = looks_loadable(file.member) || replaces_elf;
    // A package's __init__.py says which of its modules load first (the import context).
    bool init = fs::path(file.member).filename() == "__init__.py" && file.size <= (1 << 20);
    if (!loadable && !hash_members && !init) {
      env.files.add(target, file.size, std::nullopt);
      continue;
    }
    auto bytes = read(file.member, error);
    if (!bytes) return false;
    std::optional<std::string> text;
    if (init) text = std::string(bytes->begin(), bytes->end());
    env.files.add(target, bytes->size(), sha256_bytes(Bytes(bytes->data(), bytes->size())), std::move(text));
    if (!loadable) continue;
    bool elf = bytes->size() >= 4 && std::memcmp(bytes->data(),
                                                 "\x7f"
                                                 "ELF",
                                                 4) == 0;
    // The loader reads the new copy from memory, under the path it would be given.
    env.store->add_overlay(target, MappedFile::from_buffer(target, std::move(*bytes)));
    std::erase_if(env.elf_files, [&](const ElfRecord& r) { return r.path == target; });
    if (elf || replaces_elf) env.add_elf_file(target, env.store->open(target));
  }
  return true;
}

bool install_wheel(Environment& env, const std::string& path, const Changes& changes, std::vector<Finding>* findings,
                   std::string* error) {
  std::unique_ptr<python::Wheel> wheel = python::Wheel::open(path, error);
  if (!wheel) return false;
  if (!python::wheel_supported(wheel->filename(), python::supported_tags(env.python))) {
    findings->push_back(unsupported_wheel(env, *wheel));
    return true;  // pip refuses it: nothing changes
  }
  if (const python::Distribution* old = env.inventory.find(wheel->metadata().name))
    uninstall(env, *old, changes.installer);

  python::InstallScheme scheme = python::install_scheme(env.python, wheel->metadata().name);
  std::vector<Placement> files;
  for (const auto& [member, dest] : wheel->install_plan(scheme))
    files.push_back({member->name, member->size, dest.lexically_normal().string()});
  auto read = [&](const std::string& member, std::string* read_error) {
    std::string why;
    auto bytes = wheel->read(member, kMaxMemberRead, &why);
    if (!bytes) *read_error = wheel->path().string() + ": " + why;
    return bytes;
  };
  if (!lay_in(env, files, read, changes.hash_members, error)) return false;
  python::Distribution installed = wheel->as_installed(scheme);
  if (changes.installer == Installer::kUv) installed.installer = "uv";
  // pip and uv record a wheel given by path as its origin (PEP 610 direct_url.json,
  // archive_info); one found on an index gets no record.
  if (!changes.from_index.count(path)) {
    installed.origin.kind = python::DirectUrl::kArchive;
    installed.origin.url = python::file_url(fs::absolute(wheel->path()).lexically_normal().string());
  }
  env.inventory.distributions.push_back(std::move(installed));
  env.added.push_back(wheel->metadata().name + " " + wheel->metadata().version);
  return true;
}

// A distribution that uv laid out from its cache (python/laid_out.h): uv chose the wheel for this
// interpreter, so there are no tags to check, and it came from an index (no recorded origin).
bool install_laid_out(Environment& env, const std::string& dir, bool hash_members, std::string* error) {
  std::optional<python::LaidOutDistribution> laid_out = python::LaidOutDistribution::open(dir, error);
  if (!laid_out) return false;
  const python::Distribution& metadata = laid_out->metadata();
  if (const python::Distribution* old = env.inventory.find(metadata.name)) uninstall(env, *old, Installer::kUv);

  python::InstallScheme scheme = python::install_scheme(env.python, metadata.name);
  std::vector<Placement> files;
  for (const auto& [file, dest] : laid_out->install_plan(scheme))
    files.push_back({file.path, file.size, dest.lexically_normal().string()});
  auto read = [&](const std::string& member, std::string* read_error) -> std::optional<std::vector<u8>> {
    fs::path source = laid_out->dir() / member;
    std::optional<std::string> text = python::read_bounded_file(source, kMaxMemberRead, read_error);
    if (!text) return std::nullopt;
    return std::vector<u8>(text->begin(), text->end());
  };
  if (!lay_in(env, files, read, hash_members, error)) return false;
  env.inventory.distributions.push_back(laid_out->as_installed(scheme));
  env.added.push_back(metadata.name + " " + metadata.version);
  return true;
}

}  // namespace

namespace {

bool change(Environment& env, const Changes& changes, std::vector<Finding>* findings, std::string* error) {
  for (const std::string& name : changes.without) {
    const python::Distribution* dist = env.inventory.find(name);
    if (!dist) {
      *error = name + " is not installed in " + env.python.prefix;
      if (auto near = env.inventory.nearest_name(name)) *error += "; did you mean " + *near + "?";
      return false;
    }
    uninstall(env, *dist, changes.installer);
  }
  // Ownership and the ELF index are rebuilt after each kind of change there is: with no
  // uninstall, the first rebuild would change nothing (it costs a lookup per ELF file).
  if (!changes.without.empty()) env.refresh();
  for (const std::string& wheel : changes.with)
    if (!install_wheel(env, wheel, changes, findings, error)) return false;
  for (const std::string& dir : changes.laid_out)
    if (!install_laid_out(env, dir, changes.hash_members, error)) return false;
  env.refresh();
  return true;
}

}  // namespace

std::unique_ptr<Environment> apply_changes(const Environment& env, const Changes& changes,
                                           std::vector<Finding>* findings, std::string* error) {
  std::unique_ptr<Environment> changed = env.overlay();
  if (!change(*changed, changes, findings, error)) return nullptr;
  return changed;
}

std::set<python::Distribution::Id> distribution_identities(const Environment& env) {
  std::set<python::Distribution::Id> out;
  for (const python::Distribution& d : env.inventory.distributions) out.insert(d.id());
  return out;
}

void note_changes(const Environment& env, const std::set<python::Distribution::Id>& identities_before, LoadMemo& memo) {
  memo.changed_paths.clear();
  for (const std::string& path : env.files.changed_paths()) {
    memo.changed_paths.insert(path);
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(env.host(path), ec);
    if (!ec) memo.changed_paths.insert(canonical.string());
  }
  std::set<python::Distribution::Id> after = distribution_identities(env);
  memo.changed_dists.clear();
  auto note = [&](const std::set<python::Distribution::Id>& side, const std::set<python::Distribution::Id>& other) {
    for (const python::Distribution::Id& id : side)
      if (!other.count(id)) memo.changed_dists.insert(id.key);
  };
  note(identities_before, after);
  note(after, identities_before);
}

void mark_new(const std::vector<Finding>& before, std::vector<Finding>& after) {
  std::unordered_set<std::string> old;
  for (const Finding& f : before) old.insert(f.key());
  for (Finding& f : after)
    if (!old.count(f.key())) f.is_new = true;
}

ChangeCheck::ChangeCheck(const Environment& env, const Knowledge& knowledge, const cuda::CudaTables& tables,
                         CheckSettings settings)
    : knowledge_(knowledge), tables_(tables), settings_(std::move(settings)) {
  settings_.memo = &memo_;
  before_ = run_checks({env, knowledge_, tables_, settings_});
}

std::optional<ChangedRun> ChangeCheck::after(const Environment& env, const Changes& changes, std::string* error,
                                             ChangeSummary* summary) {
  // The environment as pip would leave it, checked the same way; what the change brings is new.
  std::vector<Finding> change_findings;
  std::unique_ptr<Environment> changed = apply_changes(env, changes, &change_findings, error);
  if (!changed) return std::nullopt;
  note_changes(*changed, distribution_identities(env), memo_);
  CheckRun after = run_checks({*changed, knowledge_, tables_, settings_});
  after.findings.insert(after.findings.end(), change_findings.begin(), change_findings.end());
  mark_new(before_.findings, after.findings);
  sort_and_dedupe(after.findings);
  if (summary) *summary = summarize_change(*changed, before_.findings, after.findings);
  return ChangedRun{std::move(changed), std::move(after)};
}

std::optional<ChangedRun> check_change(const Environment& env, const Knowledge& knowledge,
                                       const cuda::CudaTables& tables, CheckSettings settings, const Changes& changes,
                                       std::string* error, ChangeSummary* summary) {
  return ChangeCheck(env, knowledge, tables, std::move(settings)).after(env, changes, error, summary);
}

size_t new_errors(const std::vector<Finding>& findings) {
  size_t n = 0;
  for (const Finding& f : findings) n += f.severity == Severity::kError && f.is_new;
  return n;
}

}  // namespace envdoctor::scenarios

namespace envdoctor::scenarios {

ChangeSummary summarize_change(const Environment& env, const std::vector<Finding>& before,
                               const std::vector<Finding>& after) {
  ChangeSummary out;
  // A --with that replaces an installed version shows as its removal and the wheel's install.
  for (const python::Distribution& d : env.removed) out.removed.push_back(d.name + " " + d.version);
  for (const std::string& a : env.added) out.added.push_back(a + " (wheel)");
  std::set<std::string> now;
  for (const Finding& f : after) {
    now.insert(f.key());
    if (f.severity != Severity::kError) continue;
    ++(f.is_new ? out.new_errors : out.old_errors);
  }
  std::set<std::string> seen;
  for (const Finding& f : before)
    if (f.severity == Severity::kError && !now.count(f.key()) && seen.insert(f.key()).second) ++out.fixed_errors;
  return out;
}

}  // namespace envdoctor::scenarios
