// The work graph: how the work around a conversation connects — its
// forks, side threads, delegated tasks, runs and their steps, and the
// agents on them (GET /api/graph?c=). Drawn as SVG by hand: the tree the
// API gives (each node's parent) is laid out in layers, top down, parents
// centred over their children; the agents sit in a row of their own at the
// bottom. A click on a node (or Enter on it) goes where it lives: a
// conversation to its chat, a run or a step to the runs view.
import { registerView, api, h, navigate } from "../app.js";
import { workCSS } from "./runs.js";

const NS = "http://www.w3.org/2000/svg";
const W = 176, H = 48, GAP_X = 22, GAP_Y = 84, PAD = 24;

function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

const KIND = { conversation: "conversation", fork: "fork", side_thread: "side thread", task: "delegated task", run: "run", step: "step", agent: "agent" };

// layout places every node: x and y of its box's top left corner.
export function layout(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const kids = new Map();
  const roots = [];
  for (const n of nodes) {
    if (n.kind === "agent") continue;
    if (n.parent && byId.has(n.parent)) {
      if (!kids.has(n.parent)) kids.set(n.parent, []);
      kids.get(n.parent).push(n);
    } else roots.push(n);
  }
  let slot = 0, depthMax = 0;
  const place = (n, depth) => {
    depthMax = Math.max(depthMax, depth);
    n.y = PAD + depth * (H + GAP_Y);
    const cs = kids.get(n.id) || [];
    if (!cs.length) {
      n.x = PAD + slot * (W + GAP_X);
      slot++;
      return;
    }
    for (const c of cs) place(c, depth + 1);
    n.x = (cs[0].x + cs[cs.length - 1].x) / 2;
  };
  for (const r of roots) place(r, 0);
  const agents = nodes.filter((n) => n.kind === "agent");
  const treeWidth = Math.max(slot, 1) * (W + GAP_X) - GAP_X;
  const agentWidth = agents.length * (W + GAP_X) - GAP_X;
  const off = PAD + Math.max(0, (treeWidth - agentWidth) / 2);
  agents.forEach((a, i) => { a.x = off + i * (W + GAP_X); a.y = PAD + (depthMax + 1) * (H + GAP_Y) + 16; });
  return {
    width: PAD * 2 + Math.max(treeWidth, agentWidth),
    height: PAD * 2 + (depthMax + (agents.length ? 2 : 1)) * (H + GAP_Y) - GAP_Y + 16,
  };
}

// target is where a click on n goes, or null.
function target(n) {
  if (n.kind === "run" || n.kind === "step") return { view: "runs", run: n.run };
  if (n.conversation) return { c: n.conversation };
  return null;
}

function edgePath(a, b) {
  // From the bottom of the upper box to the top of the lower one.
  const [up, down] = a.y <= b.y ? [a, b] : [b, a];
  const x1 = up.x + W / 2, y1 = up.y + H, x2 = down.x + W / 2, y2 = down.y;
  if (up.y === down.y) { // same layer: an arc above
    const y = up.y - 18;
    return `M${up.x + W / 2},${up.y} C${up.x + W / 2},${y} ${down.x + W / 2},${y} ${down.x + W / 2},${down.y}`;
  }
  const my = (y1 + y2) / 2;
  return `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`;
}

function draw(g, current) {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const size = layout(g.nodes);
  const svg = s("svg", { id: "graph-svg", viewBox: `0 0 ${size.width} ${size.height}`, role: "img", "aria-label": `Work graph: ${g.nodes.length} nodes, ${g.edges.length} edges` });
  svg.setAttribute("width", size.width); // CSSOM max-width keeps it inside the page
  const defs = s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    s("path", { d: "M0,0 L10,5 L0,10 z", fill: "currentColor" })));
  svg.append(defs);
  const edges = s("g", { class: "edges" });
  for (const e of g.edges) {
    const a = byId.get(e.from), b = byId.get(e.to);
    if (!a || !b) continue;
    const d = edgePath(a, b);
    const label = e.kind === "handled-by" ? "" : e.kind.replace(/-/g, " ") + (e.label ? ` (${e.label})` : "");
    const mx = (a.x + b.x) / 2 + W / 2 + 4, my = (a.y + b.y) / 2 + H / 2;
    edges.append(s("g", { class: "edge", dataset: { kind: e.kind, from: e.from, to: e.to } },
      // The arrow points at the edge's To, drawn above or below its From.
      s("path", { d, [a.y < b.y ? "marker-end" : "marker-start"]: e.kind === "handled-by" ? null : "url(#arrow)" }),
      label ? s("text", { x: mx, y: my }, label) : null));
  }
  svg.append(edges);
  const nodes = s("g", { class: "nodes" });
  for (const n of g.nodes) {
    const to = target(n);
    const go = () => { if (to) navigate(to); };
    const cls = ["node", to ? "link" : "", n.conversation === current && n.kind !== "step" ? "current" : ""].filter(Boolean).join(" ");
    const title = `${KIND[n.kind] || n.kind}: ${n.label}${n.status ? " · " + n.status : ""}${n.agent && n.kind !== "agent" ? " · " + n.agent : ""}${n.detail ? " · " + n.detail : ""}`;
    const label = n.label.length > 26 ? n.label.slice(0, 25) + "…" : n.label;
    const sub = [KIND[n.kind] || n.kind, n.status].filter(Boolean).join(" · ");
    nodes.append(s("g", {
      class: cls, transform: `translate(${n.x},${n.y})`, tabindex: to ? 0 : null, role: to ? "link" : null, "aria-label": title,
      dataset: { id: n.id, kind: n.kind }, onclick: go, onkeydown: (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); go(); } },
    }, s("title", {}, title), s("rect", { width: W, height: H, rx: 9 }),
    s("text", { x: 10, y: 19 }, label), s("text", { x: 10, y: 37, class: "kind" }, sub)));
  }
  svg.append(nodes);
  return svg;
}

async function render(el, params) {
  workCSS();
  const id = params.get("c");
  if (!id) {
    el.append(h("div", { class: "empty" }, "Pick a conversation on the left, then open its work graph (g in the chat view, or the palette)."));
    return;
  }
  const g = await api.get(`/api/graph?c=${encodeURIComponent(id)}`);
  const counts = {};
  for (const n of g.nodes) counts[n.kind] = (counts[n.kind] || 0) + 1;
  el.append(h("div", { class: "graph" },
    h("div", { class: "view-head" }, h("h2", {}, "Work graph"), h("span", { class: "sp" }),
      h("a", { href: `/?view=log&c=${id}`, onclick: (ev) => { ev.preventDefault(); navigate({ view: "log", c: id }); } }, "Log and forks"),
      h("a", { href: `/?view=runs&c=${id}`, onclick: (ev) => { ev.preventDefault(); navigate({ view: "runs", c: id }); } }, "Runs")),
    h("p", { class: "legend", id: "graph-legend" }, Object.entries(counts).map(([k, v]) => h("span", {}, `${v} ${KIND[k] || k}${v === 1 ? "" : "s"}`)),
      g.truncated ? h("span", { class: "notice error" }, "cut short: too many nodes") : ""),
    h("div", { class: "graph-box" }, draw(g, id)),
    h("p", { class: "empty" }, "Click a conversation to open it, a run or a step to see it in the runs view. Dashed lines join work to the agent on it.")));
}

registerView("graph", {
  title: "Work graph",
  render,
  commands: (p) => p.get("c") ? [{ title: "Open the work graph of this conversation", run: () => navigate({ view: "graph", c: p.get("c") }) }] : [],
});
