package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/artifact"
	"github.com/switchboardhq/switchboard/core/workspace"
)

// Artifacts: what agents made in conversations, seen by exactly those who
// see the conversation (allowedConversationID decides for one; a listing
// takes the same visibility as the history).

// ArtifactJSON is an artifact as a list shows it, without its content.
type ArtifactJSON struct {
	ID             uuid.UUID         `json:"id"`
	ConversationID uuid.UUID         `json:"conversation_id"`
	Kind           core.ArtifactKind `json:"kind"`
	Title          string            `json:"title"`
	Language       string            `json:"language"`
	Version        int               `json:"version"`
	CreatedBy      core.Author       `json:"created_by"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
}

// ArtifactList is GET /api/artifacts.
type ArtifactList struct {
	Artifacts []ArtifactJSON `json:"artifacts"`
}

// ArtifactDetail is one artifact: the current version's content, every
// version (without content) and the comments.
type ArtifactDetail struct {
	ArtifactJSON
	Content  string                `json:"content"`
	Versions []ArtifactVersionJSON `json:"versions"`
	Comments []ArtifactCommentJSON `json:"comments"`
}

// ArtifactVersionJSON is a version of an artifact, without its content.
type ArtifactVersionJSON struct {
	Version   int         `json:"version"`
	Title     string      `json:"title"`
	Language  string      `json:"language"`
	Author    core.Author `json:"author"`
	CreatedAt time.Time   `json:"created_at"`
}

// ArtifactVersionContent is a version of an artifact with its content.
type ArtifactVersionContent struct {
	ArtifactVersionJSON
	Content string `json:"content"`
}

// ArtifactCommentJSON is a comment on a version of an artifact.
type ArtifactCommentJSON struct {
	ID        uuid.UUID   `json:"id"`
	Version   int         `json:"version"`
	Author    core.Author `json:"author"`
	Text      string      `json:"text"`
	CreatedAt time.Time   `json:"created_at"`
}

// CommentRequest is the body of POST /api/artifacts/{artifact}/comments.
type CommentRequest struct {
	Text    string `json:"text"`
	Version int    `json:"version,omitempty"` // 0 or absent: the current version
}

func artifactJSON(x *core.Artifact) ArtifactJSON {
	return ArtifactJSON{
		ID: x.ID, ConversationID: x.ConversationID, Kind: x.Kind, Title: x.Title, Language: x.Language,
		Version: x.Version, CreatedBy: x.CreatedBy, CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt,
	}
}

func versionJSON(v *core.ArtifactVersion) ArtifactVersionJSON {
	return ArtifactVersionJSON{Version: v.Version, Title: v.Title, Language: v.Language, Author: v.Author, CreatedAt: v.CreatedAt}
}

func commentJSON(c *core.ArtifactComment) ArtifactCommentJSON {
	return ArtifactCommentJSON{ID: c.ID, Version: c.Version, Author: c.Author, Text: c.Text, CreatedAt: c.CreatedAt}
}

// allowedArtifact reads the artifact of the path when the caller may see
// its conversation; one they may not see is not found, like a missing one.
func (a *API) allowedArtifact(r *http.Request) (*core.Artifact, error) {
	id, err := parseID("artifact", r.PathValue("artifact"))
	if err != nil {
		return nil, err
	}
	notFound := &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("artifact %s not found", id)}
	x, err := a.svc.Artifact(r.Context(), id)
	if errors.Is(err, core.ErrNotFound) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	if err := a.mayUseConversation(r, principal(r), x.ConversationID); err != nil {
		var he *httpError
		if errors.As(err, &he) || errors.Is(err, core.ErrNotFound) || errors.Is(err, workspace.ErrForbidden) {
			return nil, notFound
		}
		return nil, err
	}
	if _, err := a.allowedConversationID(r, x.ConversationID); errors.Is(err, core.ErrNotFound) {
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
	lp := &core.ArtifactListParams{Kind: core.ArtifactKind(qs.Get("type")), Query: qs.Get("q")}
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
	list, err := a.svc.Artifacts(ctx, lp)
	if err != nil {
		return err
	}
	out := ArtifactList{Artifacts: make([]ArtifactJSON, 0, len(list))}
	for _, x := range list {
		out.Artifacts = append(out.Artifacts, artifactJSON(x))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// artifactGet is GET /api/artifacts/{id}: the current version's content,
// every version (without content) and the comments.
func (a *API) artifactGet(w http.ResponseWriter, r *http.Request) error {
	x, err := a.allowedArtifact(r)
	if err != nil {
		return err
	}
	vs, err := a.svc.ArtifactVersions(r.Context(), x.ID)
	if err != nil {
		return err
	}
	cs, err := a.svc.ArtifactComments(r.Context(), x.ID)
	if err != nil {
		return err
	}
	out := ArtifactDetail{ArtifactJSON: artifactJSON(x), Content: x.Content,
		Versions: make([]ArtifactVersionJSON, 0, len(vs)), Comments: make([]ArtifactCommentJSON, 0, len(cs))}
	for _, v := range vs {
		out.Versions = append(out.Versions, versionJSON(v))
	}
	for _, c := range cs {
		out.Comments = append(out.Comments, commentJSON(c))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) versionOf(r *http.Request, x *core.Artifact, name, raw string) (*core.ArtifactVersion, error) {
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("%w: %s %q must be a version number from 1", core.ErrInvalidParams, name, raw)
	}
	v, err := a.svc.ArtifactVersion(r.Context(), x.ID, n)
	if errors.Is(err, core.ErrNotFound) {
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
	writeJSON(w, http.StatusOK, ArtifactVersionContent{ArtifactVersionJSON: versionJSON(v), Content: v.Content})
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
	var body CommentRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	c, err := a.svc.CommentArtifact(r.Context(), x.ID, body.Version, core.Author(caller(r)), body.Text)
	if errors.Is(err, core.ErrNotFound) {
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("artifact %s has no version %d", x.ID, body.Version)}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, commentJSON(c))
	return nil
}
