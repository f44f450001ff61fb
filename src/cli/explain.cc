// `envdoctor explain [CODE...]`: what a finding code means, why it happens and how to fix it,
// from docs/findings.md as built into the binary; alone, the list of codes.
#include <iostream>

#include "checks/finding.h"
#include "cli/commands.h"
#include "report/explain.h"

namespace envdoctor::cli {

int run_explain(const std::vector<std::string>& codes) {
  if (codes.empty()) {
    std::cout << report::render_explain_list();
    return 0;
  }
  std::vector<const report::FindingDoc*> docs;
  for (const std::string& code : codes) {
    const report::FindingDoc* doc = checks::code_from_name(code) ? report::finding_doc(code) : nullptr;
    if (!doc) {
      std::cerr << "envdoctor: no finding code '" << code << "'";
      if (std::optional<checks::Code> near = checks::nearest_code(code))
        std::cerr << "; did you mean " << checks::code_name(*near) << "?";
      std::cerr << " (`envdoctor explain` lists them all)\n";
      return 2;
    }
    docs.push_back(doc);
  }
  std::cout << report::render_explain(docs);
  return 0;
}

}  // namespace envdoctor::cli
