// `envdoctor why`: the answer of queries::explain_why, as text.
#include <algorithm>
#include <sstream>

#include "report/report.h"
#include "support/text.h"

namespace envdoctor::report {

using checks::Edge;

namespace {

using checks::Edge;

std::string rule_label(const Edge& e) {
  std::string out = loader::rule_name(e.rule);
  if (!e.source.empty()) out += " " + e.source;
  return out;
}

void render_library(std::ostream& out, const queries::WhyLibrary& lib) {
  if (lib.asked_path)
    out << lib.asked_path->path << " is " << lib.name << ", owned by " << lib.asked_path->owner << "\n";
  out << lib.name << "\n  copies the environment can reach:\n";
  if (lib.copies.empty()) out << "    none\n";
  for (const queries::OwnedPath& c : lib.copies) out << "    " << c.path << "  (" << c.owner << ")\n";
  out << "  needed by:\n";
  if (lib.needed_by.empty()) out << "    nothing in this environment\n";
  for (const queries::WhyLibrary::Need& n : lib.needed_by) {
    out << "    " << n.consumer.path << "  (" << n.consumer.owner << ")\n";
    if (n.edge.resolved.empty()) {
      out << "      => not found\n";
      for (const loader::Attempt& a : n.edge.attempts)
        out << "         tried " << (a.path.empty() ? "" : a.path + ": ") << a.outcome << "\n";
      continue;
    }
    out << "      => " << n.edge.resolved << "  [" << rule_label(n.edge) << "]\n";
    for (const queries::OwnedPath& c : n.shadowed) out << "         shadows " << c.path << "  (" << c.owner << ")\n";
  }
}

void render_package(std::ostream& out, const queries::WhyPackage& pkg) {
  out << pkg.name << " " << pkg.version << "  (" << pkg.metadata_dir << ")\n";
  out << "  its ELF files and what they need:\n";
  if (pkg.files.empty()) out << "    none\n";
  for (const queries::WhyPackage::File& f : pkg.files) {
    out << "    " << f.path << "\n";
    for (const Edge& e : f.needs)
      out << "      " << e.needed << " => " << (e.resolved.empty() ? "not found" : e.resolved)
          << (e.resolved.empty() ? "" : "  [" + rule_label(e) + "]") << "\n";
  }
  out << "  used by:\n";
  if (pkg.used_by.empty()) out << "    nothing else in this environment\n";
  for (const auto& [label, edges] : pkg.used_by) {
    out << "    " << label << "\n";
    for (const Edge& e : edges) out << "      " << e.consumer << " needs " << e.needed << " => " << e.resolved << "\n";
  }
}

void render_absent(std::ostream& out, const queries::WhyAbsent& absent) {
  out << absent.name << " is not installed\n  required by:\n";
  for (const std::string& r : absent.required_by) out << "    " << r << "\n";
}

void render_findings(std::ostream& out, const std::vector<checks::Finding>& findings, size_t width) {
  if (findings.empty()) return;
  out << "  findings:\n";
  for (const checks::Finding& f : findings) {
    out << "    " << checks::severity_name(f.severity) << " " << checks::code_name(f.code);
    if (f.symbol) out << " " << *f.symbol;
    // The loader's words wrapped at spaces (a path alone may be wider); the fix stays one line.
    out << "\n      " << support::wrap_words(f.message, width - 8, "        ") << "\n";
    if (!f.hint.empty()) out << "      hint: " << support::wrap(f.hint, width - 12, "            ") << "\n";
    if (!f.fix_command.empty()) out << "      fix: " << f.fix_command << "\n";
  }
}

}  // namespace

// Each line wider than `width` wrapped at its spaces under its own indentation and two more: a
// path alone stays whole, and so do a fix and a quoted command, which are pasted as they are.
std::string fit_lines(const std::string& text, size_t width) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    size_t indent = std::min(line.find_first_not_of(' '), line.size());
    std::string content = line.substr(indent);
    if (line.size() <= width || content.starts_with("fix: ") || content.find('`') != std::string::npos ||
        width < indent + 22) {
      out += line + "\n";
      continue;
    }
    std::string more(indent + 2, ' ');
    out += std::string(indent, ' ') + support::wrap_words(content, width - indent - 2, more) + "\n";
  }
  return out;
}

std::string render_why_text(const queries::WhyAnswer& answer, size_t width) {
  std::ostringstream out;
  if (answer.package) render_package(out, *answer.package);
  if (answer.library) render_library(out, *answer.library);
  if (answer.absent) render_absent(out, *answer.absent);
  render_findings(out, answer.findings, std::max<size_t>(width, 40));
  return fit_lines(out.str(), std::max<size_t>(width, 40));
}

}  // namespace envdoctor::report
