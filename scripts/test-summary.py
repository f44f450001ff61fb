#!/usr/bin/env python3
"""The last lines of `make test`: how many tests ran, failed and were skipped, and one line per
reason a test was skipped (GoogleTest's GTEST_SKIP message), with how many tests gave it, so that
a green run that skipped its referees can be told from one that ran them; then the time each area
of the suite took (tests/<area>/, the stage it tests), the slowest first, so that a slow area shows.

    usage: scripts/test-summary.py CTEST_JUNIT_XML   (ctest --output-junit FILE)
"""
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")


def suite_areas(tests_dir: str) -> dict:
    """Each GoogleTest suite's area: the folder of tests/ whose sources define it."""
    areas = {}
    pattern = re.compile(r"\b(?:TEST|TEST_F|TEST_P|TYPED_TEST)\(\s*(\w+)\s*,")
    for root, _, files in os.walk(tests_dir):
        area = os.path.relpath(root, tests_dir).split(os.sep)[0]
        for f in files:
            if not f.endswith(".cc"):
                continue
            try:
                with open(os.path.join(root, f), encoding="utf-8", errors="replace") as src:
                    for suite in pattern.findall(src.read()):
                        areas.setdefault(suite, area)
            except OSError:
                pass
    return areas


def area_of(name: str, areas: dict) -> str:
    # "Prefix/Suite.Test/param" (a parameterized test) or "Suite.Test"; other tests are ctest's own.
    suite = name.split(".")[0].split("/")[-1]
    return areas.get(suite, "other")


def skip_reason(output: str) -> str:
    # GoogleTest prints "FILE:LINE: Skipped", the message, then "[  SKIPPED ] Suite.Test (N ms)".
    m = re.search(r": Skipped\n(.*?)\n?\[  SKIPPED \]", output, re.S)
    if not m or not m.group(1).strip():
        return "(no reason given)"
    return " ".join(m.group(1).split())


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        suite = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"test-summary: cannot read {sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    ran = failed = 0
    skipped = collections.Counter()
    examples = {}
    areas = suite_areas(TESTS)
    seconds = collections.Counter()
    for case in suite.iter("testcase"):
        try:
            seconds[area_of(case.get("name", ""), areas)] += float(case.get("time", "0"))
        except ValueError:
            pass
        status = case.get("status", "")
        if case.find("skipped") is not None or status in ("notrun", "disabled"):
            reason = skip_reason(case.findtext("system-out") or "")
            skipped[reason] += 1
            examples.setdefault(reason, case.get("name", "?"))
        else:
            ran += 1
            if status == "fail" or case.find("failure") is not None:
                failed += 1
    total = ran + sum(skipped.values())
    print(f"\n{total} tests: {ran} ran, {failed} failed, {sum(skipped.values())} skipped")
    for reason, count in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])):
        others = f" and {count - 1} more" if count > 1 else ""
        print(f"  skipped {count}: {reason} ({examples[reason]}{others})")
    if seconds:
        print("time by area (tests/AREA; tests run in parallel, so the sum exceeds the wall time):")
        for area, t in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {area:<14} {t:8.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
