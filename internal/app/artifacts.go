package app

import (
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core/artifact"
)

// registerArtifacts registers artifact_create, artifact_update and
// artifact_comment; a posted artifact links to its page under
// SWITCHBOARD_PUBLIC_URL when that is set.
func (a *App) registerArtifacts(cfg Config) error {
	public := strings.TrimSpace(cfg.Env("SWITCHBOARD_PUBLIC_URL"))
	arts, err := artifact.New(artifact.Options{Store: a.Store, PublicURL: public, Now: cfg.Now})
	if err != nil {
		return fmt.Errorf("SWITCHBOARD_PUBLIC_URL %q must be the http(s) address browsers reach this server at: %w", public, err)
	}
	a.artifacts = arts
	return artifact.RegisterTools(a.Registry, arts)
}
