// The independent client of tests/api/test_api_solid_client.py: Inrupt's
// @inrupt/solid-client-notifications (npm), installed by scripts/bootstrap outside the tree.
// Usage: node solid_client.cjs NPM_DIR TOPIC GATEWAY TOKEN; prints one JSON line when
// connected and one per notification, and exits after the first notification. GATEWAY "-":
// none given, the client discovers it (the topic's origin's /.well-known/solid, in Turtle).
const path = require("node:path");
const [npmDir, topic, gateway, token] = process.argv.slice(2);
const { WebsocketNotification } = require(
  path.join(npmDir, "node_modules", "@inrupt", "solid-client-notifications"),
);
const authFetch = (url, init = {}) =>
  fetch(url, { ...init, headers: { ...(init.headers || {}), Authorization: `Bearer ${token}` } });
const options = gateway === "-" ? { fetch: authFetch } : { gateway, fetch: authFetch };
const channel = new WebsocketNotification(topic, options);
channel.on("connected", () => console.log(JSON.stringify({ connected: true })));
channel.on("message", (message) => {
  console.log(JSON.stringify(message));
  channel.disconnect();
  process.exit(0);
});
channel.on("error", (error) => {
  console.error(String(error && error.message ? error.message : error));
  process.exit(1);
});
channel.connect().catch((error) => {
  console.error(String(error && error.message ? error.message : error));
  process.exit(1);
});
