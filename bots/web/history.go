package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/core/workspace"
)

// The history: list and search the conversations a principal may see,
// rename, archive and file them in folders, delete them, in bulk too, and
// export and import them. A person sees the conversations of the
// workspaces they may use (workspace.Use), exactly as GET
// /api/conversations/{id} decides; an agent session those of its agent;
// the operator every one.

// visibility is what the principal sees: every workspace (the operator and
// agent sessions, which are kept to their agent by agentFilter), or a
// person's workspaces, narrowed to those a scoped token names.
func (a *API) visibility(ctx context.Context, p *Principal) (core.Visibility, error) {
	if p.Admin() || p.Kind == PrincipalAgent {
		return core.Visibility{All: true}, nil
	}
	return a.svc.Workspaces().Visibility(ctx, p.actor())
}

// agentFilter keeps an agent session to its own agent's conversations:
// the agent's id, or found false when the agent is not known (it then sees
// none).
func (a *API) agentFilter(ctx context.Context, p *Principal) (id *uuid.UUID, found bool, err error) {
	if p.Kind != PrincipalAgent {
		return nil, true, nil
	}
	ag, err := a.svc.AgentByName(ctx, p.Agents[0])
	if errors.Is(err, core.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &ag.ID, true, nil
}

// ListingJSON is a conversation as the history shows it. Agent is set
// when it has one (its name, "" when the server no longer knows it).
type ListingJSON struct {
	ConversationJSON
	UpdatedAt   time.Time  `json:"updated_at"`
	Platform    string     `json:"platform"`
	Archived    bool       `json:"archived"`
	ArchivedAt  *time.Time `json:"archived_at,omitempty"`
	FolderID    *uuid.UUID `json:"folder_id"`
	WorkspaceID *uuid.UUID `json:"workspace_id"`
	Agent       *string    `json:"agent,omitempty"`
}

// HistoryPage is a page of GET /api/conversations. NextOffset (and Next,
// the same as a string, for ?before=) is the offset of the next page, null
// on the last.
type HistoryPage struct {
	Conversations []ListingJSON `json:"conversations"`
	NextOffset    *int          `json:"next_offset"`
	Next          *string       `json:"next"`
}

// listingJSON is a conversation as the history shows it.
func (a *API) listingJSON(ctx context.Context, l *core.ConversationListing, names map[uuid.UUID]string) (ListingJSON, error) {
	out := ListingJSON{
		ConversationJSON: conversationJSON(l.Conversation), UpdatedAt: l.Conversation.UpdatedAt, Platform: l.Platform,
		Archived: l.ArchivedAt != nil, ArchivedAt: l.ArchivedAt, FolderID: l.FolderID, WorkspaceID: l.WorkspaceID,
	}
	if id := l.Conversation.AgentID; id != nil {
		name, ok := names[*id]
		if !ok {
			var err error
			name, err = a.svc.AgentName(ctx, *id)
			if err != nil && !errors.Is(err, core.ErrNotFound) {
				return ListingJSON{}, err
			}
			names[*id] = name
		}
		out.Agent = &name
	}
	return out, nil
}

func queryInt(r *http.Request, name string, min, max, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, fmt.Errorf("%w: %s=%q must be a whole number from %d to %d", core.ErrInvalidParams, name, v, min, max)
	}
	return n, nil
}

// historyList is GET /api/conversations: ?q= (title and text), agent=,
// platform=, folder= (an id, or "none"), archived= (false, true or all),
// sort= (activity, created or title), offset=, limit= (at most 200). The
// answer's next_offset (and next, the same as a string for ?before=) is
// the offset of the next page, null on the last.
func (a *API) historyList(w http.ResponseWriter, r *http.Request) error {
	ctx, p, qs := r.Context(), principal(r), r.URL.Query()
	vis, err := a.visibility(ctx, p)
	if err != nil {
		return err
	}
	sp := &core.ConversationSearchParams{Visibility: vis, Query: qs.Get("q"), Platform: qs.Get("platform"), Sort: core.ConversationSort(qs.Get("sort"))}
	if sp.Offset, err = queryInt(r, "offset", 0, 1<<30, 0); err != nil {
		return err
	}
	// before= is the "next" of the previous page (the sidebar's paging).
	if qs.Get("before") != "" && qs.Get("offset") == "" {
		if sp.Offset, err = queryInt(r, "before", 0, 1<<30, 0); err != nil {
			return err
		}
	}
	if sp.Limit, err = queryInt(r, "limit", 1, 200, 50); err != nil {
		return err
	}
	agentID, found, err := a.agentFilter(ctx, p)
	if err != nil {
		return err
	}
	sp.AgentID = agentID
	if name := qs.Get("agent"); found && name != "" {
		ag, err := a.svc.AgentByName(ctx, name)
		switch {
		case errors.Is(err, core.ErrNotFound):
			found = false
		case err != nil:
			return err
		case agentID != nil && *agentID != ag.ID:
			found = false
		default:
			sp.AgentID = &ag.ID
		}
	}
	switch f := qs.Get("folder"); f {
	case "":
	case "none":
		sp.Unfiled = true
	default:
		id, err := parseID("folder", f)
		if err != nil {
			return err
		}
		sp.FolderID = &id
	}
	switch v := qs.Get("archived"); v {
	case "", "false":
	case "true":
		sp.Archived = ptrTo(true)
	case "all":
		sp.WithArchived = true
	default:
		return fmt.Errorf("%w: archived=%q must be false, true or all", core.ErrInvalidParams, v)
	}
	// One more than the page says whether there is a next one.
	limit := sp.Limit
	sp.Limit++
	var ls []*core.ConversationListing
	if found {
		if ls, err = a.svc.SearchConversations(ctx, sp); err != nil {
			return err
		}
	}
	out := HistoryPage{Conversations: make([]ListingJSON, 0, min(len(ls), limit))}
	if len(ls) > limit {
		ls, out.NextOffset, out.Next = ls[:limit], ptrTo(sp.Offset+limit), ptrTo(strconv.Itoa(sp.Offset+limit))
	}
	names := map[uuid.UUID]string{}
	for _, l := range ls {
		j, err := a.listingJSON(ctx, l, names)
		if err != nil {
			return err
		}
		out.Conversations = append(out.Conversations, j)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func ptrTo[T any](v T) *T { return &v }

// optionalID is a JSON field that may be absent, null or an id: a PATCH's
// folder ("folder": null takes the conversation out of its folder).
type optionalID struct {
	Set bool
	ID  *uuid.UUID
}

func (o *optionalID) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" || string(b) == `""` {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return fmt.Errorf("folder %q is not a UUID", s)
	}
	o.ID = &id
	return nil
}

// FileRequest is the body of PATCH /api/conversations/{id}: each field
// optional; "folder": null takes the conversation out of its folder.
type FileRequest struct {
	Title    *string    `json:"title,omitempty"`
	Archived *bool      `json:"archived,omitempty"`
	Folder   optionalID `json:"folder,omitzero"`
}

// historyPatch is PATCH /api/conversations/{id}.
func (a *API) historyPatch(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	var body FileRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	fp := &core.ConversationFileParams{ID: id, Title: body.Title, Archived: body.Archived}
	if body.Folder.Set {
		fp.FolderID, fp.Unfile = body.Folder.ID, body.Folder.ID == nil
	}
	l, err := a.svc.FileConversation(r.Context(), fp)
	if err != nil {
		return a.folderMissing(err, fp.FolderID)
	}
	out, err := a.listingJSON(r.Context(), l, map[uuid.UUID]string{})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// folderMissing says that a folder, not the conversation, was not found.
func (a *API) folderMissing(err error, folder *uuid.UUID) error {
	if folder != nil && errors.Is(err, core.ErrNotFound) && strings.Contains(err.Error(), "folder "+folder.String()) {
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("folder %s not found", folder)}
	}
	return err
}

// historyDelete is DELETE /api/conversations/{id}: the conversation is
// hidden from the history and the API, and a fork's parent counts one
// child less. The page asks before it calls this.
func (a *API) historyDelete(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	if err := a.svc.DeleteConversation(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// historyExport is GET /api/conversations/{id}/export?format=json|md.
func (a *API) historyExport(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "md" {
		return fmt.Errorf("%w: format=%q must be json or md", core.ErrInvalidParams, format)
	}
	d, err := a.svc.ExportConversation(r.Context(), id)
	if err != nil {
		return err
	}
	name := "conversation-" + id.String()
	if format == "md" {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, name+".md"))
		_, err := w.Write([]byte(transcript.Markdown(d)))
		return ignoreWriteErr(err)
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, name+".json"))
	writeJSON(w, http.StatusOK, d)
	return nil
}

// ignoreWriteErr: once the answer has started, a failed write means the
// client went away; there is nothing left to tell it.
func ignoreWriteErr(error) error { return nil }

// maxImport bounds an import's body: a long conversation's export.
const maxImport = 32 << 20

// ImportRequest is the body of POST /api/conversations/import: an export,
// or its Markdown.
type ImportRequest struct {
	*transcript.Doc
	Markdown  string `json:"markdown,omitempty"`
	Workspace string `json:"workspace,omitempty"`
}

// historyImport is POST /api/conversations/import: the body is an export
// ({"format": "switchboard.conversation/v1", ...}) or {"markdown": "..."}
// (the Markdown export), with an optional "workspace". The conversation is
// new; it goes to the workspace asked for, else the caller's personal one.
func (a *API) historyImport(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxImport)
	var body ImportRequest
	if err := decodeLarge(r, &body); err != nil {
		return err
	}
	p := principal(r)
	if p.Kind == PrincipalAgent {
		return &httpError{status: http.StatusForbidden, msg: "an agent session cannot import conversations"}
	}
	ws, err := a.workspaceForNew(r, body.Workspace)
	if err != nil {
		return err
	}
	doc := body.Doc
	if doc == nil {
		doc = &transcript.Doc{}
	}
	if body.Markdown != "" {
		if doc.Format != "" || len(doc.Entries) > 0 {
			return fmt.Errorf("%w: send either an export document or {\"markdown\": ...}, not both", core.ErrInvalidParams)
		}
		if doc, err = transcript.ParseMarkdown(body.Markdown); err != nil {
			return fmt.Errorf("%w: %v", core.ErrInvalidParams, err)
		}
	}
	id, err := a.svc.ImportConversation(r.Context(), &transcript.ImportParams{Doc: doc, WorkspaceID: ws, Now: a.now()})
	if errors.Is(err, transcript.ErrInvalid) {
		return fmt.Errorf("%w: %v", core.ErrInvalidParams, err)
	}
	if err != nil {
		return err
	}
	l, err := a.svc.FileConversation(r.Context(), &core.ConversationFileParams{ID: id})
	if err != nil {
		return err
	}
	out, err := a.listingJSON(r.Context(), l, map[uuid.UUID]string{})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// BulkRequest is the body of POST /api/conversations/bulk.
type BulkRequest struct {
	IDs []uuid.UUID `json:"ids"`
	// Action is export, delete, archive, unarchive or move.
	Action string `json:"action"`
	// Folder is where move files them (null: in none).
	Folder optionalID `json:"folder,omitzero"`
	// Format is what export answers: json (the default) or md.
	Format string `json:"format,omitempty"`
}

// BulkResult answers POST /api/conversations/bulk: the export's documents,
// or the action done and the conversations it was done to.
type BulkResult struct {
	Conversations []*transcript.Doc `json:"conversations,omitempty"`
	Action        string            `json:"action,omitempty"`
	IDs           []uuid.UUID       `json:"ids,omitempty"`
}

// historyBulk is POST /api/conversations/bulk: {"ids": [...], "action":
// "export" | "delete" | "archive" | "unarchive" | "move", "folder": id or
// null (move), "format": "json" | "md" (export)}. Every id is checked
// before anything is done: one the caller may not see fails the whole
// request with 404.
func (a *API) historyBulk(w http.ResponseWriter, r *http.Request) error {
	var body BulkRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	switch {
	case len(body.IDs) == 0:
		return fmt.Errorf("%w: ids is empty", core.ErrInvalidParams)
	case len(body.IDs) > 500:
		return fmt.Errorf("%w: %d ids; at most 500 at once", core.ErrInvalidParams, len(body.IDs))
	}
	switch body.Action {
	case "export", "delete", "archive", "unarchive":
	case "move":
		if !body.Folder.Set {
			return fmt.Errorf("%w: move needs \"folder\" (an id, or null for none)", core.ErrInvalidParams)
		}
	default:
		return fmt.Errorf("%w: action %q must be export, delete, archive, unarchive or move", core.ErrInvalidParams, body.Action)
	}
	seen := map[uuid.UUID]bool{}
	ids := make([]uuid.UUID, 0, len(body.IDs))
	for _, id := range body.IDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		if err := a.mayUseConversation(r, principal(r), id); err != nil {
			return err
		}
		if _, err := a.allowedConversationID(r, id); errors.Is(err, core.ErrNotFound) {
			return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("conversation %s not found", id)}
		} else if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	ctx := r.Context()
	if body.Action == "export" {
		if body.Format != "" && body.Format != "json" && body.Format != "md" {
			return fmt.Errorf("%w: format %q must be json or md", core.ErrInvalidParams, body.Format)
		}
		docs := make([]*transcript.Doc, 0, len(ids))
		for _, id := range ids {
			d, err := a.svc.ExportConversation(ctx, id)
			if err != nil {
				return err
			}
			docs = append(docs, d)
		}
		if body.Format == "md" {
			parts := make([]string, len(docs))
			for i, d := range docs {
				parts[i] = transcript.Markdown(d)
			}
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			w.Header().Set("Content-Disposition", `attachment; filename="conversations.md"`)
			_, err := w.Write([]byte(strings.Join(parts, "\n---\n\n")))
			return ignoreWriteErr(err)
		}
		w.Header().Set("Content-Disposition", `attachment; filename="conversations.json"`)
		writeJSON(w, http.StatusOK, BulkResult{Conversations: docs})
		return nil
	}
	// All or nothing: one transaction.
	var file *core.ConversationFileParams // nil: delete
	switch body.Action {
	case "archive", "unarchive":
		file = &core.ConversationFileParams{Archived: ptrTo(body.Action == "archive")}
	case "move":
		file = &core.ConversationFileParams{FolderID: body.Folder.ID, Unfile: body.Folder.ID == nil}
	}
	err := a.svc.FileConversations(ctx, ids, file)
	if err != nil {
		return a.folderMissing(err, body.Folder.ID)
	}
	writeJSON(w, http.StatusOK, BulkResult{Action: body.Action, IDs: ids})
	return nil
}

// ---- folders ----

// FolderJSON is a folder of the history; WorkspaceID is null for one
// outside any workspace (the operator's).
type FolderJSON struct {
	ID          uuid.UUID  `json:"id"`
	WorkspaceID *uuid.UUID `json:"workspace_id"`
	Name        string     `json:"name"`
	Color       string     `json:"color"`
	CreatedAt   time.Time  `json:"created_at"`
}

// FolderList is GET /api/folders.
type FolderList struct {
	Folders []FolderJSON `json:"folders"`
}

// FolderRequest is the body of POST /api/folders.
type FolderRequest struct {
	Name      string `json:"name"`
	Color     string `json:"color,omitempty"`     // #rrggbb
	Workspace string `json:"workspace,omitempty"` // as for a new conversation
}

// FolderPatchRequest is the body of PATCH /api/folders/{folder}.
type FolderPatchRequest struct {
	Name  *string `json:"name,omitempty"`
	Color *string `json:"color,omitempty"`
}

func folderJSON(f *core.Folder) FolderJSON {
	return FolderJSON{ID: f.ID, WorkspaceID: f.WorkspaceID, Name: f.Name, Color: f.Color, CreatedAt: f.CreatedAt}
}

// allowedFolder reads the folder of the path and checks that the caller
// may use its workspace (a folder outside any is the operator's).
func (a *API) allowedFolder(r *http.Request) (*core.Folder, error) {
	id, err := parseID("folder", r.PathValue("folder"))
	if err != nil {
		return nil, err
	}
	notFound := &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("folder %s not found", id)}
	f, err := a.svc.Folder(r.Context(), id)
	if errors.Is(err, core.ErrNotFound) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	p := principal(r)
	if p.Kind == PrincipalAgent {
		return nil, &httpError{status: http.StatusForbidden, msg: "an agent session has no folders"}
	}
	if err := a.rights(r.Context(), p, f.WorkspaceID, workspace.Use); errors.Is(err, core.ErrNotFound) || (err != nil && f.WorkspaceID == nil) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	return f, nil
}

// folderList is GET /api/folders: the folders of the workspaces the caller
// sees, by name.
func (a *API) folderList(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	vis := core.Visibility{}
	if p.Kind != PrincipalAgent {
		var err error
		if vis, err = a.visibility(r.Context(), p); err != nil {
			return err
		}
	}
	fs, err := a.svc.Folders(r.Context(), vis)
	if err != nil {
		return err
	}
	out := FolderList{Folders: make([]FolderJSON, 0, len(fs))}
	for _, f := range fs {
		out.Folders = append(out.Folders, folderJSON(f))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// folderCreate is POST /api/folders: {"name", "color": "#rrggbb",
// "workspace"} (the workspace as for a new conversation).
func (a *API) folderCreate(w http.ResponseWriter, r *http.Request) error {
	var body FolderRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if principal(r).Kind == PrincipalAgent {
		return &httpError{status: http.StatusForbidden, msg: "an agent session has no folders"}
	}
	ws, err := a.workspaceForNew(r, body.Workspace)
	if err != nil {
		return err
	}
	f, err := a.svc.CreateFolder(r.Context(), &core.FolderCreateParams{WorkspaceID: ws, Name: body.Name, Color: body.Color})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, folderJSON(f))
	return nil
}

// folderPatch is PATCH /api/folders/{folder}: {"name", "color"}.
func (a *API) folderPatch(w http.ResponseWriter, r *http.Request) error {
	f, err := a.allowedFolder(r)
	if err != nil {
		return err
	}
	var body FolderPatchRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	up, err := a.svc.UpdateFolder(r.Context(), &core.FolderUpdateParams{ID: f.ID, Name: body.Name, Color: body.Color})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, folderJSON(up))
	return nil
}

// folderDelete is DELETE /api/folders/{folder}; its conversations stay,
// in no folder.
func (a *API) folderDelete(w http.ResponseWriter, r *http.Request) error {
	f, err := a.allowedFolder(r)
	if err != nil {
		return err
	}
	if err := a.svc.DeleteFolder(r.Context(), f.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// decodeLarge is decode for a body larger than maxBody (an import), already
// bounded by the caller's MaxBytesReader.
func decodeLarge(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit)}
	}
	if err != nil {
		return fmt.Errorf("%w: request body: %v", core.ErrInvalidParams, err)
	}
	return nil
}
