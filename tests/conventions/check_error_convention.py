#!/usr/bin/env python3
"""The agent reports errors one way: include/skewscope/result.hpp (Result<T, E>, Status).

Fails when an older convention comes back:
  - include/skewscope/parsed.hpp (the Parsed<T> that Result<T> replaced), or any use of it;
  - a function under agent/ that hands its error back through a `std::string& why` /
    `std::string& error` (or `*`) out-parameter instead of returning Result or Status.
An out-parameter left on purpose goes in ALLOWED (file -> how many, and why); a file with more
is a failure, and a file with fewer is reported too, so the list only shrinks.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()

# File under the repository -> (out-parameters it may still have, why they stay).
ALLOWED = {
}

SOURCE_SUFFIXES = {".c", ".h", ".cpp", ".hpp", ".cc"}
SOURCE_DIRS = ["agent", "include", "tests", "bench", "bpf"]
# A non-const std::string reference or pointer whose name says it carries an error.
OUT_PARAM = re.compile(r"(?<!const )\bstd::string\s*[&*]\s*(why|error|err|errors|why_not)\b")
PARSED = re.compile(r"\bParsed<|skewscope/parsed\.hpp")


def sources():
    for d in SOURCE_DIRS:
        base = ROOT / d
        if base.is_dir():
            yield from (p for p in sorted(base.rglob("*")) if p.suffix in SOURCE_SUFFIXES and p.is_file())


def main():
    problems = []
    if (ROOT / "include/skewscope/parsed.hpp").exists():
        problems.append("include/skewscope/parsed.hpp is back: use Result<T> from skewscope/result.hpp")
    found = {}
    for path in sources():
        rel = path.relative_to(ROOT).as_posix()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(lines, 1):
            if PARSED.search(line):
                problems.append(f"{rel}:{number}: Parsed<T> is gone: use Result<T> (skewscope/result.hpp)")
            if rel.startswith("agent/") and OUT_PARAM.search(line):
                found.setdefault(rel, []).append(f"{rel}:{number}: {line.strip()}")
    for rel, hits in sorted(found.items()):
        allowed = ALLOWED.get(rel, (0, ""))[0]
        if len(hits) > allowed:
            problems.append(f"{rel}: {len(hits)} error out-parameter(s), {allowed} allowed: return Result<T> or Status "
                            "(skewscope/result.hpp) instead")
            problems.extend("    " + h for h in hits)
    for rel, (allowed, _) in sorted(ALLOWED.items()):
        if len(found.get(rel, [])) < allowed:
            problems.append(f"{rel}: fewer error out-parameters than the {allowed} allowed: lower its ALLOWED entry")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
