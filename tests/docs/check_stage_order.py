#!/usr/bin/env python3
"""Each stage's headers know only the stages before it, in the order docs/architecture.md gives.

The table "Folders and what each may touch" in docs/architecture.md lists the agent's folders
(`agent/NAME/`) in the order of the data flow, each with the stages it may use. For every header
under agent/ (.hpp, .h), each `#include "STAGE/..."` of another stage must name
1. a stage listed above the header's own (no back edge: a stage never learns of a later one), and
2. a stage its row's "may use" column allows, directly or through a stage it allows (so the
   table says what the code does).
Every folder under agent/ must have a row, and every "may use" entry must be an earlier row.
Sources (.cpp) are checked the same way: no arrow runs back up, in a header or behind one (the
threads that drive the core live in agent/runtime/, after it, not in the stage whose code they run).
The unit tests of a stage (tests/unit/STAGE/, which mirrors agent/) include no header of a later
stage: a test that needs a later stage's code tests that stage and lives in its folder.
Usage: check_stage_order.py [ROOT]. Exit 1 with one line per problem.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
architecture = root / "docs/architecture.md"
text = architecture.read_text()
problems = []

ROW = re.compile(r"^\| `agent/([a-z_]+)/` \|(.*)\|([^|]*)\|\s*$", re.M)
ALL_ABOVE = re.compile(r"\ball\b|\bevery stage above\b", re.I)
rows = ROW.findall(text)
order = [name for name, _, _ in rows]
if not order:
    problems.append(f"{architecture}: no row `agent/NAME/` found in the table of folders")
position = {name: i for i, name in enumerate(order)}

# The stages each row may use, as written in its "may use" column.
may_use = {}
for name, _, column in rows:
    if ALL_ABOVE.search(column):
        may_use[name] = set(order[: position[name]])
        continue
    named = {word for word in re.findall(r"[a-z_]+", column) if word in position}
    for other in sorted(named):
        if position[other] >= position[name]:
            problems.append(f"docs/architecture.md: agent/{name}/ may use {other}, which is not above it in the table")
    may_use[name] = named


def reachable(name):
    """The stages `name` may use directly or through the stages it may use."""
    seen, todo = set(), list(may_use.get(name, ()))
    while todo:
        stage = todo.pop()
        if stage not in seen:
            seen.add(stage)
            todo.extend(may_use.get(stage, ()))
    return seen


folders = sorted(p.name for p in (root / "agent").iterdir() if p.is_dir())
for folder in folders:
    if folder not in position:
        problems.append(f"agent/{folder}/ has no row in the table of folders in docs/architecture.md")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)
headers = sources = 0
for folder in folders:
    if folder not in position:
        continue
    allowed = reachable(folder)
    for header in sorted((root / "agent" / folder).rglob("*")):
        if header.suffix not in {".hpp", ".h", ".cpp"}:
            continue
        if header.suffix == ".cpp":
            sources += 1
        else:
            headers += 1
        source = header.read_text()
        for match in INCLUDE.finditer(source):
            stage = match.group(1)
            if stage == folder or stage not in folders:
                continue  # its own stage, or not a stage (skewscope/, generated code, libraries)
            rel = header.relative_to(root)
            line = source.count("\n", 0, match.start()) + 1
            if stage not in position:
                continue  # reported above as a folder without a row
            if position[stage] > position[folder]:
                problems.append(f"{rel}:{line}: includes {stage}/, a later stage than {folder}/ in docs/architecture.md")
            elif stage not in allowed:
                problems.append(
                    f"{rel}:{line}: includes {stage}/, which the row of agent/{folder}/ in docs/architecture.md does not allow")

# A unit test lives with the latest stage it includes: no test of a stage reaches a later one.
tests = 0
unit = root / "tests/unit"
for test in sorted(unit.rglob("*")) if unit.is_dir() else []:
    if test.suffix not in {".cpp", ".hpp", ".h"}:
        continue
    folder = test.relative_to(unit).parts[0]
    if folder not in position:
        continue  # tests/unit/skewscope/ (include/skewscope/), the shared main
    tests += 1
    rel = test.relative_to(root).as_posix()
    source = test.read_text()
    for match in INCLUDE.finditer(source):
        stage = match.group(1)
        if stage not in position or position[stage] <= position[folder]:
            continue
        line = source.count("\n", 0, match.start()) + 1
        problems.append(f"{rel}:{line}: a test of {folder}/ includes {stage}/, a later stage: it belongs in tests/unit/{stage}/")

for p in problems:
    print(p)
print(f"check_stage_order: {len(order)} stages in order ({' < '.join(order)}), {headers} headers, {sources} sources "
      f"and {tests} unit tests checked, {len(problems)} problems")
sys.exit(1 if problems else 0)
