#include "advice/fix_request.h"

#include "advice/install.h"
#include "advice/load_error.h"

namespace envdoctor::advice {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

Fix make_fix(const environment::Environment& env, const environment::Knowledge& knowledge, const FixRequest& request) {
  return std::visit(Overloaded{
                        [&](const LoadFailure& l) { return fix_for_load_error(env, knowledge, l); },
                        [&](const InvalidFile& f) { return invalid_file(env, f.path); },
                        [&](const Reinstall& r) { return reinstall_because(env, *r.dist, r.why); },
                        [&](const KeepOnly& k) { return keep_only(env, k.owners, *k.keep, k.holder); },
                        [&](const IndexInstall& i) {
                          return Fix{"", index_install(env, i.by, i.spec, false)};
                        },
                    },
                    request.what);
}

void attach(const FixRequest& request, const Fix& fix, std::string& hint, std::string& command) {
  if (request.offer_hint && !fix.hint.empty()) hint = hint.empty() ? fix.hint : hint + request.joint + fix.hint;
  if (request.offer_command) command = fix.command;
}

}  // namespace envdoctor::advice
