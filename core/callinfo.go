package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// StartConversationParams opens a conversation that no person started on a
// platform:
// a scheduled routine, a reminder, a pulse, a goal loop.
type StartConversationParams struct {
	Agent   string           // "" for the default agent
	Context tool.ContextName // the tools offered; default tool.ContextScheduler
	// Place binds the conversation to where its replies are delivered; a
	// place without a Platform leaves it unbound.
	Place store.Place
	// Starter is the person the work is for (the routine's owner).
	Starter string
	// Text is the instruction, appended as a system entry that starts a turn.
	Text string
	// Bind to a fresh place even when one exists: a run of a routine gets a
	// conversation of its own. The place's Run is then made unique.
	Fresh bool
	// CardOnly makes the conversation show only its card (a briefing, see
	// ConversationMeta.CardOnly).
	CardOnly bool
}

// StartConversation opens a conversation, binds it, appends the instruction and queues
// its turn, in one transaction.
func (s *Service) StartConversation(ctx context.Context, p StartConversationParams) (*store.Conversation, error) {
	if strings.TrimSpace(p.Text) == "" {
		return nil, invalid("start needs an instruction")
	}
	ag := s.agents().Default()
	if p.Agent != "" {
		a, ok := s.agents().Find(p.Agent)
		if !ok {
			return nil, invalid("no agent named %q", p.Agent)
		}
		ag = a
	}
	if p.Context == "" {
		p.Context = tool.ContextScheduler
	}
	now := s.now()
	create := store.ConversationCreateParams{
		AgentID: s.agentID(ag.Name), Title: title(p.Text),
		Metadata: ConversationMeta{Context: p.Context, Starter: p.Starter, CardOnly: p.CardOnly}.Encode(), Now: now,
	}
	var conv *store.Conversation
	err := s.st.InTx(ctx, func(q store.Queries) error {
		var id uuid.UUID
		if p.Place.Platform == "" {
			c, err := q.ConversationCreate(ctx, &create)
			if err != nil {
				return err
			}
			id = c.ID
		} else {
			place := p.Place
			if p.Fresh {
				place.Run = uuid.NewString()
			}
			ens, err := q.BindingEnsure(ctx, &store.BindingEnsureParams{Place: place, Conversation: create, Now: now})
			if err != nil {
				return err
			}
			id = ens.Binding.ConversationID
		}
		if _, err := s.appendAndQueue(ctx, q, id, store.EntrySystem, "system", SystemContent{Text: p.Text}, "schedule"); err != nil {
			return err
		}
		var err error
		conv, err = q.ConversationGet(ctx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("starting conversation for %s: %w", ag.Name, err)
	}
	return conv, nil
}
