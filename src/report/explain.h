// `envdoctor explain`: the page of docs/findings.md about each finding code, built into the
// binary at build time (scripts/findings.py writes finding_docs()), so that what the terminal
// shows is the repository's text and an installed binary needs no file to explain itself. The
// page is the one table of finding codes: checks::Code is made from the same sections, in the
// same order.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace envdoctor::report {

// One `## CODE` section of docs/findings.md.
struct FindingDoc {
  std::string_view code;     // "missing-library"
  std::string_view summary;  // the section's first line: severity and meaning
  std::string_view text;     // the whole section, heading included, as Markdown
};

// Every section, in the page's order (generated).
std::span<const FindingDoc> finding_docs();
const FindingDoc* finding_doc(std::string_view code);

// `envdoctor explain`: one line per code, its summary beside it.
std::string render_explain_list();
// `envdoctor explain CODE...`: the sections, one after another.
std::string render_explain(const std::vector<const FindingDoc*>& docs);
// data/schemas/explain.schema.json (the MCP tool `explain`): each section's code, summary, text;
// with no docs, every code with its summary alone.
std::string render_explain_json(const std::vector<const FindingDoc*>& docs);

// The sections of `codes`, in their order. nullopt with `error` at the first that is no finding
// code: "no finding code 'X'; did you mean Y? (`envdoctor explain` lists them all)".
std::optional<std::vector<const FindingDoc*>> find_finding_docs(const std::vector<std::string>& codes,
                                                                std::string* error);
// The last line of `check`'s text: where to read about the codes it printed.
std::string explain_pointer(const std::vector<std::string_view>& codes);

}  // namespace envdoctor::report
