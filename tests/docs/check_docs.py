#!/usr/bin/env python3
"""The project's documents agree with its code and stand on their own.

1. Every metric family the code can export (a string literal naming a skewscope_ or process_
   family in agent/) is in docs/contract.md's metrics table, and every family there is in the code.
2. Every `skewscope agent` option and every subcommand is named in docs/contract.md.
3. No tracked file points outside the repository: no sibling folders, no issue tracker numbers,
   no notes that only the original authors have; no temporary paths in documents.
Exit 1 with one line per disagreement.
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
contract = (root / "docs/contract.md").read_text()
problems = []

METRIC = re.compile(r'"((?:skewscope|process)_[a-z_]+)"')
code_families = set()
for path in (root / "agent").rglob("*.[ch]pp"):
    code_families.update(METRIC.findall(path.read_text()))
doc_families = set(re.findall(r"^\| `((?:skewscope|process)_[a-z_]+)` \|", contract, re.M))
for name in sorted(code_families - doc_families):
    problems.append(f"metric family {name} is exported by the code but not in docs/contract.md")
for name in sorted(doc_families - code_families):
    problems.append(f"metric family {name} is in docs/contract.md but the code never exports it")

cli = (root / "agent/cli")
options = set()
for path in [*cli.glob("agent_command.cpp"), *cli.glob("config_file.cpp")]:
    options.update(re.findall(r'add_(?:option|flag)\("(--[a-z0-9.-]+)"', path.read_text()))
subcommands = set()
for path in cli.glob("*.cpp"):
    subcommands.update(re.findall(r'add_subcommand\("([a-z]+)"', path.read_text()))
for option in sorted(options):
    if not re.search(re.escape(f"[{option}") + r"[\] ]", contract):
        problems.append(f"agent option {option} is not documented in docs/contract.md")
for sub in sorted(subcommands):
    # A nested subcommand (`skewscope policy check`) is named after its parent.
    if f"skewscope {sub}" not in contract and not re.search(rf"skewscope [a-z]+ {sub}\b", contract):
        problems.append(f"subcommand '{sub}' is not documented in docs/contract.md")

OUTSIDE = [
    (re.compile(r"\.\./shared|shared/DESIGN|REFERENCES\.md|DEVELOPERS\.md"), "points at a file outside the repository"),
    (re.compile(r"\bissues? #?\d+(?:[–-]\d+)?\b", re.I), "cites an issue tracker number"),
]
TEMP_IN_DOCS = re.compile(r"(?<![\w$])/tmp/[\w.-]")
tracked = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True).stdout.split()
this_file = pathlib.Path(__file__).resolve()
for rel in tracked:
    path = root / rel
    if path.resolve() == this_file or not path.is_file() or path.suffix in {".png", ".csv"}:
        continue
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        continue
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, why in OUTSIDE:
            if pattern.search(line):
                problems.append(f"{rel}:{number}: {why}: {line.strip()[:100]}")
        if path.suffix == ".md" and TEMP_IN_DOCS.search(line):
            problems.append(f"{rel}:{number}: a document cites a temporary path: {line.strip()[:100]}")

for p in problems:
    print(p)
print(f"check_docs: {len(code_families)} metric families, {len(options)} agent options, "
      f"{len(subcommands)} subcommands checked; {len(problems)} problems")
sys.exit(1 if problems else 0)
