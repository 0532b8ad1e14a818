"""Merge pytest's JUnit XML reports into one file (``make test`` writes one per pytest run).

    python scripts/merge_junit.py OUT.xml IN.xml [IN.xml=suite name ...]

Each input's ``<testsuite>`` elements are copied under one ``<testsuites>``; ``IN.xml=name`` renames its
suites (``make test``: "reference path (LEAFKIT_FAST=0)").  A missing input is skipped with a note: a run that
crashed before writing its report still leaves the others readable.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def merge(out: str, inputs: list[str]) -> int:
    root = ET.Element("testsuites")
    for spec in inputs:
        path, _, name = spec.partition("=")
        if not Path(path).exists():
            print(f"merge_junit: {path} is missing, left out", file=sys.stderr)
            continue
        tree = ET.parse(path).getroot()
        suites = [tree] if tree.tag == "testsuite" else list(tree.iter("testsuite"))
        for suite in suites:
            if name:
                suite.set("name", name)
            root.append(suite)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, 0)) for s in root)))
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(merge(sys.argv[1], sys.argv[2:]))
