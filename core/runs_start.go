package core

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/run/plan"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// StartRunParams is a run started directly, not from a chat (POST
// /api/runs, switchboard runs start).
type StartRunParams struct {
	// Lead is the agent whose plan it is: the conversation that holds the
	// run is its own, its steps are handed out in its name, and the run's
	// result comes back there as its message.
	Lead string
	Plan *plan.Plan
	// Title names the conversation; default the plan's goal.
	Title string
	// Starter is who started it, as the API names its caller.
	Starter string
	// WorkspaceID, when set, is the workspace the conversation, and so the
	// run and its steps' conversations, belong to.
	WorkspaceID *uuid.UUID
}

// StartRunWith opens a conversation of the lead's to hold a run, as an API
// client's conversation is opened (CreateConversationWith), and starts the
// plan there, in one transaction: a refused plan leaves no conversation
// behind. The lead must be an agent and the plan valid for it; the errors
// wrap ErrInvalid and name the field (lead, plan, or the plan's own, such
// as steps[0].agent, whose plan.Errors errors.As finds).
func (s *Service) StartRunWith(ctx context.Context, p *StartRunParams) (*store.Run, error) {
	if strings.TrimSpace(p.Lead) == "" {
		return nil, invalid("lead: is required (the agent that leads the run)")
	}
	if _, ok := s.agents().Find(p.Lead); !ok {
		return nil, invalid("lead: no agent named %q", p.Lead)
	}
	if p.Plan == nil {
		return nil, invalid("plan: is required")
	}
	if errs := plan.Validate(p.Plan, s.roster(p.Lead)); errs != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errs)
	}
	var r *store.Run
	err := s.st.InTx(ctx, func(q store.Queries) error {
		conv, err := s.createConversation(ctx, q, &CreateConversationParams{
			Agent: p.Lead, Context: tool.ContextAPI, Starter: p.Starter, WorkspaceID: p.WorkspaceID,
			Title: title(cmp.Or(p.Title, p.Plan.Goal, fmt.Sprintf("A run of %d steps", len(p.Plan.Steps)))),
		})
		if err != nil {
			return err
		}
		if r, err = s.startRun(ctx, q, conv.ID, p.Lead, p.Plan); err != nil {
			return err
		}
		// The conversation says where the run came from: the lead's model
		// reads it if someone writes here later, and the history shows it
		// before the run's result arrives.
		_, err = q.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: conv.ID, Kind: store.EntrySystem, Author: store.SystemAuthor, Now: s.now(),
			Content: mustJSON(SystemContent{Text: startedText(r, p)}),
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("starting a run of %s: %w", p.Lead, err)
	}
	s.log.InfoContext(ctx, "run started", "run_id", r.ID, "conversation_id", r.ConversationID, "lead", p.Lead,
		"steps", len(p.Plan.Steps), "by", p.Starter)
	return r, nil
}

// startedText is the note a directly started run opens its conversation
// with.
func startedText(r *store.Run, p *StartRunParams) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s started run %s with %s as its lead", cmp.Or(p.Starter, "someone"), r.ID, p.Lead)
	if p.Plan.Goal != "" {
		fmt.Fprintf(&b, ", for the goal: %s", p.Plan.Goal)
	}
	b.WriteString(". Its steps:")
	for _, st := range p.Plan.Steps {
		fmt.Fprintf(&b, "\n- %s (%s): %s", st.ID, cmp.Or(st.Agent, st.Role), st.Title)
	}
	return b.String()
}
