#!/usr/bin/env python3
"""Replays the diagnosis' "floor fell" test (docs/diagnosis.md, "History", 7) over traced corpora.

A corpus made with `corpus.sh --trace` keeps every poll's status per incident; each pair's status
carries its window's least span each way. This replays the agent's test over those polls, for a
few margins, and counts, over the TCP pairs of the step, drift and fault-free incidents:
- still pairs (neither host faulty) whose floor "fell" at some poll: false moves;
- drifting pairs (a host of the pair drifts) whose floor fell, and when (seconds from the fault).
The traces begin at the fault, so the reference here is shorter than the agent's (30 s of
history): the floors' wander is measured over fewer polls, and a margin found safe here is, if
anything, safer in the agent.

Usage: floors.py CORPUS_DIR... [--margins NS,NS,...] [--threshold PPM] [--split tune|held_out|all]
(default --split tune: a margin is chosen on the tune half only, as every rule's parameter.)
"""
import collections
import json
import re
import sys

KINDS = ("clock_drift", "two_drifts", "none", "clock_step", "two_steps")


def first_fall(seq, margin_ns, threshold_ppm, reference_s=30.0):
    """seq: [(t_s, forward_ns|None, reverse_ns|None)] in time order. The first t at which the
    newest floor fell below an earlier one by more than margin + 2 x wander + threshold x gap."""
    for n in range(1, len(seq)):
        t = seq[n][0]
        for d in (1, 2):
            if seq[n][d] is None:
                continue
            ref = [s for s in seq[:n] if s[d] is not None and t - s[0] <= reference_s]
            lowest, wander = float("inf"), 0.0
            for s in ref:
                if lowest != float("inf"):
                    wander = max(wander, s[d] - lowest)
                lowest = min(lowest, s[d])
            for s in ref:
                if s[d] - seq[n][d] > margin_ns + 2 * wander + threshold_ppm * (t - s[0]) * 1e3:
                    return t
    return None


def pair_floors(trace_lines):
    seqs = collections.defaultdict(list)
    for line in trace_lines:
        poll = json.loads(line)
        for p in poll["status"]["pairs"]:
            if p["transport"] != "tcp" or p["src"] > p["dst"]:
                continue
            w = p.get("estimate_window") or {}
            f, r = w.get("forward_min_span_seconds"), w.get("reverse_min_span_seconds")
            seqs[(p["src"], p["dst"])].append(
                (poll["t"], None if f is None else f * 1e9, None if r is None else r * 1e9))
    return seqs


def main(argv):
    dirs, margins, threshold, split = [], [2000.0, 4000.0, 6000.0, 8000.0], 5.0, "tune"
    args = argv[1:]
    while args:
        if args[0] == "--margins" and len(args) > 1:
            try:
                margins = [float(v) for v in args[1].split(",")]
            except ValueError:
                print(f"floors.py: --margins wants numbers (ns), got {args[1]}", file=sys.stderr)
                return 2
            args = args[2:]
        elif args[0] == "--threshold" and len(args) > 1:
            try:
                threshold = float(args[1])
            except ValueError:
                print(f"floors.py: --threshold wants ppm, got {args[1]}", file=sys.stderr)
                return 2
            args = args[2:]
        elif args[0] == "--split" and len(args) > 1 and args[1] in ("tune", "held_out", "all"):
            split, args = args[1], args[2:]
        elif args[0].startswith("--"):
            print(f"floors.py: unknown argument {args[0]}", file=sys.stderr)
            return 2
        else:
            dirs.append(args[0])
            args = args[1:]
    if not dirs:
        print(__doc__, file=sys.stderr)
        return 2
    still = {m: [0, 0] for m in margins}  # fell, pairs
    moving = {m: [[], 0] for m in margins}  # first fall times, pairs
    for d in dirs:
        try:
            incidents = open(f"{d}/incidents.ndjson").readlines()
        except OSError as e:
            print(f"floors.py: {e}", file=sys.stderr)
            return 1
        for line in incidents:
            r = json.loads(line)
            if "skipped" in r or r["kind"] not in KINDS or (split != "all" and r.get("split") != split):
                continue
            faulty = set(re.findall(r"(h\d+)=", r.get("fault", "")))
            try:
                trace = open(f"{d}/trace/incident-{r['id']}.ndjson").readlines()
            except OSError:
                continue  # a corpus made without --trace, or an incident it did not keep
            for (a, b), seq in pair_floors(trace).items():
                is_still = a not in faulty and b not in faulty
                drifting = not is_still and r["kind"] in ("clock_drift", "two_drifts")
                for m in margins:
                    t = first_fall(seq, m, threshold)
                    if is_still:
                        still[m][0] += t is not None
                        still[m][1] += 1
                    elif drifting:
                        moving[m][1] += 1
                        if t is not None:
                            moving[m][0].append(t)
    print("| margin (µs) | still pairs that fell | drifting pairs that fell | their first fall p50 / p90 (s from the fault) |")
    print("|---|---|---|---|")
    for m in margins:
        times = sorted(moving[m][0])
        p = (lambda q: f"{times[min(len(times) - 1, int(q * len(times)))]:.2f}") if times else (lambda q: "–")
        print(f"| {m / 1e3:g} | {still[m][0]} of {still[m][1]} | {len(times)} of {moving[m][1]} | {p(0.5)} / {p(0.9)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
