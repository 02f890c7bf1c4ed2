package web

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// The admin view of Slack installs: GET /api/slack/installs lists the
// workspaces (and Enterprise Grid organisations) the app was installed in
// through the OAuth flow, with who installed it, the scopes granted, when
// the token expires and whether its renewal works, and the last event. The
// operator's: installs span workspaces.

// InstallReads reads the Slack installs (core/slackinstalls.go).
type InstallReads interface {
	SlackInstalls(ctx context.Context, after string, limit int) (*core.SlackInstallList, error)
}

// SlackInstallList is the answer of GET /api/slack/installs.
type SlackInstallList = core.SlackInstallList

func (a *API) slackInstalls(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(PrincipalFrom(r.Context()), "read the Slack installs"); err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 1, 100, 100)
	if err != nil {
		return err
	}
	list, err := a.svc.SlackInstalls(r.Context(), r.URL.Query().Get("after"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}
