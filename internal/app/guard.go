package app

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
)

// deciders is who decides approvals, from switchboard.yaml.
func deciders(a config.Approvals) core.Deciders {
	if a.ByAdmins() {
		return core.DecidersAdmins
	}
	return core.DecidersStarter
}

// yamlAdmins answers core's admin check from approvals.admins until
// workspace roles take it over.
func yamlAdmins(a config.Approvals) core.Admins {
	return core.AdminsFunc(func(_ context.Context, workspace, userID string) (bool, error) {
		return a.IsAdmin(workspace, userID), nil
	})
}
