package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/switchboardhq/switchboard/core/artifact"
	"github.com/switchboardhq/switchboard/store"
)

// Artifacts: what agents made in conversations, seen by exactly those who
// see the conversation (allowedConversationID decides for one; a listing
// takes the same visibility as the history).

func (a *API) artifactRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/artifacts", a.handle(a.artifactList))
	mux.Handle("GET /api/artifacts/{artifact}", a.handle(a.artifactGet))
	mux.Handle("GET /api/artifacts/{artifact}/versions/{n}", a.handle(a.artifactVersion))
	mux.Handle("GET /api/artifacts/{artifact}/diff", a.handle(a.artifactDiff))
	mux.Handle("POST /api/artifacts/{artifact}/comments", a.handle(a.artifactComment))
}

func artifactJSON(x *store.Artifact, withContent bool) map[string]any {
	out := map[string]any{
		"id": x.ID, "conversation_id": x.ConversationID, "kind": x.Kind, "title": x.Title, "language": x.Language,
		"version": x.Version, "created_by": x.CreatedBy, "created_at": x.CreatedAt, "updated_at": x.UpdatedAt,
	}
	if withContent {
		out["content"] = x.Content
	}
	return out
}

func versionJSON(v *store.ArtifactVersion, withContent bool) map[string]any {
	out := map[string]any{"version": v.Version, "title": v.Title, "language": v.Language, "author": v.Author, "created_at": v.CreatedAt}
	if withContent {
		out["content"] = v.Content
	}
	return out
}

func commentJSON(c *store.ArtifactComment) map[string]any {
	return map[string]any{"id": c.ID, "version": c.Version, "author": c.Author, "text": c.Text, "created_at": c.CreatedAt}
}

// allowedArtifact reads the artifact of the path when the caller may see
// its conversation; one they may not see is not found, like a missing one.
func (a *API) allowedArtifact(r *http.Request) (*store.Artifact, error) {
	id, err := parseID("artifact", r.PathValue("artifact"))
	if err != nil {
		return nil, err
	}
	notFound := &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("artifact %s not found", id)}
	x, err := a.st.ArtifactGet(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	if err := a.mayUseConversation(r, principal(r), x.ConversationID); err != nil {
		var he *httpError
		if errors.As(err, &he) || errors.Is(err, store.ErrNotFound) {
			return nil, notFound
		}
		return nil, err
	}
	if _, err := a.allowedConversationID(r, x.ConversationID); errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	return x, nil
}

// artifactList is GET /api/artifacts?type=&conversation=&q=&limit=: newest
// first. An agent session names the conversation (one of its agent's).
func (a *API) artifactList(w http.ResponseWriter, r *http.Request) error {
	ctx, p, qs := r.Context(), principal(r), r.URL.Query()
	lp := &store.ArtifactListParams{Kind: store.ArtifactKind(qs.Get("type")), Query: qs.Get("q")}
	var err error
	if lp.Limit, err = queryInt(r, "limit", 1, 200, 50); err != nil {
		return err
	}
	if c := qs.Get("conversation"); c != "" {
		id, err := parseID("conversation", c)
		if err != nil {
			return err
		}
		if err := a.mayUseConversation(r, p, id); err != nil {
			return err
		}
		if _, err := a.allowedConversationID(r, id); err != nil {
			return err
		}
		lp.ConversationID = &id
	} else if p.Kind == PrincipalAgent {
		return &httpError{status: http.StatusForbidden, msg: "an agent session lists the artifacts of one conversation: add ?conversation="}
	}
	if lp.Visibility, err = a.visibility(ctx, p); err != nil {
		return err
	}
	list, err := a.st.ArtifactList(ctx, lp)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		out = append(out, artifactJSON(x, false))
	}
	writeJSON(w, http.StatusOK, map[string]any{"artifacts": out})
	return nil
}

// artifactGet is GET /api/artifacts/{id}: the current version's content,
// every version (without content) and the comments.
func (a *API) artifactGet(w http.ResponseWriter, r *http.Request) error {
	x, err := a.allowedArtifact(r)
	if err != nil {
		return err
	}
	vs, err := a.st.ArtifactVersionList(r.Context(), x.ID)
	if err != nil {
		return err
	}
	cs, err := a.st.ArtifactCommentList(r.Context(), x.ID)
	if err != nil {
		return err
	}
	out := artifactJSON(x, true)
	versions := make([]map[string]any, 0, len(vs))
	for _, v := range vs {
		versions = append(versions, versionJSON(v, false))
	}
	comments := make([]map[string]any, 0, len(cs))
	for _, c := range cs {
		comments = append(comments, commentJSON(c))
	}
	out["versions"], out["comments"] = versions, comments
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) versionOf(r *http.Request, x *store.Artifact, name, raw string) (*store.ArtifactVersion, error) {
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("%w: %s %q must be a version number from 1", store.ErrInvalid, name, raw)
	}
	v, err := a.st.ArtifactVersionGet(r.Context(), &store.ArtifactVersionParams{ID: x.ID, Version: n})
	if errors.Is(err, store.ErrNotFound) {
		return nil, &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("artifact %s has no version %d (it is at %d)", x.ID, n, x.Version)}
	}
	return v, err
}

// artifactVersion is GET /api/artifacts/{id}/versions/{n}.
func (a *API) artifactVersion(w http.ResponseWriter, r *http.Request) error {
	x, err := a.allowedArtifact(r)
	if err != nil {
		return err
	}
	v, err := a.versionOf(r, x, "version", r.PathValue("n"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, versionJSON(v, true))
	return nil
}

// artifactDiff is GET /api/artifacts/{id}/diff?from=1&to=2: the unified
// diff as text/plain (to defaults to the current version, from to the one
// before it).
func (a *API) artifactDiff(w http.ResponseWriter, r *http.Request) error {
	x, err := a.allowedArtifact(r)
	if err != nil {
		return err
	}
	to := r.URL.Query().Get("to")
	if to == "" {
		to = strconv.Itoa(x.Version)
	}
	tv, err := a.versionOf(r, x, "to", to)
	if err != nil {
		return err
	}
	from := r.URL.Query().Get("from")
	if from == "" {
		from = strconv.Itoa(max(tv.Version-1, 1))
	}
	fv, err := a.versionOf(r, x, "from", from)
	if err != nil {
		return err
	}
	name, _ := artifact.FileName(x)
	diff := artifact.Unified(fv.Content, tv.Content, fmt.Sprintf("%s (version %d)", name, fv.Version), fmt.Sprintf("%s (version %d)", name, tv.Version))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write([]byte(diff))
	return ignoreWriteErr(err)
}

// artifactComment is POST /api/artifacts/{id}/comments: {"text",
// "version"} (0 or absent: the current version).
func (a *API) artifactComment(w http.ResponseWriter, r *http.Request) error {
	x, err := a.allowedArtifact(r)
	if err != nil {
		return err
	}
	var body struct {
		Text    string `json:"text"`
		Version int    `json:"version"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	c, err := a.st.ArtifactComment(r.Context(), &store.ArtifactCommentParams{
		ArtifactID: x.ID, Version: body.Version, Author: store.Author(caller(r)), Text: body.Text,
	})
	if errors.Is(err, store.ErrNotFound) {
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("artifact %s has no version %d", x.ID, body.Version)}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, commentJSON(c))
	return nil
}
