#include "environment/package_rules.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "python/metadata_file.h"
#include "python/version.h"
#include "support/text.h"

namespace envdoctor::environment {

namespace {
// Named apart from the anonymous namespace: the unity build puts this file beside others.
namespace rules_json {

using nlohmann::json;

// The second of the pair whose first is `key`, or nullptr.
template <typename T>
const T* named(const std::vector<std::pair<std::string, T>>& pairs, const std::string& key) {
  for (const auto& [k, v] : pairs)
    if (k == key) return &v;
  return nullptr;
}

// The first field found wrong: where, relative to its rule ("steps[1].places[0]"), and why.
struct Wrong {
  std::string field, why;
};

[[noreturn]] void wrong(std::string field, std::string why) { throw Wrong{std::move(field), std::move(why)}; }

std::string at(const std::string& base, const std::string& key) { return base.empty() ? key : base + "." + key; }
std::string at(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }
std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// The words a rule's texts may use besides its values (docs/package-loads.md, "Outcomes"): names
// know only the step's library; words also know what happened.
const std::vector<std::string> kNameWords = {"lib", "LIB"};
const std::vector<std::string> kOutcomeWords = {"name", "tried", "lib", "LIB", "dlerror", "path", "sys_path", "listed"};

// One JSON object of the table, read field by field against the fields it may have: one it may
// not is an error (a misspelt field never passes unseen), and so is one of the wrong type.
class Fields {
 public:
  Fields(const json& j, std::string where, std::vector<std::string> known) : j_(j), where_(std::move(where)) {
    if (!j.is_object()) wrong(where_, "not an object");
    for (const auto& [key, value] : j.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::optional<std::string> near = support::did_you_mean(key, known);
      wrong(field(key),
            std::string("not a field of this object") + (near ? " (did you mean " + in_quotes(*near) + "?)" : ""));
    }
  }

  bool has(const char* key) const { return j_.contains(key); }
  std::string field(const std::string& key) const { return at(where_, key); }
  const json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const json& need(const char* key) const {
    const json* v = find(key);
    if (!v) wrong(field(key), "missing");
    return *v;
  }

  std::string text(const char* key, const std::string& fallback = "") const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string() || v->get_ref<const std::string&>().empty()) wrong(field(key), "not a string, or empty");
    return v->get<std::string>();
  }
  std::string required_text(const char* key) const {
    need(key);
    return text(key);
  }
  bool flag(const char* key, bool fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) wrong(field(key), "not true or false");
    return v->get<bool>();
  }
  // A list of strings that are not empty; absent: none, and `required`: at least one.
  std::vector<std::string> texts(const char* key, bool required) const {
    const json* v = find(key);
    if (!v) {
      if (required) wrong(field(key), "missing");
      return {};
    }
    if (!v->is_array() || (required && v->empty())) wrong(field(key), "not a list of strings, or empty");
    std::vector<std::string> out;
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string() || (*v)[i].get_ref<const std::string&>().empty())
        wrong(at(field(key), i), "not a string, or empty");
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }
  // The value of `key` among `choices` (the table's word, then the enum), or `fallback`.
  template <typename E>
  E choice(const char* key, const std::vector<std::pair<std::string, E>>& choices, E fallback) const {
    if (!has(key)) return fallback;
    std::string word = text(key);
    std::vector<std::string> words;
    for (const auto& [w, e] : choices) {
      if (w == word) return e;
      words.push_back(w);
    }
    wrong(field(key), in_quotes(word) + " is not one of " + support::join(words));
  }

 private:
  const json& j_;
  std::string where_;
};

// The key of `j` that says which kind of `what` it is, among `kinds`; an error naming the key
// where none or two are there.
template <typename Kind>
std::pair<std::string, Kind> kind_of(const json& j, const std::string& where, const char* what,
                                     const std::vector<std::pair<std::string, Kind>>& kinds) {
  std::vector<std::string> words, present;
  std::optional<Kind> kind;
  for (const auto& [word, k] : kinds) {
    words.push_back(word);
    if (j.is_object() && j.contains(word)) present.push_back(word), kind = k;
  }
  std::string list = " (" + support::join(words) + ")";
  if (!j.is_object()) wrong(where, std::string("not an object: a ") + what + list);
  if (present.size() > 1) wrong(where, present[0] + " and " + present[1] + ": one kind of " + what + " each" + list);
  if (present.empty()) {
    if (j.empty()) wrong(where, std::string("no kind of ") + what + list);
    wrong(where, in_quotes(j.begin().key()) + " is not a kind of " + what + list);
  }
  return {present[0], *kind};
}

// The `{KEY}`s of `s`. In a name or a directory every `{` opens one, as the engine fills them in; in
// words, as Python's str.format, `{{` and `}}` are braces. A `{` that no `}` closes is an error, and
// so in words is a `}` alone: the engine would put nothing in where the author meant something.
std::vector<std::string> braced_keys(const std::string& s, bool format, const std::string& where) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (format && (s[i] == '{' || s[i] == '}') && i + 1 < s.size() && s[i + 1] == s[i]) {
      ++i;
      continue;
    }
    if (format && s[i] == '}') wrong(where, "a } that no { opens (a brace of the words is written }})");
    if (s[i] != '{') continue;
    size_t close = s.find('}', i);
    if (close == std::string::npos)
      wrong(where, std::string("a { that no } closes") + (format ? " (a brace of the words is written {{)" : ""));
    out.push_back(s.substr(i + 1, close - i - 1));
    i = close;
  }
  return out;
}

// `s`'s `{KEY}`s (`format`: an outcome's words, else a name or directory) are words of the format or
// the rule's values (`{v}`, `{v.2}`): an error naming the first that is neither, since a name with a
// misspelt value would silently never match, and words would print it.
void check_braces(const std::string& s, const std::string& where, const PackageRule& rule, bool format) {
  const std::vector<std::string>& words = format ? kOutcomeWords : kNameWords;
  for (const std::string& w : braced_keys(s, format, where)) {
    if (std::find(words.begin(), words.end(), w) != words.end()) continue;
    std::string value = w.substr(0, w.find('.'));
    std::string part = w.size() > value.size() ? w.substr(value.size() + 1) : "1";
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (rule.value(value) && digits) continue;
    std::vector<std::string> known = words;
    for (const auto& [name, sources] : rule.values) known.push_back(name);
    wrong(where, "{" + w + "} is no value of the rule nor a word of the format (" + support::join(known) + ")");
  }
}

Outcome read_outcome(const json& j, const std::string& where, const PackageRule& rule) {
  using K = Outcome::Kind;
  auto [word, kind] =
      kind_of<K>(j, where, "outcome",
                 {{"raise", K::kRaise}, {"fall_back", K::kFallBack}, {"stop", K::kStop}, {"continue", K::kContinue}});
  Outcome o;
  o.kind = kind;
  if (kind == K::kStop || kind == K::kContinue) {
    Fields f(j, where, {word});
    if (!f.flag(word.c_str(), false)) wrong(f.field(word), "only true");
    return o;
  }
  Fields f(j, where,
           kind == K::kRaise ? std::vector<std::string>{"raise", "unless_naming"}
                             : std::vector<std::string>{"fall_back", "to", "unless_naming"});
  const json& words = f.need(word.c_str());
  if (!words.is_string()) wrong(f.field(word), "not a string");  // "": a fallback that logs nothing
  o.words = words.get<std::string>();
  check_braces(o.words, f.field(word), rule, true);
  if (kind == K::kFallBack) o.to = f.required_text("to");
  o.unless_naming = f.text("unless_naming");
  if (!o.unless_naming.empty() && !rule.list(o.unless_naming))
    wrong(f.field("unless_naming"), in_quotes(o.unless_naming) + " names no list of the rule");
  return o;
}

Place read_place(const json& j, const std::string& where, const PackageRule& rule) {
  using K = Place::Kind;
  auto [word, kind] = kind_of<K>(j, where, "place",
                                 {{"sys_path", K::kSysPath},
                                  {"package", K::kPackage},
                                  {"variable", K::kVariable},
                                  {"path", K::kPath},
                                  {"ldconfig", K::kLdconfig},
                                  {"ld_library_path", K::kLdLibraryPath},
                                  {"dlopen", K::kDlopen}});
  std::vector<std::string> known = {word, "names"};
  if (kind == K::kSysPath) known.push_back("if_dir");
  if (kind == K::kVariable) known.insert(known.end(), {"default", "below", "recursive", "exclude"});
  if (kind == K::kPath) known.insert(known.end(), {"recursive", "exclude"});
  if (kind == K::kLdconfig) known.insert(known.end(), {"lines", "exclude"});
  Fields f(j, where, known);
  Place p;
  p.kind = kind;
  p.names = f.texts("names", false);
  if (f.has("names") && p.names.empty()) wrong(f.field("names"), "not a list of strings, or empty");
  for (size_t i = 0; i < p.names.size(); ++i) check_braces(p.names[i], at(f.field("names"), i), rule, false);
  if (kind == K::kPath || kind == K::kLdconfig) p.exclude = f.texts("exclude", false);
  if (kind == K::kPath) p.recursive = f.flag("recursive", false);
  p.lines = f.flag("lines", false);
  if (kind == K::kSysPath) p.dirs = f.texts("sys_path", true), p.if_dir = f.text("if_dir");
  if (kind == K::kPackage || kind == K::kPath) p.dirs = {f.required_text(word.c_str())};
  for (size_t i = 0; i < p.dirs.size(); ++i)
    check_braces(p.dirs[i], kind == K::kSysPath ? at(f.field(word), i) : f.field(word), rule, false);
  if (kind == K::kLdconfig) p.text = f.required_text("ldconfig");
  if (kind == K::kVariable) {
    p.variables = f.texts("variable", true);
    if (f.has("default")) p.fallback = f.text("default");
    p.below = f.text("below");
    p.recursive = f.flag("recursive", false);
    p.exclude = f.texts("exclude", false);
  }
  if (kind == K::kLdLibraryPath && !f.flag("ld_library_path", false)) wrong(f.field(word), "only true");
  if (kind == K::kDlopen) {
    std::string caller = f.required_text("dlopen");
    // "caller", or a file of the environment relative to the site directory, never above it.
    if (caller.empty() || caller.front() == '/' || caller.find("..") != std::string::npos)
      wrong(f.field(word), "\"caller\" or a path relative to the site directory");
    if (caller != "caller") p.caller = caller;
  }
  return p;
}

// A variable condition's test: `set` (the default), `present` or `int`, one of them.
void read_variable_test(const Fields& f, Condition& c) {
  int tests = f.has("set") + f.has("present") + f.has("int");
  if (tests > 1) wrong(f.field("variable"), "one of set, present and int");
  if (f.has("present")) {
    if (!f.flag("present", true)) wrong(f.field("present"), "only true (not present: {\"not\": ...})");
    c.test = Condition::Test::kPresent;
  }
  if (f.has("int")) {
    if (!f.flag("int", true)) wrong(f.field("int"), "only true (false to int(): {\"not\": ...})");
    c.test = Condition::Test::kInt;
    c.fallback = f.text("default", "0");
  } else if (f.has("default")) {
    wrong(f.field("default"), "only with int");
  }
}

Condition read_condition(const json& j, const std::string& where) {
  using K = Condition::Kind;
  auto [word, kind] = kind_of<K>(j, where, "condition",
                                 {{"variable", K::kVariable},
                                  {"failed", K::kFailed},
                                  {"loaded", K::kLoaded},
                                  {"mapped", K::kMapped},
                                  {"found", K::kFound},
                                  {"ldconfig", K::kLdconfig},
                                  {"on_path", K::kOnPath},
                                  {"gpu", K::kGpu},
                                  {"all", K::kAll},
                                  {"any", K::kAny},
                                  {"not", K::kNot}});
  std::vector<std::string> known = {word};
  if (kind == K::kVariable) known.insert(known.end(), {"set", "present", "int", "default"});
  if (kind == K::kFailed) known.push_back("naming");
  if (kind == K::kFound) known.push_back("place");
  Fields f(j, where, known);
  Condition c;
  c.kind = kind;
  if (kind == K::kAll || kind == K::kAny) {
    const json& parts = f.need(word.c_str());
    if (!parts.is_array() || parts.empty()) wrong(f.field(word), "not a list of conditions, or empty");
    for (size_t i = 0; i < parts.size(); ++i) c.parts.push_back(read_condition(parts[i], at(f.field(word), i)));
    return c;
  }
  if (kind == K::kNot) {
    c.parts.push_back(read_condition(f.need("not"), f.field("not")));
    return c;
  }
  if (kind == K::kGpu) {
    if (!f.need("gpu").is_boolean()) wrong(f.field("gpu"), "not true or false");
    c.set = f.need("gpu").get<bool>();
    return c;
  }
  c.name = f.required_text(word.c_str());
  c.set = f.flag("set", true);
  c.naming = f.text("naming");
  if (kind == K::kVariable) read_variable_test(f, c);
  if (kind == K::kFound) {
    const json& place = f.need("place");
    if (!place.is_number_integer() || place.get<long long>() < 0 || place.get<long long>() > 1000)
      wrong(f.field("place"), "not a place's index (0, 1, ...)");
    c.place = place.get<int>();
  }
  return c;
}

// The fields of a step that opens names (or a list's items); a group carries none of them.
const std::vector<std::string> kOpeningFields = {"lib",  "names",   "places",  "sort", "take",
                                                 "mode", "missing", "failing", "own",  "outcome"};

// Which of names, each and steps the step has: exactly one.
void check_step_shape(const Fields& f, const std::string& where) {
  std::vector<std::string> shape;
  for (const char* key : {"names", "each", "steps"})
    if (f.has(key)) shape.push_back(key);
  if (shape.empty())
    wrong(where,
          "neither names, each nor steps: a step opens names, one name list per item of a list (each), "
          "or a group (steps)");
  if (shape.size() > 1) wrong(where, shape[0] + " and " + shape[1] + ": a step has one of names, each and steps");
  if (shape[0] == "steps")
    for (const std::string& key : kOpeningFields)
      if (f.has(key.c_str())) wrong(f.field(key), "a group (steps) has none; its steps carry their own");
  if (shape[0] == "each" && f.has("lib")) wrong(f.field("lib"), "an each step takes its lib from the list's items");
}

Step read_step(const json& j, const std::string& where, const PackageRule& rule);

void read_opening(const Fields& f, Step& s, const PackageRule& rule) {
  s.lib = f.text("lib");
  s.names = f.texts("names", !f.has("each"));
  for (size_t i = 0; i < s.names.size(); ++i) check_braces(s.names[i], at(f.field("names"), i), rule, false);
  if (f.has("each")) {
    s.each = f.required_text("each");
    if (!rule.list(s.each)) {
      std::vector<std::string> lists;
      for (const auto& [name, items] : rule.lists) lists.push_back(name);
      wrong(f.field("each"), in_quotes(s.each) + " names no list of the rule" +
                                 (lists.empty() ? " (it has none)" : " (" + support::join(lists) + ")"));
    }
  }
  if (f.has("outcome")) {
    // A step that opens nothing: what it names is for the words; where it would look, it does not.
    for (const char* key : {"places", "sort", "take", "mode", "missing", "failing", "own", "each"})
      if (f.has(key)) wrong(f.field(key), "a step with an outcome opens nothing, so it has none");
    s.outcome = read_outcome(*f.find("outcome"), f.field("outcome"), rule);
    if (s.outcome->kind != Outcome::Kind::kRaise && s.outcome->kind != Outcome::Kind::kFallBack)
      wrong(f.field("outcome"), "raise or fall_back: a step that opens nothing has nothing to stop or go on from");
    return;
  }
  const json& places = f.need("places");
  if (!places.is_array() || places.empty()) wrong(f.field("places"), "not a list of places, or empty");
  for (size_t i = 0; i < places.size(); ++i) s.places.push_back(read_place(places[i], at(f.field("places"), i), rule));
  using S = Step::Sort;
  s.sort = f.choice<S>("sort", {{"listing", S::kListing}, {"name", S::kName}, {"name-descending", S::kNameDescending}},
                       S::kListing);
  s.every = f.choice<bool>("take", {{"first", false}, {"every", true}}, false);
  s.global = f.choice<bool>("mode", {{"local", false}, {"global", true}}, false);
  if (f.has("missing")) s.missing = read_outcome(*f.find("missing"), f.field("missing"), rule);
  if (f.has("failing")) s.failing = read_outcome(*f.find("failing"), f.field("failing"), rule);
  s.own = f.flag("own", false);
}

Step read_step(const json& j, const std::string& where, const PackageRule& rule) {
  std::vector<std::string> known = kOpeningFields;
  known.insert(known.end(), {"id", "what", "when", "each", "steps"});
  Fields f(j, where, known);
  check_step_shape(f, where);
  Step s;
  s.id = f.text("id");
  s.what = f.text("what");
  if (f.has("when")) s.when = read_condition(*f.find("when"), f.field("when"));
  if (!f.has("steps")) {
    read_opening(f, s, rule);
    return s;
  }
  const json& steps = *f.find("steps");
  if (!steps.is_array() || steps.empty()) wrong(f.field("steps"), "not a list of steps, or empty");
  for (size_t i = 0; i < steps.size(); ++i) s.steps.push_back(read_step(steps[i], at(f.field("steps"), i), rule));
  return s;
}

// The steps of a rule by id, groups' steps included; a second step of one id is an error.
void index_steps(const std::vector<Step>& steps, const std::string& where, std::map<std::string, const Step*>& ids) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (!s.id.empty() && !ids.emplace(s.id, &s).second)
      wrong(at(at(where, i), "id"), in_quotes(s.id) + " is the id of an earlier step of the rule");
    index_steps(s.steps, at(at(where, i), "steps"), ids);
  }
}

// Every step a condition names is a step of its rule, and a place it names is one of that step's.
void check_condition(const Condition& c, const std::string& where, const std::map<std::string, const Step*>& ids,
                     const PackageRule& rule) {
  using K = Condition::Kind;
  if (c.kind == K::kAll || c.kind == K::kAny || c.kind == K::kNot) {
    const char* word = c.kind == K::kAll ? "all" : c.kind == K::kAny ? "any" : "not";
    for (size_t i = 0; i < c.parts.size(); ++i)
      check_condition(c.parts[i], c.kind == K::kNot ? at(where, word) : at(at(where, word), i), ids, rule);
    return;
  }
  if (c.kind != K::kFailed && c.kind != K::kLoaded && c.kind != K::kFound) return;
  const char* word = c.kind == K::kFailed ? "failed" : c.kind == K::kLoaded ? "loaded" : "found";
  auto step = ids.find(c.name);
  if (step == ids.end()) wrong(at(where, word), in_quotes(c.name) + " is the id of no step of the rule");
  if (c.kind == K::kFound && static_cast<size_t>(c.place) >= step->second->places.size())
    wrong(at(where, "place"), "step " + in_quotes(c.name) + " has " + std::to_string(step->second->places.size()) +
                                  (step->second->places.size() == 1 ? " place" : " places"));
  if (c.kind == K::kFailed && !c.naming.empty() && !rule.list(c.naming))
    wrong(at(where, "naming"), in_quotes(c.naming) + " names no list of the rule");
}

void check_conditions(const std::vector<Step>& steps, const std::string& where,
                      const std::map<std::string, const Step*>& ids, const PackageRule& rule) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].when) check_condition(*steps[i].when, at(at(where, i), "when"), ids, rule);
    check_conditions(steps[i].steps, at(at(where, i), "steps"), ids, rule);
  }
}

ValueSource read_value_source(const json& j, const std::string& where) {
  using K = ValueSource::Kind;
  auto [word, kind] =
      kind_of<K>(j, where, "value source", {{"variable", K::kVariable}, {"file", K::kFile}, {"version", K::kVersion}});
  Fields f(j, where,
           kind == K::kFile       ? std::vector<std::string>{"file", "package", "match"}
           : kind == K::kVariable ? std::vector<std::string>{"variable", "match"}
                                  : std::vector{word});
  ValueSource v;
  v.kind = kind;
  if (kind == K::kVersion && f.required_text("version") != "self") wrong(f.field("version"), "only \"self\"");
  if (kind == K::kVariable) v.name = f.required_text("variable");
  if (kind == K::kVersion || (kind == K::kVariable && !f.has("match"))) return v;
  if (kind == K::kFile) v.name = f.required_text("file");
  if (kind == K::kFile) v.package = python::normalize_name(f.text("package"));
  v.match = f.required_text("match");
  try {
    std::regex(v.match, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    wrong(f.field("match"), "not an ECMAScript regular expression: " + std::string(e.what()));
  }
  return v;
}

// A value's or list's name: a word that `{NAME}` can say, and not one of the format's own.
void check_name(const std::string& name, const std::string& where) {
  bool word = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  if (!word) wrong(where, "not a name of letters, digits and '_'");
  if (std::find(kOutcomeWords.begin(), kOutcomeWords.end(), name) != kOutcomeWords.end())
    wrong(where, "a word of the format, not a name of the rule's");
}

void read_values(const Fields& f, PackageRule& rule) {
  const json* values = f.find("values");
  if (!values) return;
  if (!values->is_object()) wrong(f.field("values"), "not an object");
  for (const auto& [name, sources] : values->items()) {
    std::string where = at(f.field("values"), name);
    check_name(name, where);
    if (!sources.is_array() || sources.empty()) wrong(where, "not a list of sources, or empty");
    std::vector<ValueSource> read;
    for (size_t i = 0; i < sources.size(); ++i) read.push_back(read_value_source(sources[i], at(where, i)));
    rule.values.emplace_back(name, std::move(read));
  }
}

void read_lists(const Fields& f, PackageRule& rule) {
  const json* lists = f.find("lists");
  if (!lists) return;
  if (!lists->is_object()) wrong(f.field("lists"), "not an object");
  for (const auto& [name, items] : lists->items()) {
    std::string where = at(f.field("lists"), name);
    check_name(name, where);
    if (!items.is_array() || items.empty()) wrong(where, "not a list of libraries, or empty");
    std::vector<ListItem> read;
    for (size_t i = 0; i < items.size(); ++i) {
      Fields item(items[i], at(where, i), {"lib", "names"});
      read.push_back({item.required_text("lib"), item.texts("names", true)});
      for (size_t n = 0; n < read.back().names.size(); ++n)
        check_braces(read.back().names[n], at(item.field("names"), n), rule, false);
    }
    rule.lists.emplace_back(name, std::move(read));
  }
}

// Which distributions or library the rule is about, which releases, and which file says so.
void read_subject(const Fields& f, PackageRule& rule) {
  if (f.has("package") == f.has("opener"))
    wrong(f.has("package") ? "package and opener" : "neither package nor opener",
          "a rule is a package's (package) or a library's that opens others (opener)");
  for (const std::string& name : f.texts("package", false)) rule.packages.push_back(python::normalize_name(name));
  rule.opener = f.text("opener");
  rule.releases = f.text("releases");
  if (!rule.releases.empty() && !python::parse_specifier(rule.releases))
    wrong(f.field("releases"), in_quotes(rule.releases) + " is not a PEP 440 version specifier");
  if (const json* fp = f.find("fingerprint")) {
    Fields print(*fp, f.field("fingerprint"), {"file", "contains", "also"});
    rule.fingerprint_file = print.required_text("file");
    rule.fingerprint = print.texts("contains", false);
    if (const json* also = print.find("also")) {
      if (!also->is_array() || also->empty()) wrong(print.field("also"), "not a list of files, or empty");
      for (size_t i = 0; i < also->size(); ++i) {
        Fields other((*also)[i], at(print.field("also"), i), {"file", "contains"});
        rule.fingerprint_also.emplace_back(other.required_text("file"), other.texts("contains", true));
      }
    }
  }
}

PackageRule read_rule(const json& j, const std::vector<std::pair<std::string, std::string>>& sources) {
  Fields f(j, "",
           {"id", "package", "opener", "releases", "fingerprint", "moment", "use", "values", "lists", "what", "source",
            "steps"});
  PackageRule rule;
  rule.id = f.required_text("id");
  read_subject(f, rule);
  f.need("moment");
  rule.moment = f.choice<Moment>(
      "moment",
      {{"import", Moment::kImport}, {"first-use", Moment::kFirstUse}, {"first-compile", Moment::kFirstCompile}},
      Moment::kImport);
  rule.use = f.text("use");
  if (rule.moment != Moment::kImport && rule.use.empty())
    wrong("use", std::string("missing: a ") + moment_name(rule.moment) + " rule names the call that makes its loads");
  read_values(f, rule);
  read_lists(f, rule);
  rule.what = f.required_text("what");
  rule.source = f.required_text("source");
  if (!named(sources, rule.source)) wrong("source", in_quotes(rule.source) + " is not a key of the table's sources");
  const json& steps = f.need("steps");
  if (!steps.is_array() || steps.empty()) wrong("steps", "not a list of steps, or empty");
  for (size_t i = 0; i < steps.size(); ++i) rule.steps.push_back(read_step(steps[i], at("steps", i), rule));
  std::map<std::string, const Step*> ids;
  index_steps(rule.steps, "steps", ids);
  check_conditions(rule.steps, "steps", ids, rule);
  return rule;
}

// The table's own fields: its format, its sources, its rules (each read by read_rule).
std::vector<std::pair<std::string, std::string>> read_sources(const Fields& table) {
  const json& sources = table.need("sources");
  if (!sources.is_object()) wrong("sources", "not an object");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, text] : sources.items()) {
    if (!text.is_string() || text.get_ref<const std::string&>().empty())
      wrong(at("sources", key), "not a string, or empty");
    out.emplace_back(key, text.get<std::string>());
  }
  return out;
}

// The whole table; nullopt with `error` naming the rule and the field of the first that is wrong.
std::optional<PackageRules> read_table(const json& doc, std::string* error) {
  PackageRules out;
  std::string rule_name;  // the rule being read, as errors name it
  try {
    Fields table(doc, "", {"about", "schema", "sources", "rules"});
    if (table.need("schema") != 1)
      wrong("schema", table.need("schema").dump() + " is not 1, the format this envdoctor reads");
    out.sources = read_sources(table);
    const json& rules = table.need("rules");
    if (!rules.is_array()) wrong("rules", "not a list of rules");
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < rules.size(); ++i) {
      rule_name = at("rules", i);
      const json& r = rules[i];
      if (r.is_object() && r.contains("id") && r["id"].is_string() && !r["id"].get_ref<const std::string&>().empty())
        rule_name = "rule " + r["id"].get<std::string>();
      out.rules.push_back(read_rule(r, out.sources));
      if (auto [it, added] = seen.emplace(out.rules.back().id, i); !added)
        wrong("id", "also the id of rules[" + std::to_string(it->second) + "]");
    }
  } catch (const Wrong& w) {
    std::string where = rule_name;
    if (!w.field.empty()) where += (where.empty() ? "" : ": ") + w.field;
    if (error) *error = (where.empty() ? "" : where + ": ") + w.why;
    return std::nullopt;
  }
  return out;
}

}  // namespace rules_json
}  // namespace

const std::vector<ValueSource>* PackageRule::value(const std::string& name) const {
  return rules_json::named(values, name);
}
const std::vector<ListItem>* PackageRule::list(const std::string& name) const { return rules_json::named(lists, name); }

std::optional<PackageRules> PackageRules::parse(const nlohmann::json& doc, std::string* error) {
  return rules_json::read_table(doc, error);
}

const std::string* PackageRules::source(const std::string& key) const { return rules_json::named(sources, key); }

bool any_step(const std::vector<Step>& steps, const std::function<bool(const Step&)>& stop) {
  for (const Step& s : steps)
    if (stop(s) || any_step(s.steps, stop)) return true;
  return false;
}

void for_each_step(const std::vector<Step>& steps, const std::function<void(const Step&)>& visit) {
  any_step(steps, [&](const Step& s) {
    visit(s);
    return false;
  });
}

const char* moment_name(Moment m) {
  switch (m) {
    case Moment::kImport: return "import";
    case Moment::kFirstUse: return "first-use";
    case Moment::kFirstCompile: return "first-compile";
  }
  return "import";
}

}  // namespace envdoctor::environment
