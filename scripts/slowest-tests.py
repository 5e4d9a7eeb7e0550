#!/usr/bin/env python3
"""slowest-tests.py XUNIT...: the slowest test cases of `swift test --xunit-output` (XCTest's file and Swift Testing's
beside it), one line each as `slowest: N s SUITE.TEST`, so that every CI log says where make test's minutes go
(docs/DEVELOPMENT.md, "What each step costs"). Files that are missing are skipped: a run that failed to build has none."""
import argparse
import os
import xml.etree.ElementTree as ElementTree


def cases(path):
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return
    for case in root.iter("testcase"):
        try:
            seconds = float(case.get("time", "0"))
        except ValueError:
            continue
        yield seconds, f"{case.get('classname', '')}.{case.get('name', '')}".strip(".")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--count", type=int, default=25)
    args = parser.parse_args()
    found = [case for path in args.files if os.path.exists(path) for case in cases(path)]
    total = sum(seconds for seconds, _ in found)
    for seconds, name in sorted(found, reverse=True)[: args.count]:
        print(f"slowest: {seconds:7.1f} s {name}")
    print(f"slowest: {len(found)} test cases, {total:.0f} s in all (tests run concurrently: more than the wall clock)")


if __name__ == "__main__":
    main()
