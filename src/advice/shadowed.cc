#include <filesystem>

#include "advice/install.h"
#include "advice/load_error_kinds.h"
#include "imports/python_process.h"

namespace envdoctor::advice {

namespace fs = std::filesystem;
using environment::Environment;
using loader::LoadError;

// A provider found on LD_LIBRARY_PATH that lacks what `e` needs (a version node, or a symbol of a
// version it has: `undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12`),
// where the consumer's own search finds a copy that has it once LD_LIBRARY_PATH is out of the
// way. glibc searches an object's DT_RPATH (and its loaders'), then LD_LIBRARY_PATH, then its
// DT_RUNPATH (elf/dl-load.c: _dl_map_object), so a directory on LD_LIBRARY_PATH shadows a
// wheel's copy for every object that finds its libraries by RUNPATH, and for none that uses
// RPATH. Whether unsetting helps is not guessed: the consumer is loaded again, into a process
// of the same interpreter without LD_LIBRARY_PATH, and that load must not fail this way.
// Empty advice when the provider was not found on LD_LIBRARY_PATH or unsetting would not help.
Fix hint_ld_library_path_shadow(const Environment& env, const LoadFailure& l) {
  const LoadError& e = l.error;
  if (!l.config || l.config->ld_library_path.empty() || !l.consumer) return {};
  const loader::LoadedObject& consumer = *l.consumer;
  struct Shadow {
    size_t dep;  // index in consumer.deps
    const loader::LoadedObject* copy;
  };
  std::vector<Shadow> shadows;
  for (size_t k = 0; k < consumer.deps.size(); ++k) {
    const loader::Resolution& r = consumer.deps[k];
    if (!l.deps[k]) continue;
    const loader::LoadedObject& target = *l.deps[k];
    if (target.rule != loader::Rule::kLdLibraryPath) continue;
    // A missing version names its provider; a symbol may be any dependency's.
    if (e.kind == LoadError::Kind::kMissingVersion && target.path != e.library) continue;
    shadows.push_back({k, &target});
  }
  if (shadows.empty()) return {};

  loader::LoaderConfig without = *l.config;
  without.ld_library_path.clear();
  imports::ImportModel::Interpreter python = imports::ImportModel::start_in(env, without);
  loader::Process& q = python.process;
  loader::Process::DlopenResult again = q.dlopen(consumer.path, false, python.loaded ? python.caller : -1);
  if (again.object < 0 && again.new_objects.empty()) return {};
  for (const LoadError& other : again.errors)
    if (other.kind == e.kind && other.symbol == e.symbol && other.version == e.version) return {};
  const loader::LoadedObject& reloaded = q.objects()[again.object >= 0 ? again.object : again.new_objects.front()];

  const Shadow& s = shadows.front();
  const loader::Resolution& own = reloaded.deps.size() > s.dep ? reloaded.deps[s.dep] : loader::Resolution{};
  std::string lib = consumer.deps[s.dep].name;
  std::string what = e.kind == LoadError::Kind::kMissingVersion ? "version " + e.version
                     : e.version.empty()                        ? "symbol " + e.symbol
                                                                : "symbol " + e.symbol + " of version " + e.version;
  std::string consumer_name = fs::path(consumer.path).filename().string();
  std::string h = "LD_LIBRARY_PATH puts " + s.copy->source + " first: the loader searches LD_LIBRARY_PATH before " +
                  consumer_name + "'s " + (consumer.elf && consumer.elf->runpath ? "RUNPATH" : "default directories") +
                  ", so " + lib + " is " + s.copy->path + " (" + env.owner_label(s.copy->path) + "), which lacks " +
                  what;
  if (own.object >= 0) {
    const std::string& path = q.objects()[own.object].path;
    h += "; without LD_LIBRARY_PATH " + consumer_name + " loads " + path + " (" + env.owner_label(path) +
         ", found by " + loader::rule_name(own.rule) + "), which has it";
  }
  // The fix: LD_LIBRARY_PATH without the directory that shadows (glibc splits it on ':' and ';').
  std::string rest;
  for (const std::string& dir : loader::split_search_path(l.config->ld_library_path, ":;", std::nullopt, without))
    if (dir != s.copy->source) rest += (rest.empty() ? "" : ":") + dir;
  h += "; take " + s.copy->source + " off LD_LIBRARY_PATH" + (rest.empty() ? " (unset it)" : "") +
       ", or align the copies: replace " + s.copy->path + " with a release of " + lib + " that provides " + what;
  return {h, rest.empty() ? "unset LD_LIBRARY_PATH" : "export LD_LIBRARY_PATH=" + shell_word(rest)};
}

}  // namespace envdoctor::advice
