// The console's entry point: the login form, the tabs, and each panel's set-up.

import { json, setToken, token } from "./api.js";
import { byId, flash } from "./dom.js";
import { loadOntology, setUpOntology } from "./ontology.js";
import { setUpNotifications, stopWatching, updateWatchMenu } from "./notifications.js";
import { setUpPublish } from "./publish.js";
import {
  loadSubscriptions,
  onSubscriptions,
  setRole,
  setUpSubscriptions,
} from "./subscriptions.js";

const LOADERS = { ontology: loadOntology, subscriptions: loadSubscriptions };

function showTab(name) {
  for (const tab of document.querySelectorAll("nav .tab")) {
    tab.setAttribute("aria-selected", String(tab.dataset.tab === name));
  }
  for (const panel of document.querySelectorAll("[data-panel]")) {
    panel.hidden = panel.dataset.panel !== name;
  }
  if (name === "notifications") loadSubscriptions();
  else if (LOADERS[name]) LOADERS[name]();
}

/** Check the stored token with the server; show the console or the login form. */
async function enter() {
  if (!token()) return false;
  try {
    const who = await json("GET", "/console/api/whoami");
    setRole(who.role);
    byId("who").textContent = `${who.subject} (${who.role})`;
    byId("who").hidden = false;
    byId("logout").hidden = false;
    byId("login").hidden = true;
    byId("app").hidden = false;
    showTab("ontology");
    return true;
  } catch (error) {
    setToken(null);
    byId("login-error").textContent = `Log-in refused: ${error.message}`;
    return false;
  }
}

function leave() {
  stopWatching();
  setToken(null);
  byId("app").hidden = true;
  byId("who").hidden = true;
  byId("logout").hidden = true;
  byId("login").hidden = false;
  flash("");
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
    tab.addEventListener("click", () => showTab(tab.dataset.tab));
  }
  setUpOntology();
  setUpSubscriptions();
  setUpNotifications();
  setUpPublish();
  onSubscriptions(updateWatchMenu);
  enter();
}

setUp();
