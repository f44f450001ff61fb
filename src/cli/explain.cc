// `envdoctor explain [CODE...]`: what a finding code means, why it happens and how to fix it,
// from docs/findings.md as built into the binary; alone, the list of codes.
#include <iostream>

#include "cli/commands.h"
#include "cli/session.h"
#include "report/explain.h"

namespace envdoctor::cli {

int run_explain(const std::vector<std::string>& codes) {
  if (codes.empty()) {
    std::cout << report::render_explain_list();
    return 0;
  }
  std::string error;
  std::optional<std::vector<const report::FindingDoc*>> docs = report::find_finding_docs(codes, &error);
  if (!docs) return tool_failure(error);
  std::cout << report::render_explain(*docs);
  return 0;
}

}  // namespace envdoctor::cli
