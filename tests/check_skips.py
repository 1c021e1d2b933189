"""Fails on a skipped test that tests/skips.allowed does not allow.

    python3 tests/check_skips.py JUNIT_XML [ALLOWED]

JUNIT_XML is what `ctest --output-junit` wrote (scripts/test.sh). A test
ctest counted as skipped is a Python module some of whose tests skipped
themselves (tests/run_unittest.py prints each as `SKIPPED <test>:
<reason>`) or a GoogleTest test that called GTEST_SKIP. Each skip must
match a line of ALLOWED (default: skips.allowed beside this file):

    <ctest test> <skipped test, or -> <why it may skip>

The first two fields are shell-style patterns (fnmatch); `-` names the ctest
test itself (a GoogleTest test). Every skip that no line allows is printed,
with its reason, and the exit status is 1.
"""

import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET

_SKIPPED_RE = re.compile(r"^SKIPPED (\S+): (.*)$", re.M)
_GTEST_RE = re.compile(r"Skipped\n(.*?)\n?\[  SKIPPED \]", re.S)


def allowed_lines(path):
    rules = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split(None, 2)
            if len(fields) < 3:
                sys.exit(f"{path}:{n}: want `<ctest test> <skipped test or -> <why>`: {line}")
            rules.append(tuple(fields))
    return rules


def skips(junit):
    """(ctest test, skipped test or "-", reason) for every skip in `junit`."""
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("skipped") is None:
            continue
        name = case.get("name")
        out = case.findtext("system-out") or ""
        found = _SKIPPED_RE.findall(out)
        if found:
            for test, reason in found:
                yield name, test, reason
        else:
            m = _GTEST_RE.search(out)
            yield name, "-", (m.group(1).strip() if m else "(no reason printed)") or "(no reason printed)"


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    allowed = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                          "skips.allowed")
    rules = allowed_lines(allowed)
    found, bad = 0, []
    for name, test, reason in skips(argv[1]):
        found += 1
        if not any(fnmatch.fnmatchcase(name, r[0]) and fnmatch.fnmatchcase(test, r[1]) for r in rules):
            bad.append((name, test, reason))
    if bad:
        print(f"check_skips: {len(bad)} skip(s) that {allowed} does not allow:", file=sys.stderr)
        for name, test, reason in bad:
            what = name if test == "-" else f"{name}: {test}"
            print(f"  {what}: {reason}", file=sys.stderr)
        print("check_skips: install what is missing (scripts/setup.sh --tests), or allow the skip "
              "there, saying why it may skip", file=sys.stderr)
        return 1
    print(f"check_skips: {found} skip(s), each allowed by {os.path.relpath(allowed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
