#include "checks/record_checks.h"

#include "support/parallel.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>

#include "advice/fix_request.h"
#include "python/metadata_file.h"

namespace envdoctor::checks {

using environment::Environment;
using environment::Knowledge;
using environment::KnownPlaceholder;
using environment::normalize_path;

namespace fs = std::filesystem;

namespace {

// pip's uninstall and Python itself recreate bytecode caches at will: their absence or change
// says nothing about the installation.
bool is_bytecode_cache(const python::RecordEntry& e) {
  std::string p = e.path;
  return p.find("__pycache__/") != std::string::npos || (p.size() > 4 && p.compare(p.size() - 4, 4, ".pyc") == 0);
}

// What an import runs: Python source (packages' __init__.py included), extension modules and the
// shared libraries they load (".so", ".so.9"), and .pth files, which decide sys.path itself. A
// missing one breaks an import (error); any other file RECORD lists (a LICENSE, a console script,
// data) does not (warning). DESIGN.md, record-missing-file.
bool is_importable_code(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto ends = [&](std::string_view suffix) { return name.ends_with(suffix); };
  return ends(".py") || ends(".so") || ends(".pth") || name.find(".so.") != std::string_view::npos;
}

Severity missing_file_severity(std::string_view path) {
  return is_importable_code(path) ? Severity::kError : Severity::kWarning;
}

// Whether a changed file decides what loads: an ELF file of the index (an extension module, a
// library, a program), or one named as a shared object whatever it holds now. Other files that
// differ from their RECORD (a cacert.pem with a company's CA appended, a patched .py) are local
// edits as often as damage, and a reinstall would silently undo them: reported with --all-files.
bool decides_loading(const Environment& env, const std::string& path) {
  std::string_view name = std::string_view(path).substr(path.rfind('/') + 1);
  return env.elf(path) || name.ends_with(".so") || name.find(".so.") != std::string_view::npos;
}

// A reinstall writes the wheel's copy over the file: said wherever the fix is one.
constexpr const char* kRevertsEdits = "; reinstalling replaces the file with the wheel's copy, undoing any local edit";

struct HashJob {
  const python::Distribution* dist;
  const python::RecordEntry* entry;
  bool mismatch = false;
};

Finding package_finding(const python::Distribution& d, Code code, Severity s) {
  Finding f;
  f.code = code;
  f.severity = s;
  f.package = d.name;
  return f;
}

void check_files(const Environment& env, const CheckSettings& scope, const std::function<void(size_t, size_t)>& on_hash,
                 std::vector<Finding>& out) {
  std::vector<HashJob> jobs;
  for (const python::Distribution& d : env.inventory.distributions) {
    // Debian's RECORD is the upstream build's (scripts it moved, binaries it stripped afterwards),
    // and a conda-installed .dist-info answers to its conda record: those installers' own
    // records judge the files (check_dpkg_files, the conda record itself).
    if (!d.judged_by_record()) continue;
    for (const python::RecordEntry& e : d.record) {
      if (is_bytecode_cache(e)) continue;
      // Whether it is there, from the walk's listing: a file whose size matters is asked alone.
      environment::FileView::Kind kind = env.files.kind(e.resolved.string());
      if (kind == environment::FileView::Kind::kMissing) {
        Finding f = package_finding(d, Code::kRecordMissingFile, missing_file_severity(e.path));
        f.file = e.resolved.string();
        f.message = d.name + "'s RECORD lists " + e.path + " but the file is missing";
        const auto& owners = env.owners(f.file);
        std::string others;
        for (const python::Distribution* o : owners)
          if (o->installation_key() != d.installation_key()) others += (others.empty() ? "" : ", ") + o->name;
        f.ask({advice::Reinstall{
            &d, others.empty() ? "" : "also listed by " + others + ": uninstalling one of them deleted it for all"}});
        out.push_back(std::move(f));
        continue;
      }
      if (kind == environment::FileView::Kind::kLink) continue;  // pip records a link's own size and hash rarely
      if (!scope.all_files && !decides_loading(env, e.resolved.string())) continue;
      auto st = env.files.stat(e.resolved.string());
      if (!st) continue;  // gone since the walk
      if (e.size && st->size != *e.size) {
        Finding f = package_finding(d, Code::kRecordSizeMismatch, Severity::kWarning);
        f.file = e.resolved.string();
        f.message = e.path + " is " + std::to_string(st->size) + " bytes; " + d.name + "'s RECORD says " +
                    std::to_string(*e.size);
        f.ask({advice::Reinstall{
            &d, "the file was changed or overwritten after " + d.name + " installed it" + kRevertsEdits}});
        out.push_back(std::move(f));
        continue;
      }
      if (scope.verify_hashes && e.hash_algorithm == "sha256" && !e.digest.empty()) jobs.push_back({&d, &e});
    }
  }
  if (jobs.empty()) return;
  std::atomic<size_t> hashed{0};
  support::parallel_for(jobs.size(), [&](size_t i) {
    auto digest = env.files.sha256(jobs[i].entry->resolved.string());
    jobs[i].mismatch = digest && *digest != jobs[i].entry->digest;
    size_t done = ++hashed;
    if (on_hash) on_hash(done, jobs.size());
  });
  for (const HashJob& j : jobs) {
    if (!j.mismatch) continue;
    Finding f = package_finding(*j.dist, Code::kRecordHashMismatch, Severity::kWarning);
    f.file = j.entry->resolved.string();
    f.message = j.entry->path + " does not have the sha256 that " + j.dist->name + "'s RECORD lists";
    f.ask({advice::Reinstall{j.dist, "the file is not the one " + j.dist->name + " installed" + kRevertsEdits}});
    out.push_back(std::move(f));
  }
}

}  // namespace

const python::Distribution* copy_holder(const Environment& env, const std::string& path) {
  const auto& owners = env.owners(path);
  if (owners.size() == 1) return owners.front();
  const python::Distribution* holder = nullptr;
  if (owners.empty()) return holder;
  fs::path normal = normalize_path(path);
  if (auto digest = env.files.sha256(normal.string())) {
    for (const python::Distribution* d : owners)
      for (const python::RecordEntry& e : d->record)
        if (e.resolved == normal && e.digest == *digest) holder = d;
  }
  return holder;
}

namespace {

// A Debian-managed distribution, judged as dpkg would (`dpkg --verify`): every file its package's
// md5sums lists under a site directory must exist, and with --verify-hashes have that MD5 sum.
// Files outside sys.path (documentation that a path-exclude may have dropped) do not decide
// whether the environment imports.
void check_dpkg_files(const Environment& env, const CheckSettings& scope, std::vector<Finding>& out) {
  std::set<std::string> seen;
  for (const python::Distribution& d : env.inventory.distributions) {
    if (d.installer != "debian" || !seen.insert(d.installer_package).second) continue;
    for (const python::DpkgFile& file : env.dpkg->files(d.installer_package)) {
      bool in_site = std::any_of(env.inventory.site_dirs.begin(), env.inventory.site_dirs.end(),
                                 [&](const std::string& site) { return file.path.starts_with(site + "/"); });
      if (!in_site || file.path.find("/__pycache__/") != std::string::npos) continue;
      Finding f = package_finding(d, Code::kRecordMissingFile, missing_file_severity(file.path));
      f.file = file.path;
      f.ask({advice::Reinstall{&d, "the file is not the one Debian installed"}});
      if (!env.files.exists(file.path)) {
        f.message = "dpkg's file list of " + d.installer_package + " names " + file.path + " but the file is missing";
        f.ask({advice::Reinstall{&d, ""}});
        out.push_back(std::move(f));
      } else if (scope.verify_hashes && (scope.all_files || decides_loading(env, file.path))) {
        auto md5 = env.files.md5(file.path);
        if (!md5 || *md5 == file.md5) continue;
        f.code = Code::kRecordHashMismatch;
        f.severity = Severity::kWarning;
        f.message = file.path + " does not have the MD5 sum that dpkg lists for " + d.installer_package;
        out.push_back(std::move(f));
      }
    }
  }
}

// Two packages list one path: whichever was installed last wrote it, and uninstalling either
// deletes it for both. Say whose content is there now, by hash.
void check_shared_paths(const Environment& env, std::vector<Finding>& out) {
  for (const fs::path& path : env.ownership->shared_paths()) {
    const auto& owners = env.ownership->owners(path);
    Finding f;
    f.code = Code::kFileOwnedTwice;
    f.severity = Severity::kWarning;
    f.file = path.string();
    f.package = owners.front()->name;
    std::string names;
    for (const python::Distribution* d : owners) {
      f.packages.push_back(d->name);
      names += (names.empty() ? "" : " and ") + d->name;
    }
    f.message = path.string() + " is installed by both " + names;
    const python::Distribution* holder_dist = copy_holder(env, path.string());
    // Keep the one an installed distribution requires, else the one whose copy is there now.
    const python::Distribution* keep = holder_dist ? holder_dist : owners.front();
    for (const python::Distribution& user : env.inventory.distributions)
      for (const python::Requirement& r : user.requirements_for(env.python.markers))
        for (const python::Distribution* d : owners)
          if (python::normalize_name(r.name) == d->key()) keep = d;
    f.ask({advice::KeepOnly{{owners.begin(), owners.end()}, keep, holder_dist}});
    out.push_back(std::move(f));
  }
}

void check_metadata_only(const Environment& env, const Knowledge& knowledge, std::vector<Finding>& out) {
  for (const python::Distribution& d : env.inventory.distributions) {
    if (d.kind == python::Distribution::kConda || d.record.empty() || !d.metadata_only()) continue;
    Finding f = package_finding(d, Code::kMetadataOnlyPackage, Severity::kWarning);
    f.file = d.metadata_dir.string();
    f.message = d.name + " " + d.version + " installs nothing but its own metadata";
    if (const KnownPlaceholder* p = knowledge.placeholder(d.key()))
      f.hint = p->note + "; it satisfies pip's dependency check but provides no library";
    else
      f.hint =
          "a placeholder release satisfies pip's dependency check but provides no library: "
          "install the package that really ships the files";
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> check_records(const Context& ctx) {
  std::vector<Finding> out;
  check_files(ctx.env, ctx.settings, ctx.settings.on_hash, out);
  check_dpkg_files(ctx.env, ctx.settings, out);
  check_shared_paths(ctx.env, out);
  check_metadata_only(ctx.env, ctx.knowledge, out);
  return out;
}

}  // namespace envdoctor::checks
