#!/usr/bin/python3
"""Drives a headless Chromium over the DevTools protocol for picture_live.test.sh: loads the
agent's page, answers its basic-auth challenge as a user would (Fetch.authRequired), waits for the
arrow src -> dst to be drawn ok, runs the simulate command, and measures how long until that arrow
is drawn violated. Prints one JSON line of findings; exit 1 on any failure.

Usage: picture_cdp.py DEVTOOLS_PORT_FILE URL USER PASSWORD SRC DST SCREENSHOT -- SIMULATE_CMD...
Needs python3-websocket (Debian), hence /usr/bin/python3.
"""
import base64
import json
import subprocess
import sys
import time
import urllib.request

import websocket

args = sys.argv[1:]
split = args.index("--")
port_file, url, user, password, src, dst, screenshot = args[:split]
simulate = args[split + 1:]


def fail(message):
    print(json.dumps({"error": message}))
    sys.exit(1)


deadline = time.monotonic() + 20
while True:
    try:
        port = int(open(port_file).read().split()[0])
        break
    except (OSError, ValueError, IndexError):
        if time.monotonic() > deadline:
            fail("Chromium wrote no DevToolsActivePort")
        time.sleep(0.1)
pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5))
page = next((p for p in pages if p.get("type") == "page"), None)
if page is None:
    fail("no page target")
ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=10)
next_id = 0
auth_challenges = 0


def handle(event):
    """The paused requests: every one continues; a basic-auth challenge gets the credentials."""
    global auth_challenges
    method, params = event.get("method"), event.get("params", {})
    if method == "Fetch.requestPaused":
        send("Fetch.continueRequest", {"requestId": params["requestId"]}, wait=False)
    elif method == "Fetch.authRequired":
        auth_challenges += 1
        send("Fetch.continueWithAuth", {"requestId": params["requestId"], "authChallengeResponse": {
            "response": "ProvideCredentials", "username": user, "password": password}}, wait=False)


def send(method, params=None, wait=True):
    global next_id
    next_id += 1
    my_id = next_id
    ws.send(json.dumps({"id": my_id, "method": method, "params": params or {}}))
    if not wait:
        return None
    while True:
        message = json.loads(ws.recv())
        if message.get("id") == my_id:
            if "error" in message:
                fail(f"{method}: {message['error']}")
            return message.get("result", {})
        handle(message)


def evaluate(expression):
    result = send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
    return result.get("result", {}).get("value")


def arrow_state():
    return evaluate(f"""(() => {{
      const g = document.querySelector('#picture g.pair[data-src="{src}"][data-dst="{dst}"][data-transport="tcp"]');
      return g ? g.dataset.state : null; }})()""")


def wait_for(predicate, seconds, step=0.05):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


send("Fetch.enable", {"handleAuthRequests": True, "patterns": [{"urlPattern": "*"}]})
send("Runtime.enable")
send("Page.enable")
send("Emulation.setDeviceMetricsOverride", {"width": 1000, "height": 900, "deviceScaleFactor": 1, "mobile": False})
send("Page.navigate", {"url": url})
if not wait_for(lambda: arrow_state() == "ok", 25, 0.2):
    page_error = evaluate("document.getElementById('error').textContent")
    fail(f"the arrow {src} -> {dst} was never drawn ok (state {arrow_state()!r}; page error {page_error!r})")
before = evaluate("""(() => ({
  hosts: [...document.querySelectorAll('#picture g.host')].map(g => g.dataset.host),
  arrows: document.querySelectorAll('#picture g.pair').length,
  label: [...document.querySelectorAll('#picture g.pair text')].map(t => t.textContent).join(' | '),
  sparklines: document.querySelectorAll('#pairs svg.spark polyline').length,
  agents_reachable: document.getElementById('agents')?.dataset.reachable ?? null,
  polls: Number(document.body.dataset.polls)}))()""")

t0 = time.monotonic()
done = subprocess.run(simulate, capture_output=True, text=True)
if done.returncode != 0:
    fail(f"simulate failed: {done.stderr.strip()}")
state = wait_for(lambda: arrow_state() == "violated", 5)
elapsed = time.monotonic() - t0
if not state:
    fail(f"the arrow {src} -> {dst} was not drawn violated within 5 s of simulate (state {arrow_state()!r})")
time.sleep(1.2)  # one more poll, so the sparkline shows the rise
row_state = evaluate(f"""document.querySelector('#pairs tr[data-pair="{src}\u2192{dst} tcp"]')?.dataset.state""")
shot = send("Page.captureScreenshot", {"format": "png"})
with open(screenshot, "wb") as f:
    f.write(base64.b64decode(shot["data"]))
print(json.dumps({"violated_after_seconds": round(elapsed, 3), "auth_challenges": auth_challenges,
                  "row_state": row_state, **before}))
