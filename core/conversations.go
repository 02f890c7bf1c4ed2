package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Conversations, read, and the agents and people they name. Who may read
// a conversation is who may use it (workspace.Service.UseConversation, or
// an agent's own); the caller checks that first.

// Conversation reads conversation id.
func (s *Service) Conversation(ctx context.Context, id uuid.UUID) (*Conversation, error) {
	return s.st.ConversationGet(ctx, id)
}

// AgentsConversation checks that conversation id is agent's: a session of
// an agent (its key exchanged) is kept to its own agent's conversations,
// whatever their workspace. Another's is workspace.ErrForbidden.
func (s *Service) AgentsConversation(ctx context.Context, agent string, id uuid.UUID) error {
	conv, err := s.st.ConversationGet(ctx, id)
	if err != nil {
		return err
	}
	ag, err := s.st.AgentGetByName(ctx, agent)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (conv.AgentID == nil || *conv.AgentID != ag.ID)) {
		return workspace.Forbidden(fmt.Sprintf("conversation %s is not agent %s's", id, agent))
	}
	return err
}

// Forks lists the conversations forked from id.
func (s *Service) Forks(ctx context.Context, id uuid.UUID) ([]*Conversation, error) {
	return s.st.ConversationForks(ctx, id)
}

// ConversationWorkspace is the workspace conversation id belongs to (nil:
// none).
func (s *Service) ConversationWorkspace(ctx context.Context, id uuid.UUID) (*uuid.UUID, error) {
	return s.st.ConversationWorkspace(ctx, id)
}

// MoveConversation puts conversation id in workspace ws.
func (s *Service) MoveConversation(ctx context.Context, id, ws uuid.UUID) error {
	return s.st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: id, WorkspaceID: ws})
}

// Entries lists the entries of a conversation's log p selects.
func (s *Service) Entries(ctx context.Context, p *EntryListParams) ([]*Entry, error) {
	return s.st.EntryList(ctx, p)
}

// AgentByName reads the agent named name.
func (s *Service) AgentByName(ctx context.Context, name string) (*Agent, error) {
	return s.st.AgentGetByName(ctx, name)
}

// AgentName is the name of agent id.
func (s *Service) AgentName(ctx context.Context, id uuid.UUID) (string, error) {
	return s.st.AgentNameGet(ctx, id)
}

// Person reads person id.
func (s *Service) Person(ctx context.Context, id uuid.UUID) (*Person, error) {
	return s.st.PersonGet(ctx, id)
}
