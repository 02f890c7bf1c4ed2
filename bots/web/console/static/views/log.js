// The log of a conversation: every entry with its kind, error entries
// (no seq) marked, discarded attempts on request; the fork tree (parent,
// children, child counts); a slider that shows the conversation as it was
// at any seq, its entries and its state then (status, pending calls,
// approvals, rebuilt by the server from the log); and editing an earlier
// message to fork.
import { registerView, api, h, navigate } from "../app.js";
import { entryEl, editInPlace } from "./chat.js";

// stateEl shows a conversation's derived state: GET /api/conversations/{id}
// now, or with ?at=N as it was at seq N.
function stateEl(st, past) {
  const calls = st.pending_calls || [];
  const approvals = st.approvals || [];
  return [
    h("p", {}, past ? `Status at #${st.at}: ` : "Status now: ", h("span", { class: "pill " + st.status, id: "state-status" }, st.status)),
    h("ul", { id: "state-calls" }, calls.length ? calls.map((c) => h("li", { dataset: { call: c.call_id } },
      h("code", {}, c.name), ` (#${c.seq}) waiting for the ${c.waiting_for}`)) : h("li", { class: "hint" }, "No pending calls.")),
    h("ul", { id: "state-approvals" }, approvals.length ? approvals.map((a) => h("li", { dataset: { approval: a.id } },
      `${a.kind} for `, h("code", {}, a.tool), `: ${a.status}`, a.decided_by ? ` by ${a.decided_by}` : "")) : h("li", { class: "hint" }, "No approvals waiting.")),
  ];
}

function treeEl(data, id) {
  const ul = h("ul", { class: "tree", id: "fork-tree" });
  for (const n of data.tree || []) {
    const label = n.parent_id ? `fork at #${n.fork_seq}` : "root";
    const li = h("li", {}, h("a", {
      href: `/?view=log&c=${n.id}`, "aria-current": String(n.id === id), dataset: { conv: n.id },
      onclick: (ev) => { ev.preventDefault(); navigate({ view: "log", c: n.id }); },
    }, n.depth ? "↳" : "●", h("span", {}, label), h("span", { class: "pill", title: "forks of this conversation" }, `${n.child_count} ${n.child_count === 1 ? "child" : "children"}`),
    h("span", { class: "seq" }, `${n.last_seq} entries`)));
    li.style.paddingLeft = n.depth * 20 + "px"; // CSSOM: allowed by the page's CSP, an inline style attribute is not
    ul.append(li);
  }
  return ul;
}

async function render(el, params) {
  const id = params.get("c");
  if (!id) {
    el.append(h("div", { class: "empty" }, "Pick a conversation on the left to see its log."));
    return;
  }
  const [conv, forks] = await Promise.all([api.get(`/api/conversations/${id}`), api.get(`/api/conversations/${id}/forks`)]);
  const max = conv.last_seq;
  let at = Number(params.get("at")) || max;
  let showErrors = params.get("errors") !== "0";

  const entries = h("div", { class: "entries", id: "entries" });
  const label = h("output", { id: "at-label" });
  const state = h("div", { id: "state-at" });
  const slider = h("input", { type: "range", min: max ? 1 : 0, max, value: at, id: "seq-slider", "aria-label": "Show the conversation as of seq", disabled: max < 2 });
  const errorsBox = h("input", { type: "checkbox", id: "show-errors", checked: showErrors });

  const load = async () => {
    const q = new URLSearchParams();
    if (at && at < max) q.set("at", at);
    if (!showErrors) q.set("errors", "0");
    const past = at && at < max;
    const [data, st] = await Promise.all([
      api.get(`/api/conversations/${id}/entries?${q}`),
      api.get(`/api/conversations/${id}` + (past ? `?at=${at}` : "")),
    ]);
    state.replaceChildren(...stateEl(st, past));
    label.textContent = at < max ? `as of #${at} of ${max}` : `latest (#${max})`;
    entries.replaceChildren(...data.entries.map((e) => entryEl(e, { onEdit: (x, y) => editInPlace(id, x, y) })));
    if (!data.entries.length) entries.append(h("div", { class: "empty" }, "No entries."));
    el.querySelector("#entry-count").textContent = `${data.entries.filter((e) => e.seq).length} entries shown` +
      (showErrors ? `, ${data.entries.filter((e) => !e.seq).length} error entries (no seq)` : "");
  };
  let timer = null;
  slider.addEventListener("input", () => {
    at = Number(slider.value);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const p = new URLSearchParams(location.search);
      p.set("at", at);
      history.replaceState(null, "", "/?" + p);
      load();
    }, 80);
  });
  errorsBox.addEventListener("change", () => { showErrors = errorsBox.checked; load(); });

  el.append(h("div", { class: "logview" },
    h("div", { class: "view-head" },
      h("h2", {}, conv.title ? "Log: " + conv.title : "Log"),
      h("span", { class: "pill" }, conv.status),
      h("span", { class: "sp" }),
      h("a", { href: `/?c=${id}`, onclick: (ev) => { ev.preventDefault(); navigate({ c: id }); } }, "Open in chat")),
    h("section", { class: "panel" }, h("h3", {}, "Forks"),
      forks.parent ? h("p", {}, "Parent: ", h("a", { href: `/?view=log&c=${forks.parent.id}`, onclick: (ev) => { ev.preventDefault(); navigate({ view: "log", c: forks.parent.id }); } }, forks.parent.title || "the conversation it was forked from"), ` (forked at #${conv.fork_seq})`) : null,
      h("p", { id: "child-count" }, `${forks.children.length} direct ${forks.children.length === 1 ? "fork" : "forks"} of this conversation.`),
      treeEl(forks, id)),
    h("section", { class: "panel" }, h("h3", {}, "Time travel"),
      h("div", { class: "slider" }, h("span", { class: "seq" }, "#1"), slider, h("span", { class: "seq" }, "#" + max), label),
      state,
      h("div", { class: "toggles" }, h("label", {}, errorsBox, " show error entries and discarded attempts"), h("span", { id: "entry-count" }))),
    h("section", { class: "panel" }, h("h3", {}, "Entries"), h("p", { class: "hint" }, "Edit a message of yours to fork the conversation from there."), entries)));
  await load();
}

registerView("log", {
  title: "Log",
  render,
  keys: {
    c: (p) => { if (p.get("c")) navigate({ c: p.get("c") }); },
    "[": () => { const s = document.getElementById("seq-slider"); if (s) { s.stepDown(); s.dispatchEvent(new Event("input")); } },
    "]": () => { const s = document.getElementById("seq-slider"); if (s) { s.stepUp(); s.dispatchEvent(new Event("input")); } },
  },
  commands: (p) => p.get("c") ? [{ title: "Open this conversation in chat", run: () => navigate({ c: p.get("c") }) }] : [],
});
