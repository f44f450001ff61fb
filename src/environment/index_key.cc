#include "environment/index_key.h"

#include <grp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "loader/search_paths.h"
#include "support/run_index.h"

extern char** environ;

namespace envdoctor::environment {

namespace {

// Variables a shell changes between two identical commands, which envdoctor never reads: the
// last command's name, the previous directory, the shell's depth, its idea of the directory (the
// working directory itself is in the key).
bool volatile_variable(std::string_view entry) {
  for (std::string_view name : {"_", "OLDPWD", "SHLVL", "PWD"})
    if (entry.starts_with(name) && entry.size() > name.size() && entry[name.size()] == '=') return true;
  return false;
}

void add(std::string& key, std::string_view field, std::string_view value) {
  key.append(field).append(1, '\t').append(value).append(1, '\n');
}

std::string identity_text(const support::Identity& i) {
  return std::to_string(i.error) + " " + std::to_string(i.mode) + " " + std::to_string(i.dev) + " " +
         std::to_string(i.ino) + " " + std::to_string(i.size) + " " + std::to_string(i.mtime_ns) + " " +
         std::to_string(i.ctime_ns);
}

void add_process(std::string& key) {
  add(key, "exe", identity_text(support::identity_of("/proc/self/exe", true)));
  char cwd[4096];
  add(key, "cwd", ::getcwd(cwd, sizeof cwd) ? cwd : "?");
  std::string ids = std::to_string(::getuid()) + " " + std::to_string(::geteuid()) + " " + std::to_string(::getgid()) +
                    " " + std::to_string(::getegid());
  std::vector<gid_t> groups(static_cast<size_t>(std::max(0, ::getgroups(0, nullptr))));
  groups.resize(static_cast<size_t>(std::max(0, ::getgroups(static_cast<int>(groups.size()), groups.data()))));
  std::sort(groups.begin(), groups.end());
  for (gid_t g : groups) ids += " " + std::to_string(g);
  add(key, "ids", ids);
  std::vector<std::string_view> vars;
  for (char** e = environ; e && *e; ++e)
    if (!volatile_variable(*e)) vars.push_back(*e);
  std::sort(vars.begin(), vars.end());
  for (std::string_view v : vars) add(key, "env", v);
}

void add_machine(std::string& key, const environment::NodeRequest& node) {
  struct utsname u {};
  ::uname(&u);
  add(key, "uname", std::string(u.sysname) + " " + u.nodename + " " + u.release + " " + u.version + " " + u.machine);
  std::string cpu;
  for (const std::string& level : loader::supported_x86_64_levels()) cpu += level + " ";
  loader::LegacyHwcaps legacy = loader::legacy_hwcaps();
  cpu += "platform=" + legacy.platform;
  for (const std::string& h : legacy.hwcaps) cpu += " " + h;
  add(key, "cpu", cpu);
  if (!node.detected) return;
  const cuda::DriverInfo& d = *node.detected;
  add(key, "driver",
      (d.version ? d.version->text : "-") + " " + d.version_source + " " + (d.cuda ? d.cuda->str() : "-"));
  for (const cuda::Gpu& g : d.gpus) add(key, "gpu", g.name + " " + std::to_string(g.sm) + " " + d.gpus_source);
  for (const std::string& p : d.problems) add(key, "driver-problem", p);
}

}  // namespace

std::string index_key(const std::vector<std::string>& words, const NodeRequest& node) {
  std::string key = "envdoctor index key 1\n";
  for (const std::string& w : words) add(key, "word", w);
  add_process(key);
  add_machine(key, node);
  return key;
}

}  // namespace envdoctor::environment
