package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Personalities is what the personality endpoints need of core;
// *core.Personalities implements it.
type Personalities interface {
	Version(ctx context.Context, agent string, version int) (*core.Personality, error)
	History(ctx context.Context, agent string, limit int) ([]*core.Personality, error)
	Replace(ctx context.Context, p *core.PersonalityReplaceParams) (*core.Personality, error)
}

var _ Personalities = (*core.Personalities)(nil)

// PersonalityJSON is one version of an agent's personality document.
type PersonalityJSON struct {
	Agent     string    `json:"agent"`
	Version   int       `json:"version"`
	Text      string    `json:"text"`
	Author    string    `json:"author"`
	CreatedAt time.Time `json:"created_at"`
}

// PersonalityList is every version of a personality document, newest
// first.
type PersonalityList struct {
	Versions []PersonalityJSON `json:"versions"`
}

func toPersonalityJSON(agent string, p *core.Personality) PersonalityJSON {
	return PersonalityJSON{Agent: agent, Version: p.Version, Text: p.Text, Author: p.Author, CreatedAt: p.CreatedAt}
}

// getPersonality answers the current document, or ?version=N.
func (a *API) getPersonality(w http.ResponseWriter, r *http.Request) error {
	if err := mayManagePersonalities(r); err != nil {
		return err
	}
	version := 0
	if v := r.URL.Query().Get("version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: version %q is not a version number (1, 2, …)", core.ErrInvalid, v)
		}
		version = n
	}
	name := r.PathValue("name")
	doc, err := a.opts.Personalities.Version(r.Context(), name, version)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPersonalityJSON(name, doc))
	return nil
}

// putPersonality replaces the document whole with {"text": "..."}. The
// operator's replacement is not held to the agent's shrink guard.
func (a *API) putPersonality(w http.ResponseWriter, r *http.Request) error {
	if err := mayManagePersonalities(r); err != nil {
		return err
	}
	var body TextRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	name := r.PathValue("name")
	doc, err := a.opts.Personalities.Replace(r.Context(), &core.PersonalityReplaceParams{
		Agent: name, Text: body.Text, Author: core.PersonalityOperatorAuthor,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPersonalityJSON(name, doc))
	return nil
}

// personalityVersions lists every version, newest first (?limit=N).
func (a *API) personalityVersions(w http.ResponseWriter, r *http.Request) error {
	if err := mayManagePersonalities(r); err != nil {
		return err
	}
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: limit %q is not a positive number", core.ErrInvalid, v)
		}
		limit = n
	}
	name := r.PathValue("name")
	docs, err := a.opts.Personalities.History(r.Context(), name, limit)
	if err != nil {
		return err
	}
	out := make([]PersonalityJSON, 0, len(docs))
	for _, d := range docs {
		out = append(out, toPersonalityJSON(name, d))
	}
	writeJSON(w, http.StatusOK, PersonalityList{Versions: out})
	return nil
}

// mayManagePersonalities: the agents' personality documents are the
// operator's (SWITCHBOARD_API_TOKEN, or a loopback caller without it).
func mayManagePersonalities(r *http.Request) error {
	return operatorOnly(PrincipalFrom(r.Context()), "read and replace agents' personality documents")
}
