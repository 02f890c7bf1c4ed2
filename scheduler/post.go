package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// silentPlatform binds the conversations of pulses and loop iterations. No
// adapter has this name, so delivery passes their bindings by: what the
// agent writes there is seen by nobody until the server decides to tell the
// owner. The binding still gives each run a findable, unique place, which
// keeps a retried fire from starting a second conversation.
const silentPlatform = "scheduler"

// postParams is a message the scheduler posts without a model call.
type postParams struct {
	Agent   string
	Starter string
	Place   store.Place
	// Key makes the place unique (its Run) and the post idempotent: posting
	// the same key twice posts once.
	Key  string
	Text string
	// Buttons go under the message (a reminder's Snooze and Done).
	Buttons []core.ActionButton
	Now     time.Time
}

// post says text as the agent in a conversation of its own bound to the
// target, with no model call (core.Say: the entry and its delivery),
// inside the caller's transaction. It reports whether it posted (false:
// already posted).
func (s *Scheduler) post(ctx context.Context, q store.Queries, p postParams) (bool, error) {
	if p.Place.IsZero() || p.Place.Validate() != nil {
		return false, fmt.Errorf("posting %q: the schedule has no delivery target", p.Key)
	}
	agentID, err := s.agentID(ctx, q, p.Agent)
	if err != nil {
		return false, err
	}
	meta := core.ConversationMeta{Context: tool.ContextScheduler, Starter: p.Starter}.Encode()
	place := p.Place
	place.Run = p.Key
	ens, err := q.BindingEnsure(ctx, &store.BindingEnsureParams{
		Place:        place,
		Conversation: store.ConversationCreateParams{AgentID: agentID, Title: title(p.Text), Metadata: meta, Now: p.Now},
		Now:          p.Now,
	})
	if err != nil {
		return false, fmt.Errorf("binding the message %q: %w", p.Key, err)
	}
	conv := ens.Binding.ConversationID
	if !ens.Created {
		c, err := q.ConversationGet(ctx, conv)
		if err != nil {
			return false, fmt.Errorf("reading conversation of %q: %w", p.Key, err)
		}
		if c.LastSeq > 0 {
			return false, nil
		}
	}
	if err := core.Say(ctx, q, &core.SayParams{
		ConversationID: conv, Agent: p.Agent, AgentID: agentID, Text: p.Text, Buttons: p.Buttons, Now: p.Now,
	}); err != nil {
		return false, fmt.Errorf("posting message %q: %w", p.Key, err)
	}
	return true, nil
}

// notifyOwner posts text to a schedule's owner: their DM in the schedule's
// workspace, or the schedule's channel when it has no owner.
func (s *Scheduler) notifyOwner(ctx context.Context, q store.Queries, sc *store.Schedule, key, text string, now time.Time) error {
	place := sc.Place
	if sc.Owner != "" {
		place = store.DM(place.Platform, place.Workspace, sc.Owner)
	}
	if place.Platform == "" || place.Platform == silentPlatform || place.Validate() != nil {
		s.log.WarnContext(ctx, "nobody to tell", "schedule_id", sc.ID, "text", text)
		return nil
	}
	_, err := s.post(ctx, q, postParams{
		Agent: sc.Agent, Starter: sc.Owner, Place: place, Key: key, Text: text, Now: now,
	})
	return err
}

// agentID is the store id of a declared agent, nil when it has none yet.
func (s *Scheduler) agentID(ctx context.Context, q store.Queries, name string) (*uuid.UUID, error) {
	a, err := q.AgentGetByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("looking up agent %s: %w", name, err)
	}
	return &a.ID, nil
}

func title(text string) string {
	r := []rune(text)
	if len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return text
}
