// The rules of data/package_loads.json (docs/package-loads.md): what a package opens by itself, by
// name or by path, at import, first use or first compile. Read once at start-up with the other
// knowledge tables (knowledge.h) and run by imports/package_loads.h; nothing here runs a rule.
//
// The table is untrusted input read once: `PackageRules::parse` checks every field (an unknown
// field or kind, a step that opens nothing, a condition or `each` that names nothing of its rule, a
// `{NAME}` that is no value of the rule nor a word of the format) and names the rule and the field
// of the first that is wrong, so that the engine runs only rules that mean one thing.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace envdoctor::environment {

enum class Moment { kImport, kFirstUse, kFirstCompile };

// Where a step looks for its names.
struct Place {
  enum class Kind {
    kSysPath,        // each sys.path entry, each of `dirs` relative to it
    kPackage,        // `dirs[0]` relative to the package's own directory
    kVariable,       // the first of `variables` set and not empty, else `fallback`
    kPath,           // `dirs[0]`, fixed
    kLdconfig,       // the directories of the `ldconfig -p` lines holding `text`
    kLdLibraryPath,  // each element of LD_LIBRARY_PATH
    kDlopen,         // the name given to dlopen, resolved from the caller
  };
  Kind kind = Kind::kDlopen;
  std::vector<std::string> dirs;
  std::string if_dir;                   // kSysPath: only entries that hold this directory
  std::vector<std::string> variables;   // kVariable
  std::optional<std::string> fallback;  // kVariable: the directory where none is set (`default`)
  std::string below;                    // kVariable: a directory below the value
  bool recursive = false;               // kVariable: every directory below too (glob's **)
  std::vector<std::string> exclude;     // kVariable: paths holding one of these are left out
  std::string text;                     // kLdconfig
  // kDlopen: the file whose dlopen it is, relative to the site directory ("jax_cuda13_plugin/
  // _versions.so", loaded first where it is not); none for the rule's caller (the opener, or the
  // interpreter for ctypes), as the table's "dlopen": "caller" says.
  std::optional<std::string> caller;
  // The names tried in this place instead of the step's (a package that globs another pattern in
  // each of its places); empty for the step's.
  std::vector<std::string> names;
  // kLdconfig: the paths the lines name (`line.split(">")[1].strip()`) are the matches themselves,
  // in the cache's order, `exclude` applied to the lines, not files looked for in their directories.
  bool lines = false;
};

// What a package does when a step finds no copy, or the copy does not load.
struct Outcome {
  enum class Kind { kRaise, kFallBack, kStop, kContinue };
  Kind kind = Kind::kRaise;
  std::string words;  // kRaise, kFallBack: with {name}, {tried}, {dlerror}, ... put in when it happens
  std::string to;     // kFallBack: what the package runs on instead ("the CPU")
  // kRaise, kFallBack: not where the load's error names a library of this list (then the next
  // step runs): torch re-raises an OSError that names none of its CUDA libraries.
  std::string unless_naming;
};

struct Condition {
  // kLdconfig: a line of `ldconfig -p` holds the text (a search that asks the cache before another place).
  // kOnPath: the program is found on the process's PATH (os.defpath, /bin:/usr/bin, where unset).
  // kGpu: the node has (`set`) or has not an NVIDIA GPU, as the run knows it (PackageLoads::set_gpu);
  // where it does not know, neither holds.
  enum class Kind { kVariable, kFailed, kLoaded, kMapped, kFound, kAll, kAny, kNot, kLdconfig, kOnPath, kGpu };
  Kind kind = Kind::kAll;
  // kVariable: the variable; kFailed, kLoaded, kFound: the step's id; kMapped, kLdconfig: the text;
  // kOnPath: the program
  std::string name;
  bool set = true;  // kVariable; kGpu: a GPU (true) or none (false)
  // kVariable: what is asked of it instead of `set`: that it is in the environment at all, empty
  // included (Python's `NAME in os.environ`); or `bool(int(os.getenv(NAME, fallback)))`.
  enum class Test { kSet, kPresent, kInt };
  Test test = Test::kSet;
  std::string fallback = "0";
  std::string naming;            // kFailed: a list's name ("" for any error)
  int place = -1;                // kFound
  std::vector<Condition> parts;  // kAll, kAny, kNot (one)
};

struct Step {
  std::string id;
  std::string what;  // what the package is doing here, for people; "" to say the group's (or rule's)
  std::string lib;
  std::vector<std::string> names;
  std::vector<Place> places;
  enum class Sort { kListing, kName, kNameDescending };
  Sort sort = Sort::kListing;
  bool every = false;   // take: every match of the place, else the first
  bool global = false;  // RTLD_GLOBAL
  Outcome missing{Outcome::Kind::kRaise, "OSError: {name}: cannot open shared object file: No such file or directory",
                  "", ""};
  Outcome failing{Outcome::Kind::kRaise, "OSError: {dlerror}", "", ""};
  bool own = false;
  std::optional<Condition> when;
  std::string each;  // a list's name: one step per item
  // An outcome the package meets where `when` holds, opening nothing (a subprocess that raises):
  // the step's `names` and `lib` only name the library for the words and the finding.
  std::optional<Outcome> outcome;
  std::vector<Step> steps;  // a group
};

struct ListItem {
  std::string lib;
  std::vector<std::string> names;
};

struct ValueSource {
  enum class Kind { kVariable, kFile, kVersion };
  Kind kind = Kind::kVersion;
  std::string name;     // kVariable: the variable; kFile: the file (relative to the site directory)
  std::string package;  // kFile: its distribution, normalized ("" for the rule's own)
  // kFile, kVariable (optional): ECMAScript regex: its group 1 is the value (its whole match where it
  // has none); a variable's value that does not match is no value
  std::string match;
};

struct PackageRule {
  std::string id;
  std::vector<std::string> packages;  // normalized names; empty for an opener rule
  std::string opener;                 // a SONAME; empty for a package rule
  std::string releases;               // a PEP 440 specifier; "" for every release
  std::string fingerprint_file;       // "" for none
  std::vector<std::string> fingerprint;
  // Other files of the distribution and the strings each must hold too (`fingerprint.also`): the
  // code the rule reads beside its file (a module that names a variable the file reads).
  std::vector<std::pair<std::string, std::vector<std::string>>> fingerprint_also;
  Moment moment = Moment::kImport;
  std::string use;
  std::vector<std::pair<std::string, std::vector<ValueSource>>> values;  // in name order
  std::vector<std::pair<std::string, std::vector<ListItem>>> lists;      // in name order
  std::string what, source;
  std::vector<Step> steps;

  // The value or list named `name`, or nullptr.
  const std::vector<ValueSource>* value(const std::string& name) const;
  const std::vector<ListItem>* list(const std::string& name) const;
};

struct PackageRules {
  std::vector<PackageRule> rules;
  std::vector<std::pair<std::string, std::string>> sources;  // key, text; in key order

  // The rules of a data/package_loads.json document; nullopt with `error` naming the rule and the
  // field that is wrong ("rule cudnn-9-sublibraries: steps[1].places[0]: ...").
  static std::optional<PackageRules> parse(const nlohmann::json& doc, std::string* error);
  const std::string* source(const std::string& key) const;
};

// Every step of `steps` and of their groups, depth first (a group before its own steps), until
// `stop` holds for one; whether it did. for_each_step visits them all.
bool any_step(const std::vector<Step>& steps, const std::function<bool(const Step&)>& stop);
void for_each_step(const std::vector<Step>& steps, const std::function<void(const Step&)>& visit);

// "import", "first-use", "first-compile": as the table writes them.
const char* moment_name(Moment m);

}  // namespace envdoctor::environment
