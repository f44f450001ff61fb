#include "python/record.h"

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <random>

#include "fixtures/fixture.h"
#include "python/metadata_file.h"

namespace envdoctor::python {
namespace {

using test::TempDir;

std::vector<std::vector<std::string>> fields(const std::vector<CsvRow>& rows) {
  std::vector<std::vector<std::string>> out;
  for (const CsvRow& r : rows) out.push_back(r.fields);
  return out;
}

TEST(Csv, QuotedFieldsWithCommasAndDoubledQuotes) {
  std::vector<std::string> problems;
  auto rows = parse_csv("a,b,c\r\n\"x,y\",\"say \"\"hi\"\"\",3\n", &problems);
  EXPECT_EQ(fields(rows), (std::vector<std::vector<std::string>>{{"a", "b", "c"}, {"x,y", "say \"hi\"", "3"}}));
  EXPECT_TRUE(problems.empty());
}

TEST(Csv, LineEndingsAndBlankLines) {
  std::vector<std::string> problems;
  auto rows = parse_csv("a,1\r\rb,2\n\nc,3", &problems);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].fields, (std::vector<std::string>{"a", "1"}));
  EXPECT_EQ(rows[1].fields, (std::vector<std::string>{"b", "2"}));
  EXPECT_EQ(rows[1].line, 3u);
  EXPECT_EQ(rows[2].line, 5u);
  EXPECT_EQ(rows[2].fields, (std::vector<std::string>{"c", "3"}));
}

TEST(Csv, QuotedNewlineAndEmptyFields) {
  std::vector<std::string> problems;
  auto rows = parse_csv("\"two\nlines\",,\nnext,\"\",x\n", &problems);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].fields, (std::vector<std::string>{"two\nlines", "", ""}));
  EXPECT_EQ(rows[1].fields, (std::vector<std::string>{"next", "", "x"}));
  EXPECT_EQ(rows[1].line, 3u);
}

TEST(Csv, LenientLikePythonsCsvModule) {
  // A quote inside an unquoted field is literal; text after a closing quote is kept.
  std::vector<std::string> problems;
  auto rows = parse_csv("a\"b,\"c\"d,e\n", &problems);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].fields, (std::vector<std::string>{"a\"b", "cd", "e"}));
  EXPECT_TRUE(problems.empty());
}

TEST(Csv, UnterminatedQuoteNulAndLongRowAreProblems) {
  std::vector<std::string> problems;
  std::string text = "ok,1\nbad" + std::string(1, '\0') + "nul,2\n" + std::string(100, 'x') + ",3\nlast,\"open";
  auto rows = parse_csv(text, &problems, /*max_row=*/64);
  EXPECT_EQ(fields(rows), (std::vector<std::vector<std::string>>{{"ok", "1"}, {"last", "open"}}));
  EXPECT_EQ(problems, (std::vector<std::string>{"RECORD line 2: row contains a NUL byte, ignored",
                                                "RECORD line 3: row longer than 64 bytes, ignored",
                                                "RECORD line 4: unterminated quoted field"}));
}

TEST(Base64, UrlsafeRoundTripWithoutPadding) {
  std::vector<u8> bytes = {0xfb, 0xff, 0x00, 0x10, 0x83};
  std::string text = encode_urlsafe_base64(bytes);
  EXPECT_EQ(text, "-_8AEIM");
  EXPECT_EQ(decode_urlsafe_base64(text), bytes);
  EXPECT_EQ(decode_urlsafe_base64("-_8AEIM="), bytes);
  EXPECT_FALSE(decode_urlsafe_base64("ab+/"));   // the standard alphabet is not urlsafe
  EXPECT_FALSE(decode_urlsafe_base64("abcde"));  // 5 characters cannot encode whole bytes
}

TEST(Record, ParsesPipsRowsAndResolvesAgainstTheSiteDir) {
  RecordContext ctx{"/v/lib/python3.11/site-packages", "/v"};
  std::vector<std::string> problems;
  auto entries = parse_record(
      "../../../bin/tool,sha256=AH99WaYGFa9_kdi5G8GAJjc9yu2SatELuVy7K_t_gQw,35\n"
      "demo/__init__.py,sha256=mHUu4o1UhL3CgU-3CttqCy-zH2qbjueugf0vyc8wCzs,4\n"
      "demo/__pycache__/__init__.cpython-311.pyc,,\n"
      "\"odd, name.py\",,\n",
      ctx, &problems);
  EXPECT_TRUE(problems.empty()) << problems[0];
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].resolved, "/v/bin/tool");
  EXPECT_EQ(entries[0].hash_algorithm, "sha256");
  EXPECT_EQ(entries[0].digest.size(), 32u);
  EXPECT_EQ(encode_urlsafe_base64(entries[0].digest), "AH99WaYGFa9_kdi5G8GAJjc9yu2SatELuVy7K_t_gQw");
  EXPECT_EQ(entries[0].size, 35u);
  EXPECT_EQ(entries[1].resolved, "/v/lib/python3.11/site-packages/demo/__init__.py");
  EXPECT_EQ(entries[2].hash_algorithm, "");
  EXPECT_FALSE(entries[2].size);
  EXPECT_EQ(entries[3].path, "odd, name.py");
}

TEST(Record, HostileRowsAreProblemsAndTheRestIsRead) {
  RecordContext ctx{"/v/lib/python3.11/site-packages", "/v"};
  std::vector<std::string> problems;
  auto entries = parse_record(
      "../../../../etc/passwd,,\n"
      "/usr/lib/libc.so.6,,\n"
      "a.py,sha256=not*base64,1\n"
      "b.py,sha256=AAAA,-4\n"
      "c.py\n"
      ",,\n"
      "d.py,md5=AAAA,12,extra\n"
      "fine.py,,\n",
      ctx, &problems);
  std::vector<std::string> paths;
  for (const RecordEntry& e : entries) paths.push_back(e.resolved.string());
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "/etc/passwd", "/usr/lib/libc.so.6", "/v/lib/python3.11/site-packages/a.py",
                       "/v/lib/python3.11/site-packages/b.py", "/v/lib/python3.11/site-packages/c.py",
                       "/v/lib/python3.11/site-packages/d.py", "/v/lib/python3.11/site-packages/fine.py"}));
  EXPECT_EQ(problems, (std::vector<std::string>{
                          "RECORD line 1: path '../../../../etc/passwd' escapes the environment prefix /v",
                          "RECORD line 2: absolute path '/usr/lib/libc.so.6'",
                          "RECORD line 3: bad hash 'sha256=not*base64'",
                          "RECORD line 4: bad size '-4'",
                          "RECORD line 5: expected 3 fields (path, hash, size), found 1",
                          "RECORD line 6: empty path",
                          "RECORD line 7: expected 3 fields (path, hash, size), found 4",
                      }));
  EXPECT_EQ(entries[5].hash_algorithm, "md5");  // an unknown algorithm is kept as written
}

TEST(Record, LexicalResolutionStopsAtTheRoot) {
  EXPECT_EQ(lexically_resolve("/a/b", "../../../../x"), "/x");
  EXPECT_EQ(lexically_resolve("/a/b", "./c//d/../e"), "/a/b/c/e");
  EXPECT_TRUE(path_within("/v/bin/x", "/v"));
  EXPECT_TRUE(path_within("/v", "/v/"));
  EXPECT_FALSE(path_within("/venv2/x", "/v"));
}

TEST(Record, UnreadableFilesAreProblemsNotCrashes) {
  TempDir tmp;
  RecordContext ctx{tmp.path(), tmp.path()};
  std::vector<std::string> problems;
  EXPECT_TRUE(read_record(tmp.path() / "missing" / "RECORD", ctx, &problems).empty());
  fs::create_directories(tmp.path() / "loop");
  fs::create_symlink("RECORD", tmp.path() / "loop" / "RECORD");  // a link to itself
  EXPECT_TRUE(read_record(tmp.path() / "loop" / "RECORD", ctx, &problems).empty());
  fs::create_directories(tmp.path() / "dir" / "RECORD");
  EXPECT_TRUE(read_record(tmp.path() / "dir" / "RECORD", ctx, &problems).empty());
  ASSERT_EQ(::mkfifo((tmp.path() / "RECORD").c_str(), 0600), 0);  // must not block
  EXPECT_TRUE(read_record(tmp.path() / "RECORD", ctx, &problems).empty());
  std::vector<std::string> expected = {"RECORD: No such file or directory", "RECORD: Too many levels of symbolic links",
                                       "RECORD: Is a directory", "RECORD: not a regular file"};
  if (::geteuid() != 0) {
    std::string locked = tmp.write("locked/RECORD", "a,,\n");
    ::chmod(locked.c_str(), 0);
    EXPECT_TRUE(read_record(locked, ctx, &problems).empty());
    expected.push_back("RECORD: Permission denied");
  }
  EXPECT_EQ(problems, expected);
}

TEST(Record, LargeFileIsReadInPart) {
  TempDir tmp;
  std::string line = "pkg/" + std::string(1000, 'x') + ".py,,\n";
  std::string text;
  while (text.size() <= kMaxRecordFile) text += line;
  std::string path = tmp.write("RECORD", text);
  std::vector<std::string> problems;
  auto entries = read_record(path, RecordContext{tmp.path(), tmp.path()}, &problems);
  u64 whole = kMaxRecordFile / line.size();
  EXPECT_EQ(entries.size(), whole + 1);  // the last row is cut by the bound
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0], "RECORD: larger than 67108864 bytes, read in part");
  EXPECT_TRUE(problems[1].find("expected 3 fields") != std::string::npos) << problems[1];
}

}  // namespace
}  // namespace envdoctor::python

namespace envdoctor::test {
namespace {

// The referee of the CSV reader is Python's csv module, which pip reads RECORD with: random
// texts of commas, quotes, line ends of the three kinds and letters, each read by both. Python
// yields an empty row for a blank line, which the reader leaves out.
TEST(Csv, RowsAreWhatPythonsCsvModuleReads) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  std::mt19937 random(2412);
  const std::string alphabet = "ab,,\"\"\r\n\n x";
  nlohmann::json texts = nlohmann::json::array();
  for (int n = 0; n < 600; n++) {
    std::string text;
    size_t size = random() % 48;
    for (size_t k = 0; k < size; k++) text += alphabet[random() % alphabet.size()];
    if (n % 5 == 0) text = "dir/file.py,sha256=" + text + ",12\r\n" + text;  // plain rows among them
    texts.push_back(text);
  }
  TempDir tmp;
  std::string input = tmp.write("texts.json", texts.dump());
  test::CommandResult r = run("python3 -c " +
                              quote("import csv, io, json, sys\n"
                                    "texts = json.load(open(sys.argv[1]))\n"
                                    "print(json.dumps([[row for row in csv.reader(io.StringIO(t, "
                                    "newline='')) if row] for t in texts]))") +
                              " " + quote(input));
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json expected = nlohmann::json::parse(r.out);
  for (size_t n = 0; n < texts.size(); n++) {
    std::vector<std::string> problems;
    nlohmann::json ours = nlohmann::json::array();
    for (const python::CsvRow& row : python::parse_csv(texts[n].get<std::string>(), &problems))
      ours.push_back(row.fields);
    EXPECT_EQ(ours, expected[n]) << nlohmann::json(texts[n]).dump();
  }
}

// Regression: a row made only of commas was cut at the row limit but still kept one empty field
// per comma (60 MiB of commas: 60 million strings). An over-long row now keeps nothing.
TEST(Csv, RowOfCommasPastTheLimitKeepsNoFields) {
  std::string text(8 * 1024 * 1024, ',');
  text += "\nok.py,,\n";
  std::vector<std::string> problems;
  std::vector<python::CsvRow> rows = python::parse_csv(text, &problems);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].fields.front(), "ok.py");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("longer than"), std::string::npos) << problems[0];
}

}  // namespace
}  // namespace envdoctor::test
