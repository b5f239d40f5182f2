#!/usr/bin/env python3
"""Polls an agent's /api/v1/status while traffic flows and checks the offset estimate of one
directed pair against the simulated truth, every time the agent reports one.

usage: offset_watch.py URL SRC DST SECONDS SLACK_US  -> prints one JSON line of findings."""
import json
import sys
import time
import urllib.request

url, src, dst, seconds, slack_us = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
slack = slack_us * 1e-6
start = time.monotonic()
offsets = []  # every estimate of this phase, us
found = {"polls": 0, "estimates": 0, "misses": 0, "first_hit_s": None, "max_ratio": None,
         "max_error_us": None, "dt_min_us": None, "states": [], "window_negatives": 0, "reverse_window_negatives": 0,
         "forward_min_span_us": None, "reverse_min_span_us": None, "at_risk_holding_zero": 0}
while time.monotonic() - start < seconds:
    time.sleep(0.5)
    with urllib.request.urlopen(url + "/api/v1/status", timeout=5) as r:
        status = json.load(r)
    found["polls"] += 1
    pairs = {(p["src"], p["dst"]): p for p in status["pairs"] if p["transport"] == "tcp"}
    p, rev = pairs.get((src, dst)), pairs.get((dst, src))
    if p is None:
        continue
    found["window_negatives"] = max(found["window_negatives"], p["window_negative_spans"])
    if rev:
        found["reverse_window_negatives"] = max(found["reverse_window_negatives"], rev["window_negative_spans"])
    found["states"].append(p["state"])
    domains = status["clocks"]["domains"]
    truth = (domains[dst]["simulated_offset_seconds"] or 0) - (domains[src]["simulated_offset_seconds"] or 0)
    if p.get("offset_seconds") is None:
        continue
    found["estimates"] += 1
    lo, hi = p["offset_lower_bound_seconds"], p["offset_upper_bound_seconds"]
    inside = lo - slack <= truth <= hi + slack
    if not inside:
        found["misses"] += 1
    elif found["first_hit_s"] is None:
        found["first_hit_s"] = round(time.monotonic() - start, 2)
    dt = p.get("delta_t_min_seconds")
    if dt:
        found["dt_min_us"] = round(dt * 1e6, 2)
        ratio = p["offset_bound_seconds"] / dt
        found["max_ratio"] = round(max(found["max_ratio"] or 0, ratio), 2)
    # The window's raw minimum span per direction: at offset 0, how far the offset can move
    # before that direction inverts (the agent's margins extrapolate with the drift fit, noisier).
    window = p.get("estimate_window") or {}
    for side in ("forward", "reverse"):
        m = window.get(side + "_min_span_seconds")
        if m is not None:
            key = side + "_min_span_us"
            found[key] = round(min(m * 1e6, found[key] if found[key] is not None else float("inf")), 2)
    # The traffic's at_risk verdict needs an interval that excludes zero (docs/contract.md).
    if p.get("at_risk") is True and abs(p["offset_seconds"]) <= p["offset_bound_seconds"]:
        found["at_risk_holding_zero"] += 1
    offsets.append(p["offset_seconds"] * 1e6)
    err = abs(p["offset_seconds"] - truth) * 1e6
    found["max_error_us"] = round(max(found["max_error_us"] or 0, err), 2)
offsets.sort()
found["offset_median_us"] = round(offsets[len(offsets) // 2], 2) if offsets else None
found["last_state"] = found["states"][-1] if found["states"] else None
found["at_risk_seen"] = "at_risk" in found["states"]
# One noisy poll proves nothing: how many polls said at_risk (only a poll with an estimate can),
# to compare with "estimates", and the longest run of consecutive ones.
found["at_risk_polls"] = found["states"].count("at_risk")
run = longest = 0
for s in found["states"]:
    run = run + 1 if s == "at_risk" else 0
    longest = max(longest, run)
found["at_risk_longest_run"] = longest
# One letter a poll: o ok, r at_risk, v violated, u unknown.
found["states"] = "".join(s[0] if s != "at_risk" else "r" for s in found["states"])
print(json.dumps(found))
