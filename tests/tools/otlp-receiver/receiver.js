// An OTLP/HTTP trace receiver for the tests: it decodes each POST /v1/traces with the
// OpenTelemetry project's own generated protobuf classes (npm @opentelemetry/otlp-transformer,
// build/src/generated/root.js), not with skewscope's schema, so a wrong field number or type in
// the agent's encoding shows up as a missing or mistyped value here.
//
// Usage: receiver.js --out SPANS.jsonl --port-file FILE [--metrics-out POINTS.jsonl]
//                    [--fail-first N] [--fail-status S] [--retry-after SECONDS]
//                    [--tls-cert PEM --tls-key PEM]  (https with them)
// Writes one JSON line per span: ids in hex, times as decimal strings (fixed64 does not fit a
// JS number), attributes as {key: {type, value}} with the AnyValue case that was set. Answers the
// first N trace requests with status S (a 503 storm), the rest 200 with an
// ExportTraceServiceResponse. POST /v1/metrics is decoded as an ExportMetricsServiceRequest
// (the same package's classes), one JSON line per data point in POINTS.jsonl: the metric's name,
// unit and kind (the data case that was set), the point's time, its value case and value,
// attributes as for spans, and the request's sequence number.
// GET /stats gives {requests, refused, accepted, spans, gzip, metric_requests, data_points}.
"use strict";
const fs = require("fs");
const http = require("http");
const https = require("https");
const path = require("path");
const zlib = require("zlib");

const root = require(path.join(__dirname, "node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js"));
const traceService = root.opentelemetry.proto.collector.trace.v1;
const Request = traceService.ExportTraceServiceRequest;
const Response = traceService.ExportTraceServiceResponse;
const metricsService = root.opentelemetry.proto.collector.metrics.v1;
const MetricsRequest = metricsService.ExportMetricsServiceRequest;
const MetricsResponse = metricsService.ExportMetricsServiceResponse;

function parseArgs(argv) {
  const args = { failFirst: 0, failStatus: 503, retryAfter: null };
  for (let i = 2; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--out") args.out = value;
    else if (flag === "--port-file") args.portFile = value;
    else if (flag === "--metrics-out") args.metricsOut = value;
    else if (flag === "--fail-first") args.failFirst = Number(value);
    else if (flag === "--fail-status") args.failStatus = Number(value);
    else if (flag === "--retry-after") args.retryAfter = value;
    else if (flag === "--tls-cert") args.tlsCert = value;
    else if (flag === "--tls-key") args.tlsKey = value;
    else throw new Error(`unknown flag ${flag}`);
  }
  if (!args.out || !args.portFile) throw new Error("--out and --port-file are required");
  return args;
}

const hex = (bytes) => Buffer.from(bytes).toString("hex");

function anyValue(v) {
  for (const type of ["stringValue", "boolValue", "intValue", "doubleValue", "bytesValue", "arrayValue", "kvlistValue"])
    if (v[type] !== undefined && v[type] !== null)
      return { type, value: type === "intValue" ? v.intValue.toString() : v[type] };
  return { type: "none", value: null };
}

function attributes(list) {
  const out = {};
  for (const kv of list || []) out[kv.key] = anyValue(kv.value || {});
  return out;
}

function spanLines(request) {
  const lines = [];
  for (const rs of request.resourceSpans) {
    const resource = attributes(rs.resource && rs.resource.attributes);
    for (const ss of rs.scopeSpans)
      for (const span of ss.spans)
        lines.push(JSON.stringify({
          resource,
          scope: ss.scope ? { name: ss.scope.name, version: ss.scope.version } : null,
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          name: span.name,
          kind: span.kind ?? 0,  // proto3: an absent enum is its zero value (UNSPECIFIED)
          start: span.startTimeUnixNano.toString(),
          end: span.endTimeUnixNano.toString(),
          attributes: attributes(span.attributes),
        }));
  }
  return lines;
}

function pointLines(request, sequence) {
  const lines = [];
  for (const rm of request.resourceMetrics)
    for (const sm of rm.scopeMetrics)
      for (const metric of sm.metrics) {
        const kind = ["gauge", "sum", "histogram", "exponentialHistogram", "summary"].find((k) => metric[k]) || "none";
        const points = kind === "gauge" || kind === "sum" ? metric[kind].dataPoints : [];
        for (const p of points) {
          const valueType = p.asDouble !== undefined && p.asDouble !== null ? "asDouble"
            : p.asInt !== undefined && p.asInt !== null ? "asInt" : "none";
          lines.push(JSON.stringify({
            request: sequence,
            resource: attributes(rm.resource && rm.resource.attributes),
            scope: sm.scope ? { name: sm.scope.name, version: sm.scope.version } : null,
            name: metric.name,
            unit: metric.unit,
            kind,
            time: p.timeUnixNano.toString(),
            valueType,
            value: valueType === "asInt" ? p.asInt.toString() : valueType === "asDouble" ? p.asDouble : null,
            attributes: attributes(p.attributes),
          }));
        }
      }
  return lines;
}

function main() {
  const args = parseArgs(process.argv);
  const stats = { requests: 0, refused: 0, accepted: 0, spans: 0, gzip: 0, metric_requests: 0, data_points: 0 };
  const handler = (req, res) => {
    if (req.method === "GET" && req.url === "/stats") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(JSON.stringify(stats));
    }
    const metrics = req.method === "POST" && req.url === "/v1/metrics" && args.metricsOut;
    if (req.method !== "POST" || (req.url !== "/v1/traces" && !metrics)) {
      res.writeHead(404);
      return res.end();
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    if (metrics) {
      req.on("end", () => {
        try {
          if (req.headers["content-type"] !== "application/x-protobuf")
            throw new Error(`content-type ${req.headers["content-type"]}`);
          let body = Buffer.concat(chunks);
          if (req.headers["content-encoding"] === "gzip") body = zlib.gunzipSync(body);
          stats.metric_requests += 1;
          const lines = pointLines(MetricsRequest.decode(body), stats.metric_requests);
          if (lines.length) fs.appendFileSync(args.metricsOut, lines.join("\n") + "\n");
          stats.data_points += lines.length;
          res.writeHead(200, { "Content-Type": "application/x-protobuf" });
          res.end(Buffer.from(MetricsResponse.encode(MetricsResponse.create({})).finish()));
        } catch (e) {
          process.stderr.write(`otlp-receiver: bad metrics request: ${e.message}\n`);
          res.writeHead(400);
          res.end();
        }
      });
      return;
    }
    req.on("end", () => {
      stats.requests += 1;
      if (stats.requests <= args.failFirst) {
        stats.refused += 1;
        const headers = args.retryAfter !== null ? { "Retry-After": args.retryAfter } : {};
        res.writeHead(args.failStatus, headers);
        return res.end();
      }
      try {
        if (req.headers["content-type"] !== "application/x-protobuf")
          throw new Error(`content-type ${req.headers["content-type"]}`);
        let body = Buffer.concat(chunks);
        if (req.headers["content-encoding"] === "gzip") {
          body = zlib.gunzipSync(body);
          stats.gzip += 1;
        }
        const lines = spanLines(Request.decode(body));
        if (lines.length) fs.appendFileSync(args.out, lines.join("\n") + "\n");
        stats.accepted += 1;
        stats.spans += lines.length;
        res.writeHead(200, { "Content-Type": "application/x-protobuf" });
        res.end(Buffer.from(Response.encode(Response.create({})).finish()));
      } catch (e) {
        process.stderr.write(`otlp-receiver: bad request: ${e.message}\n`);
        res.writeHead(400);
        res.end();
      }
    });
  };
  const server = args.tlsCert
    ? https.createServer({ cert: fs.readFileSync(args.tlsCert), key: fs.readFileSync(args.tlsKey) }, handler)
    : http.createServer(handler);
  server.listen(0, "127.0.0.1", () => {
    fs.writeFileSync(args.portFile, String(server.address().port));
  });
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main();
