// Operator views: the approvals inbox (allow or deny what waits); the
// schedules with pause, resume and run now; each budget's spend against its
// limit, with a one-off extension; usage
// and cost per day, agent and conversation as charts; standing grants with
// revoke; DM pairing requests with approve; the audit log; the bridges
// connected for runs_on: bridge agents. Shown to the operator only.
import { registerView, api, h, navigate, toast } from "../app.js";
import { chartSVG } from "./chat.js";

const usd = (v) => "$" + Number(v || 0).toFixed(4);

function section(title, ...body) {
  return h("section", { class: "panel" }, h("h3", {}, title), ...body);
}

function table(cols, rows, empty) {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  return h("table", {}, h("thead", {}, h("tr", {}, cols.map((c) => h("th", {}, c[0])))),
    h("tbody", {}, rows.map((r) => h("tr", {}, cols.map((c) => h("td", {}, c[1](r)))))));
}

async function usage(box, days) {
  const u = await api.get(`/api/usage?days=${days}`);
  const dayChart = chartSVG({
    title: `Cost per day, last ${days} days (USD)`, kind: "bar", labels: { y: "USD" },
    series: [{ name: "cost", points: u.days.slice().reverse().map((d) => ({ x: d.key, y: d.cost_usd })) }],
  });
  const agentChart = chartSVG({
    title: "Tokens per agent", kind: "bar", labels: { y: "tokens" },
    series: [
      { name: "input", points: u.agents.map((a) => ({ x: a.key, y: a.input_tokens })) },
      { name: "output", points: u.agents.map((a) => ({ x: a.key, y: a.output_tokens })) },
      { name: "cached", points: u.agents.map((a) => ({ x: a.key, y: a.cached_tokens })) },
    ],
  });
  box.replaceChildren(
    h("p", {}, `${u.total.calls} model calls, ${usd(u.total.cost_usd)}, cache hit rate ${(100 * (u.total.cache_hit_rate || 0)).toFixed(0)}%.`),
    h("div", { class: "chart", id: "usage-days" }, dayChart),
    h("div", { class: "chart", id: "usage-agents" }, agentChart),
    table([
      ["Conversation", (r) => h("a", { href: `/?c=${r.key}`, onclick: (ev) => { ev.preventDefault(); navigate({ c: r.key }); } }, r.key.slice(0, 8))],
      ["Calls", (r) => r.calls], ["Tokens in/out", (r) => `${r.input_tokens}/${r.output_tokens}`], ["Cost", (r) => usd(r.cost_usd)],
    ], u.conversations.slice(0, 10), "No model calls yet."));
}

async function render(el) {
  const usageBox = h("div", {}, "Loading…");
  const days = h("select", { "aria-label": "Days", onchange: () => usage(usageBox, days.value).catch((e) => toast(e.message, "error")) },
    [7, 14, 30, 90].map((d) => h("option", { value: d, selected: d === 14 }, `${d} days`)));
  const auditBox = h("div", {}, "Loading…");
  const grantsBox = h("div", {}, "Loading…");
  const pairingBox = h("div", {}, "Loading…");
  const approvalsBox = h("div", { id: "approvals" }, "Loading…");
  const schedulesBox = h("div", { id: "schedules" }, "Loading…");
  const budgetsBox = h("div", { id: "budgets" }, "Loading…");
  const installsBox = h("div", { id: "slack-installs" }, "Loading…");
  const bridgesBox = h("div", { id: "bridges" }, "Loading…");
  el.append(h("div", { class: "logview" },
    h("div", { class: "view-head" }, h("h2", {}, "Operations"), h("span", { class: "sp" }), days),
    section("Approvals waiting", approvalsBox),
    section("Schedules", schedulesBox),
    section("Budgets", budgetsBox),
    section("Slack installs", installsBox),
    section("Usage and cost", usageBox),
    section("Standing grants", grantsBox),
    section("DM pairing requests", pairingBox),
    section("Audit log", auditBox),
    section("Bridges", bridgesBox)));

  const loadGrants = async () => {
    const g = await api.get("/api/grants");
    grantsBox.replaceChildren(table([
      ["Agent", (r) => r.agent], ["Tool", (r) => r.tool], ["Workspace", (r) => r.workspace_name || r.workspace],
      ["Granted by", (r) => r.granted_by], ["Since", (r) => new Date(r.created_at).toLocaleString()],
      ["", (r) => h("button", { type: "button", onclick: async () => {
        if (!confirm(`Revoke ${r.agent}'s standing grant for ${r.tool}?`)) return;
        try { await api.del(`/api/grants/${r.id}`); toast("Revoked"); loadGrants(); } catch (e) { toast(e.message, "error"); }
      } }, "Revoke")],
    ], g.grants || [], "No standing grants."));
  };
  const loadApprovals = async () => {
    const a = await api.get("/api/approvals");
    const decide = (r, value) => async () => {
      try {
        await api.post(`/api/conversations/${r.conversation_id}/decide`, { call_id: r.call_id, value });
        toast(value === "deny" ? "Denied" : "Approved");
        loadApprovals();
      } catch (e) { toast(e.message, "error"); }
    };
    approvalsBox.replaceChildren(table([
      ["Tool", (r) => r.tool], ["Risk", (r) => r.risk],
      ["Conversation", (r) => h("a", { href: `/?c=${r.conversation_id}`, onclick: (ev) => { ev.preventDefault(); navigate({ c: r.conversation_id }); } }, r.conversation_id.slice(0, 8))],
      ["Asked", (r) => new Date(r.created_at).toLocaleString()], ["Expires", (r) => new Date(r.expires_at).toLocaleString()],
      ["", (r) => h("span", { class: "choices" },
        h("button", { type: "button", class: "primary", dataset: { decide: "approve", call: r.call_id }, onclick: decide(r, "approve") }, "Allow once"),
        h("button", { type: "button", dataset: { decide: "deny", call: r.call_id }, onclick: decide(r, "deny") }, "Deny"))],
    ], a.approvals || [], "Nothing waits for a decision."));
  };
  // What the last Run now of each schedule did, shown in its row until the
  // view is left.
  const lastRun = new Map();
  const loadSchedules = async () => {
    const s = await api.get("/api/schedules");
    const act = (r, verb) => async () => {
      try { await api.post(`/api/schedules/${r.id}/${verb}`, {}); toast(verb === "pause" ? "Paused" : "Resumed"); loadSchedules(); } catch (e) { toast(e.message, "error"); }
    };
    // Run now answers what it did: fired or not (already fired, an
    // iteration under way), when it fires next, and a note in words.
    const runNowMessage = (r, res) => {
      if (!res.fired) return `${r.name}: ${res.note}`;
      const next = res.next_run_at ? `next ${new Date(res.next_run_at).toLocaleString()}` : "";
      switch (r.kind) {
        case "reminder": return `${r.name} sent now; ` + (next || "it is done and will not fire at its time");
        case "loop": return `${r.name} runs an iteration now; the next comes one interval after it ends`;
        default: return `${r.name} runs now` + (next ? `; ${next}` : "");
      }
    };
    const runNow = (r) => async (ev) => {
      const button = ev.currentTarget;
      button.disabled = true;
      try {
        const res = await api.post(`/api/schedules/${r.id}/run`, {});
        const msg = runNowMessage(r, res);
        lastRun.set(r.id, msg);
        toast(msg);
        loadSchedules().catch(() => {});
        setTimeout(() => loadSchedules().catch(() => {}), 1500);
      } catch (e) { toast(e.message, "error"); button.disabled = false; }
    };
    // Every kind can run now while it is active; paused and blocked ones
    // are resumed first.
    const canRun = (r) => r.state === "active";
    schedulesBox.replaceChildren(table([
      ["Kind", (r) => r.kind], ["Name", (r) => r.name], ["Agent", (r) => r.agent], ["When", (r) => r.spec],
      ["Next", (r) => r.next_run_at ? new Date(r.next_run_at).toLocaleString() : "—"],
      ["State", (r) => h("span", { class: "pill", dataset: { state: r.state } }, r.state)], ["Runs", (r) => r.runs],
      ["", (r) => h("span", { class: "choices" },
        canRun(r) ? h("button", { type: "button", dataset: { act: "run", schedule: r.id }, onclick: runNow(r) }, "Run now") : "",
        r.state === "active" ? h("button", { type: "button", dataset: { act: "pause", schedule: r.id }, onclick: act(r, "pause") }, "Pause")
        : (r.state === "paused" || r.state === "blocked") ? h("button", { type: "button", dataset: { act: "resume", schedule: r.id }, onclick: act(r, "resume") }, "Resume") : "",
        lastRun.has(r.id) ? h("span", { class: "run-result", dataset: { schedule: r.id } }, lastRun.get(r.id)) : "")],
    ], s.schedules || [], "No routines, pulses, reminders or loops."));
  };
  const loadBudgets = async () => {
    const b = await api.get("/api/budgets");
    const period = (r) => r.period.startsWith("day:") ? "today" : "this month";
    const limit = (r) => [r.limit_usd ? usd(r.limit_usd + (r.extra_usd || 0)) : "", r.limit_tokens ? `${r.limit_tokens + (r.extra_tokens || 0)} tokens` : ""].filter(Boolean).join(", ");
    const used = (r) => {
      const lim = r.limit_usd ? r.limit_usd + (r.extra_usd || 0) : 0;
      const share = lim ? r.spent_usd / lim : (r.limit_tokens ? r.spent_tokens / (r.limit_tokens + (r.extra_tokens || 0)) : 0);
      return h("span", { class: "pill", dataset: { state: share >= 1 ? "blocked" : share >= 0.8 ? "paused" : "active" } }, `${(100 * share).toFixed(0)}%`);
    };
    const extend = (r) => async () => {
      const amount = prompt(`Add how many dollars to ${r.key}'s limit ${period(r)}?`, "1");
      if (!amount) return;
      try {
        await api.post("/api/budgets/extend", { key: r.key, monthly: r.period.startsWith("month:"), usd: Number(amount) });
        toast(`Extended ${r.key}`); loadBudgets();
      } catch (e) { toast(e.message, "error"); }
    };
    budgetsBox.replaceChildren(table([
      ["Budget", (r) => r.key], ["Period", period], ["Spent", (r) => `${usd(r.spent_usd)} (${r.spent_tokens} tokens)`],
      ["In flight", (r) => usd(r.reserved_usd)], ["Limit", limit], ["Used", used],
      ["Resets", (r) => new Date(r.resets_at).toLocaleString()],
      ["", (r) => r.limit_usd ? h("button", { type: "button", dataset: { extend: r.key }, onclick: extend(r) }, "Extend") : ""],
    ], b.budgets || [], "No budgets (budgets: in switchboard.yaml)."));
  };
  const loadInstalls = async () => {
    const l = await api.get("/api/slack/installs");
    const when = (t) => t ? new Date(t).toLocaleString() : "—";
    const renewal = (r) => r.renewal ? h("span", { class: "pill", title: r.renewal_error || "", dataset: { state: r.renewal === "ok" ? "active" : r.renewal === "retrying" ? "paused" : "blocked" } }, r.renewal) : "does not expire";
    installsBox.replaceChildren(table([
      ["Installed in", (r) => r.org_wide ? `${r.enterprise_name || r.key} (organisation-wide)` : `${r.team_name || r.key}${r.enterprise_name ? ` (${r.enterprise_name})` : ""}`],
      ["Key", (r) => r.key], ["Installed by", (r) => r.installed_by || "—"], ["Scopes", (r) => `${r.scopes.length}`],
      ["Token expires", (r) => when(r.token_expires_at)], ["Renewal", renewal], ["Last event", (r) => when(r.last_event_at)],
    ], l.installs || [], "No workspace installed the app through /slack/install."));
  };
  const loadPairing = async () => {
    const p = await api.get("/api/pairing");
    pairingBox.replaceChildren(table([
      ["Who", (r) => `${r.user_name || r.user_id} (${r.platform})`], ["Code", (r) => r.code], ["Expires", (r) => new Date(r.expires_at).toLocaleString()],
      ["", (r) => h("button", { type: "button", class: "primary", onclick: async () => {
        try { await api.post(`/api/pairing/${r.code}/approve`, {}); toast("Approved"); loadPairing(); } catch (e) { toast(e.message, "error"); }
      } }, "Approve")],
    ], p.pending || [], "Nobody is waiting."));
  };
  const loadAudit = async () => {
    const a = await api.get("/api/audit?limit=50");
    auditBox.replaceChildren(table([
      ["When", (r) => new Date(r.created_at).toLocaleString()], ["Agent", (r) => r.agent], ["Tool", (r) => r.tool],
      ["Risk", (r) => r.risk], ["Decision", (r) => r.decision], ["Outcome", (r) => r.outcome], ["By", (r) => r.decided_by || r.actor],
    ], a.records || [], "Nothing audited yet."));
  };
  const loadBridges = async () => {
    const b = await api.get("/api/bridges");
    bridgesBox.replaceChildren(table([
      ["Bridge", (r) => r.id], ["Agents", (r) => (r.agents || []).join(", ")], ["Version", (r) => r.version || "—"],
      ["Last heartbeat", (r) => new Date(r.last_heartbeat).toLocaleString()], ["Calls running", (r) => r.calls],
    ], b.bridges || [], "No bridge connected (runs_on: bridge agents run on them; see docs/bridge.md)."));
  };
  const fail = (box) => (e) => box.replaceChildren(h("div", { class: "notice error" }, e.message));
  await Promise.all([
    usage(usageBox, 14).catch(fail(usageBox)), loadGrants().catch(fail(grantsBox)), loadApprovals().catch(fail(approvalsBox)), loadSchedules().catch(fail(schedulesBox)),
    loadPairing().catch(fail(pairingBox)), loadAudit().catch(fail(auditBox)), loadBudgets().catch(fail(budgetsBox)),
    loadInstalls().catch(fail(installsBox)),
    loadBridges().catch(fail(bridgesBox)),
  ]);
}

registerView("ops", {
  title: "Operations",
  hidden: (me) => !me.admin,
  render,
});
