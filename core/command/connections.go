package command

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard/core/connection"
)

// Connections answers `connections` for the person behind a platform user;
// the app adapts *connection.Manager (it finds the person and the
// workspace the platform team is bound to).
type Connections interface {
	AnswerConnections(ctx context.Context, platform, workspace, userID string, isDM bool, args []string) (string, error)
}

// connections answers "connections ...": list, connect, disconnect.
func (h *Handler) connections(ctx context.Context, r request, args []string) (string, error) {
	if h.opts.Connections == nil {
		return "", invalid("no GitHub or Google connections are set up on this server")
	}
	reply, err := h.opts.Connections.AnswerConnections(ctx, r.Platform, r.Workspace, r.UserID, r.IsDM, args)
	if re, ok := errors.AsType[*connection.Refusal](err); ok {
		return "", invalid("%s", re.Error())
	}
	return reply, err
}
