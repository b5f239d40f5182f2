#!/usr/bin/env python3
"""Writes the kernel table of docs/install.md from a kernel matrix run's results (never by hand).

  write-table.py RESULTS_DIR DOC

RESULTS_DIR holds one folder per kernel as scripts/kernel-matrix leaves it: verdict.tsv
(KERNEL  pass|fail|skip  SECONDS  WHY), and from the guest: kernel (uname -r), families.tsv
(FAMILY  VARIANT  works|fails  DETAIL), summary.tsv (CHECK  pass|fail  DETAIL), lab.tsv and
devices.tsv (NAME  VALUE; info:NAME rows are devices the kernel lacks). The table replaces what lies between the two marker lines of DOC.
"""
import pathlib
import sys

BEGIN = "<!-- kernel-matrix table: written by scripts/kernel-matrix --write-table from a run's results -->"
END = "<!-- end of the kernel-matrix table -->"
FAMILIES = [("tcp", "TCP capture"), ("payload", "payload (--payload-bytes)"), ("wire", "wire (--wire-timestamps)"),
            ("wire_send", "wire send side (with --wire-cgroup)"), ("rdma", "RDMA (--rdma)")]
ORDER = {"5.10": 0, "6.1": 1, "6.12": 2}


def rows(path):
    if not path.exists():
        return []
    return [line.split("\t") for line in path.read_text().splitlines() if line.strip()]


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ").strip()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    results, doc = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    kernels = sorted((d for d in results.iterdir() if (d / "verdict.tsv").exists()),
                     key=lambda d: ORDER.get(d.name, 9)) if results.is_dir() else []
    if not kernels:
        print(f"write-table: no results in {results} (run scripts/kernel-matrix first)", file=sys.stderr)
        sys.exit(1)
    head = ["kernel"] + [name for _, name in FAMILIES] + ["verifier", "two-namespace lab", "real devices"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for d in kernels:
        k, verdict, seconds, why = (rows(d / "verdict.tsv")[0] + ["", "", "", ""])[:4]
        release = (d / "kernel").read_text().strip() if (d / "kernel").exists() else k
        if verdict == "skip":
            lines.append(f"| {k} | " + " | ".join([f"not run: {cell(why)}"] + [""] * (len(head) - 2)) + " |")
            continue
        fam = {r[0]: r for r in rows(d / "families.tsv") if len(r) >= 3}
        summary = {r[0]: r for r in rows(d / "summary.tsv") if len(r) >= 2}
        cols = [f"{k} (`{release}`)"]
        for key, _ in FAMILIES:
            r = fam.get(key)
            if not r:
                cols.append("not checked")
            elif r[2] == "works":
                cols.append(f"`{r[1]}`: works")
            else:
                cols.append(f"**fails** ({cell(r[3] if len(r) > 3 else '')[:200]})")
        v = summary.get("verify")
        cols.append(cell(v[2]) if v and len(v) > 2 else "not checked")
        lab = summary.get("lab")
        cols.append((("passes: " if lab[1] == "pass" else "**fails**: ") + cell(lab[2] if len(lab) > 2 else ""))
                    if lab else "not checked")
        dev = [r for c, r in summary.items() if c.startswith("device:")]
        # devices the kernel lacks are facts (info:NAME), not checks
        info = [r for r in rows(d / "devices.tsv") if r[0].startswith("info:") and len(r) > 1]
        cols.append("; ".join([f"{r[0][7:]} {'passes' if r[1] == 'pass' else '**fails**'}: {cell(r[2] if len(r) > 2 else '')}"
                               for r in dev] + [f"{r[0][5:]}: {cell(r[1])}" for r in info]) or "not checked")
        lines.append("| " + " | ".join(cols) + " |")
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        print(f"write-table: {doc} has no marker lines {BEGIN!r} ... {END!r}", file=sys.stderr)
        sys.exit(1)
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    doc.write_text(before + BEGIN + "\n" + "\n".join(lines) + "\n" + END + after)
    print(f"write-table: {doc}: {len(kernels)} kernels")


if __name__ == "__main__":
    main()
