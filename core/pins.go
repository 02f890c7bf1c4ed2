package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// pinnedAway reports whether the agent that would answer an inbound
// message is pinned away from the message's workspace: then the message
// reaches no agent and nothing is stored. The workspace is the one the
// platform team is bound to (none when unbound); in a conversation already
// bound, its own workspace and agent count.
func (s *Service) pinnedAway(ctx context.Context, q store.Queries, in *Inbound, b *store.Binding, agentID *uuid.UUID) (bool, error) {
	var ws *uuid.UUID
	if b != nil {
		conv, err := q.ConversationGet(ctx, b.ConversationID)
		if err != nil {
			return false, fmt.Errorf("reading conversation %s: %w", b.ConversationID, err)
		}
		agentID = conv.AgentID
		if ws, err = q.ConversationWorkspace(ctx, b.ConversationID); err != nil {
			return false, err
		}
	} else if in.Workspace != "" {
		wb, err := q.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: in.Platform, ExternalID: in.Workspace})
		switch {
		case err == nil:
			ws = &wb.WorkspaceID
		case !errors.Is(err, store.ErrNotFound):
			return false, err
		}
	}
	if agentID == nil {
		return false, nil
	}
	ok, err := workspace.MayAnswer(ctx, q, *agentID, ws)
	if err == nil && !ok {
		s.log.DebugContext(ctx, "agent is pinned away from this workspace; message refused",
			"agent_id", agentID.String(), "platform", in.Platform, "team", in.Workspace)
	}
	return !ok, err
}
