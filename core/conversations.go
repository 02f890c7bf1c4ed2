package core

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Conversations, read, and the agents and people they name. Who may read
// a conversation is who may use it (workspace.Service.UseConversation, or
// an agent's own); the caller checks that first.

// Conversation reads conversation id.
func (s *Service) Conversation(ctx context.Context, id uuid.UUID) (*Conversation, error) {
	return s.st.ConversationGet(ctx, id)
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
