#include "report/explain.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "checks/finding.h"

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

std::string render_explain_json(const std::vector<const FindingDoc*>& docs) {
  nlohmann::ordered_json codes = nlohmann::ordered_json::array();
  if (docs.empty()) {
    for (const FindingDoc& d : finding_docs())
      codes.push_back({{"code", d.code}, {"summary", plain(d.summary)}, {"text", nullptr}});
  }
  for (const FindingDoc* d : docs)
    codes.push_back({{"code", d->code}, {"summary", plain(d->summary)}, {"text", d->text}});
  nlohmann::ordered_json out = {{"schema", 1}, {"codes", std::move(codes)}};
  return out.dump(1) + "\n";
}

std::optional<std::vector<const FindingDoc*>> find_finding_docs(const std::vector<std::string>& codes,
                                                                std::string* error) {
  std::vector<const FindingDoc*> docs;
  for (const std::string& code : codes) {
    const FindingDoc* doc = checks::code_from_name(code) ? finding_doc(code) : nullptr;
    if (!doc) {
      *error = "no finding code '" + code + "'";
      if (std::optional<checks::Code> near = checks::nearest_code(code))
        *error += "; did you mean " + std::string(checks::code_name(*near)) + "?";
      *error += " (`envdoctor explain` lists them all)";
      return std::nullopt;
    }
    docs.push_back(doc);
  }
  return docs;
}

}  // namespace envdoctor::report
