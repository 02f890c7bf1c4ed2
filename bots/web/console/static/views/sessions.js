// The sessions view: the caller's console sessions and personal API
// tokens (GET /api/sessions), with when, from where and with what each was
// last used, and End for any (POST /api/sessions/{id}/end). An owner or
// admin of a team workspace picks it to see and end its people's; the
// operator sees everyone's. An ended session is refused by every instance
// from its next request.
import { registerView, api, h, toast, timeAgo, session } from "../app.js";

function managed(me) {
  return (me.workspaces || []).filter((w) => w.kind === "team" && (w.role === "owner" || w.role === "admin"));
}

async function render(el, params) {
  const me = session();
  const ws = params.get("workspace") || "";
  const picker = managed(me);
  const select = picker.length ? h("select", {
    id: "sessions-workspace", "aria-label": "Whose sessions",
    onchange: (ev) => { const p = new URLSearchParams(location.search); p.set("view", "sessions"); if (ev.target.value) p.set("workspace", ev.target.value); else p.delete("workspace"); history.replaceState(null, "", "/?" + p); draw(); },
  }, h("option", { value: "" }, "Mine"), picker.map((w) => h("option", { value: w.id, selected: w.id === ws }, "People of " + w.name))) : null;
  const box = h("div", { id: "sessions-list" });
  el.append(h("div", { class: "view-head" }, h("h2", {}, "Sessions and tokens"), h("span", { class: "sp" }), select), box);

  async function draw() {
    const which = select ? select.value : "";
    const list = await api.get("/api/sessions" + (which ? "?workspace=" + encodeURIComponent(which) : ""));
    const rows = list.sessions || [];
    if (!rows.length) { box.replaceChildren(h("p", { class: "empty" }, "No live sessions or tokens.")); return; }
    box.replaceChildren(h("table", { class: "sessions" },
      h("thead", {}, h("tr", {}, ["Kind", "Whose", "Opened", "Last used", "From", "User agent", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows.map((s) => h("tr", { dataset: { session: s.id } },
        h("td", {}, s.kind === "console" ? `console (${s.method || "link"})` : `token${s.label ? " · " + s.label : ""}`, s.current ? h("strong", {}, " · this one") : ""),
        h("td", {}, s.person_id ? (me.person_id === s.person_id ? "you" : s.person_id.slice(0, 8)) : "operator"),
        h("td", { title: s.created_at }, timeAgo(s.created_at)),
        h("td", { title: s.last_used_at || "" }, s.last_used_at ? timeAgo(s.last_used_at) : "never"),
        h("td", {}, s.last_ip || ""),
        h("td", { class: "ua", title: s.last_user_agent || "" }, (s.last_user_agent || "").slice(0, 60)),
        h("td", {}, h("button", {
          type: "button", class: "danger",
          onclick: async () => {
            try {
              await api.post(`/api/sessions/${encodeURIComponent(s.id)}/end`, {});
              toast(s.kind === "console" ? "Session ended" : "Token revoked");
              if (s.current) { location.reload(); return; }
              draw();
            } catch (e) { toast(e.message, "error"); }
          },
        }, s.kind === "console" ? "End" : "Revoke")))))));
  }
  await draw();
}

registerView("sessions", { title: "Sessions", render });
