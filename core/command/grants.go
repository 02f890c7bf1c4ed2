package command

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Grants is what !grants needs of core; *core.Service implements it.
type Grants interface {
	Grants(ctx context.Context, place *core.GrantPlace) ([]*store.Grant, error)
	RevokeGrant(ctx context.Context, id uuid.UUID, place *core.GrantPlace) (*store.Grant, error)
}

// GrantsHelp lists the grant commands.
const GrantsHelp = "• `grants` lists the standing grants (\"Always allow\") of this workspace · `grants revoke <id>` revokes one"

// grants answers "grants" (list this workspace's standing grants) and
// "grants revoke ID". Both act only on the workspace the command was typed
// in: a grant made in another is not found.
func (h *Handler) grants(ctx context.Context, r request, args []string) (string, error) {
	if h.opts.Grants == nil {
		return "", invalid("standing grants are not available here")
	}
	// The workspace the team is bound to, or the team's own grants.
	ws := &core.GrantPlace{Platform: r.Platform, Team: r.Workspace}
	switch {
	case len(args) == 0 || (len(args) == 1 && strings.EqualFold(args[0], "list")):
		gs, err := h.opts.Grants.Grants(ctx, ws)
		if err != nil {
			return "", err
		}
		if len(gs) == 0 {
			return "No standing grants here: every call the policy asks about asks a person.", nil
		}
		var b strings.Builder
		where := "here"
		if name := gs[0].WorkspaceName; name != "" {
			where = "in " + name
		}
		fmt.Fprintf(&b, "Standing grants %s (revoke with `!grants revoke <id>`):", where)
		for _, g := range gs {
			scope := ""
			if g.ArgsHash != "" {
				scope = " with the arguments approved"
			}
			fmt.Fprintf(&b, "\n• `%s` — %s may run `%s`%s, granted by <@%s> on %s", g.ID, g.Agent, g.Tool,
				scope, g.GrantedBy, g.CreatedAt.Format("2006-01-02 15:04 MST"))
		}
		return b.String(), nil
	case len(args) == 2 && strings.EqualFold(args[0], "revoke"):
		id, err := uuid.Parse(args[1])
		if err != nil {
			return "", invalid("%q is not a grant id; `!grants` lists them", args[1])
		}
		g, err := h.opts.Grants.RevokeGrant(ctx, id, ws)
		if errors.Is(err, store.ErrNotFound) {
			return "", invalid("no grant %s in this workspace", id)
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Revoked: %s must ask again before running `%s`.", g.Agent, g.Tool), nil
	}
	return "", invalid("use `grants` or `grants revoke <id>`")
}
