// Chat: pick an agent, send, watch the reply stream (SSE, resumed from the
// last seq seen), and answer the frontend tools a turn pauses on: ask_user
// as a form, render_chart drawn here as SVG.
import { registerView, api, h, navigate, session, toast, refreshList } from "../app.js";
import { voiceControls } from "./voice.js";

// ---- entries, shared with the log view ----

function pretty(v) {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  return JSON.stringify(v, null, 2);
}

// entryText is what an entry says, by kind.
export function entryText(e) {
  const c = e.content || {};
  switch (e.kind) {
    case "user":
    case "assistant":
    case "system":
      return c.text || "";
    case "tool_call":
      return c.name + " " + pretty(c.input);
    case "tool_result":
      return pretty(c.output);
    case "error":
      return c.message || pretty(c);
    case "card":
      // The card as plain text, its forms asked as questions to answer
      // in a message: the console opens no forms.
      // (Cards saved before that hold their layout's name as text.)
      if (c.text && c.text !== (c.card && c.card.layout && c.card.layout.name)) return c.text;
      return c.title || (c.card && c.card.title) || pretty(c);
    default:
      return pretty(c);
  }
}

function authorName(e) {
  const a = e.author || "";
  if (a.startsWith("agent:")) return a.slice(6);
  if (a.startsWith("user:")) return "you";
  return a;
}

// entryEl draws one entry: its kind, author, seq (or "no seq" for an error
// entry, which is shown but never reaches a model) and text.
export function entryEl(e, opts = {}) {
  const isErr = e.seq === undefined || e.seq === null;
  const c = e.content || {};
  const cls = ["msg", e.kind];
  if (isErr) cls.push("error");
  const seq = isErr ? h("span", { class: "seq", title: "error entries have no seq: shown, never sent to a model" }, "no seq · after " + (e.after_seq ?? 0)) : h("span", { class: "seq" }, "#" + e.seq);
  const head = h("div", { class: "who" }, h("span", { class: "kind" }, e.kind), h("span", {}, authorName(e)), seq,
    isErr && c.interim ? h("span", { class: "pill" }, "attempt discarded, retried") : null,
    e.kind === "user" && c.spoken ? h("span", { class: "pill spoken", title: "Spoken, and heard by " + (c.spoken.engine || "the transcriber") }, "spoken") : null);
  const body = h("div", { class: "body" }, entryText(e));
  const el = h("div", { class: cls.join(" "), dataset: { seq: isErr ? "" : String(e.seq), kind: e.kind, id: e.id } }, head, body);
  if (e.kind === "tool_call" && c.name === "render_chart" && c.input) el.append(h("div", { class: "chart" }, chartSVG(c.input)));
  if (opts.onEdit && e.kind === "user" && !isErr) {
    el.append(h("button", { class: "edit ghost", type: "button", title: "Edit this message: forks the conversation here", onclick: () => opts.onEdit(e, el) }, "Edit"));
  }
  return el;
}

// editInPlace turns a user entry into a form; saving forks the conversation
// at that seq with the new text and opens the fork.
export function editInPlace(convId, e, el) {
  const ta = h("textarea", { rows: 3, "aria-label": "New text" });
  ta.value = (e.content && e.content.text) || "";
  const form = h("form", {
    class: "edit-form",
    onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        const res = await api.post(`/api/conversations/${convId}/fork`, { seq: e.seq, content: ta.value });
        toast(res.forked ? "Forked: a new branch from message #" + e.seq : "Saved");
        refreshList();
        navigate({ c: res.conversation_id });
      } catch (err) { toast("Fork failed: " + err.message, "error"); }
    },
  }, ta, h("div", { class: "choices" }, h("button", { class: "primary", type: "submit" }, "Fork with this text"), h("button", { type: "button", onclick: () => el.replaceWith(entryEl(e, { onEdit: (x, y) => editInPlace(convId, x, y) })) }, "Cancel")));
  el.replaceChildren(h("div", { class: "who" }, h("span", { class: "kind" }, "edit"), "#" + e.seq), form);
  ta.focus();
  ta.addEventListener("keydown", (ev) => { if (ev.key === "Escape") el.replaceWith(entryEl(e, { onEdit: (x, y) => editInPlace(convId, x, y) })); });
}

// ---- charts ----

const COLORS = ["#6366f1", "#22c1c3", "#f59e0b", "#ef4444", "#10b981", "#8b5cf6", "#ec4899", "#0ea5e9"];
const NS = "http://www.w3.org/2000/svg";
function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// chartSVG draws render_chart's input: a line or bar chart with axes,
// labels and a legend.
export function chartSVG(input) {
  const series = input.series || [];
  const W = 640, H = 320, L = 56, R = 16, T = 36, B = 48;
  const xs = [];
  for (const sr of series) for (const p of sr.points || []) if (!xs.includes(String(p.x))) xs.push(String(p.x));
  const ys = series.flatMap((sr) => (sr.points || []).map((p) => Number(p.y)));
  let lo = Math.min(0, ...ys), hi = Math.max(0, ...ys);
  if (hi === lo) hi = lo + 1;
  const y = (v) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  const band = (W - L - R) / Math.max(1, xs.length);
  const x = (label) => L + band * (xs.indexOf(String(label)) + 0.5);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": input.title || "chart" });
  svg.append(s("text", { x: L, y: 20, class: "title" }, input.title || ""));
  for (let i = 0; i <= 4; i++) {
    const v = lo + ((hi - lo) * i) / 4;
    svg.append(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "axis" }));
    svg.append(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, Number(v.toFixed(2)).toLocaleString()));
  }
  const every = Math.ceil(xs.length / 12);
  xs.forEach((label, i) => { if (i % every === 0) svg.append(s("text", { x: x(label), y: H - B + 16, "text-anchor": "middle" }, label)); });
  if (input.labels && input.labels.x) svg.append(s("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle" }, input.labels.x));
  if (input.labels && input.labels.y) svg.append(s("text", { x: 12, y: T - 8 }, input.labels.y));
  const bar = input.kind === "bar";
  series.forEach((sr, si) => {
    const color = COLORS[si % COLORS.length];
    const pts = sr.points || [];
    if (bar) {
      const bw = (band * 0.8) / series.length;
      for (const p of pts) {
        const x0 = x(p.x) - band * 0.4 + si * bw;
        const y0 = y(Math.max(0, p.y)), y1 = y(Math.min(0, p.y));
        svg.append(s("rect", { x: x0, y: y0, width: Math.max(1, bw - 2), height: Math.max(1, y1 - y0), fill: color, rx: 2, "data-series": si }));
      }
    } else {
      svg.append(s("polyline", { points: pts.map((p) => `${x(p.x)},${y(p.y)}`).join(" "), fill: "none", stroke: color, "stroke-width": 2.5, "data-series": si }));
      for (const p of pts) svg.append(s("circle", { cx: x(p.x), cy: y(p.y), r: 3, fill: color }));
    }
    if (sr.name) {
      svg.append(s("rect", { x: W - R - 140, y: 10 + si * 16, width: 10, height: 10, fill: color, rx: 2 }));
      svg.append(s("text", { x: W - R - 124, y: 19 + si * 16 }, sr.name));
    }
  });
  return svg;
}

// ---- the frontend tools ----

function askUserForm(call, post) {
  const inp = call.input || {};
  const name = "ask-" + call.call_id;
  const choices = (inp.choices || []).map((c, i) => h("label", {}, h("input", { type: "radio", name, value: c, required: true, checked: i === 0 }), c));
  const free = inp.allow_free_text ? h("input", { type: "text", placeholder: "Or type your own answer", "aria-label": "Your own answer" }) : null;
  const form = h("form", {
    class: "tool-ui ask-user", dataset: { call: call.call_id },
    onsubmit: async (ev) => {
      ev.preventDefault();
      const typed = free && free.value.trim();
      const picked = form.querySelector("input[type=radio]:checked");
      const output = typed ? { answer: typed, free_text: true } : { answer: picked ? picked.value : "" };
      form.querySelector("button").disabled = true;
      await post(call, output);
    },
  }, h("h3", {}, inp.question || "A question"), h("div", { class: "choices", role: "radiogroup" }, choices), free, h("button", { class: "primary", type: "submit" }, "Answer"));
  setTimeout(() => { const first = form.querySelector("input"); if (first) first.focus(); }, 0);
  return form;
}

// chartTool answers render_chart once the chart is drawn: the call's entry
// in the log draws it (entryEl), so it stays on the page after the turn.
function chartTool(call, post) {
  const inp = call.input || {};
  const points = (inp.series || []).reduce((n, sr) => n + (sr.points || []).length, 0);
  post(call, { rendered: true, points, series: (inp.series || []).length });
  return h("div", { dataset: { call: call.call_id }, hidden: true });
}

const FRONTEND = { ask_user: askUserForm, render_chart: chartTool };

// approvalForm asks for a decision on a call the guard wants confirmed:
// the same choices as the platforms' buttons. Only the person asked (or
// the operator) may decide; anyone else is told so.
export function approvalForm(convId, call, done) {
  const decide = async (value) => {
    try {
      await api.post(`/api/conversations/${convId}/decide`, { call_id: call.call_id, value });
      box.remove();
      toast(value === "deny" ? "Denied" : "Approved");
      if (done) done();
    } catch (e) { toast(e.message, "error"); }
  };
  const box = h("div", { class: "tool-ui approval", dataset: { call: call.call_id } },
    h("h3", {}, `Allow ${call.name}?`),
    h("div", { class: "body" }, JSON.stringify(call.input)),
    h("div", { class: "choices" },
      h("button", { class: "primary", type: "button", onclick: () => decide("approve") }, "Allow once"),
      h("button", { type: "button", onclick: () => decide("always") }, "Always allow"),
      h("button", { type: "button", onclick: () => decide("deny") }, "Deny")));
  return box;
}

// ---- the view ----

// newDraft is what was typed into the new-conversation composer and not
// sent yet: the view keeps it when it is rendered again (a keystroke right
// after Ctrl+N can land while the page is still drawing it) or opened later.
let newDraft = "";

function newChat(el) {
  const me = session();
  const agents = me.agents || [];
  const agent = h("select", { "aria-label": "Agent", id: "agent-pick" }, agents.map((a) => h("option", { value: a }, a)));
  const text = h("textarea", { rows: 3, placeholder: "Message… (Enter to send, Shift+Enter for a new line)", "aria-label": "Message", id: "composer" });
  text.value = newDraft;
  text.addEventListener("input", () => { newDraft = text.value; });
  const send = async () => {
    if (!text.value.trim()) return;
    try {
      const conv = await api.post("/api/conversations", agents.length ? { agent: agent.value } : {});
      await api.post(`/api/conversations/${conv.id}/messages`, { text: text.value.trim(), context: "The chat view of the web console, starting a new conversation." });
      newDraft = "";
      refreshList();
      navigate({ c: conv.id });
    } catch (e) { toast("Could not start: " + e.message, "error"); }
  };
  text.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); send(); } });
  el.append(h("div", { class: "chat" },
    h("div", { class: "view-head" }, h("h2", {}, "New conversation")),
    h("div", { class: "log" }, h("div", { class: "empty" }, agents.length ? "Pick an agent and say something." : "No agents are visible to you.")),
    h("form", { class: "composer", onsubmit: (ev) => { ev.preventDefault(); send(); } },
      h("div", { class: "row" }, "Agent", agent),
      text, h("button", { class: "primary", type: "submit" }, "Send"))));
  text.focus();
}

async function chat(el, id) {
  let conv = await api.get(`/api/conversations/${id}`);
  const log = h("div", { class: "log", id: "log", "aria-live": "polite" });
  const status = h("span", { class: "pill", id: "status" }, conv.status);
  const text = h("textarea", { rows: 2, placeholder: "Message… (Enter to send, Shift+Enter for a new line)", "aria-label": "Message", id: "composer" });
  const seen = new Set(); // entry ids drawn
  let lastSeq = 0;
  let live = null; // the streaming bubble
  const posted = new Set(); // call ids answered from this page
  let closed = false;

  // Untitled until its first message names it (the server does, from the
  // message's text); then the heading and the sidebar follow.
  const heading = h("h2", { id: "conv-title" }, conv.title || "Untitled conversation");
  const head = h("div", { class: "view-head" },
    heading,
    status,
    conv.parent_id ? h("a", { href: `/?c=${conv.parent_id}`, onclick: (ev) => { ev.preventDefault(); navigate({ c: conv.parent_id }); } }, "↑ parent (forked at #" + conv.fork_seq + ")") : null,
    h("span", { class: "sp" }),
    h("a", { href: `/?view=log&c=${id}`, onclick: (ev) => { ev.preventDefault(); navigate({ view: "log", c: id }); } }, "Log, forks and time travel"),
    h("a", { href: `/?view=graph&c=${id}`, id: "open-graph", onclick: (ev) => { ev.preventDefault(); navigate({ view: "graph", c: id }); } }, "Work graph"));
  const send = async () => {
    const t = text.value.trim();
    if (!t) return;
    text.value = "";
    try {
      const sel = String(window.getSelection() || "").trim().slice(0, 300);
      const context = `The chat view of the web console, conversation ${id}, showing messages up to #${lastSeq}` + (sel ? `; selected text: "${sel}"` : "") + ".";
      await api.post(`/api/conversations/${id}/messages`, { text: t, context });
    } catch (e) { text.value = t; toast("Not sent: " + e.message, "error"); return; }
    if (!conv.title) {
      try {
        const fresh = await api.get(`/api/conversations/${id}`);
        if (fresh.title) { conv = fresh; heading.textContent = fresh.title; document.title = fresh.title + " · Switchboard"; refreshList(); }
      } catch { /* the heading stays; the list shows the title on its next load */ }
    }
  };
  text.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); send(); } });
  const composer = h("form", { class: "composer", onsubmit: (ev) => { ev.preventDefault(); send(); } }, text, h("button", { class: "primary", type: "submit" }, "Send"));
  // Live voice: what is said enters as a message and shows in the log
  // like a typed one; the reply is spoken as well as written.
  const voice = voiceControls(id, { context: () => `The chat view of the web console, conversation ${id}, showing messages up to #${lastSeq}; the person spoke this message.` });
  el.append(h("div", { class: "chat" }, head, log, voice.el, composer));

  const scroll = () => { log.scrollTop = log.scrollHeight; };
  const add = (e) => {
    if (seen.has(e.id)) return;
    if (e.seq !== undefined && e.seq !== null) {
      if (e.seq <= lastSeq) return;
      lastSeq = e.seq;
    }
    seen.add(e.id);
    if (e.content && e.content.interim) return; // a notice that a retry follows: the log view shows it
    const node = entryEl(e, { onEdit: (x, y) => editInPlace(id, x, y) });
    if (live && live.isConnected) log.insertBefore(node, live);
    else log.append(node);
    if (e.kind === "assistant" || e.kind === "error") { dropLive(); statusSoon(); }
    scroll();
  };
  const dropLive = () => { if (live) live.remove(); live = null; };
  const delta = (t) => {
    if (!live) {
      live = h("div", { class: "msg assistant live", id: "live" }, h("div", { class: "who" }, h("span", { class: "kind" }, "streaming")), h("div", { class: "body" }));
      log.append(live);
    }
    live.querySelector(".body").textContent += t;
    scroll();
  };

  // The status after a reply: a turn_end can be lost (a restart between
  // the entry and the event), the conversation row cannot.
  let statusTimer = null;
  const statusSoon = () => { clearTimeout(statusTimer); statusTimer = setTimeout(() => checkPending(), 400); };
  const tools = h("div", { id: "tools" });
  const postResult = async (call, output) => {
    if (posted.has(call.call_id)) return;
    posted.add(call.call_id);
    try {
      await api.post(`/api/conversations/${id}/tool-results`, { results: [{ call_id: call.call_id, output }] });
      const ui = tools.querySelector(`[data-call="${call.call_id}"]`);
      if (ui && ui.classList.contains("ask-user")) ui.remove();
    } catch (e) {
      posted.delete(call.call_id);
      toast("Could not send the answer: " + e.message, "error");
    }
  };
  const checkPending = async () => {
    try { conv = await api.get(`/api/conversations/${id}`); } catch { return; }
    status.textContent = conv.status;
    status.classList.toggle("running", conv.status === "running");
    for (const call of conv.pending_calls || []) {
      if (tools.querySelector(`[data-call="${call.call_id}"]`) || posted.has(call.call_id)) continue;
      if (call.waiting_for === "client" && FRONTEND[call.name]) tools.append(FRONTEND[call.name](call, postResult));
      else if (call.waiting_for === "person") tools.append(approvalForm(id, call, () => checkPending()));
    }
    if (!tools.isConnected && tools.children.length) log.append(tools);
    else if (tools.isConnected) log.append(tools); // keep it last
    scroll();
  };

  const first = await api.get(`/api/conversations/${id}/entries`);
  for (const e of first.entries) add(e);
  if (!log.children.length) log.append(h("div", { class: "empty" }, "Nothing here yet."));

  // The stream resumes from the last seq drawn; EventSource sends the last
  // event id on its own reconnects, and a stream opened again after the
  // browser gave up starts from lastSeq: nothing twice, nothing missed.
  let es = null;
  let retry = null;
  const open = () => {
    if (closed) return;
    es = new EventSource(`/api/conversations/${id}/stream?cursor=${lastSeq}`);
    es.addEventListener("open", () => { dropLive(); });
    es.addEventListener("entry", (ev) => add(JSON.parse(ev.data)));
    es.addEventListener("error", (ev) => {
      if (ev.data) { add(JSON.parse(ev.data)); return; }
      if (es.readyState === EventSource.CLOSED) { clearTimeout(retry); retry = setTimeout(open, 1000); }
      dropLive();
    });
    es.addEventListener("delta", (ev) => delta(JSON.parse(ev.data).text));
    es.addEventListener("turn_start", () => { status.textContent = "running"; status.classList.add("running"); });
    es.addEventListener("status", (ev) => { status.textContent = JSON.parse(ev.data).text || "running"; });
    es.addEventListener("restart", () => { dropLive(); });
    es.addEventListener("turn_end", () => { dropLive(); checkPending(); });
  };
  open();
  await checkPending();
  text.focus();
  return () => { closed = true; clearTimeout(retry); clearTimeout(statusTimer); if (es) es.close(); voice.cleanup(); };
}

registerView("chat", {
  title: "Chat",
  render(el, params) {
    const id = params.get("c");
    if (!id || params.get("new")) return newChat(el);
    return chat(el, id);
  },
  keys: {
    l: (p) => { if (p.get("c")) navigate({ view: "log", c: p.get("c") }); },
    g: (p) => { if (p.get("c")) navigate({ view: "graph", c: p.get("c") }); },
    i: () => { const c = document.getElementById("composer"); if (c) c.focus(); },
  },
  commands: (p) => p.get("c") ? [{ title: "Open the log of this conversation", run: () => navigate({ view: "log", c: p.get("c") }) }] : [],
});
