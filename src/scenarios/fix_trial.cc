#include "scenarios/fix_trial.h"

#include <map>
#include <set>

#include "advice/install.h"
#include "scenarios/simulation.h"

namespace envdoctor::scenarios {

using checks::CheckRun;
using checks::CheckSettings;
using checks::Finding;
using checks::Severity;
using environment::ElfRecord;
using environment::Environment;

namespace {

// The commands of a chain "A && B", as advice joins them.
std::vector<std::string> split_chain(const std::string& command) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t next; (next = command.find(" && ", at)) != std::string::npos; at = next + 4)
    out.push_back(command.substr(at, next - at));
  out.push_back(command.substr(at));
  return out;
}

// A word as advice::shell_word writes it: bare, or in single quotes with '\'' for a quote.
std::optional<std::string> unquote_word(const std::string& word) {
  if (word.empty() || word.front() != '\'') {
    if (word.find_first_of(" '\"\\$`;&|<>") != std::string::npos) return std::nullopt;
    return word;
  }
  std::string out;
  for (size_t i = 1; i < word.size(); ++i) {
    if (word[i] != '\'') {
      out += word[i];
    } else if (word.compare(i, 4, "'\\''") == 0) {
      out += '\'';
      i += 3;
    } else {
      return i + 1 == word.size() ? std::optional<std::string>(out) : std::nullopt;
    }
  }
  return std::nullopt;
}

bool is_error(const Finding& f) { return f.severity == Severity::kError; }

// The files of `findings` that an error is about.
std::set<std::string> files_with_errors(const std::vector<Finding>& findings) {
  std::set<std::string> out;
  for (const Finding& f : findings)
    if (is_error(f) && !f.file.empty()) out.insert(f.file);
  return out;
}

// An error after the change that was not there before: its words, "" when none.
std::string new_error(const std::vector<Finding>& before, const std::vector<Finding>& after) {
  std::set<std::string> old;
  for (const Finding& f : before)
    if (is_error(f)) old.insert(f.key());
  for (const Finding& f : after)
    if (is_error(f) && !old.count(f.key()))
      return "it would bring a new error, " + std::string(checks::code_name(f.code)) +
             (f.file.empty() ? "" : " in " + f.file) + (f.message.empty() ? "" : " (" + f.message + ")");
  return "";
}

// An extension module that loads before the change and does not after it (removed, or failing).
std::string broken_module(const Environment& before_env, const std::vector<Finding>& before,
                          const Environment& after_env, const std::vector<Finding>& after) {
  std::set<std::string> failing_before = files_with_errors(before), failing_after = files_with_errors(after);
  for (const ElfRecord& r : before_env.elf_files) {
    if (!r.extension_module || failing_before.count(r.path)) continue;
    if (!after_env.elf(r.path))
      return "it would remove " + r.path + " (" + before_env.owner_label(r.path) + "), which imports now";
    if (failing_after.count(r.path)) return "it would break " + r.path + ", which imports now";
  }
  return "";
}

size_t error_count(const std::vector<Finding>& findings) {
  std::set<std::string> keys;
  for (const Finding& f : findings)
    if (is_error(f)) keys.insert(f.key());
  return keys.size();
}

// The environment after `fix`, checked: an overlay of `before` (Environment::overlay), with the
// variable the fix sets and the distributions it uninstalls; nullopt when the model cannot make it.
std::optional<std::pair<std::unique_ptr<Environment>, CheckRun>> after_fix(const ModelledFix& fix,
                                                                           const Environment& before,
                                                                           const environment::Knowledge& knowledge,
                                                                           const cuda::CudaTables& tables,
                                                                           const CheckSettings& settings, bool uv) {
  std::unique_ptr<Environment> env = before.overlay();
  if (fix.ld_library_path) env->loader.ld_library_path = *fix.ld_library_path;
  if (!fix.uninstall.empty()) {
    Changes changes;
    changes.without = fix.uninstall;
    changes.installer = uv ? Installer::kUv : Installer::kPip;
    std::vector<Finding> ignored;
    std::string error;
    env = apply_changes(*env, changes, &ignored, &error);
    if (!env) return std::nullopt;
  }
  CheckSettings quiet = settings;
  quiet.on_file = nullptr;
  quiet.on_hash = nullptr;
  quiet.memo = nullptr;
  quiet.edges = false;
  CheckRun run = checks::run_checks({*env, knowledge, tables, quiet});
  return std::make_pair(std::move(env), std::move(run));
}

}  // namespace

std::optional<ModelledFix> model_fix_command(const Environment& env, const std::string& command) {
  if (command.empty()) return std::nullopt;
  ModelledFix out;
  for (const std::string& part : split_chain(command)) {
    if (part == "unset LD_LIBRARY_PATH") {
      out.ld_library_path = "";
      continue;
    }
    if (part.starts_with("export LD_LIBRARY_PATH=")) {
      std::optional<std::string> value = unquote_word(part.substr(part.find('=') + 1));
      if (!value) return std::nullopt;
      out.ld_library_path = *value;
      continue;
    }
    const python::Distribution* gone = nullptr;
    for (const python::Distribution& d : env.inventory.distributions)
      if (std::string u = advice::uninstall_command(env, d); !u.empty() && u == part) gone = &d;
    if (!gone) return std::nullopt;
    out.uninstall.push_back(gone->name);
  }
  return out;
}

std::string harm_of_fix(const Environment& before_env, const std::vector<Finding>& before, const Environment& after_env,
                        const std::vector<Finding>& after, const Finding& fixed) {
  if (!fixed.file.empty() && before_env.elf(fixed.file) && !after_env.elf(fixed.file))
    return "it would remove " + fixed.file + " itself (" + before_env.owner_label(fixed.file) +
           "), which fixes nothing";
  if (std::string s = new_error(before, after); !s.empty()) return s;
  if (std::string s = broken_module(before_env, before, after_env, after); !s.empty()) return s;
  if (error_count(after) >= error_count(before)) return "the environment after it has as many errors";
  return "";
}

void try_fixes(const Environment& env, const environment::Knowledge& knowledge, const cuda::CudaTables& tables,
               const CheckSettings& settings, CheckRun& run) {
  std::map<std::string, std::optional<ModelledFix>> commands;
  for (const Finding& f : run.findings)
    if (!f.fix_command.empty() && !commands.count(f.fix_command))
      commands[f.fix_command] = model_fix_command(env, f.fix_command);
  for (const auto& [command, fix] : commands) {
    if (!fix) continue;
    // Decided once for the command, which a cause and its consequences share: withdrawn from every
    // finding that carries it when it harms any of them, or when the model cannot be made.
    auto after = after_fix(*fix, env, knowledge, tables, settings, command.starts_with("uv "));
    std::string harm = after ? "" : "the environment after it could not be examined";
    for (const Finding& f : run.findings)
      if (after && harm.empty() && f.fix_command == command)
        harm = harm_of_fix(env, run.findings, *after->first, after->second.findings, f);
    if (harm.empty()) continue;
    for (Finding& f : run.findings) {
      if (f.fix_command != command) continue;
      f.fix_command.clear();
      f.hint += (f.hint.empty() ? "" : "; ") + std::string("no command is offered: `") + command +
                "` was tried on the model, and " + harm;
    }
  }
}

}  // namespace envdoctor::scenarios
