// The runs view: runs (GET /api/runs, newest first, ?c= narrows to one
// conversation's) and, for the chosen run (?run=), its steps with status,
// agent, model, tokens, cost and output, each coding step's change (branch,
// files, gates, pull request and the diff), its events, and cancel and
// retry. Whoever may see a run's conversation sees the run.
import { registerView, api, h, navigate, toast, timeAgo } from "../app.js";

export function workCSS() {
  if (document.getElementById("work-css")) return;
  document.head.append(Object.assign(document.createElement("link"), { id: "work-css", rel: "stylesheet", href: "/console/views/work.css" }));
}

const usd = (micro) => "$" + (Number(micro || 0) / 1e6).toFixed(4);
// shortModel keeps a long model name (a path) readable in the table; the
// cell's title has it whole.
const shortModel = (m) => m.length > 32 && m.includes("/") ? m.slice(0, m.indexOf(":") + 1) + "…/" + m.slice(m.lastIndexOf("/") + 1) : m;
const pill = (status) => h("span", { class: "pill", dataset: { status } }, status);
const short = (id) => id.slice(-8);
const convLink = (id) => h("a", { href: `/?c=${id}`, onclick: (ev) => { ev.preventDefault(); navigate({ view: "log", c: id }); } }, id.slice(0, 8));

// changesPanel shows a coding step's change: where it went, its files,
// its gates and the unified diff, each line marked as added or removed.
function changesPanel(s) {
  const c = s.changes;
  const delivered = c.pull_request ? h("a", { href: c.pull_request.url, rel: "noopener" }, `pull request #${c.pull_request.number}`)
    : c.pushed ? "pushed" : "not delivered";
  const lines = (c.diff || "").split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const cls = (l) => l.startsWith("+++") || l.startsWith("---") || l.startsWith("diff ") || l.startsWith("index ") ? "meta"
    : l.startsWith("@@") ? "hunk" : l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "";
  return h("section", { class: "panel changes", dataset: { step: s.key } },
    h("h3", {}, `Changes of ${s.key}`),
    h("p", {}, h("code", {}, c.branch), ` from ${c.base} · ${c.stat || "no change"} · `, delivered,
      c.diff_url ? [" · ", h("a", { href: c.diff_url }, "diff page")] : ""),
    (c.files || []).length ? h("ul", { class: "files" }, c.files.map((f) => h("li", {}, h("code", {}, f.path),
      f.binary ? " (binary)" : ` +${f.insertions} −${f.deletions}`))) : "",
    (c.gates || []).length ? h("ul", { class: "gates" }, c.gates.map((g) => h("li", { dataset: { passed: String(g.passed) } },
      pill(g.passed ? "passed" : "failed"), ` ${g.kind}: `, h("pre", {}, g.output)))) : "",
    c.diff ? h("pre", { class: "diff" }, lines.map((l) => h("span", { class: cls(l) }, l + "\n"))) : "",
    c.truncated ? h("p", { class: "empty" }, "The diff is cut here; the branch holds all of it.") : "");
}

async function showRun(box, id, reload) {
  const [run, ev] = await Promise.all([api.get(`/api/runs/${id}`), api.get(`/api/runs/${id}/events`)]);
  const act = (verb) => async () => {
    try { await api.post(`/api/runs/${id}/${verb}`, {}); toast(verb === "cancel" ? "Cancelled" : "Retrying"); reload(); } catch (e) { toast(e.message, "error"); }
  };
  const steps = run.steps || [];
  const tokens = steps.reduce((n, s) => n + s.input_tokens + s.output_tokens, 0);
  const cost = steps.reduce((n, s) => n + s.cost_micro_usd, 0);
  box.replaceChildren(
    h("section", { class: "panel", id: "run-detail", dataset: { run: run.id, status: run.status } },
      h("div", { class: "view-head" },
        h("h2", {}, run.goal || "Run " + short(run.id)), pill(run.status), h("span", { class: "sp" }),
        run.status === "running" ? h("button", { type: "button", id: "run-cancel", onclick: act("cancel") }, "Cancel") : "",
        run.status === "failed" || run.status === "cancelled" ? h("button", { type: "button", class: "primary", id: "run-retry", onclick: act("retry") }, "Retry") : ""),
      h("p", {}, `Led by ${run.lead} in conversation `, convLink(run.conversation), ` · started ${timeAgo(run.created_at)} · ${steps.length} steps, ${tokens} tokens, ${usd(cost)}`),
      run.result ? h("p", {}, h("strong", {}, "Result: "), run.result) : ""),
    h("section", { class: "panel" }, h("h3", {}, "Steps"),
      steps.length ? h("table", { class: "steps" },
        h("thead", {}, h("tr", {}, ["Step", "Status", "Agent", "Model", "Tokens in/out", "Cost", "Output"].map((c) => h("th", {}, c)))),
        h("tbody", {}, steps.map((s) => h("tr", { dataset: { step: s.key } },
          h("td", {}, h("strong", {}, s.key), h("br"), s.title, s.conversation ? [" · ", convLink(s.conversation)] : ""),
          h("td", {}, pill(s.status), s.attempts > 1 ? ` (${s.attempts} tries)` : ""),
          h("td", {}, s.agent), h("td", { title: s.model || s.class }, shortModel(s.model || s.class)),
          h("td", {}, `${s.input_tokens}/${s.output_tokens}`), h("td", {}, usd(s.cost_micro_usd)),
          h("td", { class: "out" }, s.error ? h("span", { class: "notice error" }, s.error) : (s.output || "—"))))))
        : h("p", { class: "empty" }, "No steps yet.")),
    ...steps.filter((s) => s.changes).map(changesPanel),
    h("section", { class: "panel" }, h("h3", {}, "Events"),
      (ev.events || []).length ? h("ol", { class: "events", id: "run-events" }, ev.events.map((e) => h("li", {},
        h("time", { datetime: e.at }, new Date(e.at).toLocaleTimeString()),
        e.step ? h("strong", {}, e.step + " ") : "", e.kind, e.status ? " → " + e.status : "", e.detail ? ": " + e.detail : "")))
        : h("p", { class: "empty" }, "No events.")));
}

async function render(el, params) {
  workCSS();
  const conv = params.get("c") || "";
  const listBox = h("div", {}, "Loading…");
  const detail = h("div", { class: "logview" });
  const status = h("select", { "aria-label": "Status", onchange: () => load() },
    ["", "running", "done", "failed", "cancelled"].map((s) => h("option", { value: s }, s || "any status")));
  el.append(h("div", { class: "runs" },
    h("div", {}, h("div", { class: "view-head" }, h("h2", {}, conv ? "Runs of this conversation" : "Runs"), h("span", { class: "sp" }), status), listBox),
    detail));
  let timer = null;
  const load = async () => {
    const q = new URLSearchParams();
    if (conv) q.set("conversation", conv);
    if (status.value) q.set("status", status.value);
    const { runs } = await api.get("/api/runs?" + q.toString());
    const chosen = params.get("run") || (runs[0] && runs[0].id);
    listBox.replaceChildren(runs.length ? h("ul", { class: "run-list", id: "run-list" }, runs.map((r) => h("li", {},
      h("a", { href: `/?view=runs&run=${r.id}`, "aria-current": r.id === chosen ? "true" : "false", dataset: { run: r.id },
        onclick: (ev) => { ev.preventDefault(); navigate({ view: "runs", c: conv, run: r.id }); } },
        r.goal || "Run " + short(r.id), " ", pill(r.status), h("span", { class: "m" }, `${r.lead} · ${timeAgo(r.created_at)}`)))))
      : h("p", { class: "empty" }, "No runs yet. An agent starts one when a plan of several steps is approved (!run)."));
    if (chosen) await showRun(detail, chosen, load);
    else detail.replaceChildren();
    clearTimeout(timer);
    if (runs.some((r) => r.status === "running")) timer = setTimeout(() => load().catch(() => {}), 3000);
  };
  await load();
  return () => clearTimeout(timer);
}

registerView("runs", {
  title: "Runs",
  render,
  commands: (p) => p.get("c") ? [{ title: "Every run, not only this conversation's", run: () => navigate({ view: "runs" }) }] : [],
});
