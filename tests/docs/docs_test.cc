// The documentation a user can reach, held to the code: docs/findings.md, the one table of finding
// codes, is what checks::Code, `envdoctor explain` and the JSON Schemas' code enums are made from
// (scripts/findings.py), and the schemas in data/schemas are what it makes of them today and are
// themselves valid; DESIGN.md's table, where it is beside the repository, names the same codes;
// every relative link of README.md and docs/*.md, and every file a --help text names, exists in
// the repository (or is installed from it).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "checks/finding.h"
#include "fixtures/fixture.h"
#include "fixtures/schema.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const fs::path kSource = ENVDOCTOR_SOURCE_DIR;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::set<std::string> enum_codes() {
  std::set<std::string> out;
  for (checks::Code c : checks::kAllCodes) out.insert(checks::code_name(c));
  return out;
}

// docs/findings.md's `## ` sections: heading -> the section's text, heading included, trailing
// blank lines dropped, as `envdoctor explain` prints it.
std::map<std::string, std::string> findings_sections() {
  std::map<std::string, std::string> out;
  std::istringstream in(read(kSource / "docs/findings.md"));
  std::string* current = nullptr;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) {
      std::string code = line.substr(3);
      EXPECT_FALSE(out.count(code)) << "two sections for " << code;
      current = &out[code];
    }
    if (current) *current += line + "\n";
  }
  for (auto& [code, text] : out)
    while (text.size() > 1 && text.ends_with("\n\n")) text.pop_back();
  return out;
}

// checks::Code is made from the page's headings at build time: the same codes, in the same order.
TEST(FindingsPage, TheCodesAreItsSectionsInOrder) {
  std::vector<std::string> sections;
  std::istringstream in(read(kSource / "docs/findings.md"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("## ", 0) == 0) sections.push_back(line.substr(3));
  std::vector<std::string> codes;
  for (checks::Code c : checks::kAllCodes) codes.push_back(checks::code_name(c));
  EXPECT_EQ(codes, sections);
  EXPECT_EQ(checks::code_from_name("missing-library"), checks::Code::kMissingLibrary);
  EXPECT_EQ(checks::code_name(checks::Code::kContainerRequirementUnmet), std::string("container-requirement-unmet"));
}

// The generator refuses a page it cannot make codes of, naming the line: a heading that is no
// code, a section twice, a section whose first line names no severity.
TEST(FindingsPage, TheGeneratorRefusesAMalformedPage) {
  TempDir tmp;
  std::string script = quote((kSource / "scripts/findings.py").string());
  auto make = [&](const std::string& page) {
    return run("python3 " + script + " sources " + quote(tmp.write("findings.md", page)) + " " + quote(tmp / "out"));
  };
  std::string ok = "# Findings\n\n## missing-library\n\n*error* · a library is missing.\n\nMore.\n";
  CommandResult r = make(ok);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(slurp(tmp / "out/checks/finding_codes.h").find("  kMissingLibrary,\n"), std::string::npos);
  r = make(ok + "\n## Missing Library\n\n*error* · x\n");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("findings.md:9: `## Missing Library` is no finding code"), std::string::npos) << r.err;
  r = make(ok + "\n## missing-library\n\n*error* · x\n");
  EXPECT_NE(r.err.find("findings.md:9: a second section for missing-library"), std::string::npos) << r.err;
  r = make(ok + "\n## file-owned-twice\n\nTwo packages.\n");
  EXPECT_NE(r.err.find("findings.md:9: the line after a blank one must say *error* or *warning* first"),
            std::string::npos)
      << r.err;
}

// DESIGN.md, the project's contract, lies beside the repository where it was built (../shared);
// its table names the codes of the page, each with the severity the page's summary names first.
// One row is no code of the project: ld.so's "no version information available" is reported as
// missing-version (docs/findings.md, "A copy without symbol versioning").
TEST(FindingsPage, DesignsTableNamesTheSameCodes) {
  fs::path design = kSource.parent_path() / "shared/DESIGN.md";
  if (!fs::exists(design)) GTEST_SKIP() << design << " is not beside the repository";
  std::map<std::string, std::string> severities;  // code -> DESIGN's first severity
  std::istringstream in(read(design));
  std::regex row(R"(^\| ([a-z][a-z0-9, -]*[a-z0-9]) \| (error|warning)[;| ])");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::istringstream codes(m[1].str());
    for (std::string code; std::getline(codes >> std::ws, code, ',');) severities[code] = m[2];
  }
  std::map<std::string, std::string> page;
  for (const auto& [code, text] : findings_sections()) {
    std::smatch m;
    std::string summary = text.substr(text.find("\n\n") + 2);
    if (std::regex_search(summary, m, std::regex(R"(^\*(error|warning)\*)"))) page[code] = m[1];
  }
  page["no-version-information"] = "warning";
  EXPECT_EQ(severities, page) << design;
}
// Each section says what the page's introduction promises, in that order.
TEST(FindingsPage, EverySectionHasEachPart) {
  for (const auto& [code, text] : findings_sections()) {
    SCOPED_TRACE(code);
    std::istringstream lines(text);
    std::string heading, blank, summary;
    std::getline(lines, heading);
    std::getline(lines, blank);
    std::getline(lines, summary);
    EXPECT_TRUE(blank.empty());
    EXPECT_TRUE(
        std::regex_search(summary, std::regex(R"(^\*(error|warning)\* (\(.*\) )?(or \*(error|warning)\* .*)?· \S)")))
        << summary;
    size_t at = 0;
    for (const char* part : {"**Mechanism.**", "**Message.**", "**Example.**", "**Fix.**",
                             "\n- pip:", "\n- uv:", "\n- conda:", "\n- apt", "**Error or warning.**", "**Limits.**"}) {
      size_t found = text.find(part, at);
      EXPECT_NE(found, std::string::npos) << "no " << part << " after offset " << at;
      if (found != std::string::npos) at = found;
    }
  }
}

TEST(Explain, PrintsEachSectionAsWritten) {
  for (const auto& [code, text] : findings_sections()) {
    if (!enum_codes().count(code)) continue;  // reported by HasOneSectionForEveryCodeAndNoOther
    CommandResult r = run(quote(envdoctor()) + " explain " + quote(code));
    EXPECT_EQ(r.status, 0) << code << ": " << r.err;
    EXPECT_EQ(r.out, text) << code;
    EXPECT_EQ(r.err, "");
  }
  // Several codes: their sections one after another, a blank line between.
  CommandResult two = run(quote(envdoctor()) + " explain missing-library file-owned-twice");
  EXPECT_EQ(two.status, 0);
  EXPECT_EQ(two.out, findings_sections()["missing-library"] + "\n" + findings_sections()["file-owned-twice"]);
}

TEST(Explain, AloneListsEveryCodeOnOneLine) {
  CommandResult r = run(quote(envdoctor()) + " explain");
  EXPECT_EQ(r.status, 0) << r.err;
  std::set<std::string> listed;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::string code = line.substr(0, line.find(' '));
    EXPECT_TRUE(listed.insert(code).second) << "listed twice: " << code;
    EXPECT_TRUE(std::regex_search(line, std::regex(R"(^[a-z-]+ +(error|warning) )"))) << line;
    EXPECT_EQ(line.find_first_of("*`"), std::string::npos) << line;  // Markdown marks removed
  }
  EXPECT_EQ(listed, enum_codes());
}

// The code for a package that imports and runs without its GPU path: explained as written, in the
// list with its severity, and reached from a near miss.
TEST(Explain, SilentFallback) {
  CommandResult r = run(quote(envdoctor()) + " explain silent-fallback");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, findings_sections()["silent-fallback"]);
  EXPECT_EQ(r.out.rfind("## silent-fallback\n\n*warning* · ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("with error: libcublasLt.so.13: cannot open shared object file"), std::string::npos);
  CommandResult list = run(quote(envdoctor()) + " explain");
  EXPECT_TRUE(std::regex_search(list.out, std::regex("\nsilent-fallback +warning · "))) << list.out;
  CommandResult near = run(quote(envdoctor()) + " explain silent-fallbak");
  EXPECT_EQ(near.status, 2);
  EXPECT_NE(near.err.find("did you mean silent-fallback?"), std::string::npos) << near.err;
}

TEST(Explain, AnUnknownCodeExitsTwoAndSuggestsTheNearest) {
  CommandResult r = run(quote(envdoctor()) + " explain missing-libary");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(
      r.err,
      "envdoctor: no finding code 'missing-libary'; did you mean missing-library? (`envdoctor explain` lists them all)\n");
  r = run(quote(envdoctor()) + " explain ptx-jit file-owned-twice");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("did you mean ptx-jit-only?"), std::string::npos) << r.err;
  r = run(quote(envdoctor()) + " explain qqqqqqqqqqqq");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: no finding code 'qqqqqqqqqqqq' (`envdoctor explain` lists them all)\n");
}

// data/schemas are committed (the MCP server reads them at run time, and they are installed): the
// code enums of check's finding and of explain, and ps's and why's copies of check's finding, are
// what scripts/findings.py makes of docs/findings.md today.
TEST(Schemas, AreWhatTheFindingsPageMakesOfThem) {
  std::string script = quote((kSource / "scripts/findings.py").string());
  CommandResult r = run("python3 " + script + " schemas " + quote((kSource / "docs/findings.md").string()) + " " +
                        quote((kSource / "data/schemas").string()) + " --check");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  json check = json::parse(read(schema_path("check")));
  json codes = check["$defs"]["finding"]["properties"]["code"]["enum"];
  std::set<std::string> listed(codes.begin(), codes.end());
  EXPECT_EQ(listed, enum_codes());
}

// And the check says so when one is stale: a schema whose enum lacks a code, a copy of the
// finding that differs from check's.
TEST(Schemas, TheStaleCheckFindsAStaleSchema) {
  TempDir tmp;
  fs::copy(kSource / "data/schemas", tmp.path() / "schemas");
  // In the files' own order of keys, as the generator writes them.
  using ordered = nlohmann::ordered_json;
  ordered explain = ordered::parse(read(tmp.path() / "schemas/explain.schema.json"));
  explain["properties"]["codes"]["items"]["properties"]["code"]["enum"].erase(0);
  std::ofstream(tmp.path() / "schemas/explain.schema.json") << explain.dump(2) << "\n";
  ordered why = ordered::parse(read(tmp.path() / "schemas/why.schema.json"));
  why["$defs"]["finding"]["properties"].erase("symbol");
  std::ofstream(tmp.path() / "schemas/why.schema.json") << why.dump(2) << "\n";
  std::string script = quote((kSource / "scripts/findings.py").string());
  std::string command =
      "python3 " + script + " schemas " + quote((kSource / "docs/findings.md").string()) + " " + quote(tmp / "schemas");
  CommandResult r = run(command + " --check");
  EXPECT_EQ(r.status, 1);
  for (const char* name : {"explain", "why"})
    EXPECT_NE(r.err.find(tmp / "schemas/" + name + ".schema.json: not what docs/findings.md makes of it"),
              std::string::npos)
        << r.err;
  EXPECT_EQ(count(r.err, "\n"), 2u) << r.err;
  // Written, they are current again.
  EXPECT_EQ(run(command).status, 0);
  EXPECT_EQ(run(command + " --check").status, 0);
  EXPECT_EQ(slurp(tmp / "schemas/why.schema.json"), read(schema_path("why")));
}

// The referee of the schema tests elsewhere (fixtures/schema.h): present, and able to say no.
TEST(Schemas, ValidatorIsInstalledAndRejects) {
  if (!have_jsonschema()) GTEST_SKIP() << "needs python3-jsonschema (scripts/install-deps.sh); no output was validated";
  for (const char* name : {"check", "cuda", "pip", "why", "ldd", "explain"}) {
    SCOPED_TRACE(name);
    json wrong = {{"schema", 2}};
    std::string errors = schema_errors(name, wrong.dump());
    EXPECT_NE(errors.find("schema : 1 was expected"), std::string::npos) << errors;
  }
  // wheel-tag --json speaks auditwheel show's format, "version" 1 and nothing more; --json=envdoctor
  // has its own "schema" (3).
  std::string wheel_tag = schema_errors("wheel-tag", json({{"version", 2}, {"wheel", "x.whl"}, {"pure", true}}).dump());
  EXPECT_NE(wheel_tag.find("is not valid under any of the given schemas"), std::string::npos) << wheel_tag;
  wheel_tag =
      schema_errors("wheel-tag", json({{"version", 1}, {"wheel", "x.whl"}, {"pure", true}, {"envdoctor", 1}}).dump());
  EXPECT_NE(wheel_tag.find("is not valid under any of the given schemas"), std::string::npos) << wheel_tag;
  std::string own = schema_errors("wheel-tag-envdoctor", json({{"schema", 2}}).dump());
  EXPECT_NE(own.find("schema : 3 was expected"), std::string::npos) << own;
  json finding = {{"code", "no-such-code"}, {"severity", "error"}, {"file", "/x"}, {"package", nullptr},
                  {"message", "m"},         {"hint", "h"},         {"new", false}, {"extra", 1}};
  json doc = {
      {"schema", 1},
      {"environment",
       {{"python", "p"}, {"version", "3.11.7"}, {"site_packages", json::array()}, {"packages", 0}, {"elf_files", 0}}},
      {"findings", {finding}},
      {"summary", {{"errors", 1}, {"warnings", 0}}}};
  std::string errors = schema_errors("check", doc.dump());
  EXPECT_NE(errors.find("findings/0/code : 'no-such-code' is not one of"), std::string::npos) << errors;
  EXPECT_NE(errors.find("findings/0 : Additional properties are not allowed ('extra' was unexpected)"),
            std::string::npos)
      << errors;
  doc["findings"][0].erase("extra");
  doc["findings"][0]["code"] = "missing-library";
  EXPECT_EQ(schema_errors("check", doc.dump()), "");
}

// ---------------------------------------------------------------------------------------------
// Links

// The relative targets of the Markdown links in `text`, outside fenced code blocks: what a
// reader of the repository (or of its page on a forge) can follow.
std::vector<std::string> relative_links(const std::string& text) {
  std::vector<std::string> out;
  std::regex link(R"(\]\(([^)\s]+)(\s+"[^"]*")?\))");
  std::istringstream lines(text);
  bool fenced = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
      std::string target = (*it)[1];
      if (target.empty() || target[0] == '#' || std::regex_search(target, std::regex("^[a-zA-Z][a-zA-Z0-9+.-]*:")))
        continue;
      out.push_back(target.substr(0, target.find('#')));
    }
  }
  return out;
}

// "" when `target`, linked from `file`, is a path inside the repository that exists; else why not.
std::string link_problem(const fs::path& file, const std::string& target) {
  fs::path root = fs::weakly_canonical(kSource);
  fs::path resolved = fs::weakly_canonical(file.parent_path() / target);
  auto [r, t] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
  if (r != root.end()) return target + " resolves to " + resolved.string() + ", outside the repository";
  if (!fs::exists(resolved)) return target + " does not exist";
  return "";
}

TEST(Links, TheCheckFindsLinksThatLeaveTheRepositoryOrAreMissing) {
  std::string text =
      "See [DESIGN.md](../shared/DESIGN.md), [x](docs/nope.md#a), [ok](docs/json.md), "
      "[web](https://example.org/a.md), [here](#top).\n```\n[code](not/a/link.md)\n```\n";
  std::vector<std::string> links = relative_links(text);
  EXPECT_EQ(links, (std::vector<std::string>{"../shared/DESIGN.md", "docs/nope.md", "docs/json.md"}));
  fs::path readme = kSource / "README.md";
  EXPECT_NE(link_problem(readme, links[0]).find("outside the repository"), std::string::npos);
  EXPECT_EQ(link_problem(readme, links[1]), "docs/nope.md does not exist");
  EXPECT_EQ(link_problem(readme, links[2]), "");
}

TEST(Links, EveryRelativeLinkInTheReadmeAndDocsResolvesInsideTheRepository) {
  std::vector<fs::path> pages = {kSource / "README.md"};
  for (const auto& e : fs::directory_iterator(kSource / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  size_t followed = 0;
  for (const fs::path& page : pages)
    for (const std::string& target : relative_links(read(page))) {
      ++followed;
      EXPECT_EQ(link_problem(page, target), "") << "in " << fs::relative(page, kSource).string();
    }
  EXPECT_GE(followed, 5u);
}

// Every file a --help text names is one a user has: a page of the repository (docs/json.md) or
// a file installed from data/ (share/envdoctor/...).
TEST(Links, EveryFileAHelpTextNamesExists) {
  CommandResult top = run(quote(envdoctor()) + " --help");
  ASSERT_EQ(top.status, 0);
  std::string help = top.out;
  std::regex subcommand(R"(\n  ([a-z][a-z-]*)\s)");
  std::string subs = top.out.substr(top.out.find("Subcommands:"));
  for (std::sregex_iterator it(subs.begin(), subs.end(), subcommand), end; it != end; ++it)
    help += run(quote(envdoctor()) + " " + std::string((*it)[1]) + " --help").out;
  std::regex file(R"([A-Za-z0-9_./-]+\.(md|json))");
  size_t named = 0;
  for (std::sregex_iterator it(help.begin(), help.end(), file), end; it != end; ++it, ++named) {
    std::string path = (*it)[0];
    const std::string installed = "share/envdoctor/";
    fs::path in_repo =
        path.rfind(installed, 0) == 0 ? kSource / "data" / path.substr(installed.size()) : kSource / path;
    EXPECT_TRUE(fs::exists(in_repo)) << "--help names " << path << ", which is neither in the repository nor installed";
  }
  EXPECT_GE(named, 2u) << help;
}

}  // namespace
}  // namespace envdoctor::test
