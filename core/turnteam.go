package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/route"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// What a turn does for several agents: which agent takes it, the reply's
// consequences (the next agent, the agents it names, the loop guard), the
// done signal, and the stop for a call that keeps failing.

// turnAgent is the agent that takes a turn: the one its args name, else
// the author of the call the turn resumes (the newest still waiting, or the
// one whose result triggered it: a denied approval, a client's result),
// else the conversation's. A resumed turn takes back the queue of agents
// after it (TurnArgs.Then) from that call, so a pause loses nobody's turn.
func (s *Service) turnAgent(conv *store.Conversation, entries []*store.Entry, args TurnArgs) (*config.Agent, TurnArgs) {
	if a, ok := s.agents().Find(args.Agent); ok {
		return a, args
	}
	if c, ok := resumedCall(entries, args.TriggerSeq); ok {
		if name, ok := c.Author.Agent(); ok {
			if a, ok := s.agents().Find(name); ok {
				if len(args.Then) == 0 {
					args.Then = c.Then
				}
				return a, args
			}
		}
	}
	return s.agentOf(conv), args
}

// resumedCall is the call a turn with no agent named resumes: the newest
// call still waiting for its result, else the call whose result is the
// entry at trigger.
func resumedCall(entries []*store.Entry, trigger int64) (pendingCall, bool) {
	var newest *pendingCall
	for _, p := range pendingCalls(entries) {
		if newest == nil || p.Seq > newest.Seq {
			newest = &p
		}
	}
	if newest != nil {
		return *newest, true
	}
	var callID string
	for _, e := range entries {
		if e.Kind == store.EntryToolResult && e.SeqValue() == trigger {
			if r, err := Decode[ToolResultContent](e); err == nil {
				callID = r.CallID
			}
		}
	}
	if callID == "" {
		return pendingCall{}, false
	}
	for _, e := range entries {
		if e.Kind != store.EntryToolCall {
			continue
		}
		if c, err := Decode[ToolCallContent](e); err == nil && c.CallID == callID {
			return pendingCall{ToolCallContent: c, Seq: e.SeqValue(), Author: e.Author}, true
		}
	}
	return pendingCall{}, false
}

// authorAt is who wrote the entry at seq ("" when there is none).
func authorAt(entries []*store.Entry, seq int64) store.Author {
	for _, e := range entries {
		if e.SeqValue() == seq {
			return e.Author
		}
	}
	return ""
}

// ownPending are the calls of this turn's agent that wait for a result:
// another agent's calls are its own turns' business.
func (t *turn) ownPending() map[string]pendingCall {
	all := pendingCalls(t.entries)
	me := store.AgentAuthor(t.agent.Name)
	for id, p := range all {
		if p.Author != me {
			delete(all, id)
		}
	}
	return all
}

// replied runs, in the transaction that records the turn's final reply,
// what the reply causes: the done mark, the loop guard's count (and its one
// notice at the limit), the next agent answering the same message, and the
// agents the reply names. It returns the entries it appended.
func (t *turn) replied(ctx context.Context, q store.Queries, text string) ([]*store.Entry, error) {
	s, conv, me := t.s, t.conv.ID, store.AgentAuthor(t.agent.Name)
	now := s.now()
	// Whoever takes a turn takes part.
	if _, err := q.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv, Author: me, Joined: store.JoinRouted, Now: now}); err != nil {
		return nil, fmt.Errorf("adding agent %s: %w", t.agent.Name, err)
	}
	if t.done {
		c, err := q.ConversationGet(ctx, conv)
		if err != nil {
			return nil, err
		}
		if _, err := q.ParticipantSetDone(ctx, &store.ParticipantSetDoneParams{ConversationID: conv, Author: me, DoneSeq: &c.LastSeq, Now: now}); err != nil {
			return nil, fmt.Errorf("marking %s done: %w", t.agent.Name, err)
		}
	}
	// A reply in a side thread is its progress. Whether conv is a side
	// thread's child, or runs a delegation, was read before the model and
	// cannot have changed since: both are made in the transaction that
	// creates their conversation (openTalk), never for one that exists.
	// A conversation that was neither is read no more; one that was is
	// read again here, as its status may have moved.
	if t.tc.SideThread != nil {
		if err := s.sideThreadProgress(ctx, q, conv); err != nil {
			return nil, fmt.Errorf("noting side thread progress: %w", err)
		}
	}
	if text == "" {
		// No message: nothing to count or hand over, but the next agent
		// still answers the message this turn was for.
		return nil, t.queueNext(ctx, q)
	}
	// A delegate's reply in its task's conversation is the task's result;
	// a lead's plan there is not: the run it becomes brings the result
	// (see finishRun).
	if t.tc.Delegation != nil && !s.isPlan(t.meta, t.agent, text) {
		if err := s.delegationResult(ctx, q, conv, t.agent.Name, text); err != nil {
			return nil, err
		}
	}
	// A step agent's reply in its step's conversation is the step's
	// output; a lead's reply may hold a plan.
	if t.meta.Run != nil {
		if err := s.runStepReply(ctx, q, conv, t.agent.Name, text); err != nil {
			return nil, err
		}
	} else if err := s.runPlanReply(ctx, q, conv, t.agent, text); err != nil {
		return nil, err
	}
	f, err := q.FloorAgentSpoke(ctx, &store.FloorParams{ConversationID: conv, Now: now})
	if err != nil {
		return nil, err
	}
	// The participants decide which limit holds (loopLimit); below the
	// lower of the two they cannot change the answer, so they are read
	// only when the streak may have reached one.
	if f.AgentStreak >= s.lowestLoopLimit() {
		parts, err := q.ParticipantList(ctx, conv)
		if err != nil {
			return nil, err
		}
		if limit := s.loopLimit(parts); f.AgentStreak >= limit {
			if f.AgentStreak > limit {
				return nil, nil // said once already
			}
			res, err := q.EntryAppend(ctx, &store.EntryAppendParams{
				ConversationID: conv, Kind: store.EntrySystem, Author: store.SystemAuthor,
				Content: mustJSON(SystemContent{Text: haltNotice(limit), Notice: true}), Now: now,
			})
			if err != nil {
				return nil, fmt.Errorf("noting the loop guard: %w", err)
			}
			return []*store.Entry{res.Entry}, nil
		}
	}
	if err := t.queueNext(ctx, q); err != nil {
		return nil, err
	}
	// A reply that opens with the agent's own name ("atlas: …") names
	// nobody else: it is the reply, stored once, not a message to itself.
	if !slices.ContainsFunc(route.Addressed(text, s.agentNames()), func(n string) bool { return n != t.agent.Name }) {
		return nil, nil
	}
	// A reply that names agents is a message to them, admitted as a
	// person's would be.
	if _, err := s.admit(ctx, q, &speech{conv: conv, author: me, content: agentContent(t.agent.Name, text), replyTo: t.trigger}); err != nil {
		return nil, fmt.Errorf("handing %s's message on: %w", t.agent.Name, err)
	}
	return nil, nil
}

// queueNext queues the turn of the next agent answering the same message.
func (t *turn) queueNext(ctx context.Context, q store.Queries) error {
	next, ok := t.args.next()
	if !ok {
		return nil
	}
	return t.s.enqueueTurnArgs(ctx, q, t.conv.ID, next)
}

// next is the turn of the first agent queued after this one, for the same
// message; false when none is queued.
func (a TurnArgs) next() (TurnArgs, bool) {
	if len(a.Then) == 0 {
		return TurnArgs{}, false
	}
	return TurnArgs{TriggerSeq: a.TriggerSeq, Reason: a.Reason, Agent: a.Then[0], Then: a.Then[1:]}, true
}

// DoneToolName is the tool an agent calls to say it has finished its part.
const DoneToolName = "done"

type doneInput struct {
	Summary string `json:"summary,omitempty" jsonschema:"one line on what was finished (optional)"`
}

type doneOutput struct {
	Done bool `json:"done"`
}

// RegisterDone registers the done tool: an agent that calls it is not woken
// by replies to its own messages until something new arrives (a person's
// message, or another agent naming it about something else).
func RegisterDone(r *tool.Registry) error {
	return tool.Register(r, tool.Def{
		Name: DoneToolName,
		Description: "Say that you have finished your part in this conversation. Other agents' replies to your " +
			"messages will not wake you again; a person's message or a new request that names you will.",
		Risk: tool.RiskLow,
		Tier: tool.TierServer,
	}, func(_ context.Context, _ *tool.Request, _ doneInput) (doneOutput, error) {
		return doneOutput{Done: true}, nil
	})
}

// maxSameFailures is how often one call (same tool, same arguments) may
// fail in a turn before it is stopped without running.
const maxSameFailures = 3

// callKey names a call by tool and arguments, the arguments compacted so
// that spacing does not make two calls differ.
func callKey(c ToolCallContent) string {
	var b bytes.Buffer
	if err := json.Compact(&b, c.Input); err != nil {
		return c.Name + "\x00" + string(c.Input)
	}
	return c.Name + "\x00" + b.String()
}

// countFailures counts the failed calls the log holds for this turn (an
// earlier attempt's count survives a retry).
func (t *turn) countFailures() {
	t.failures = map[string]int{}
	calls := map[string]ToolCallContent{}
	for _, e := range t.entries {
		if e.TurnID == nil || *e.TurnID != t.item.ID {
			continue
		}
		switch e.Kind {
		case store.EntryToolCall:
			if c, err := Decode[ToolCallContent](e); err == nil {
				calls[c.CallID] = c
			}
		case store.EntryToolResult:
			if r, err := Decode[ToolResultContent](e); err == nil && r.IsError {
				if c, ok := calls[r.CallID]; ok {
					t.failures[callKey(c)]++
				}
			}
		}
	}
}

func (t *turn) failedBefore(c ToolCallContent) int {
	t.fmu.Lock()
	defer t.fmu.Unlock()
	return t.failures[callKey(c)]
}

// ran notes a call's outcome: a failure counts toward the stop, and a
// successful done marks the agent done.
func (t *turn) ran(c ToolCallContent, res tool.Result) {
	t.fmu.Lock()
	defer t.fmu.Unlock()
	if res.IsError {
		t.failures[callKey(c)]++
		return
	}
	if c.Name == DoneToolName {
		t.done = true
	}
}

// stop notes that the guard stopped c after n failures: the turn ends
// after this step (see stoppedLine). The first stop's line is kept.
func (t *turn) stop(c ToolCallContent, n int) {
	t.fmu.Lock()
	defer t.fmu.Unlock()
	if t.stopped == "" {
		t.stopped = fmt.Sprintf("Stopped: the tool %s failed %d times in a row with the same input, so this turn ends here. Send a message to go on.", c.Name, n)
	}
}

// stoppedLine is the line that ends the turn after a stop ("" for none).
func (t *turn) stoppedLine() string {
	t.fmu.Lock()
	defer t.fmu.Unlock()
	return t.stopped
}

// repeatedFailure is the result of a call stopped for failing too often.
func repeatedFailure(c ToolCallContent, n int) tool.Result {
	msg := fmt.Sprintf("Stopped: %s failed %d times in this turn with these same arguments, so it was not run again. "+
		"Do not call it again like this: change the arguments, try another way, or tell the person what failed.", c.Name, n)
	return tool.Result{
		Output:  mustJSON(map[string]string{"error": msg}),
		IsError: true,
		Err:     errors.New("stopped after repeated failures with the same arguments"),
	}
}
