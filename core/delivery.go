package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/store"
)

// Deliverer shows a turn's work on the platforms its conversation is bound
// to (package deliver implements it). Core calls it under the conversation's
// lease, so two deliveries of one conversation never overlap.
type Deliverer interface {
	// OpenTurn starts delivering one turn. It returns nil when the
	// conversation has nowhere to be delivered in this process.
	// The item is the turn's work item: its id keys the turn's live
	// messages, and a later attempt (Attempts > 1) looks for what an
	// earlier one left.
	OpenTurn(ctx context.Context, conv *store.Conversation, item *store.WorkItem, agent string) (TurnDelivery, error)
}

// TurnDelivery delivers one running turn. Status, Delta and Reset never
// wait on a platform; Flush and Close do.
type TurnDelivery interface {
	// Status shows what the agent is doing ("" clears it).
	Status(text string)
	// Delta is the next piece of the reply being written.
	Delta(text string)
	// Reset starts the live reply over: the model call is being retried.
	Reset()
	// Flush delivers every committed entry now.
	Flush(ctx context.Context) error
	// Close ends the turn's delivery. interrupted means the turn did not end
	// (a shutdown, a lost lease): whoever continues it finishes the reply.
	Close(ctx context.Context, interrupted bool) error
}

// TaskStatus is where a task shown beside a streamed reply stands.
type TaskStatus string

const (
	TaskRunning TaskStatus = "in_progress"
	TaskDone    TaskStatus = "complete"
	TaskFailed  TaskStatus = "error"
)

// TaskUpdate is one of a turn's tool calls shown as it happens: started,
// then finished or failed. ID is the call id, so a later update replaces
// the earlier one on the platform.
type TaskUpdate struct {
	ID      string
	Title   string
	Status  TaskStatus
	Details string // what the call was asked, shortened
	Output  string // what it answered, shortened; set when it ended
}

// TaskReporter is a TurnDelivery that can show tool calls as tasks beside
// the live reply (Slack's task_update chunks). Like Status, Task never
// waits on a platform.
type TaskReporter interface {
	Task(u TaskUpdate)
}

// Visible reports whether people see an entry on a platform (an assistant
// reply with text, a card, a tool result with files, an error that is not
// an interim notice), so that the commit appending it must also enqueue its
// delivery.
func Visible(e *store.Entry) bool {
	switch e.Kind {
	case store.EntryAssistant:
		c, err := Decode[AssistantContent](e)
		return err == nil && c.Text != ""
	case store.EntryCard:
		return true
	case store.EntryToolResult:
		c, err := Decode[ToolResultContent](e)
		return err == nil && len(c.Attachments) > 0
	case store.EntryError:
		c, err := Decode[ErrorContent](e)
		return err == nil && !c.Interim
	case store.EntrySystem:
		c, err := Decode[SystemContent](e)
		return err == nil && c.Notice
	case store.EntrySideThread:
		// The marker and a resolved side thread's summary; an abandoned
		// one shows only through its marker's edit.
		c, err := Decode[SideThreadContent](e)
		return err == nil && c.Event != SideThreadAbandoned
	}
	return false
}

// enqueueDelivery queues the durable delivery of conv's new entries inside
// the caller's transaction. The item cannot be claimed while a turn holds
// the conversation's lease: it delivers what that turn could not, after it.
func enqueueDelivery(ctx context.Context, q store.Queries, conv uuid.UUID, now time.Time) error {
	if _, err := Enqueue(ctx, q, DeliverArgs{}, &EnqueueOpts{ConversationID: &conv, Now: now}); err != nil {
		return fmt.Errorf("queueing delivery: %w", err)
	}
	return nil
}

// SayParams is a message an agent posts without a turn: a reminder, a
// pulse's note to its owner, a loop's stop notice.
type SayParams struct {
	ConversationID uuid.UUID
	Agent          string
	AgentID        *uuid.UUID
	Text           string
	// Buttons go under the message (a reminder's Snooze and Done).
	Buttons []ActionButton
	Now     time.Time
}

// Say appends the agent's message to a conversation and queues its delivery,
// inside the caller's transaction, with no model call: how the scheduler
// posts. It is delivered like any reply (post intent, exactly once).
func Say(ctx context.Context, q store.Queries, p *SayParams) error {
	if strings.TrimSpace(p.Text) == "" {
		return invalid("say: the text is empty")
	}
	if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: p.ConversationID, Kind: store.EntryAssistant, Author: store.AgentAuthor(p.Agent),
		Content: mustJSON(AssistantContent{Text: p.Text, Agent: p.Agent, Buttons: p.Buttons}), Now: p.Now,
	}); err != nil {
		return fmt.Errorf("appending the message of %s: %w", p.Agent, err)
	}
	if _, err := Enqueue(ctx, q, DeliverArgs{}, &EnqueueOpts{
		ConversationID: &p.ConversationID, AgentID: p.AgentID, Now: p.Now,
	}); err != nil {
		return fmt.Errorf("queueing delivery: %w", err)
	}
	return nil
}

// PostCardParams is a card an agent posts without a turn (a briefing filled
// from a routine's prose reply).
type PostCardParams struct {
	ConversationID uuid.UUID
	Agent          string
	AgentID        *uuid.UUID
	Card           *cards.Stamped
	Now            time.Time
}

// PostCard appends a card entry and queues its delivery inside the caller's
// transaction, as Say does for text.
func PostCard(ctx context.Context, q store.Queries, p *PostCardParams) error {
	if p.Card == nil {
		return invalid("post card: no card")
	}
	b, err := json.Marshal(p.Card)
	if err != nil {
		return fmt.Errorf("encoding the card: %w", err)
	}
	if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: p.ConversationID, Kind: store.EntryCard, Author: store.AgentAuthor(p.Agent),
		Content: mustJSON(CardContent{Card: b, Text: p.Card.PlainText()}), Now: p.Now,
	}); err != nil {
		return fmt.Errorf("appending the card of %s: %w", p.Agent, err)
	}
	if _, err := Enqueue(ctx, q, DeliverArgs{}, &EnqueueOpts{ConversationID: &p.ConversationID, AgentID: p.AgentID, Now: p.Now}); err != nil {
		return fmt.Errorf("queueing delivery: %w", err)
	}
	return nil
}
