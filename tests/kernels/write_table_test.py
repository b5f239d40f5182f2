#!/usr/bin/env python3
"""tests/kernels/write-table.py on the results of a real matrix run (tests/kernels/testdata/,
captured from scripts/kernel-matrix on this kind of machine): the table replaces exactly what
lies between the markers, one row per kernel in kernel order, a failing family and check say
**fails** with the agent's words, a skipped kernel says why and claims nothing, and a document
without markers or a run without results is an error, not a silent no-op."""
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE / "write-table.py"
BEGIN = "<!-- kernel-matrix table: written by scripts/kernel-matrix --write-table from a run's results -->"
END = "<!-- end of the kernel-matrix table -->"
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def run(results, doc):
    return subprocess.run([sys.executable, str(SCRIPT), str(results), str(doc)], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    results = tmp / "results"
    shutil.copytree(HERE / "testdata" / "results", results)
    doc = tmp / "install.md"
    doc.write_text(f"before\n\n{BEGIN}\nold table\n{END}\n\nafter\n")
    r = run(results, doc)
    check(r.returncode == 0, f"write-table failed: {r.stderr}")
    text = doc.read_text()
    check(text.startswith("before\n\n" + BEGIN + "\n") and text.endswith(END + "\n\nafter\n"),
          "text outside the markers changed")
    check("old table" not in text, "the old table was kept")
    rows = [l for l in text.splitlines() if l.startswith("| ") and not l.startswith("| kernel")]
    check([r.split(" ")[1] for r in rows] == ["5.10", "6.1", "6.12"], f"rows not one per kernel in order: {rows}")
    by = {r.split(" ")[1]: r for r in rows}
    check("`btf`: works" in by.get("6.12", "") and "`kern_ctx`: works" in by.get("6.12", ""),
          "6.12's running btf and kern_ctx variants are not in its row")
    check("rdma_rxe passes: ibv_rc_pingpong x1000" in by.get("6.12", ""), "6.12's rxe result is missing")
    check("`core_read`: works" in by.get("6.1", "") and "`uprobes`: works" in by.get("6.1", ""),
          "6.1's running TCP and RDMA families are not in its row")
    rdma_510 = by.get("5.10", "").split("|")[6] if by.get("5.10", "").count("|") > 6 else ""
    check("**fails** (load_failed: uprobes: refused by this kernel at load" in rdma_510 and "works" not in rdma_510,
          f"5.10's refused RDMA family does not say why, or claims to work: {rdma_510}")
    check("41 loaded, 18 rejected" in by.get("6.1", ""), "6.1's verifier counts are missing")

    # A kernel that was not reachable: its row says why and claims nothing.
    (results / "5.10" / "verdict.tsv").write_text("5.10\tskip\t7\tnot reachable: run-in-guest: kernel 5.10 (bullseye) not reachable\n")
    r = run(results, doc)
    row = [l for l in doc.read_text().splitlines() if l.startswith("| 5.10 ")]
    check(r.returncode == 0 and len(row) == 1, "no row for the skipped kernel")
    check(row and "not run: not reachable" in row[0] and "works" not in row[0] and "pass" not in row[0],
          f"the skipped kernel's row claims something: {row}")

    doc.write_text("no markers here\n")
    r = run(results, doc)
    check(r.returncode == 1 and doc.read_text() == "no markers here\n", "a document without markers was not refused")
    empty = tmp / "empty"
    empty.mkdir()
    r = run(empty, doc)
    check(r.returncode == 1 and "no results" in r.stderr, "a run without results was not refused")

for p in problems:
    print("write_table_test:", p)
print(f"write_table_test: {len(problems)} problems")
sys.exit(1 if problems else 0)
