package core

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/store"
)

// Memory is what an agent remembers, assembled for one turn (package
// memory implements it): its pinned notes, the conversation's notes, and
// background found by searching its notes, its family's and its other
// conversations' summaries. The text goes into the per-turn block, after
// the history, so the cached prefix stays byte-identical.
//
// ForTurn must return within its own time budget whatever its sources do:
// a source that misses the budget is left out of this turn, not waited for.
type Memory interface {
	ForTurn(ctx context.Context, q *MemoryQuery) (string, error)
}

// MemoryQuery is the turn memory is assembled for.
type MemoryQuery struct {
	Agent          string
	AgentID        *uuid.UUID // nil when the agent has no store row yet
	ConversationID uuid.UUID
	WorkspaceID    *uuid.UUID // nil: the conversation belongs to none
	// Latest is the text of the latest message from a person (or another
	// agent), which the background search is keyed from; "" when none.
	Latest string
}

// loadMemory assembles the turn's memory once, before its first model
// call; every step of the turn sends the same text. A failure costs the
// memory for this turn, not the turn.
func (t *turn) loadMemory(ctx context.Context) {
	if t.memoryLoaded || t.s.opts.Memory == nil {
		return
	}
	t.memoryLoaded = true
	text, err := t.s.opts.Memory.ForTurn(ctx, &MemoryQuery{
		Agent: t.agent.Name, AgentID: t.conv.AgentID, ConversationID: t.conv.ID, WorkspaceID: t.workspaceID,
		Latest: latestMessage(t.entries),
	})
	if err != nil {
		t.s.log.WarnContext(ctx, "assembling memory; this turn goes without", "agent", t.agent.Name, "conversation_id", t.conv.ID,
			"error", redact.String(err.Error()))
		return
	}
	t.memory = strings.TrimSpace(text)
}

// latestMessage is the text of the log's latest user entry.
func latestMessage(entries []*store.Entry) string {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Kind != store.EntryUser {
			continue
		}
		c, err := Decode[UserContent](entries[i])
		if err != nil {
			return ""
		}
		return c.Text
	}
	return ""
}

// withMemory puts the turn's memory at the head of the per-turn block.
func withMemory(turn, memory string) string {
	if memory == "" {
		return turn
	}
	return memory + "\n\n" + turn
}
