package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// CallInfo tells a tool handler on whose behalf it runs: tools such as
// remind or a routine's report need the conversation, the agent and the
// person who started the conversation.
type CallInfo struct {
	ConversationID uuid.UUID
	Agent          string
	AgentID        *uuid.UUID
	Context        string // slack, discord, terminal, scheduler, api, web
	Starter        string // the user who started the conversation, if known
	// CallID is the idempotency key of the call: the model's id for it,
	// unique in the conversation and the same however often the turn is
	// resumed. The engine starts a call at most once (an interrupted call is
	// reported to the model, never re-run), but a tool with side effects
	// elsewhere should pass CallID on (as an Idempotency-Key header, a
	// request id, a unique column) so that the far side can tell a repeat
	// even across its own retries.
	CallID string
	// TurnID is the work item of the turn; a resumed turn keeps it.
	TurnID uuid.UUID
}

type callInfoKey struct{}

// WithCallInfo returns ctx carrying ci; the engine sets it for every call.
func WithCallInfo(ctx context.Context, ci CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, ci)
}

// CallInfoFrom returns the CallInfo of the running tool call.
func CallInfoFrom(ctx context.Context) (CallInfo, bool) {
	ci, ok := ctx.Value(callInfoKey{}).(CallInfo)
	return ci, ok
}

// StartConversationParams opens a conversation that no person started on a
// platform:
// a scheduled routine, a reminder, a pulse, a goal loop.
type StartConversationParams struct {
	Agent   string // "" for the default agent
	Context string // the tool swap table to use; default "scheduler"
	// Place binds the conversation to where its replies are delivered; a
	// zero Place leaves it unbound.
	Place store.Place
	// Starter is the person the work is for (the routine's owner).
	Starter string
	// Text is the instruction, appended as a system entry that starts a turn.
	Text string
	// Bind to a fresh place even when one exists: a run of a routine gets a
	// conversation of its own. The place's Run is then made unique.
	Fresh bool
}

// StartConversation opens a conversation, binds it, appends the instruction and queues
// its turn, in one transaction.
func (s *Service) StartConversation(ctx context.Context, p StartConversationParams) (*store.Conversation, error) {
	if strings.TrimSpace(p.Text) == "" {
		return nil, invalid("start needs an instruction")
	}
	ag := s.opts.Agents.Default()
	if p.Agent != "" {
		a, ok := s.opts.Agents.Find(p.Agent)
		if !ok {
			return nil, invalid("no agent named %q", p.Agent)
		}
		ag = a
	}
	if p.Context == "" {
		p.Context = "scheduler"
	}
	now := s.now()
	create := store.ConversationCreateParams{
		AgentID: s.agentID(ag.Name), Title: title(p.Text),
		Metadata: mustJSON(conversationMeta{Context: p.Context, Starter: p.Starter}), Now: now,
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
