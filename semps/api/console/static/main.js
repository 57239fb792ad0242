// The console's entry point: the login form, the role, the tabs and the links (#event/ID,
// #explain/SUB/EVENT, #explain/SUB, #graph/IRI) routed by the location's hash, and each panel's set-up.

import { describeError, json, setToken, token } from "./api.js";
import { startDashboard, setUpDashboard, stopDashboard } from "./dashboard.js";
import { byId, clearFlashes } from "./dom.js";
import { setUpExplain, showEvent, showExplain } from "./events.js";
import { focusResource, loadGraph, setUpGraph } from "./graph.js";
import { loadOntology, loadOntologyPrefixes, onOntologyPrefixes, setUpOntology } from "./ontology.js";
import { chooseAndWatch, setUpNotifications, stopWatching, updateWatchMenu } from "./notifications.js";
import { drawPrefixes, onPrefixes, setUpPrefixes } from "./prefixpanel.js";
import { useUser } from "./prefixes.js";
import { setUpPublish } from "./publish.js";
import { applyRoles, can, session } from "./session.js";
import {
  loadSubscriptions,
  onSubscriptions,
  onWatch,
  redrawSubscriptions,
  setUpSubscriptions,
} from "./subscriptions.js";

/** What each tab needs (no entry: every role). */
const NEEDS = { subscriptions: ["subscriber"], notifications: ["subscriber"], publish: ["publisher"] };
const LOADERS = {
  ontology: loadOntology,
  graph: loadGraph,
  subscriptions: loadSubscriptions,
  notifications: loadSubscriptions,
  prefixes: async () => drawPrefixes(),
};

function allowed(tab) {
  return !NEEDS[tab] || can(...NEEDS[tab]);
}

function showPanel(name, tab = name) {
  for (const button of document.querySelectorAll("nav .tab")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === tab));
  }
  for (const panel of document.querySelectorAll("[data-panel]")) {
    panel.hidden = panel.dataset.panel !== name;
  }
  clearFlashes();
  if (name === "dashboard") startDashboard();
  else stopDashboard();
}

/** Show what the location's hash names: a tab, an event, an explanation. */
function route() {
  if (byId("app").hidden) return;
  const [head, ...rest] = location.hash.replace(/^#/, "").split("/").map(decodeURIComponent);
  if (head === "event" && rest.length === 1) {
    showPanel("view", null);
    showEvent(rest[0]);
  } else if (head === "explain" && (rest.length === 1 || rest.length === 2) && can("subscriber")) {
    showPanel("view", null);
    showExplain(rest[0], rest[1] ?? null);
  } else if (head === "graph" && rest.length === 1) {
    showPanel("graph");
    focusResource(rest[0]);
    loadGraph();
  } else {
    if (head === "graph") focusResource(null);
    const tab = document.querySelector(`[data-panel="${head}"]`) && head !== "view" && allowed(head) ? head : "dashboard";
    showPanel(tab);
    if (LOADERS[tab]) LOADERS[tab]();
  }
}

function go(tab) {
  if (location.hash === `#${tab}`) route();
  else location.hash = tab;
}

/** Check the stored token with the server; show the console or the login form. */
async function enter() {
  if (!token()) return false;
  try {
    const who = await json("GET", "/console/api/whoami");
    session.subject = who.subject;
    session.role = who.role;
    useUser(who.subject);
    applyRoles();
    byId("who").textContent = `${who.subject} (${who.role})`;
    byId("who").hidden = false;
    byId("logout").hidden = false;
    byId("login").hidden = true;
    byId("app").hidden = false;
    loadOntologyPrefixes().catch(() => {}); // names in CURIEs; the ontology tab says why not
    route();
    return true;
  } catch (error) {
    setToken(null);
    byId("login-error").textContent = `Log-in refused: ${describeError(error)}`;
    return false;
  }
}

function leave() {
  stopWatching({ forget: true });
  stopDashboard({ forget: true });
  setToken(null);
  session.subject = null;
  session.role = null;
  byId("app").hidden = true;
  byId("who").hidden = true;
  byId("logout").hidden = true;
  byId("login").hidden = false;
  clearFlashes();
  history.replaceState(null, "", location.pathname);
}

function setUp() {
  byId("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    byId("login-error").textContent = "";
    setToken(byId("token").value.trim());
    byId("token").value = "";
    await enter();
  });
  byId("logout").addEventListener("click", leave);
  for (const tab of document.querySelectorAll("nav .tab")) {
    tab.addEventListener("click", () => go(tab.dataset.tab));
  }
  window.addEventListener("hashchange", route);
  setUpDashboard();
  setUpOntology();
  setUpGraph();
  setUpSubscriptions();
  setUpNotifications();
  setUpPublish();
  setUpPrefixes();
  setUpExplain();
  onSubscriptions(updateWatchMenu);
  onWatch((subId) => {
    go("notifications");
    chooseAndWatch(subId);
  });
  const redraw = () => {
    redrawSubscriptions();
    drawPrefixes();
  };
  onPrefixes(redraw);
  onOntologyPrefixes(redraw);
  enter();
}

setUp();
