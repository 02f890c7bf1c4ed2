// The console shell: session and sign-in, the API client, the router and
// the views it shows, the conversation list, the ⌘K palette and toasts.
// Views are ES modules under views/ that call registerView (see the
// package comment of bots/web/console for the contract).

// VIEWS are imported at start, in tab order. A view module that is missing
// is skipped, so views can be added by dropping a file here and its name in.
const VIEWS = ["chat", "log", "history", "artifacts", "runs", "graph", "ops", "sessions"];

const views = new Map();
let current = null; // { name, view, cleanup }
let me = null; // GET /api/session

// ---- small DOM helper ----

// h builds an element: h("button", {class: "primary", onclick: fn}, "Send").
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function toast(text, kind) {
  const t = h("div", { class: "toast" + (kind ? " " + kind : "") }, text);
  document.getElementById("toasts").append(t);
  setTimeout(() => t.remove(), kind === "error" ? 6000 : 3000);
}

export function timeAgo(iso) {
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  return new Date(iso).toLocaleDateString();
}

// ---- API client ----

async function request(method, path, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    if (me && me.csrf) headers["X-CSRF-Token"] = me.csrf;
  }
  const res = await fetch(path, {
    method, headers, credentials: "same-origin",
    body: method === "GET" ? undefined : JSON.stringify(body ?? {}),
  });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { error: text }; }
  if (!res.ok) {
    const err = new Error((data && data.error) || res.statusText);
    err.status = res.status;
    throw err;
  }
  return data;
}

export const api = {
  get: (p) => request("GET", p),
  post: (p, b) => request("POST", p, b),
  put: (p, b) => request("PUT", p, b),
  del: (p, b) => request("DELETE", p, b),
};

export function session() { return me; }

// ---- router ----

// registerView adds a view: {title, render(el, params), keys, commands}.
export function registerView(name, view) {
  views.set(name, view);
}

function params() { return new URLSearchParams(location.search); }

function viewName(p) {
  if (p.get("view") && views.has(p.get("view"))) return p.get("view");
  return "chat";
}

// navigate goes to a location made of params (an object or
// URLSearchParams), pushing it on the history unless replace.
export function navigate(to, replace) {
  const p = to instanceof URLSearchParams ? to : new URLSearchParams(Object.entries(to).filter(([, v]) => v !== undefined && v !== null && v !== ""));
  const url = "/" + (p.toString() ? "?" + p.toString() : "");
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  route();
}

export function refreshList() { loadConversations(true); }

function route() {
  const p = params();
  const name = viewName(p);
  const view = views.get(name);
  if (current && current.cleanup) {
    try { current.cleanup(); } catch (e) { console.error(e); }
  }
  const main = document.getElementById("main");
  main.replaceChildren();
  const el = h("div", { class: "view view-" + name, dataset: { view: name } });
  main.append(el);
  current = { name, view, cleanup: null };
  document.title = (view.title || name) + " · Switchboard";
  for (const a of document.querySelectorAll("#tabs a")) {
    a.toggleAttribute("aria-current", a.dataset.view === name);
    if (a.dataset.view === name) a.setAttribute("aria-current", "page");
  }
  markCurrentConversation(p.get("c"));
  try {
    const ret = view.render(el, p);
    Promise.resolve(ret).then((cleanup) => { if (current && current.view === view && typeof cleanup === "function") current.cleanup = cleanup; })
      .catch((e) => showViewError(el, e));
  } catch (e) {
    showViewError(el, e);
  }
}

function showViewError(el, e) {
  console.error(e);
  el.replaceChildren(h("div", { class: "notice error" }, e.status === 404 ? "Not found, or not yours to see." : String(e.message || e)));
}

// ---- conversations in the sidebar ----

let next = null;
async function loadConversations(reset) {
  const list = document.getElementById("conv-list");
  const more = document.getElementById("conv-more");
  let url = "/api/conversations?limit=50";
  if (!reset && next) url += "&before=" + encodeURIComponent(next);
  let data;
  try { data = await api.get(url); } catch (e) { toast("Listing conversations failed: " + e.message, "error"); return; }
  if (reset) list.replaceChildren();
  for (const c of data.conversations) {
    const title = c.title || (c.agent ? "With " + c.agent : "Conversation");
    const meta = [c.agent, c.parent_id ? "fork" : null, timeAgo(c.updated_at)].filter(Boolean).join(" · ");
    list.append(h("li", {}, h("a", {
      href: "/?c=" + c.id, dataset: { conv: c.id },
      onclick: (ev) => { ev.preventDefault(); navigate({ c: c.id }); },
    }, h("span", { class: "t" }, title), h("span", { class: "m" }, meta))));
  }
  if (!list.children.length) list.append(h("li", { class: "empty" }, "No conversations yet."));
  next = data.next || null;
  more.hidden = !next;
  markCurrentConversation(params().get("c"));
}

function markCurrentConversation(id) {
  for (const a of document.querySelectorAll("#conv-list a")) a.setAttribute("aria-current", String(a.dataset.conv === id));
}

export function newConversation() { navigate({ view: "chat", new: "1" }); }

// ---- command palette ----

function paletteItems() {
  const items = [
    { title: "New conversation", hint: "⌘N", run: newConversation },
  ];
  for (const [name, v] of views) items.push({ title: "Go to " + (v.title || name), hint: "view", run: () => navigate({ view: name }) });
  if (current && current.view && current.view.commands) for (const c of current.view.commands(params())) items.push({ hint: "here", ...c });
  for (const a of document.querySelectorAll("#conv-list a")) {
    const id = a.dataset.conv;
    items.push({ title: a.querySelector(".t").textContent, hint: a.querySelector(".m").textContent, run: () => navigate({ c: id }) });
  }
  items.push({ title: "Sign out", hint: "", run: signOut });
  return items;
}

function openPalette() {
  const dlg = document.getElementById("palette");
  const input = document.getElementById("palette-input");
  const list = document.getElementById("palette-list");
  const all = paletteItems();
  let sel = 0;
  let shown = all;
  const draw = () => {
    const q = input.value.trim().toLowerCase();
    shown = all.filter((i) => !q || i.title.toLowerCase().includes(q));
    sel = Math.min(sel, Math.max(0, shown.length - 1));
    list.replaceChildren(...shown.map((it, i) => h("li", {
      role: "option", "aria-selected": String(i === sel),
      onclick: () => { dlg.close(); it.run(); },
    }, h("span", {}, it.title), h("span", { class: "hint" }, it.hint || ""))));
  };
  input.value = "";
  input.oninput = () => { sel = 0; draw(); };
  input.onkeydown = (ev) => {
    if (ev.key === "ArrowDown") { sel = Math.min(sel + 1, shown.length - 1); draw(); ev.preventDefault(); }
    else if (ev.key === "ArrowUp") { sel = Math.max(sel - 1, 0); draw(); ev.preventDefault(); }
    else if (ev.key === "Enter") { ev.preventDefault(); const it = shown[sel]; dlg.close(); if (it) it.run(); }
  };
  draw();
  dlg.showModal();
  input.focus();
}

function onKey(ev) {
  const mod = ev.metaKey || ev.ctrlKey;
  if (mod && ev.key.toLowerCase() === "k") { ev.preventDefault(); openPalette(); return; }
  if ((mod || ev.altKey) && ev.key.toLowerCase() === "n") { ev.preventDefault(); newConversation(); return; }
  const t = ev.target;
  if (mod || ev.altKey || (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable))) return;
  if (ev.key === "/") { ev.preventDefault(); openPalette(); return; }
  const keys = current && current.view && current.view.keys;
  if (keys && keys[ev.key]) { ev.preventDefault(); keys[ev.key](params()); }
}

// ---- sign in ----

function signInCard(message, ok) {
  const box = document.getElementById("signin");
  const token = h("input", { type: "password", name: "token", placeholder: "Operator token (SWITCHBOARD_API_TOKEN)", autocomplete: "current-password", "aria-label": "Operator token" });
  const form = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        await api.post("/auth/token", { token: token.value });
        await boot();
      } catch (e) {
        signInCard(e.message);
      }
    },
  }, token, h("button", { class: "primary", type: "submit" }, "Sign in with the token"));
  const sso = methods && methods.sso
    ? h("p", {}, h("a", { class: "button primary", id: "signin-sso", href: methods.login_url }, "Sign in with single sign-on"))
    : null;
  const others = methods && methods.sso_required ? [] : [
    h("p", {}, "Sign in with a one-time link from the bot: send ", h("code", {}, "!login"), " to it in a direct message on Slack or Discord, or use ", h("code", {}, "/switchboard login"), " in Slack or ", h("code", {}, "/login"), " in Discord. A link works once, for 10 minutes."),
    h("p", {}, "Operators can sign in with the API token:"),
    form];
  box.replaceChildren(h("div", { class: "card" },
    h("h1", {}, h("span", { class: "logo" }), "Switchboard"),
    sso,
    message ? h("div", { class: "notice " + (ok ? "ok" : "error"), id: "signin-message" }, message) : null,
    others));
  box.hidden = false;
  document.getElementById("shell").hidden = true;
}

async function spendLink(t) {
  // The secret leaves the address bar (and the history) at once.
  history.replaceState(null, "", "/");
  try {
    await api.post("/auth/link", { token: t });
    return null;
  } catch (e) {
    return e.message;
  }
}

async function signOut() {
  let out = null;
  try { out = await api.post("/auth/logout", {}); } catch (e) { /* signed out anyway */ }
  me = null;
  // A single sign-on session signs out at the identity provider too.
  if (out && out.logout_url) { location.assign(out.logout_url); return; }
  signInCard("Signed out.", true);
}

// methods is GET /auth/methods: whether single sign-on is on, required.
let methods = null;

let started = false;
async function boot() {
  if (!methods) {
    try { methods = await api.get("/auth/methods"); } catch (e) { methods = {}; }
  }
  try {
    me = await api.get("/api/session");
  } catch (e) {
    if (e.status === 401 || e.status === 403) { signInCard(); return; }
    signInCard("The server did not answer: " + e.message);
    return;
  }
  document.getElementById("signin").hidden = true;
  document.getElementById("shell").hidden = false;
  document.getElementById("who").textContent = me.display_name || me.name;
  document.getElementById("signout").hidden = !me.cookie;
  if (!started) {
    started = true;
    for (const name of VIEWS) {
      try { await import("./views/" + name + ".js"); } catch (e) { /* not shipped in this build */ }
    }
    window.addEventListener("popstate", route);
    document.addEventListener("keydown", onKey);
    document.getElementById("palette-open").onclick = openPalette;
    document.getElementById("new-conv").onclick = newConversation;
    document.getElementById("signout").onclick = signOut;
    document.getElementById("conv-more").onclick = () => loadConversations(false);
  }
  // The tabs follow who signed in (the operator's are hidden from a
  // person), also after signing out and in again without a reload.
  const tabs = document.getElementById("tabs");
  tabs.replaceChildren();
  for (const [name, v] of views) {
    if (v.hidden && v.hidden(me)) continue;
    tabs.append(h("a", { href: "/?view=" + name, dataset: { view: name }, onclick: (ev) => { ev.preventDefault(); navigate({ view: name }); } }, v.title || name));
  }
  await loadConversations(true);
  route();
}

async function start() {
  const p = params();
  if (location.pathname === "/login" && p.get("t")) {
    const err = await spendLink(p.get("t"));
    if (err) { signInCard(err); return; }
  }
  await boot();
}

start();
