package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// teamBinder makes the team workspace of a platform team (a Slack team on
// install) and binds the team to it, owned by the person who installed the
// app. A team already bound keeps its workspace: a reinstall changes
// nothing.
type teamBinder struct {
	st     store.Store
	people *core.Directory
}

func (b *teamBinder) BindWorkspace(ctx context.Context, platform, externalID, name, installer string) error {
	if _, err := b.st.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: platform, ExternalID: externalID}); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("finding the workspace of %s team %s: %w", platform, externalID, err)
	}
	if installer == "" {
		return fmt.Errorf("binding %s team %s: the install names no installer to own its workspace", platform, externalID)
	}
	owner, err := b.people.Resolve(ctx, platform, externalID, installer)
	if err != nil {
		return fmt.Errorf("finding the person who installed the app in %s team %s: %w", platform, externalID, err)
	}
	if name == "" {
		name = externalID
	}
	return b.st.InTx(ctx, func(q store.Queries) error {
		ws, err := q.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: name, Kind: store.WorkspaceTeam, OwnerPersonID: owner.ID})
		if err != nil {
			return err
		}
		_, err = workspace.BindWorkspace(ctx, q, platform, externalID, ws.ID)
		return err
	})
}
