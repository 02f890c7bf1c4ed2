// History: every conversation the person may see, searched by title and
// content, filtered by agent, platform, folder and archived, sorted by last
// activity, creation or title. Titles are renamed in place; conversations
// are archived, dragged onto colour-coded folders, selected for bulk
// export, archive, move and delete (delete asks first), exported and
// imported as Markdown or JSON.
//
// Server side: GET/PATCH/DELETE /api/conversations, /bulk, /import,
// /{id}/export and /api/folders (bots/web/history.go).
import { registerView, api, h, navigate, toast, timeAgo, session, refreshList } from "../app.js";
import { useStyles, send, download } from "./historylib.js";

const PLATFORMS = [["", "Any platform"], ["slack", "Slack"], ["discord", "Discord"], ["api", "Web and API"]];
const ARCHIVED = [["false", "Active"], ["true", "Archived"], ["all", "All"]];
const SORTS = [["activity", "Last activity"], ["created", "Newest"], ["title", "Title"]];

function select(id, label, options, value) {
  return h("label", { class: "hist-field" }, h("span", {}, label),
    h("select", { id, "aria-label": label }, options.map(([v, t]) => h("option", { value: v, selected: v === value }, t))));
}

async function render(el, params) {
  useStyles();
  const state = {
    q: params.get("q") || "", agent: params.get("agent") || "", platform: params.get("platform") || "",
    folder: params.get("folder") || "", archived: params.get("archived") || "false", sort: params.get("sort") || "activity",
  };
  const selected = new Set();
  let folders = [];
  let rows = [];
  let nextOffset = null;

  const search = h("input", { type: "search", id: "hist-q", placeholder: "Search titles and messages…", value: state.q, "aria-label": "Search conversations" });
  const agent = h("input", { type: "text", id: "hist-agent", placeholder: "Any agent", value: state.agent, "aria-label": "Agent" });
  const list = h("ul", { class: "hist-list", id: "hist-list", "aria-label": "Conversations" });
  const more = h("button", { class: "ghost wide", type: "button", hidden: true, onclick: () => load(false) }, "More…");
  const folderList = h("ul", { class: "hist-folders", id: "hist-folders", "aria-label": "Folders" });
  const bulk = h("div", { class: "hist-bulk", id: "hist-bulk", hidden: true, role: "toolbar", "aria-label": "Selected conversations" });
  const fileInput = h("input", { type: "file", accept: ".json,.md,application/json,text/markdown", multiple: true, hidden: true, id: "hist-import-file" });

  const filters = h("div", { class: "hist-filters" },
    h("label", { class: "hist-field grow" }, h("span", {}, "Search"), search),
    h("label", { class: "hist-field" }, h("span", {}, "Agent"), agent),
    select("hist-platform", "Platform", PLATFORMS, state.platform),
    select("hist-archived", "Show", ARCHIVED, state.archived),
    select("hist-sort", "Sort", SORTS, state.sort));

  // The location keeps the filters, so back and forward and a reload
  // show the same list.
  const remember = () => {
    const p = new URLSearchParams({ view: "history" });
    for (const [k, v] of Object.entries(state)) if (v && !(k === "archived" && v === "false") && !(k === "sort" && v === "activity")) p.set(k, v);
    history.replaceState(null, "", "/?" + p);
  };

  const query = (offset) => {
    const p = new URLSearchParams({ limit: "50", sort: state.sort, archived: state.archived });
    for (const k of ["q", "agent", "platform", "folder"]) if (state[k]) p.set(k, state[k]);
    if (offset) p.set("offset", offset);
    return "/api/conversations?" + p;
  };

  const folderOf = (id) => folders.find((f) => f.id === id);

  const swatch = (f) => {
    const s = h("span", { class: "hist-swatch", "aria-hidden": "true" });
    s.style.background = (f && f.color) || "transparent"; // CSSOM: the page's CSP refuses style attributes
    return s;
  };

  const move = async (ids, folder) => {
    try {
      await api.post("/api/conversations/bulk", { ids, action: "move", folder: folder || null });
      toast(ids.length === 1 ? "Moved." : `Moved ${ids.length} conversations.`);
      await reload();
    } catch (e) { toast("Moving failed: " + e.message, "error"); }
  };

  const dropTarget = (node, folder) => {
    node.addEventListener("dragover", (ev) => { ev.preventDefault(); node.classList.add("drop"); });
    node.addEventListener("dragleave", () => node.classList.remove("drop"));
    node.addEventListener("drop", (ev) => {
      ev.preventDefault();
      node.classList.remove("drop");
      const ids = JSON.parse(ev.dataTransfer.getData("application/x-switchboard-conversations") || "[]");
      if (ids.length) move(ids, folder);
    });
  };

  const drawFolders = () => {
    const item = (label, value, f) => {
      const a = h("a", {
        href: "#", "aria-current": String(state.folder === value), dataset: { folder: value },
        onclick: (ev) => { ev.preventDefault(); state.folder = value; drawFolders(); load(true); },
      }, swatch(f), h("span", {}, label));
      const li = h("li", {}, a);
      if (f) {
        li.append(h("button", { class: "ghost hist-mini", type: "button", title: "Rename or recolour", "aria-label": "Edit folder " + f.name, onclick: () => editFolder(f) }, "✎"),
          h("button", { class: "ghost hist-mini", type: "button", title: "Delete folder", "aria-label": "Delete folder " + f.name, onclick: () => deleteFolder(f) }, "×"));
      }
      if (value !== "") dropTarget(li, value === "none" ? null : value);
      return li;
    };
    folderList.replaceChildren(item("All folders", ""), item("No folder", "none"), ...folders.map((f) => item(f.name, f.id, f)));
  };

  const loadFolders = async () => {
    const data = await api.get("/api/folders");
    folders = data.folders;
    drawFolders();
  };

  const folderForm = (f, done) => {
    const name = h("input", { type: "text", value: f ? f.name : "", placeholder: "Folder name", "aria-label": "Folder name", required: true });
    const color = h("input", { type: "color", value: (f && f.color) || "#5b5bd6", "aria-label": "Folder colour" });
    const form = h("form", { class: "hist-folder-form", onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        if (f) await send("PATCH", "/api/folders/" + f.id, { name: name.value, color: color.value });
        else await api.post("/api/folders", { name: name.value, color: color.value });
        done();
        await loadFolders();
      } catch (e) { toast("Saving the folder failed: " + e.message, "error"); }
    } }, color, name, h("button", { type: "submit", class: "primary" }, f ? "Save" : "Add"), h("button", { type: "button", class: "ghost", onclick: done }, "Cancel"));
    return { form, focus: () => name.focus() };
  };

  const newFolder = h("button", { class: "ghost wide", type: "button", id: "hist-new-folder", onclick: () => {
    const { form, focus } = folderForm(null, () => form.replaceWith(newFolder));
    newFolder.replaceWith(form);
    focus();
  } }, "+ New folder");

  const editFolder = (f) => {
    const li = folderList.querySelector(`[data-folder="${f.id}"]`).parentElement;
    const { form, focus } = folderForm(f, () => drawFolders());
    li.replaceChildren(form);
    focus();
  };

  const deleteFolder = async (f) => {
    if (!confirm(`Delete the folder "${f.name}"? Its conversations stay, in no folder.`)) return;
    try {
      await api.del("/api/folders/" + f.id);
      if (state.folder === f.id) state.folder = "";
      await loadFolders();
      await load(true);
    } catch (e) { toast("Deleting the folder failed: " + e.message, "error"); }
  };

  const drawBulk = () => {
    bulk.hidden = selected.size === 0;
    if (bulk.hidden) return;
    const ids = [...selected];
    const moveTo = h("select", { "aria-label": "Move the selected to a folder", onchange: () => { if (moveTo.value !== "-") move(ids, moveTo.value === "none" ? null : moveTo.value); } },
      h("option", { value: "-" }, "Move to…"), h("option", { value: "none" }, "No folder"), folders.map((f) => h("option", { value: f.id }, f.name)));
    bulk.replaceChildren(
      h("span", { class: "hist-count" }, `${ids.length} selected`),
      h("button", { type: "button", onclick: () => exportMany(ids, "json") }, "Export JSON"),
      h("button", { type: "button", onclick: () => exportMany(ids, "md") }, "Export Markdown"),
      h("button", { type: "button", onclick: () => bulkDo(ids, state.archived === "true" ? "unarchive" : "archive") }, state.archived === "true" ? "Unarchive" : "Archive"),
      moveTo,
      h("button", { type: "button", class: "danger", id: "hist-bulk-delete", onclick: () => {
        if (confirm(`Delete ${ids.length} ${ids.length === 1 ? "conversation" : "conversations"}? They leave the history for everyone who sees them; a fork's parent counts one child less.`)) bulkDo(ids, "delete");
      } }, "Delete…"),
      h("button", { type: "button", class: "ghost", onclick: () => { selected.clear(); drawRows(); } }, "Clear"));
  };

  const bulkDo = async (ids, action) => {
    try {
      await api.post("/api/conversations/bulk", { ids, action });
      toast(`${action === "delete" ? "Deleted" : action === "archive" ? "Archived" : "Unarchived"} ${ids.length}.`);
      selected.clear();
      await reload();
    } catch (e) { toast(`${action} failed: ${e.message}`, "error"); }
  };

  const exportMany = async (ids, format) => {
    try { await download("POST", "/api/conversations/bulk", { ids, action: "export", format }, "conversations." + format); }
    catch (e) { toast("Export failed: " + e.message, "error"); }
  };

  const rename = (c, titleEl) => {
    const input = h("input", { type: "text", value: c.title, "aria-label": "Title", class: "hist-rename" });
    const finish = async (save) => {
      if (save && input.value.trim() && input.value.trim() !== c.title) {
        try {
          const out = await send("PATCH", "/api/conversations/" + c.id, { title: input.value.trim() });
          c.title = out.title;
          refreshList();
        } catch (e) { toast("Renaming failed: " + e.message, "error"); }
      }
      drawRows();
    };
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") { ev.preventDefault(); finish(true); }
      if (ev.key === "Escape") { ev.preventDefault(); finish(false); }
    });
    input.addEventListener("blur", () => finish(true));
    titleEl.replaceWith(input);
    input.focus();
    input.select();
  };

  const row = (c) => {
    const check = h("input", { type: "checkbox", checked: selected.has(c.id), "aria-label": "Select " + (c.title || c.id), onchange: () => {
      if (check.checked) selected.add(c.id); else selected.delete(c.id);
      drawBulk();
    } });
    const title = h("a", { class: "hist-title", href: "/?c=" + c.id, onclick: (ev) => { ev.preventDefault(); navigate({ c: c.id }); } }, c.title || "Untitled");
    const f = folderOf(c.folder_id);
    const meta = [c.agent, c.platform === "api" ? "web" : c.platform, c.parent_id ? "fork" : null, c.child_count ? `${c.child_count} ${c.child_count === 1 ? "fork" : "forks"}` : null, "active " + timeAgo(c.updated_at)].filter(Boolean).join(" · ");
    const li = h("li", { class: "hist-row" + (c.archived ? " archived" : ""), draggable: "true", dataset: { conv: c.id } },
      check,
      h("div", { class: "hist-main" },
        h("div", { class: "hist-line" }, title, f ? h("span", { class: "pill hist-folder-pill" }, swatch(f), f.name) : null, c.archived ? h("span", { class: "pill" }, "archived") : null),
        h("div", { class: "hist-meta" }, meta)),
      h("div", { class: "hist-actions" },
        h("button", { class: "ghost hist-mini", type: "button", title: "Rename", "aria-label": "Rename " + (c.title || c.id), onclick: () => rename(c, title) }, "✎"),
        h("button", { class: "ghost hist-mini", type: "button", title: c.archived ? "Unarchive" : "Archive", onclick: async () => {
          try { await send("PATCH", "/api/conversations/" + c.id, { archived: !c.archived }); await reload(); } catch (e) { toast(e.message, "error"); }
        } }, c.archived ? "Unarchive" : "Archive"),
        h("button", { class: "ghost hist-mini", type: "button", title: "Export as JSON (lossless)", onclick: () => download("GET", `/api/conversations/${c.id}/export?format=json`, null, `conversation-${c.id}.json`).catch((e) => toast(e.message, "error")) }, "JSON"),
        h("button", { class: "ghost hist-mini", type: "button", title: "Export as Markdown", onclick: () => download("GET", `/api/conversations/${c.id}/export?format=md`, null, `conversation-${c.id}.md`).catch((e) => toast(e.message, "error")) }, "MD"),
        h("button", { class: "ghost hist-mini danger", type: "button", title: "Delete", onclick: async () => {
          if (!confirm(`Delete "${c.title || "this conversation"}"? It leaves the history for everyone who sees it.`)) return;
          try { await api.del("/api/conversations/" + c.id); selected.delete(c.id); await reload(); } catch (e) { toast(e.message, "error"); }
        } }, "Delete")));
    li.addEventListener("dragstart", (ev) => {
      const ids = selected.has(c.id) ? [...selected] : [c.id];
      ev.dataTransfer.setData("application/x-switchboard-conversations", JSON.stringify(ids));
      ev.dataTransfer.effectAllowed = "move";
    });
    li.addEventListener("dblclick", (ev) => { if (ev.target === title) return; rename(c, title); });
    return li;
  };

  const drawRows = () => {
    list.replaceChildren(...rows.map(row));
    if (!rows.length) list.append(h("li", { class: "empty" }, state.q ? "Nothing matches." : "No conversations here."));
    drawBulk();
  };

  const load = async (reset) => {
    remember();
    const data = await api.get(query(reset ? 0 : nextOffset));
    rows = reset ? data.conversations : rows.concat(data.conversations);
    nextOffset = data.next_offset;
    more.hidden = nextOffset === null || nextOffset === undefined;
    for (const id of [...selected]) if (!rows.some((r) => r.id === id)) selected.delete(id);
    drawRows();
  };

  // reload shows a change here and in the sidebar's list.
  const reload = async () => { await load(true); refreshList(); };

  const importFiles = async () => {
    let n = 0;
    for (const file of fileInput.files) {
      const text = await file.text();
      let bodies;
      try {
        const doc = JSON.parse(text);
        bodies = Array.isArray(doc.conversations) ? doc.conversations : [doc];
      } catch {
        bodies = [{ markdown: text }];
      }
      for (const b of bodies) {
        try { await api.post("/api/conversations/import", b); n++; } catch (e) { toast(`Importing ${file.name} failed: ${e.message}`, "error"); }
      }
    }
    fileInput.value = "";
    if (n) { toast(`Imported ${n} ${n === 1 ? "conversation" : "conversations"}.`); await reload(); }
  };
  fileInput.addEventListener("change", importFiles);

  let timer = null;
  const changed = () => { clearTimeout(timer); timer = setTimeout(() => load(true).catch((e) => toast(e.message, "error")), 200); };
  search.addEventListener("input", () => { state.q = search.value.trim(); changed(); });
  agent.addEventListener("input", () => { state.agent = agent.value.trim(); changed(); });
  for (const [id, key] of [["hist-platform", "platform"], ["hist-archived", "archived"], ["hist-sort", "sort"]]) {
    filters.querySelector("#" + id).addEventListener("change", (ev) => { state[key] = ev.target.value; selected.clear(); load(true); });
  }

  const me = session() || {};
  el.append(h("div", { class: "hist" },
    h("div", { class: "view-head" }, h("h2", {}, "History"),
      h("span", { class: "sp" }),
      h("button", { type: "button", id: "hist-import", onclick: () => fileInput.click() }, "Import…"), fileInput,
      me.name ? h("span", { class: "pill" }, me.display_name || me.name) : null),
    filters,
    h("div", { class: "hist-body" },
      h("nav", { class: "panel hist-side", "aria-label": "Folders" }, h("h3", {}, "Folders"), folderList, newFolder),
      h("section", { class: "hist-content" }, bulk, list, more))));
  await loadFolders();
  await load(true);
}

registerView("history", {
  title: "History",
  render,
  keys: {
    f: () => document.getElementById("hist-q")?.focus(),
    i: () => document.getElementById("hist-import-file")?.click(),
  },
  commands: () => [
    { title: "Search the history", run: () => document.getElementById("hist-q")?.focus() },
    { title: "Import conversations (JSON or Markdown)", run: () => document.getElementById("hist-import-file")?.click() },
    { title: "Show archived conversations", run: () => navigate({ view: "history", archived: "true" }) },
  ],
});
