// The dashboard: /metrics read every POLL_MS while the panel is on show; events/s and
// matches/s over the last RATE_MS, the queue depth, and the p99 publish latency over the
// last QUANTILE_MS (from the histogram's buckets), with the last minutes drawn as lines.

import { call, describeError } from "./api.js";
import { byId, count, el, empty, fill, svg } from "./dom.js";
import { bucketsBetween, quantile, rate, sampleOf } from "./metrics.js";

const POLL_MS = 2000;
const RATE_MS = 10000;
const QUANTILE_MS = 60000;
/** Samples kept: ten minutes at POLL_MS; the last DRAWN of them drawn as lines. */
const KEEP = 300;
const DRAWN = 60;

const state = { samples: [], timer: null, running: false };

/** The oldest kept sample at most `span` ms older than the newest. */
function since(span) {
  const newest = state.samples[state.samples.length - 1];
  return state.samples.find((s) => newest.time - s.time <= span) || newest;
}

function perSecond(value) {
  if (value === null) return "–";
  return value >= 100 ? count(Math.round(value)) : value.toFixed(1);
}

function milliseconds(found) {
  if (found === null) return "–";
  const ms = found.value * 1000;
  const text = ms >= 100 ? count(Math.round(ms)) : ms.toFixed(ms >= 10 ? 1 : 2);
  return found.above ? `> ${text} ms` : `${text} ms`;
}

function tile(id, title, value, note, line = null) {
  return el(
    "div",
    { class: "tile", id },
    el("div", { class: "tile-title" }, title),
    el("div", { class: "tile-value" }, value),
    el("div", { class: "tile-note muted" }, note),
    line,
  );
}

/** A line of the last samples' rates of a counter (an SVG polyline). */
function spark(name) {
  const points = [];
  const samples = state.samples.slice(-DRAWN - 1);
  for (let i = 1; i < samples.length; i += 1) {
    const value = rate(samples[i - 1], samples[i], name);
    points.push(value === null ? 0 : value);
  }
  const top = Math.max(1, ...points);
  const width = 240;
  const height = 36;
  const step = width / (DRAWN - 1);
  const start = width - step * (points.length - 1);
  const line = points.map((v, i) => `${(start + i * step).toFixed(1)},${(height - (v / top) * (height - 2) - 1).toFixed(1)}`);
  return svg(
    "svg",
    { class: "spark", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": `${name} per second` },
    svg("polyline", { points: line.join(" "), fill: "none", stroke: "currentColor", "stroke-width": "1.5" }),
  );
}

function draw() {
  const newest = state.samples[state.samples.length - 1];
  const recent = since(RATE_MS);
  const older = recent === newest ? null : recent;
  const window = since(QUANTILE_MS);
  const latest = quantile(0.99, bucketsBetween(window === newest ? null : window, newest));
  const overall = quantile(0.99, newest.buckets);
  const seconds = older ? Math.round((newest.time - older.time) / 1000) : 0;
  const rateNote = older ? `last ${seconds} s` : "needs a second reading";
  const { counters: c, gauges: g } = newest;
  fill(
    byId("dash-tiles"),
    tile("dash-events", "events / s", perSecond(rate(older, newest, "events_in")), rateNote, spark("events_in")),
    tile("dash-matches", "matches / s", perSecond(rate(older, newest, "matches")), rateNote, spark("matches")),
    tile("dash-queue", "queue depth", g.queue_depth === null ? "–" : count(g.queue_depth), "events waiting to be matched"),
    tile(
      "dash-p99",
      "p99 publish latency",
      milliseconds(latest),
      latest === null ? `no event in the last minute; since start ${milliseconds(overall)}` : "last minute (histogram)",
    ),
  );
  const rows = [
    ["events published", c.events_in],
    ["events refused", c.events_refused],
    ["matches", c.matches],
    ["notifications streamed", c.notifications_out],
    ["subscriptions", g.subscriptions],
    ["open streams", g.open_streams],
    ["webhook backlog", g.webhook_backlog],
    ["dead letters", g.dead_letters],
    ["HTTP errors", newest.errors],
  ];
  fill(
    byId("dash-totals"),
    rows.map(([name, value]) =>
      el("tr", { "data-metric": name }, el("th", {}, name), el("td", {}, value === null ? "–" : count(value))),
    ),
  );
  byId("dash-empty").hidden = c.events_in !== 0;
  byId("dashboard").dataset.samples = String(state.samples.length);
}

async function poll() {
  try {
    const response = await call("GET", "/metrics", { accept: "text/plain" });
    const sample = sampleOf(await response.text(), performance.now());
    const last = state.samples[state.samples.length - 1];
    if (last && sample.counters.events_in !== null && sample.counters.events_in < last.counters.events_in) {
      state.samples = []; // the server restarted: its counters began again
    }
    state.samples.push(sample);
    if (state.samples.length > KEEP) state.samples.shift();
    byId("dash-state").textContent = `read /metrics every ${POLL_MS / 1000} s`;
    draw();
  } catch (error) {
    byId("dash-state").textContent = `cannot read /metrics: ${describeError(error)}`;
  }
}

function loop() {
  if (!state.running) return;
  poll().finally(() => {
    if (state.running) state.timer = setTimeout(loop, POLL_MS);
  });
}

/** Start reading (the panel is on show). */
export function startDashboard() {
  if (state.running) return;
  state.running = true;
  loop();
}

/** Stop reading (another panel, or logged out); forget the samples when leaving. */
export function stopDashboard({ forget = false } = {}) {
  state.running = false;
  clearTimeout(state.timer);
  if (forget) state.samples = [];
}

export function setUpDashboard() {
  fill(byId("dash-empty"), empty("No event published yet.", "Rates and latency appear here as events arrive."));
}
