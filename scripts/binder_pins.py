#!/usr/bin/env python3
"""Keep binder/requirements.txt pinned to what the project's environment uses.

    python scripts/binder_pins.py            # print the pins of the running env
    python scripts/binder_pins.py --check    # exit 1 if binder/requirements.txt differs
    python scripts/binder_pins.py --write    # rewrite the pinned lines in place

Run it with the interpreter of the environment to copy from (``make
binder-pins`` uses .venv/bin/python).  Only the ``name==version`` lines of
PINNED are touched; comments stay as they are.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

#: What the lessons need beyond Binder's base image (which has JupyterLab, ipykernel, ipywidgets).
PINNED = [
    "numpy",
    "graphviz",
    "matplotlib",
    "scikit-learn",
    "tqdm",
]
REQ = Path(__file__).resolve().parent.parent / "binder" / "requirements.txt"
LINE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s#;]+)")


def installed() -> dict[str, str]:
    return {name: metadata.version(name) for name in PINNED}


def main(argv: list[str]) -> int:
    want = installed()
    if "--write" not in argv and "--check" not in argv:
        for name, ver in want.items():
            print(f"{name}=={ver}")
        return 0
    lines = REQ.read_text().splitlines()
    out, seen, diffs = [], set(), []
    for line in lines:
        m = LINE.match(line)
        if m and m.group(1).lower() in want:
            name = m.group(1).lower()
            seen.add(name)
            if m.group(2) != want[name]:
                diffs.append(f"{name}: binder has {m.group(2)}, env has {want[name]}")
            line = f"{name}=={want[name]}"
        out.append(line)
    missing = [n for n in PINNED if n not in seen]
    diffs += [f"{n}: not pinned in binder/requirements.txt" for n in missing]
    if "--check" in argv:
        print("\n".join(diffs) or "binder/requirements.txt matches the environment")
        return 1 if diffs else 0
    # --write: add missing pins at the end
    out += [f"{n}=={want[n]}" for n in missing]
    REQ.write_text("\n".join(out) + "\n")
    print("\n".join(diffs) or "no change")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
