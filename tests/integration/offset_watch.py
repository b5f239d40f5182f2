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
found = {"polls": 0, "estimates": 0, "misses": 0, "first_hit_s": None, "max_ratio": None,
         "max_error_us": None, "dt_min_us": None, "states": [], "window_negatives": 0, "reverse_window_negatives": 0}
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
    err = abs(p["offset_seconds"] - truth) * 1e6
    found["max_error_us"] = round(max(found["max_error_us"] or 0, err), 2)
found["last_state"] = found["states"][-1] if found["states"] else None
found["at_risk_seen"] = "at_risk" in found["states"]
# One letter a poll: o ok, r at_risk, v violated, u unknown.
found["states"] = "".join(s[0] if s != "at_risk" else "r" for s in found["states"])
print(json.dumps(found))
