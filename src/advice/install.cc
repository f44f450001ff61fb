#include "advice/install.h"

#include <algorithm>
#include <filesystem>

#include "python/index_origins.h"
#include "python/pip.h"

namespace envdoctor::advice {

using environment::Environment;

namespace fs = std::filesystem;
using Tool = python::Distribution::Tool;

std::string shell_word(const std::string& s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("/._-+=:,@%").find(c) != std::string_view::npos;
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The environment's interpreter as a path that works from any directory.
std::string environment_python(const Environment& env) {
  if (!env.python.executable.empty()) return env.python.executable;
  return env.python.prefix + "/bin/python";
}

namespace {

// What pip or uv is given to install `dist` again from where it came: the requirement and the
// options it needs (`-e DIR`), already shell words; "" when the origin is gone, with `note` saying so.
std::string origin_argument(const Environment& env, const python::Distribution& dist, std::string* note) {
  const python::DirectUrl& o = dist.origin;
  std::error_code ec;
  switch (o.kind) {
    case python::DirectUrl::kNone: {
      // What `envdoctor pip install` was given to find it (--no-index --find-links DIR), where it
      // recorded that: the same again finds it offline.
      std::vector<std::string> options =
          env.root.empty() ? python::recorded_index_origin(dist) : std::vector<std::string>{};
      if (!options.empty()) {
        std::string words;
        for (const std::string& option : options) words += shell_word(option) + " ";
        *note = "from where envdoctor pip found it when it installed it (" + words.substr(0, words.size() - 1) + ")";
        return words + shell_word(dist.name + "==" + dist.version);
      }
      *note =
          "from the package index (" + (dist.installer.empty() ? "pip" : dist.installer) + " recorded no other origin)";
      return shell_word(dist.name + "==" + dist.version);
    }
    case python::DirectUrl::kVcs: {
      // PEP 440 direct reference: "name @ git+URL@COMMIT#subdirectory=..."
      std::string url = o.vcs + "+" + o.url + (o.commit_id.empty() ? "" : "@" + o.commit_id) +
                        (o.subdirectory.empty() ? "" : "#subdirectory=" + o.subdirectory);
      *note =
          "from " + o.url + (o.commit_id.empty() ? "" : " at commit " + o.commit_id) + ", where it was installed from";
      return shell_word(dist.name + " @ " + url);
    }
    case python::DirectUrl::kArchive:
    case python::DirectUrl::kDirectory: {
      std::optional<std::string> local = python::file_url_path(o.url);
      if (!local) {  // a remote archive
        *note = "from " + o.url + ", where it was installed from";
        return shell_word(dist.name + " @ " + o.url);
      }
      std::string path = *local;
      if (!fs::exists(env.host(path), ec)) {
        *note = dist.name + " was installed from " + path + ", which is no longer there: rebuild it, then install it";
        return "";
      }
      *note = "from " + path + ", where it was installed from";
      std::string target = path + (o.subdirectory.empty() ? "" : "/" + o.subdirectory);
      return (o.editable ? "-e " : "") + shell_word(target);
    }
  }
  return "";
}

}  // namespace

std::string uninstall_command(const Environment& env, const python::Distribution& dist) {
  switch (dist.tool()) {
    case Tool::kUv:
      return "uv pip uninstall --python " + shell_word(environment_python(env)) + " " + shell_word(dist.name);
    case Tool::kPip: return pip_for(env) + " uninstall -y " + shell_word(dist.name);
    default: return "";
  }
}

std::string pip_for(const Environment& env) {
  if (env.inventory.find("pip")) return shell_word(environment_python(env)) + " -m pip";
  return "python3 -m pip --python " + shell_word(environment_python(env));
}

Fix reinstall(const Environment& env, const python::Distribution& dist) {
  const std::string& installer = dist.installer;
  if (dist.tool() == Tool::kDebian)
    return {.hint = "reinstall Debian's package " + dist.installer_package,
            .command = "apt-get install --reinstall " + shell_word(dist.installer_package)};
  if (dist.tool() == Tool::kConda) {
    bool own = dist.installer_package.empty();
    std::string prefix = env.python.prefix.empty() ? dist.site_dir.string() : env.python.prefix;
    return {.hint = "reinstall " + (own ? dist.name : dist.installer_package) + " with conda, which installed it",
            .command = "conda install -p " + shell_word(prefix) + " --force-reinstall " +
                       shell_word((own ? dist.name : dist.installer_package) + "=" +
                                  (own ? dist.version : dist.installer_version))};
  }
  Fix fix;
  if (dist.tool() == Tool::kUv || dist.tool() == Tool::kPip) {
    std::string what = origin_argument(env, dist, &fix.hint);
    if (what.empty()) return fix;
    if (dist.tool() == Tool::kUv)
      fix.command = "uv pip install --python " + shell_word(environment_python(env)) + " --reinstall --no-deps " + what;
    else fix.command = pip_for(env) + " install --force-reinstall --no-deps " + what;
    fix.hint = "reinstall " + dist.name + " " + dist.version + " " + fix.hint;
    return fix;
  }
  fix.hint = "reinstall " + dist.name + " " + dist.version + " with " + installer + ", which installed it";
  return fix;
}

Fix reinstall_because(const Environment& env, const python::Distribution& dist, const std::string& why) {
  Fix fix = reinstall(env, dist);
  fix.hint = why.empty() ? fix.hint : fix.hint.empty() ? why : why + "; " + fix.hint;
  return fix;
}

namespace {

// Whether `path` is byte for byte what `dist`'s RECORD says it installed (its size and sha256):
// then a reinstall of the same release brings back the same file.
bool as_recorded(const Environment& env, const python::Distribution& dist, const std::string& path) {
  for (const python::RecordEntry& e : dist.record) {
    if (e.resolved.string() != path) continue;
    if (!e.size || e.hash_algorithm != "sha256" || e.digest.empty()) return false;
    std::optional<environment::FileView::Facts> facts = env.files.stat(path);
    if (!facts || facts->size != *e.size) return false;
    std::optional<std::vector<u8>> sum = env.files.sha256(path);
    return sum && *sum == e.digest;
  }
  return false;
}

}  // namespace

Fix invalid_file(const Environment& env, const std::string& path) {
  const python::Distribution* d = env.owner(path);
  if (d && as_recorded(env, *d, path))
    return {.hint = path + " is not a loadable ELF file, and it is as " + d->name + " " + d->version +
                    " installed it (its RECORD's size and sha256): the build itself is broken, so a reinstall brings "
                    "the same file back; install another release or build of " +
                    d->name};
  std::string why = path + " is not a loadable ELF file (truncated or damaged)";
  if (d) return reinstall_because(env, *d, why);
  return {.hint = why + ": replace it"};
}

Fix keep_only(const Environment& env, const std::vector<const python::Distribution*>& owners,
              const python::Distribution& keep, const python::Distribution* holder) {
  std::string others, uninstall;
  for (const python::Distribution* d : owners) {
    if (d == &keep) continue;
    others += (others.empty() ? "" : " and ") + d->name;
    std::string command = uninstall_command(env, *d);
    uninstall = command.empty() || uninstall == "-" ? "-" : (uninstall.empty() ? "" : uninstall + " && ") + command;
  }
  Fix again = reinstall(env, keep);
  Fix fix;
  fix.hint = (holder ? "the file now holds " + holder->name + "'s copy; " : "") +
             "uninstalling any of them deletes it for all: keep only " + keep.name + " (uninstall " + others +
             ", then " + again.hint + ")";
  if (uninstall != "-" && !uninstall.empty() && !again.command.empty())
    fix.command = uninstall + " && " + again.command;
  return fix;
}

Fix install_requirement(const Environment& env, const python::Distribution& consumer,
                        const python::Requirement& requirement) {
  Fix fix;
  std::string spec = requirement.name + requirement.specifier;
  if (!requirement.url.empty()) spec = requirement.name + " @ " + requirement.url;
  if (consumer.tool() == Tool::kDebian || consumer.tool() == Tool::kConda) {
    fix.hint = "install " + spec + " with " + consumer.installer + ", which installed " + consumer.name;
    return fix;
  }
  if (consumer.origin.kind != python::DirectUrl::kNone && requirement.url.empty()) {
    // consumer did not come from an index, so nothing says its requirement should.
    fix.hint = consumer.name + " was not installed from an index (" + consumer.origin.url + "): install " + spec +
               " from where you got " + consumer.name;
    return fix;
  }
  if (consumer.tool() == Tool::kUv)
    fix.command = "uv pip install --python " + shell_word(environment_python(env)) + " " + shell_word(spec);
  else if (consumer.tool() == Tool::kPip) fix.command = pip_for(env) + " install " + shell_word(spec);
  else fix.hint = "install " + spec + " with " + consumer.installer + ", which installed " + consumer.name;
  return fix;
}

// The command that installs `spec` from an index with the installer that installed `by` (pip or
// uv); "" for another installer.
std::string index_install(const Environment& env, const python::Distribution* by, const std::string& spec,
                          bool upgrade) {
  Tool tool = by ? by->tool() : Tool::kPip;
  if (tool == Tool::kUv)
    return "uv pip install --python " + shell_word(environment_python(env)) + (upgrade ? " --upgrade " : " ") +
           shell_word(spec);
  if (tool == Tool::kPip) return pip_for(env) + " install" + (upgrade ? " --upgrade " : " ") + shell_word(spec);
  return "";
}

}  // namespace envdoctor::advice
