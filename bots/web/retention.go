package web

import (
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/workspace"
)

// A workspace's retention, and forgetting a person: the admin API of the
// data a workspace keeps (see docs/production.md, "Retention and deleting
// a person's data").

// retentionRequest is PUT /api/workspaces/{ws}/retention's body.
type retentionRequest struct {
	// KeepDays is how many days after its last activity a conversation is
	// kept; null or 0 keeps conversations forever.
	KeepDays *int `json:"keep_days,omitempty"`
	// ExportDir is a directory on the server each conversation is exported
	// to before it is deleted ("" for none); the operator only. Absent, the
	// directory set before stays.
	ExportDir *string `json:"export_dir,omitempty"`
}

// retentionResponse is a workspace's retention.
type retentionResponse struct {
	Workspace string     `json:"workspace"`
	KeepDays  *int       `json:"keep_days"` // null: kept forever
	ExportDir string     `json:"export_dir,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

func toRetentionResponse(r *core.WorkspaceRetention) retentionResponse {
	out := retentionResponse{Workspace: r.WorkspaceID.String(), ExportDir: r.ExportDir}
	if r.KeepDays > 0 {
		days := r.KeepDays
		out.KeepDays = &days
	}
	if !r.UpdatedAt.IsZero() {
		at := r.UpdatedAt
		out.UpdatedAt = &at
	}
	return out
}

// retentionGet is GET /api/workspaces/{ws}/retention: a member reads it.
func (a *API) retentionGet(w http.ResponseWriter, r *http.Request) error {
	ws, err := pathWorkspace(r)
	if err != nil {
		return err
	}
	ret, err := a.svc.Workspaces().Retention(r.Context(), principal(r).actor(), ws)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toRetentionResponse(ret))
	return nil
}

// retentionPut is PUT /api/workspaces/{ws}/retention: deleting a
// workspace's conversations is the owner's decision (as deleting the
// workspace is), and writing files on the server is the operator's
// (workspace.Service.SetRetention).
func (a *API) retentionPut(w http.ResponseWriter, r *http.Request) error {
	var body retentionRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	ws, err := pathWorkspace(r)
	if err != nil {
		return err
	}
	c := workspace.RetentionChange{ExportDir: body.ExportDir}
	if body.KeepDays != nil {
		c.KeepDays = *body.KeepDays
	}
	ret, err := a.svc.Workspaces().SetRetention(r.Context(), principal(r).actor(), ws, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toRetentionResponse(ret))
	return nil
}

// forgetRequest is POST /api/people/{person}/forget's body (optional).
type forgetRequest struct {
	// DeleteMessages also deletes the text of what the person wrote.
	DeleteMessages bool `json:"delete_messages,omitempty"`
}

// forgetResponse says what a forget changed.
type forgetResponse struct {
	Person         string `json:"person"`
	DeleteMessages bool   `json:"delete_messages"`
	core.PersonForgetResult
}

// personForget is POST /api/people/{person}/forget: the operator deletes a
// person's data on request. Forgetting again answers zero counts.
func (a *API) personForget(w http.ResponseWriter, r *http.Request) error {
	var body forgetRequest
	if err := decode(w, r, &body, true); err != nil {
		return err
	}
	p := principal(r)
	if err := operatorOnly(p, "forget a person"); err != nil {
		return err
	}
	person, err := parseID("person", r.PathValue("person"))
	if err != nil {
		return err
	}
	res, err := a.svc.ForgetPerson(r.Context(), p.actor(), person, body.DeleteMessages, p.Name())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, forgetResponse{Person: person.String(), DeleteMessages: body.DeleteMessages, PersonForgetResult: *res})
	return nil
}
