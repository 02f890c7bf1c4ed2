package slack

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// Profile reads a user's name and time zone with users.info (a
// core.ProfileFunc). The display name is the one people chose, else their
// real name, else their handle.
func (a *Adapter) Profile(ctx context.Context, team string, userID string) (core.Profile, error) {
	ws, err := a.workspaceFor(ctx, team)
	if err != nil {
		return core.Profile{}, fmt.Errorf("reading slack user %s: %w", userID, err)
	}
	u, err := ws.api.GetUserInfoContext(ctx, userID)
	if err != nil {
		return core.Profile{}, fmt.Errorf("reading slack user %s: %w", userID, err)
	}
	return core.Profile{
		DisplayName: firstOf(u.Profile.DisplayName, u.Profile.RealName, u.RealName, u.Name),
		TimeZone:    u.TZ,
	}, nil
}
