// The agent's live picture: polls /api/v1/merged (an agent started with --peer-agent: its own
// status merged with its peers') or else /api/v1/status (same origin, so the browser's basic-auth
// credentials go along) and draws the hosts as nodes and each pair as an arrow colored by state.
// Plain JS and SVG, no library: the agent serves this file as it is (embedded at build time).
"use strict";

const POLL_MS = 1000;
const HISTORY = 60;  // polls of negative ratio kept per pair for the sparkline
const SVG = "http://www.w3.org/2000/svg";
const STATES = ["ok", "at_risk", "violated", "unknown"];
const COLORS = { ok: "#2e8b57", at_risk: "#d9a400", violated: "#d0312d", unknown: "#8a8f99" };
const history = new Map();  // pair key -> [negative_span_ratio, ...]
// The merged view first; a 404 means the agent has no peers, and the page reads its status alone.
let statusPath = "/api/v1/merged";

function el(name, attrs, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// Seconds as a short human duration with its sign: 1.2 ms, -35 µs.
function duration(seconds, signed) {
  if (seconds === null || seconds === undefined) return "–";
  const a = Math.abs(seconds);
  const sign = signed ? (seconds < 0 ? "−" : "+") : (seconds < 0 ? "−" : "");
  if (a >= 1) return sign + a.toFixed(3) + " s";
  if (a >= 1e-3) return sign + (a * 1e3).toFixed(3) + " ms";
  if (a >= 1e-6) return sign + (a * 1e6).toFixed(1) + " µs";
  return sign + (a * 1e9).toFixed(0) + " ns";
}

function stateOf(p) { return STATES.includes(p.state) ? p.state : "unknown"; }
function keyOf(p) { return p.src + "\u2192" + p.dst + " " + p.transport; }

// The diagnosis, in whichever form the status gives it: a string, or an object with a summary.
function diagnosisText(d) {
  if (d === null || d === undefined) return "";
  if (typeof d === "string") return d;
  for (const field of ["summary", "text", "verdict", "cause", "kind"]) if (typeof d[field] === "string") return d[field];
  return JSON.stringify(d).slice(0, 160);
}

function offsetText(p) {
  if (p.offset_seconds === null || p.offset_seconds === undefined) return "offset –";
  return "θ " + duration(p.offset_seconds, true) + " ± " + duration(p.offset_bound_seconds);
}

function layout(hosts) {
  const cx = 400, cy = 260, r = hosts.length > 1 ? 190 : 0;
  const at = new Map();
  hosts.forEach((h, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / hosts.length;
    at.set(h, { x: cx + r * Math.cos(angle), y: cy + r * Math.sin(angle) });
  });
  return at;
}

function drawPicture(pairs) {
  const svg = document.getElementById("picture");
  svg.replaceChildren();
  const defs = el("defs");
  for (const s of STATES) {
    const marker = el("marker", { id: "head-" + s, viewBox: "0 0 10 10", refX: 9, refY: 5,
                                  markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" });
    marker.appendChild(el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: COLORS[s] }));
    defs.appendChild(marker);
  }
  svg.appendChild(defs);
  const hosts = [...new Set(pairs.flatMap((p) => [p.src, p.dst]))].sort();
  const at = layout(hosts);
  const nodeRadius = 42;
  // Pairs between the same two hosts fan out (both directions, several transports).
  const between = new Map();
  for (const p of pairs) {
    const k = [p.src, p.dst].sort().join("\u0000");
    if (!between.has(k)) between.set(k, []);
    between.get(k).push(p);
  }
  for (const group of between.values()) {
    group.forEach((p, i) => {
      const a = at.get(p.src), b = at.get(p.dst);
      if (!a || !b || p.src === p.dst) return;
      const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy) || 1;
      const ux = dx / len, uy = dy / len;
      // The side of each arrow is taken from one orientation of the two hosts (the first name to
      // the second), so that the two directions of a pair lie side by side, never on one line.
      const forward = p.src < p.dst;
      const cx = forward ? ux : -ux, cy = forward ? uy : -uy;
      const lane = (forward ? 1 : -1) * (22 + 30 * Math.floor(i / 2));
      const nx = -cy * lane, ny = cx * lane;
      const x1 = a.x + ux * nodeRadius + nx, y1 = a.y + uy * nodeRadius + ny;
      const x2 = b.x - ux * (nodeRadius + 4) + nx, y2 = b.y - uy * (nodeRadius + 4) + ny;
      const state = stateOf(p);
      const g = el("g", { class: "pair " + state, "data-src": p.src, "data-dst": p.dst,
                          "data-transport": p.transport, "data-state": state });
      g.appendChild(el("path", { d: `M ${x1} ${y1} L ${x2} ${y2}`, stroke: COLORS[state],
                                 "marker-end": `url(#head-${state})` }));
      // Labels beside the arrow, on its own side, clear of the other direction's.
      const side = Math.sign(lane), mx = (x1 + x2) / 2 + -cy * side * 95, my = (y1 + y2) / 2 + cx * side * 40;
      g.appendChild(el("text", { x: mx, y: my - 8, fill: COLORS[state] }, `${p.transport} ${p.src}→${p.dst} · ${state}`));
      g.appendChild(el("text", { x: mx, y: my + 7 }, offsetText(p)));
      g.appendChild(el("text", { x: mx, y: my + 22 }, "Δt_min " + duration(p.delta_t_min_seconds)));
      const title = el("title", {}, `${p.src} → ${p.dst} (${p.transport}): ${state}` +
                       (p.diagnosis ? " — " + diagnosisText(p.diagnosis) : ""));
      g.appendChild(title);
      svg.appendChild(g);
    });
  }
  for (const h of hosts) {
    const { x, y } = at.get(h);
    const g = el("g", { class: "host", "data-host": h });
    g.appendChild(el("circle", { cx: x, cy: y, r: nodeRadius }));
    g.appendChild(el("text", { x, y }, h));
    svg.appendChild(g);
  }
  if (!hosts.length) svg.appendChild(el("text", { x: 400, y: 260, "text-anchor": "middle" }, "no pair has traffic yet"));
}

function sparkline(values) {
  const w = 120, h = 24;
  const svg = el("svg", { class: "spark", width: w, height: h, viewBox: `0 0 ${w} ${h}` });
  svg.appendChild(el("line", { x1: 0, y1: h - 1, x2: w, y2: h - 1 }));
  const top = Math.max(0.01, ...values);
  const points = values.map((v, i) => `${(i * w) / (HISTORY - 1)},${h - 1 - ((h - 2) * v) / top}`).join(" ");
  svg.appendChild(el("polyline", { points }));
  return svg;
}

function drawTable(pairs) {
  const body = document.querySelector("#pairs tbody");
  body.replaceChildren();
  for (const p of pairs) {
    const state = stateOf(p);
    const tr = document.createElement("tr");
    tr.dataset.pair = keyOf(p);
    tr.dataset.state = state;
    const cells = [`${p.src} → ${p.dst} (${p.transport})`, state,
                   p.offset_seconds === null || p.offset_seconds === undefined ? "–" :
                     duration(p.offset_seconds, true) + " ± " + duration(p.offset_bound_seconds),
                   duration(p.delta_t_min_seconds), null, diagnosisText(p.diagnosis)];
    cells.forEach((text, i) => {
      const td = document.createElement("td");
      if (i === 1) {
        const badge = document.createElement("span");
        badge.className = "badge " + state;
        badge.textContent = state;
        td.appendChild(badge);
        tr.appendChild(td);
        return;
      }
      if (i === 4) {
        td.appendChild(sparkline(history.get(keyOf(p)) || []));
        td.appendChild(document.createTextNode(" " + ((p.negative_span_ratio || 0) * 100).toFixed(2) + " %"));
      } else {
        td.textContent = text;
      }
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
}

// The merged view's agents: which answered, and why not (one line; hidden for a single agent).
function drawAgents(agents) {
  const line = document.getElementById("agents");
  if (!Array.isArray(agents)) {
    line.hidden = true;
    return;
  }
  line.hidden = false;
  line.textContent = "agents: " + agents.map((a) =>
    a.url + (a.reachable ? " (" + (a.pairs ?? 0) + " pairs)" : " unreachable: " + (a.error || "?"))).join(" · ");
  line.dataset.agents = String(agents.length);
  line.dataset.reachable = String(agents.filter((a) => a.reachable).length);
}

function render(status) {
  const pairs = (status.pairs || []).slice().sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  for (const p of pairs) {
    const h = history.get(keyOf(p)) || [];
    h.push(typeof p.negative_span_ratio === "number" ? p.negative_span_ratio : 0);
    while (h.length > HISTORY) h.shift();
    history.set(keyOf(p), h);
  }
  const overall = document.getElementById("overall");
  const health = status.health;
  const cls = health === 1 ? "ok" : health === 0 ? "violated" : "unknown";
  overall.className = "badge " + cls;
  overall.dataset.health = health === null || health === undefined ? "null" : String(health);
  overall.textContent = "health " + (health === null || health === undefined ? "unknown" : health) +
    (status.diagnosis ? " — " + diagnosisText(status.diagnosis) : "");
  drawPicture(pairs);
  drawTable(pairs);
  drawAgents(status.agents);
  document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
  document.body.dataset.polls = String(Number(document.body.dataset.polls || 0) + 1);
}

async function poll() {
  const error = document.getElementById("error");
  try {
    let res = await fetch(statusPath, { credentials: "same-origin", cache: "no-store" });
    // 404: no --peer-agent; 403: a tenant's user, for whom the merged view is the operator's and
    // this agent's own status is already cut to the user's tenant (docs/tenants.md).
    if ((res.status === 404 || res.status === 403) && statusPath === "/api/v1/merged") {
      statusPath = "/api/v1/status";
      res = await fetch(statusPath, { credentials: "same-origin", cache: "no-store" });
    }
    if (!res.ok) throw new Error(`${statusPath} answered ${res.status}`);
    render(await res.json());
    error.hidden = true;
  } catch (e) {
    error.textContent = "cannot read the status: " + e.message;
    error.hidden = false;
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

poll();
