#include "report/explain.h"

#include <algorithm>

namespace envdoctor::report {

namespace {

// The summary line without its Markdown emphasis and code marks, for a terminal.
std::string plain(std::string_view markdown) {
  std::string out;
  for (char c : markdown)
    if (c != '*' && c != '`') out += c;
  return out;
}

}  // namespace

const FindingDoc* finding_doc(std::string_view code) {
  for (const FindingDoc& d : finding_docs())
    if (d.code == code) return &d;
  return nullptr;
}

std::string render_explain_list() {
  size_t width = 0;
  for (const FindingDoc& d : finding_docs()) width = std::max(width, d.code.size());
  std::string out;
  for (const FindingDoc& d : finding_docs())
    out += std::string(d.code) + std::string(width - d.code.size() + 2, ' ') + plain(d.summary) + "\n";
  return out;
}

std::string render_explain(const std::vector<const FindingDoc*>& docs) {
  std::string out;
  for (const FindingDoc* d : docs) out += (out.empty() ? "" : "\n") + std::string(d->text);
  return out;
}

std::string explain_pointer(const std::vector<std::string_view>& codes) {
  std::string out = "what these mean: envdoctor explain";
  for (std::string_view c : codes) out += " " + std::string(c);
  return out + "\n";
}

}  // namespace envdoctor::report
