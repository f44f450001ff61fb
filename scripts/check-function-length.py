#!/usr/bin/env python3
"""The size rule of docs/architecture.md: no function body is longer than 80 lines.

A function is a brace block opened at namespace or class scope after a parameter list (a
function, a member function, a constructor, an operator, a lambda held by a namespace-scope
variable); lambdas and local classes inside a function count as part of it. Comments, strings
and character literals are blanked first, so a brace in them counts for nothing.

    check-function-length.py [--max N] SRC_DIR   exit 1 and one line per function over N lines
    check-function-length.py --self-test SRC_DIR plants an 81-line function in a copy; it must fail
"""
import os
import re
import shutil
import sys
import tempfile

LIMIT = 80
# Words before a parameter list that make a brace block a statement, not a function.
STATEMENTS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof", "noexcept",
              "static_assert", "requires", "typeid"}
# Words after a parameter list and before the body of a function.
QUALIFIERS = {"const", "noexcept", "override", "final", "mutable", "volatile", "&", "&&", "try"}
CONTAINERS = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b")


def blank(text):
    """Comments, string and character literals replaced by spaces; newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            j = text.find(")" + delim + '"', open_paren)
            j = n if j < 0 else j + len(delim) + 2
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
        i = j
    return "".join(out)


def preprocessor_blanked(text):
    return re.sub(r"^[ \t]*#.*(?:\\\n.*)*$", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.M)


def opens_function(head):
    """Whether the code between the previous block boundary and a '{' is a function's head."""
    head = re.sub(r"\s+", " ", head).strip()
    if not head or CONTAINERS.search(head.split("(")[0]):
        return False
    # A trailing return type or qualifiers may follow the parameter list.
    tail = head
    tail = re.sub(r"->[^(){}]*$", "", tail).rstrip()
    words = tail.split(" ")
    while words and words[-1] in QUALIFIERS:
        words.pop()
    tail = " ".join(words)
    # noexcept(...) and requires-clauses after the parameters.
    tail = re.sub(r"\bnoexcept\s*\([^()]*\)$", "", tail).rstrip()
    if not tail.endswith(")"):
        return False
    depth, i = 0, len(tail) - 1
    while i >= 0:
        if tail[i] == ")":
            depth += 1
        elif tail[i] == "(":
            depth -= 1
            if depth == 0:
                break
        i -= 1
    if i < 0:
        return False
    before = tail[:i].rstrip()
    # A constructor's member initializer (`: a_(x), b_(y) {`) ends in a call too: still a function.
    name = re.search(r"([A-Za-z_~][A-Za-z_0-9]*|operator\s*\S+|\])\s*$", before)
    if not name:
        return False
    word = name.group(1)
    if word in STATEMENTS:
        return False
    # `= f(x) {` cannot occur; `T x = g(...)` followed by `{` neither: an '=' at the top level of
    # the head before the name means an initializer, except a lambda held by a variable.
    if word != "]" and re.search(r"(^|[^=!<>])=([^=]|$)", before.split("(")[0]) and "operator" not in before:
        return False
    return True


def functions(text):
    """(first line, body lines, head) for each function of a source file."""
    code = preprocessor_blanked(blank(text))
    stack = []  # for each open brace: "container", "function" or "other"
    head_start = 0
    found = []
    line_of = lambda pos: code.count("\n", 0, pos) + 1
    opened_at = []
    for pos, ch in enumerate(code):
        if ch in ";":
            if all(k == "container" for k in stack):
                head_start = pos + 1
        elif ch == "{":
            in_scope = all(k == "container" for k in stack)
            kind = "other"
            if in_scope:
                head = code[head_start:pos]
                if opens_function(head):
                    kind = "function"
                elif CONTAINERS.search(re.sub(r"\s+", " ", head).split("(")[0]) and "=" not in head:
                    kind = "container"
            stack.append(kind)
            opened_at.append((pos, code[head_start:pos]))
            if kind != "other" or in_scope:
                head_start = pos + 1
        elif ch == "}":
            if not stack:
                continue
            kind = stack.pop()
            start, head = opened_at.pop()
            if kind == "function":
                first, last = line_of(start), line_of(pos)
                found.append((first, last - first - 1, re.sub(r"\s+", " ", head).strip()))
            if all(k == "container" for k in stack):
                head_start = pos + 1
    return found


def violations(src, limit):
    out = []
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for first, length, head in functions(text):
                if length > limit:
                    rel = os.path.relpath(path, src)
                    out.append(f"{rel}:{first}: {length} lines (more than {limit}): {head[-100:]}")
    return sorted(out)


def self_test(src):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        shutil.copytree(src, copy)
        if violations(copy, LIMIT):
            print("the tree itself already breaks the rule", file=sys.stderr)
            return 1
        body = "".join(f"  total += {i};\n" for i in range(LIMIT + 1))
        planted = os.path.join(copy, "support", "planted.cc")
        with open(planted, "w", encoding="utf-8") as f:
            f.write("namespace x {\nint planted(int total) {\n" + body + "  return total;\n}\n}  // namespace x\n")
        found = violations(copy, LIMIT)
        if not any(v.startswith("support/planted.cc:2:") for v in found):
            print("an 82-line function went unnoticed", file=sys.stderr)
            return 1
        # Exactly at the limit passes.
        with open(planted, "w", encoding="utf-8") as f:
            f.write("namespace x {\nint planted(int total) {\n" + body.split("\n", 1)[1] + "}\n}  // namespace x\n")
        if violations(copy, LIMIT):
            print("an 80-line function was refused", file=sys.stderr)
            return 1
    return 0


def main(argv):
    limit = LIMIT
    args = argv[1:]
    if args and args[0] == "--self-test":
        return self_test(args[1])
    if len(args) >= 2 and args[0] == "--max":
        limit = int(args[1])
        args = args[2:]
    found = violations(args[0], limit)
    for v in found:
        print(v)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
