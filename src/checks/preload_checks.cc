#include "checks/preload_checks.h"

#include "loader/process.h"

namespace envdoctor::checks {

namespace {

// The paths the search tried, as `tree` lists them: what to look at first.
std::string tried(const loader::Resolution& r) {
  std::string out;
  size_t shown = 0;
  for (const loader::Attempt& a : r.attempts) {
    if (a.path.empty() || a.kind == loader::Attempt::Kind::kNote) continue;
    if (shown++ == 3) {
      out += ", ...";
      break;
    }
    out += (out.empty() ? "" : ", ") + a.path;
  }
  return out;
}

// Where the name was given, for the hint: what to edit.
std::string where_given(const environment::Environment& env, const loader::Preload& preload) {
  std::string where = loader::preload_source_name(preload.source);
  if (preload.source == loader::Preload::Source::kLdSoPreload) return env.root.empty() ? where : "the root's " + where;
  return env.image ? "the image's LD_PRELOAD (its Env)" : "LD_PRELOAD (`unset LD_PRELOAD`)";
}

}  // namespace

std::vector<Finding> check_preloads(const Context& ctx) {
  const environment::Environment& env = ctx.env;
  std::vector<Finding> out;
  const std::string& program = env.python.program();
  if (program.empty() || (env.loader.ld_preload.empty() && !env.loader.ld_so_preload)) return out;
  // The interpreter as ld.so starts it: the preloads are mapped right after the main program.
  loader::Process p(env.loader, *env.store);
  if (!p.load_main(program, /*bind_symbols=*/false)) return out;
  for (const loader::PreloadFailure& failure : p.preload_failures()) {
    Finding f;
    f.code = Code::kPreloadIgnored;
    f.severity = Severity::kWarning;
    f.file = program;
    f.library = failure.preload.name;
    f.message = failure.message();
    std::string paths = tried(failure.resolution);
    f.hint = "ld.so starts every process of this interpreter without it, so what it would interpose is not there" +
             (paths.empty() ? std::string() : " (it tried " + paths + ")") + "; remove the name from " +
             where_given(env, failure.preload) + ", or " +
             (failure.preload.name.find('/') == std::string::npos
                  ? "install the library that provides it where the loader looks, or give its absolute path"
                  : "give the path of a library that is there");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace envdoctor::checks
