#!/usr/bin/env python3
"""Scores a diagnosis corpus (corpus.sh's NDJSON) on its held-out half.

Prints a markdown table: incidents, macro-F1 over the causes that occur (as label or verdict),
culprit accuracy over the held-out clock faults (step, drift, source disagreement; one clock or
two) with >= 3 hosts, time to a correct verdict (p50, p99, over the held-out incidents that
reached one) from the first inverted span (over the faults that invert spans) and from the fault
(over all), and the incidents claimed on fault-free runs; then one line per kind of
incident (count, correct cause, correct culprit, times); then the confusion matrix (rows: label,
columns: verdict).
With --svg FILE it also draws that matrix (plain SVG: no plotting library needed).
Usage: score.py INCIDENTS.ndjson [--svg FILE] [--split held_out|tune|all]
"""
import json
import sys

CLOCK_CAUSES = ("clock_step", "clock_drift", "clock_source_disagrees")


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    k = max(0, min(len(values) - 1, int(round(q / 100 * (len(values) - 1)))))
    return values[k]


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path, svg, split = argv[1], None, "held_out"
    rest = argv[2:]
    while rest:
        if rest[0] == "--svg" and len(rest) > 1:
            svg, rest = rest[1], rest[2:]
        elif rest[0] == "--split" and len(rest) > 1:
            split, rest = rest[1], rest[2:]
        else:
            print(f"score.py: unknown argument {rest[0]}", file=sys.stderr)
            return 2
    rows, skipped = [], 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"score.py: {path}:{n}: not JSON ({e})", file=sys.stderr)
                return 2
            if "skipped" in r:
                skipped += 1
                continue
            if split == "all" or r.get("split") == split:
                rows.append(r)
    if not rows:
        print(f"score.py: no {split} incidents in {path}", file=sys.stderr)
        return 1
    causes = sorted({r["label"] for r in rows} | {r["predicted"] for r in rows})
    f1s = []
    for c in causes:
        tp = sum(r["label"] == c and r["predicted"] == c for r in rows)
        fp = sum(r["label"] != c and r["predicted"] == c for r in rows)
        fn = sum(r["label"] == c and r["predicted"] != c for r in rows)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0)
    macro_f1 = sum(f1s) / len(f1s)
    clock = [r for r in rows if r["label"] in CLOCK_CAUSES and r["hosts"] >= 3]
    culprit_ok = sum(r["predicted_culprit"] == r["culprit"] for r in clock)
    reached = [r for r in rows if r["time_to_verdict_s"] is not None and r["label"] != "none"]
    # The goal is stated from the first inverted span: over the faults that invert spans (steps,
    # drifts, standing offsets); the others (losses, PTP, asymmetry) count from the fault.
    from_inversion = [r["time_from_inversion_s"] for r in reached if r.get("time_from_inversion_s") is not None]
    from_fault = [r["time_to_verdict_s"] for r in reached]
    faults = [r for r in rows if r["label"] != "none"]
    fault_free = [r for r in rows if r["label"] == "none"]
    false_claims = sum(r["predicted"] != "none" for r in fault_free)
    fmt = lambda v: "–" if v is None else f"{v:.2f}"
    print(f"| {split} incidents | macro-F1 | culprit accuracy (≥3 hosts) | time to verdict from the first "
          f"inversion p50 / p99 (s) | from the fault p50 / p99 (s) | incidents claimed on fault-free runs |")
    print("|---|---|---|---|---|---|")
    print(f"| {len(rows)} ({skipped} skipped in the corpus) | {macro_f1:.3f} | "
          f"{culprit_ok}/{len(clock)}{'' if not clock else f' = {culprit_ok / len(clock):.3f}'} | "
          f"{fmt(percentile(from_inversion, 50))} / {fmt(percentile(from_inversion, 99))} "
          f"({len(from_inversion)} with an inversion) | "
          f"{fmt(percentile(from_fault, 50))} / {fmt(percentile(from_fault, 99))} "
          f"({len(reached)} of {len(faults)} faults reached a correct verdict) | "
          f"{false_claims} of {len(fault_free)} |")
    with_kafka = [r for r in rows if "kafka_spans" in r]
    if with_kafka:
        paired = [r["kafka_spans"] for r in with_kafka if r["kafka_spans"] > 0]
        print()
        print(f"Kafka spans paired: in {len(paired)} of {len(with_kafka)} incidents"
              + (f", median {percentile(paired, 50)} per incident." if paired else "."))
    print()
    print("| kind | incidents | cause right | culprit right | from the first inversion p50 / max (s) | "
          "from the fault p50 / max (s) |")
    print("|---|---|---|---|---|---|")
    for kind in sorted({r.get("kind", r["label"]) for r in rows}):
        of = [r for r in rows if r.get("kind", r["label"]) == kind]
        ok = [r for r in of if r["time_to_verdict_s"] is not None]
        inv = [r["time_from_inversion_s"] for r in ok if r.get("time_from_inversion_s") is not None]
        flt = [r["time_to_verdict_s"] for r in ok]
        print(f"| {kind} | {len(of)} | {sum(r['predicted'] == r['label'] for r in of)} | "
              f"{sum(r['predicted_culprit'] == r['culprit'] for r in of)} | "
              f"{fmt(percentile(inv, 50))} / {fmt(max(inv) if inv else None)} | "
              f"{fmt(percentile(flt, 50))} / {fmt(max(flt) if flt else None)} |")
    print()
    print("| label \\ verdict | " + " | ".join(causes) + " |")
    print("|---|" + "---|" * len(causes))
    matrix = [[sum(r["label"] == a and r["predicted"] == b for r in rows) for b in causes] for a in causes]
    for a, line in zip(causes, matrix):
        print(f"| {a} | " + " | ".join(str(v) for v in line) + " |")
    if svg:
        write_svg(svg, causes, matrix)
    return 0


def write_svg(path, causes, matrix):
    cell, left, top = 60, 170, 150
    size = len(causes)
    peak = max(max(line) for line in matrix) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + cell * size + 20}" '
             f'height="{top + cell * size + 40}" font-family="sans-serif" font-size="12">',
             f'<text x="{left}" y="20">confusion matrix (rows: label, columns: verdict)</text>']
    for j, c in enumerate(causes):
        x = left + j * cell + cell / 2
        parts.append(f'<text x="{x}" y="{top - 8}" transform="rotate(-45 {x} {top - 8})">{c}</text>')
    for i, c in enumerate(causes):
        y = top + i * cell
        parts.append(f'<text x="{left - 8}" y="{y + cell / 2 + 4}" text-anchor="end">{c}</text>')
        for j, v in enumerate(matrix[i]):
            shade = int(255 - 200 * v / peak)
            parts.append(f'<rect x="{left + j * cell}" y="{y}" width="{cell}" height="{cell}" '
                         f'fill="rgb({shade},{shade},255)" stroke="#888"/>')
            parts.append(f'<text x="{left + j * cell + cell / 2}" y="{y + cell / 2 + 4}" '
                         f'text-anchor="middle">{v}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
