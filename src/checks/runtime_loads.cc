#include "checks/runtime_loads.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "advice/install.h"
#include "checks/transformer_engine.h"
#include "checks/triton_driver.h"
#include "imports/python_process.h"
#include "loader/process.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;
using environment::normalize_path;
using environment::RuntimeLoad;

namespace fs = std::filesystem;

namespace {

// The opener's version as its distribution gives it: "9.4.0.58" -> {"9", "4", "0"}; the parts
// not known are empty.
std::vector<std::string> version_parts(const python::Distribution* d) {
  std::vector<std::string> parts(3);
  if (!d) return parts;
  size_t at = 0;
  for (std::string& part : parts) {
    size_t end = at;
    while (end < d->version.size() && std::isdigit(static_cast<unsigned char>(d->version[end]))) ++end;
    if (end == at) break;
    part = d->version.substr(at, end - at);
    if (end >= d->version.size() || d->version[end] != '.') break;
    at = end + 1;
  }
  return parts;
}

// The names one entry of the table tries, with the opener's version put in; a name whose version
// is not known is left out.
std::vector<std::string> expand(const std::vector<std::string>& names, const std::vector<std::string>& version) {
  std::vector<std::string> out;
  for (std::string name : names) {
    bool known = true;
    for (size_t i = 0; i < 3; ++i) {
      std::string key = std::string("{") + "xyz"[i] + "}";
      for (size_t at = name.find(key); at != std::string::npos; at = name.find(key, at)) {
        if (version[i].empty()) known = false;
        name.replace(at, key.size(), version[i]);
      }
    }
    if (known) out.push_back(name);
  }
  return out;
}

// What the opener prints when none of entry `entry`'s names loads.
std::string words(const RuntimeLoad& row, size_t entry, const std::vector<std::string>& tried) {
  std::string list;
  for (const std::string& n : tried) list += (list.empty() ? "" : ", ") + n;
  std::string out = row.words;
  for (auto [key, value] : {std::pair<std::string, std::string>{"{{tried}}", "{" + list + "}"},
                            {"{tried}", list},
                            {"{name}", tried.front()},
                            {"{symbol}", entry < row.symbols.size() ? row.symbols[entry] : ""}})
    for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + value.size()))
      out.replace(at, key.size(), value);
  return out;
}

// The directories the opener's own DT_RUNPATH (or DT_RPATH) names, $ORIGIN put in.
std::vector<std::string> own_dirs(const loader::LoadedObject& opener) {
  std::vector<std::string> out;
  if (!opener.elf) return out;
  std::optional<std::string_view> list = opener.elf->runpath ? opener.elf->runpath : opener.elf->rpath;
  if (!list) return out;
  std::string origin = fs::path(opener.path).parent_path().string();
  std::string_view rest = *list;
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    for (std::string key : {"${ORIGIN}", "$ORIGIN"})
      for (size_t at = dir.find(key); at != std::string::npos; at = dir.find(key)) dir.replace(at, key.size(), origin);
    if (!dir.empty()) out.push_back(normalize_path(dir));
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  return out;
}

class RuntimeLoadChecker {
 public:
  explicit RuntimeLoadChecker(const Environment& env) : env_(env), model_(env) {}

  void check(const ElfRecord& file, const RuntimeLoad& row, std::vector<Finding>& out) const {
    imports::ImportModel::Interpreter python = model_.start();
    loader::Process& p = python.process;
    loader::Process::DlopenResult opened = p.dlopen(file.path, false, python.caller);
    if (opened.object < 0) return;  // the opener itself does not load: the load checks say why
    // A copy: the dlopen calls below add objects, which moves the process's list.
    const loader::LoadedObject opener = p.objects()[opened.object];
    const python::Distribution* owner = env_.owner(file.path);
    std::vector<std::string> version = version_parts(owner);
    for (size_t entry = 0; entry < row.opens.size(); ++entry) {
      std::vector<std::string> tried = expand(row.opens[entry], version);
      if (tried.empty()) continue;
      std::optional<std::string> found;
      loader::Rule rule = loader::Rule::kNotFound;
      for (const std::string& name : tried) {
        loader::Process::Mark before = p.mark();
        loader::Process::DlopenResult r = p.dlopen(name, false, opened.object);
        if (r.object >= 0) {
          found = p.objects()[r.object].path;
          rule = p.objects()[r.object].rule;
        }
        p.rollback(std::move(before));
        if (found) break;
      }
      if (!found) {
        out.push_back(missing(file, row, entry, opener, owner, tried));
      } else if (row.same_package && owner && env_.owner(*found) != owner) {
        out.push_back(elsewhere(file, row, opener, owner, tried, *found, rule));
      }
    }
  }

 private:
  Finding finding(const ElfRecord& file, const RuntimeLoad& row, const python::Distribution* owner,
                  const std::vector<std::string>& tried) const {
    Finding f;
    f.code = Code::kRuntimeLibraryMissing;
    f.severity = row.needed ? Severity::kError : Severity::kWarning;
    f.file = normalize_path(file.path);
    if (owner) f.package = owner->name;
    f.library = tried.front();
    return f;
  }

  // The file a RECORD puts where the opener's own search looks, and that is missing: the cause.
  std::optional<Cause> lost_copy(const loader::LoadedObject& opener, const std::vector<std::string>& tried) const {
    for (const std::string& dir : own_dirs(opener))
      for (const std::string& name : tried) {
        std::string path = dir + "/" + name;
        const auto& owners = env_.owners(path);
        if (owners.empty() || env_.files.exists(path)) continue;
        return Cause{Code::kRecordMissingFile, path, std::nullopt, std::nullopt,
                     fs::path(opener.path).filename().string() + " opens " + name + " at run time from " + dir +
                         ", where " + owners.front()->name + " " + owners.front()->version +
                         "'s RECORD lists it but the file is missing"};
      }
    return std::nullopt;
  }

  // Whether `owner`'s RECORD puts one of `tried` where the opener's own search looks.
  bool ships(const python::Distribution* owner, const loader::LoadedObject& opener,
             const std::vector<std::string>& tried) const {
    for (const std::string& dir : own_dirs(opener))
      for (const std::string& name : tried)
        for (const python::Distribution* d : env_.owners(dir + "/" + name))
          if (d == owner) return true;
    return false;
  }

  std::string searched(const loader::LoadedObject& opener) const {
    std::string dirs;
    for (const std::string& d : own_dirs(opener)) dirs += (dirs.empty() ? "" : ", ") + d;
    return "as glibc's dlopen called from " + fs::path(opener.path).filename().string() + " searches: " +
           (dirs.empty()
                ? ""
                : "its " + std::string(opener.elf && opener.elf->runpath ? "RUNPATH" : "RPATH") + " (" + dirs + "), ") +
           "LD_LIBRARY_PATH, ld.so.cache and the default directories";
  }

  Finding missing(const ElfRecord& file, const RuntimeLoad& row, size_t entry, const loader::LoadedObject& opener,
                  const python::Distribution* owner, const std::vector<std::string>& tried) const {
    Finding f = finding(file, row, owner, tried);
    f.message = words(row, entry, tried);
    std::string who = owner ? owner->name + " " + owner->version : fs::path(file.path).filename().string();
    std::string h = fs::path(file.path).filename().string() + " (" + env_.owner_label(file.path) + ") opens " +
                    tried.front() + " at run time (" + row.what + "), " + searched(opener) + ", and none of " +
                    std::to_string(tried.size()) + (tried.size() == 1 ? " name" : " names") + " is found: " + who +
                    (row.needed ? " fails at first use" : " works without it, with less");
    // A copy in the opener's directory: the very name asked for, where this dlopen does not look
    // (NVRTC 13's wheel: no RUNPATH), or another version (the name asked for is the opener's own).
    std::string stem = tried.front().substr(0, tried.front().find(".so") + 3);
    const ElfRecord* same = nullptr;
    bool beside = false;
    for (const ElfRecord& other : env_.elf_files) {
      std::string name = fs::path(other.path).filename().string();
      if (fs::path(other.path).parent_path() != fs::path(file.path).parent_path() || name.rfind(stem, 0) != 0) continue;
      bool exact = std::find(tried.begin(), tried.end(), name) != tried.end();
      if (!same || (exact && !beside)) same = &other;
      beside |= exact;
    }
    if (same)
      h += "; " + same->path + " (" + env_.owner_label(same->path) + ") " +
           (beside ? "is the copy it asks for, in its own directory, where this search does not look; it loads "
                     "where that directory is on LD_LIBRARY_PATH or in ld.so.cache"
                   : "is another version than the one " + fs::path(file.path).filename().string() + " asks for");
    f.caused_by = lost_copy(opener, tried);
    if (f.caused_by) f.caused_by->how = h + "; " + f.caused_by->how;
    else if (owner && !beside)
      h += "; install a build of " + owner->name + " that ships " + tried.front() + " beside " +
           fs::path(file.path).filename().string();
    f.hint = h;
    return f;
  }

  Finding elsewhere(const ElfRecord& file, const RuntimeLoad& row, const loader::LoadedObject& opener,
                    const python::Distribution* owner, const std::vector<std::string>& tried, const std::string& found,
                    loader::Rule rule) const {
    Finding f = finding(file, row, owner, tried);
    f.severity = Severity::kWarning;
    std::string opener_name = fs::path(file.path).filename().string();
    f.message = opener_name + " opens " + fs::path(found).filename().string() + " at run time from " + found + " (" +
                env_.owner_label(found) + ", found by " + loader::rule_name(rule) + "), not " + owner->name +
                "'s own copy";
    f.hint = opener_name + " (" + owner->name + " " + owner->version + ") opens " + tried.front() + " at run time (" +
             row.what + "), " + searched(opener) + "; ";
    f.caused_by = lost_copy(opener, tried);
    if (f.caused_by) {
      f.hint += owner->name +
                "'s own copy is missing, so another build of it serves the process, which may be another "
                "version: reinstall " +
                owner->name + " so that its copy is there";
      f.caused_by->how = f.hint + "; " + f.caused_by->how;
    } else if (ships(owner, opener, tried)) {
      // Its copy is there: the search finds the other one first, and a reinstall changes nothing.
      f.hint += "the copy found by " + std::string(loader::rule_name(rule)) + " comes before " + owner->name +
                "'s own, so another build of it serves the process, which may be another version: remove that "
                "copy from the search (" +
                fs::path(found).parent_path().string() + ")";
    } else {
      // Reinstalling would bring back nothing: the package never shipped it.
      f.hint += owner->name + " " + owner->version + " ships none of " + std::to_string(tried.size()) +
                (tried.size() == 1 ? " name" : " names") +
                " where its search looks, so another build serves the "
                "process, which may be another version: install a build of " +
                owner->name + " that ships " + tried.front() + " beside " + opener_name;
    }
    return f;
  }

  const Environment& env_;
  imports::ImportModel model_;
};

}  // namespace

std::vector<Finding> check_runtime_loads(const Context& ctx) {
  const Environment& env = ctx.env;
  const Knowledge& knowledge = ctx.knowledge;
  std::vector<Finding> out;
  std::optional<RuntimeLoadChecker> checker;  // the import model, built only where an opener is
  for (const ElfRecord& file : env.elf_files) {
    const auto& elf = file.opened ? file.opened->elf : nullptr;
    if (!elf || !elf->soname || file.executable) continue;
    for (const RuntimeLoad& row : knowledge.runtime_loads()) {
      if (row.search != "caller" || *elf->soname != row.opener) continue;
      if (!checker) checker.emplace(env);
      checker->check(file, row, out);
    }
  }
  // A package's own search (Triton's libcuda_dirs, TransformerEngine's loads), read from the
  // package itself.
  for (const RuntimeLoad& row : knowledge.runtime_loads()) {
    std::vector<Finding> own;
    if (row.search == "triton") own = check_triton_driver(ctx, row);
    else if (row.search == "transformer_engine") own = check_transformer_engine(ctx, row);
    for (Finding& f : own) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace envdoctor::checks
