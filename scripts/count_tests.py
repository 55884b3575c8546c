#!/usr/bin/env python3
"""count_tests.py: sum test cases over a meson test log and print `N passed, N failed`.

A doctest executable reports its own cases ("[doctest] test cases: 12 | 11 passed | 1 failed");
any other test (compile-fail checks, scripts) counts as one case by its meson result.
Exits non-zero when anything failed.
"""
import json, re, sys

pattern = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed(?:\s*\|\s*(\d+) skipped)?")
passed = failed = skipped = 0
with open(sys.argv[1]) as log:
    for line in log:
        entry = json.loads(line)
        result = entry.get("result", "")
        counts = pattern.findall(entry.get("stdout", "") or "")
        if counts:
            total_p = sum(int(c[1]) for c in counts)
            total_f = sum(int(c[2]) for c in counts)
            passed += total_p
            failed += total_f
            # a crash after doctest's summary still fails the executable
            if result not in ("OK", "EXPECTEDFAIL") and total_f == 0:
                failed += 1
        elif result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
