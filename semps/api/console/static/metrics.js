// The service's /metrics (Prometheus text exposition) read into numbers: counters, gauges,
// the publish-latency histogram, rates between two samples and histogram quantiles.

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)(\s+\S+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Prometheus text -> Map(name -> [{labels, value}]); comments and bad lines skipped. */
export function parsePrometheus(text) {
  const found = new Map();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = line.match(LINE);
    if (!m) continue;
    const labels = {};
    for (const [, key, value] of (m[3] || "").matchAll(LABEL)) {
      labels[key] = value.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    const value = m[4] === "+Inf" ? Infinity : m[4] === "-Inf" ? -Infinity : Number(m[4]);
    if (!found.has(m[1])) found.set(m[1], []);
    found.get(m[1]).push({ labels, value });
  }
  return found;
}

function single(metrics, name) {
  const rows = metrics.get(name);
  return rows && rows.length > 0 ? rows[0].value : null;
}

const COUNTERS = ["events_in", "events_refused", "matches", "notifications_out", "requests_rejected"];
const GAUGES = ["queue_depth", "subscriptions", "open_streams", "webhook_backlog", "dead_letters"];

/** One scrape, taken at `time` (ms): semps' counters and gauges, the HTTP errors, and the
 * publish latency histogram as cumulative buckets [{le, count}] sorted by bound. */
export function sampleOf(text, time) {
  const metrics = parsePrometheus(text);
  const sample = { time, counters: {}, gauges: {}, buckets: [], errors: 0 };
  for (const name of COUNTERS) sample.counters[name] = single(metrics, `semps_${name}_total`);
  for (const name of GAUGES) sample.gauges[name] = single(metrics, `semps_${name}`);
  for (const row of metrics.get("semps_http_errors_total") || []) sample.errors += row.value;
  for (const row of metrics.get("semps_publish_latency_seconds_bucket") || []) {
    const le = row.labels.le === "+Inf" ? Infinity : Number(row.labels.le);
    sample.buckets.push({ le, count: row.value });
  }
  sample.buckets.sort((a, b) => a.le - b.le);
  return sample;
}

/** Per second between two samples of a counter (null without two samples, or if the
 * counter went back: the server restarted). */
export function rate(older, newer, name) {
  if (!older || !newer || newer.time <= older.time) return null;
  const a = older.counters[name];
  const b = newer.counters[name];
  if (a === null || b === null || b < a) return null;
  return ((b - a) * 1000) / (newer.time - older.time);
}

/** The buckets observed between two samples (all of `newer`'s without `older`). */
export function bucketsBetween(older, newer) {
  if (!older) return newer.buckets;
  return newer.buckets.map((bucket, i) => ({
    le: bucket.le,
    count: bucket.count - (older.buckets[i] ? older.buckets[i].count : 0),
  }));
}

/**
 * The q-quantile of cumulative buckets as Prometheus' histogram_quantile() computes it:
 * linear within the bucket that holds rank q * total. Returns null when there is no
 * observation, and {value, above: true} when the rank lies in the +Inf bucket (value is
 * then the largest finite bound).
 */
export function quantile(q, buckets) {
  if (buckets.length === 0) return null;
  const total = buckets[buckets.length - 1].count;
  if (!(total > 0)) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const { le, count } of buckets) {
    if (count >= rank) {
      if (le === Infinity) return { value: lowerBound, above: true };
      if (count === lowerCount) return { value: le, above: false };
      return { value: lowerBound + ((le - lowerBound) * (rank - lowerCount)) / (count - lowerCount), above: false };
    }
    lowerBound = le;
    lowerCount = count;
  }
  return { value: lowerBound, above: true };
}
