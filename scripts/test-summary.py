#!/usr/bin/env python3
"""The last lines of `make test`: how many tests ran, failed and were skipped, and one line per
reason a test was skipped (GoogleTest's GTEST_SKIP message), with how many tests gave it, so that
a green run that skipped its referees can be told from one that ran them.

    usage: scripts/test-summary.py CTEST_JUNIT_XML   (ctest --output-junit FILE)
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET


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
    for case in suite.iter("testcase"):
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
