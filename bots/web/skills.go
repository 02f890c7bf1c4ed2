package web

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/skill"
)

// Skills is what the skill endpoints need; *skill.Library implements it.
type Skills interface {
	ImportArchive(ctx context.Context, name string, data []byte, agent string) ([]*core.Skill, error)
	List(ctx context.Context) ([]*core.Skill, error)
	Remove(ctx context.Context, name, agent string) error
}

var _ Skills = (*skill.Library)(nil)

// The skills: POST /api/skills (a .zip or .tar.gz body), GET /api/skills
// and DELETE /api/skills/{name}. ?agent=NAME addresses one agent's skills;
// without it, those of every agent of the operator.

// SkillList is the skills listed or imported.
type SkillList struct {
	Skills []skillJSON `json:"skills"`
}

// archiveBody reports whether r is an upload of a skill archive, which
// comes as application/zip or application/gzip rather than JSON. Neither is
// a type a browser sends across sites without a CORS preflight.
func archiveBody(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && r.URL.Path == "/api/skills" &&
		(mt == "application/zip" || mt == "application/gzip" || mt == "application/x-gzip")
}

type skillJSON struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Layer       string    `json:"layer"`
	Scope       string    `json:"scope,omitempty"`
	Files       []string  `json:"files"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func toSkillJSON(s *core.Skill) skillJSON {
	files := (&skill.Skill{Files: s.Files}).FileNames()
	return skillJSON{Name: s.Name, Description: s.Description, Layer: s.Layer, Scope: s.Scope, Files: files, UpdatedAt: s.UpdatedAt}
}

func mayManageSkills(r *http.Request) error {
	return operatorOnly(PrincipalFrom(r.Context()), "import, list and remove skills")
}

func (a *API) importSkills(w http.ResponseWriter, r *http.Request) error {
	if err := mayManageSkills(r); err != nil {
		return err
	}
	if !archiveBody(r) {
		return &httpError{status: http.StatusUnsupportedMediaType, msg: "send the skills as a .zip (Content-Type: application/zip) or a .tar.gz (application/gzip)"}
	}
	data, err := skill.ReadArchive("the request body", r.Body, skill.Limits{})
	if err == nil {
		var rows []*core.Skill
		rows, err = a.opts.Skills.ImportArchive(r.Context(), "the request body", data, r.URL.Query().Get("agent"))
		if err == nil {
			out := make([]skillJSON, 0, len(rows))
			for _, s := range rows {
				out = append(out, toSkillJSON(s))
			}
			writeJSON(w, http.StatusCreated, SkillList{Skills: out})
			return nil
		}
	}
	if errors.Is(err, skill.ErrInvalid) {
		return &httpError{status: http.StatusBadRequest, msg: err.Error()}
	}
	return err
}

func (a *API) listSkills(w http.ResponseWriter, r *http.Request) error {
	if err := mayManageSkills(r); err != nil {
		return err
	}
	rows, err := a.opts.Skills.List(r.Context())
	if err != nil {
		return err
	}
	out := make([]skillJSON, 0, len(rows))
	for _, s := range rows {
		out = append(out, toSkillJSON(s))
	}
	writeJSON(w, http.StatusOK, SkillList{Skills: out})
	return nil
}

func (a *API) removeSkill(w http.ResponseWriter, r *http.Request) error {
	if err := mayManageSkills(r); err != nil {
		return err
	}
	name, agent := r.PathValue("name"), r.URL.Query().Get("agent")
	err := a.opts.Skills.Remove(r.Context(), name, agent)
	if errors.Is(err, core.ErrNotFound) {
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("no skill %s is assigned there", name)}
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
