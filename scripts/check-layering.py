#!/usr/bin/env python3
"""The include rule of docs/architecture.md: a file includes only files of its own stage or of
stages before it in the pipeline, and no two files (a header and its .cc counted as one unit)
include each other, directly or through others.

    check-layering.py SRC_DIR        exit 1 and one line per violation
    check-layering.py --self-test    plants an upward include and a cycle in a copy; both must fail
"""
import os
import re
import shutil
import sys
import tempfile

# The stages in pipeline order; a stage may include its own files and those of earlier stages.
# scenarios and queries stand side by side: neither includes the other.
STAGES = [
    ["support"], ["elf"], ["loader"], ["python"], ["cuda"], ["live"], ["image"], ["environment"],
    ["imports"], ["advice"], ["checks"], ["scenarios", "queries"], ["snapshot"], ["report"], ["mcp"], ["cli"],
]
RANK = {name: rank for rank, names in enumerate(STAGES) for name in names}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def units(src):
    """Every source file, by its path under src, with the project headers it includes."""
    out = {}
    for root, _, names in os.walk(src):
        for name in names:
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            with open(path, encoding="utf-8") as f:
                out[rel] = [i for i in INCLUDE.findall(f.read()) if os.path.exists(os.path.join(src, i))]
    return out


def stage(rel):
    return rel.split("/", 1)[0]


def violations(src):
    files = units(src)
    found = []
    for rel, includes in sorted(files.items()):
        if stage(rel) not in RANK:
            found.append(f"{rel}: folder {stage(rel)}/ is not a stage of the pipeline")
            continue
        for inc in includes:
            if stage(inc) not in RANK:
                continue
            a, b = stage(rel), stage(inc)
            if RANK[b] > RANK[a] or (RANK[b] == RANK[a] and a != b):
                found.append(f"{rel}: includes {inc}, of a later stage ({b}/ comes after {a}/)")
    # Cycles between units: foo.h and foo.cc are one unit.
    unit = lambda rel: rel.rsplit(".", 1)[0]
    graph = {}
    for rel, includes in files.items():
        graph.setdefault(unit(rel), set()).update(unit(i) for i in includes if unit(i) != unit(rel))
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                cycle = stack[stack.index(v):] + [v]
                found.append("include cycle: " + " -> ".join(cycle))
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    return found


def self_test(src):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        shutil.copytree(src, copy)
        with open(os.path.join(copy, "elf", "elf_file.h"), "a") as f:
            f.write('\n#include "report/report.h"\n')
        upward = violations(copy)
        shutil.rmtree(copy)
        shutil.copytree(src, copy)
        with open(os.path.join(copy, "support", "types.h"), "a") as f:
            f.write('\n#include "support/text.h"\n')
        with open(os.path.join(copy, "support", "text.h"), "a") as f:
            f.write('\n#include "support/types.h"\n')
        cycle = violations(copy)
    ok = any("elf/elf_file.h: includes report/report.h" in v for v in upward) and any(
        v.startswith("include cycle") and "support/text" in v for v in cycle)
    print("planted upward include:", upward[:1])
    print("planted cycle:", cycle[:1])
    return 0 if ok else 1


def main():
    if sys.argv[1:2] == ["--self-test"]:
        return self_test(sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "src"))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
    found = violations(src)
    for v in found:
        print(v)
    print(f"{len(found)} include rule violations" if found else "includes point down the pipeline; no cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
