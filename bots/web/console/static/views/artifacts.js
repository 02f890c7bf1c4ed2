// Artifacts: what agents made (documents, pages, code), in a gallery
// searchable by type and by the conversation that made it; a side panel
// shows one with its versions, a diff between any two, and its comments.
// ?view=artifacts&artifact=<id> opens the panel (the link posted with the
// file in Slack and Discord); ?c=<id> narrows the gallery to a
// conversation.
//
// Server side: /api/artifacts (bots/web/artifacts.go).
import { registerView, api, h, navigate, toast, timeAgo } from "../app.js";
import { useStyles, text } from "./historylib.js";

const KINDS = [["", "Every type"], ["document", "Documents"], ["page", "Pages"], ["code", "Code"]];
const ICON = { document: "📄", page: "🌐", code: "⌨️" };

// diffEl colours a unified diff line by line.
function diffEl(diff) {
  const pre = h("pre", { class: "art-diff", id: "art-diff" });
  if (!diff) {
    pre.append("The two versions are the same.");
    return pre;
  }
  for (const line of diff.split("\n")) {
    const kind = line.startsWith("+++") || line.startsWith("---") ? "head" : line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
    pre.append(h("span", { class: "d-" + kind }, line + "\n"));
  }
  return pre;
}

// contentEl shows a version: a page in a sandboxed frame (no scripts, no
// access to this page), anything else as text.
function contentEl(kind, content) {
  if (kind === "page") {
    const frame = h("iframe", { class: "art-frame", sandbox: "", title: "The page", referrerpolicy: "no-referrer" });
    frame.srcdoc = content;
    return h("div", {}, frame, h("details", {}, h("summary", {}, "Source"), h("pre", { class: "art-code" }, content)));
  }
  return h("pre", { class: "art-code" + (kind === "document" ? " prose" : "") }, content);
}

async function panel(id, close) {
  const a = await api.get("/api/artifacts/" + id);
  const body = h("div", { class: "art-body", id: "art-content" }, contentEl(a.kind, a.content));
  const versionSel = h("select", { id: "art-version", "aria-label": "Version" }, a.versions.map((v) => h("option", { value: v.version, selected: v.version === a.version }, `v${v.version} · ${timeAgo(v.created_at)}`)));
  versionSel.addEventListener("change", async () => {
    try {
      const v = await api.get(`/api/artifacts/${id}/versions/${versionSel.value}`);
      body.replaceChildren(contentEl(a.kind, v.content));
    } catch (e) { toast(e.message, "error"); }
  });
  const from = h("select", { id: "art-from", "aria-label": "Diff from version" }, a.versions.map((v) => h("option", { value: v.version, selected: v.version === Math.max(a.version - 1, 1) }, "v" + v.version)));
  const to = h("select", { id: "art-to", "aria-label": "Diff to version" }, a.versions.map((v) => h("option", { value: v.version, selected: v.version === a.version }, "v" + v.version)));
  const diffBox = h("div", {});
  const showDiff = async () => {
    try { diffBox.replaceChildren(diffEl(await text("GET", `/api/artifacts/${id}/diff?from=${from.value}&to=${to.value}`))); } catch (e) { toast(e.message, "error"); }
  };
  const comments = h("ul", { class: "art-comments", id: "art-comments" });
  const drawComments = (list) => {
    comments.replaceChildren(...list.map((c) => h("li", {}, h("div", { class: "hist-meta" }, `${c.author} · on v${c.version} · ${timeAgo(c.created_at)}`), h("div", {}, c.text))));
    if (!list.length) comments.append(h("li", { class: "hist-meta" }, "No comments yet."));
  };
  drawComments(a.comments);
  const commentText = h("textarea", { id: "art-comment-text", placeholder: "Comment on this version…", "aria-label": "Comment" });
  const commentForm = h("form", { class: "art-comment-form", onsubmit: async (ev) => {
    ev.preventDefault();
    if (!commentText.value.trim()) return;
    try {
      await api.post(`/api/artifacts/${id}/comments`, { text: commentText.value, version: Number(versionSel.value) });
      commentText.value = "";
      drawComments((await api.get("/api/artifacts/" + id)).comments);
    } catch (e) { toast("Commenting failed: " + e.message, "error"); }
  } }, commentText, h("button", { type: "submit", class: "primary" }, "Comment"));

  return h("aside", { class: "art-panel panel", id: "art-panel", "aria-label": "Artifact " + a.title },
    h("div", { class: "view-head" },
      h("h3", {}, (ICON[a.kind] || "") + " " + a.title),
      h("span", { class: "pill" }, a.kind + (a.language ? " · " + a.language : "")),
      h("span", { class: "sp" }),
      h("button", { type: "button", class: "ghost", "aria-label": "Close", onclick: close }, "×")),
    h("p", { class: "hist-meta" }, `by ${a.created_by || "?"} · version ${a.version} · `,
      h("a", { href: "/?c=" + a.conversation_id, onclick: (ev) => { ev.preventDefault(); navigate({ c: a.conversation_id }); } }, "open its conversation")),
    h("div", { class: "art-toolbar" }, h("label", {}, "Show ", versionSel)),
    body,
    h("section", {}, h("h4", {}, "Changes"),
      h("div", { class: "art-toolbar" }, h("label", {}, "from ", from), h("label", {}, " to ", to), h("button", { type: "button", id: "art-show-diff", onclick: showDiff }, "Show diff")),
      diffBox),
    h("section", {}, h("h4", {}, "Comments"), comments, commentForm));
}

async function render(el, params) {
  useStyles();
  const state = { q: params.get("q") || "", type: params.get("type") || "", c: params.get("c") || "" };
  const search = h("input", { type: "search", id: "art-q", placeholder: "Search titles and content…", value: state.q, "aria-label": "Search artifacts" });
  const type = h("select", { id: "art-type", "aria-label": "Type" }, KINDS.map(([v, t]) => h("option", { value: v, selected: v === state.type }, t)));
  const conv = h("input", { type: "text", id: "art-conv", placeholder: "Any conversation (paste its id)", value: state.c, "aria-label": "Conversation" });
  const grid = h("ul", { class: "art-grid", id: "art-grid", "aria-label": "Artifacts" });
  const side = h("div", { class: "art-side" });

  const remember = (open) => {
    const p = new URLSearchParams({ view: "artifacts" });
    if (state.q) p.set("q", state.q);
    if (state.type) p.set("type", state.type);
    if (state.c) p.set("c", state.c);
    if (open) p.set("artifact", open);
    history.replaceState(null, "", "/?" + p);
  };

  const open = async (id) => {
    remember(id);
    try {
      side.replaceChildren(await panel(id, () => { side.replaceChildren(); remember(null); }));
      for (const li of grid.children) li.firstChild?.setAttribute?.("aria-current", String(li.dataset.artifact === id));
    } catch (e) {
      side.replaceChildren(h("div", { class: "notice error" }, e.status === 404 ? "That artifact is not there, or not yours to see." : e.message));
    }
  };

  const load = async () => {
    const p = new URLSearchParams();
    if (state.q) p.set("q", state.q);
    if (state.type) p.set("type", state.type);
    if (state.c) p.set("conversation", state.c);
    let data;
    try { data = await api.get("/api/artifacts?" + p); } catch (e) { grid.replaceChildren(h("li", { class: "notice error" }, e.message)); return; }
    grid.replaceChildren(...data.artifacts.map((a) => h("li", { dataset: { artifact: a.id } }, h("button", {
      type: "button", class: "art-card", onclick: () => open(a.id),
    }, h("span", { class: "art-icon", "aria-hidden": "true" }, ICON[a.kind] || "•"),
    h("span", { class: "art-title" }, a.title),
    h("span", { class: "hist-meta" }, [a.kind, a.language, "v" + a.version, timeAgo(a.updated_at)].filter(Boolean).join(" · "))))));
    if (!data.artifacts.length) grid.append(h("li", { class: "empty" }, "No artifacts yet: agents make them with artifact_create."));
  };

  let timer = null;
  const changed = () => { clearTimeout(timer); timer = setTimeout(() => { remember(params.get("artifact")); load(); }, 200); };
  search.addEventListener("input", () => { state.q = search.value.trim(); changed(); });
  conv.addEventListener("input", () => { state.c = conv.value.trim(); changed(); });
  type.addEventListener("change", () => { state.type = type.value; changed(); });

  el.append(h("div", { class: "art" },
    h("div", { class: "view-head" }, h("h2", {}, "Artifacts")),
    h("div", { class: "hist-filters" },
      h("label", { class: "hist-field grow" }, h("span", {}, "Search"), search),
      h("label", { class: "hist-field" }, h("span", {}, "Type"), type),
      h("label", { class: "hist-field" }, h("span", {}, "Conversation"), conv)),
    h("div", { class: "art-body-wrap" }, grid, side)));
  await load();
  if (params.get("artifact")) await open(params.get("artifact"));
}

registerView("artifacts", {
  title: "Artifacts",
  render,
  keys: { f: () => document.getElementById("art-q")?.focus() },
  commands: () => [{ title: "Search artifacts", run: () => document.getElementById("art-q")?.focus() }],
});
