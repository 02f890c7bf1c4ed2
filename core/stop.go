package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// StopRequest is a person pressing a platform's stop button (Slack's
// agent_session_stopped) on the reply being written in a place.
type StopRequest struct {
	Platform  string
	Workspace string
	Channel   string
	Thread    string
	UserID    string
	UserName  string
}

// Stopper is the part of Service a platform's stop button calls.
type Stopper interface {
	Stop(ctx context.Context, r *StopRequest) (int, error)
}

// Stop asks every running turn of the conversation bound to the request's
// place to stop, and returns how many it asked. It writes a system entry
// naming each turn (SystemContent.Stop); the commit wakes every instance's
// worker (TopicEntries), and the one running the turn cuts it off
// (Worker.Interrupt's path: the item completes, is never retried, and its
// live message is closed). A place with no conversation or no running turn
// is not an error: there is nothing to stop.
func (s *Service) Stop(ctx context.Context, r *StopRequest) (int, error) {
	if r == nil || r.Platform == "" || r.Channel == "" {
		return 0, invalid("a stop needs a platform and a channel")
	}
	b, err := s.st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns(r.Platform, r.Workspace, r.Channel, r.Thread)})
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("finding the conversation to stop: %w", err)
	}
	who := strings.TrimSpace(r.UserName)
	if who == "" && r.UserID != "" && s.opts.People != nil {
		// Slack's stop event names only the user: the stopped reply says
		// the person's display name.
		if p, err := s.opts.People.Resolve(ctx, r.Platform, r.Workspace, r.UserID); err == nil {
			who = strings.TrimSpace(p.DisplayName)
		} else {
			s.log.WarnContext(ctx, "reading who stopped a reply", "platform", r.Platform, "user_id", r.UserID, "error", err)
		}
	}
	if who == "" {
		who = r.UserID
	}
	n, err := s.StopConversation(ctx, b.ConversationID, who)
	if err == nil && n > 0 {
		s.log.InfoContext(ctx, "stop requested", "conversation_id", b.ConversationID, "turns", n, "platform", r.Platform, "user_id", r.UserID)
	}
	return n, err
}

// StopConversation asks every running turn of conv to stop, on whichever
// instance runs it, and returns how many it asked (see Stop); who is named
// in the log ("Someone" when empty). An API or MCP client whose request
// was cancelled uses it when the turn does not run on its own instance.
func (s *Service) StopConversation(ctx context.Context, conv uuid.UUID, who string) (int, error) {
	items, err := s.st.WorkList(ctx, &store.WorkListParams{
		ConversationID: &conv, Kind: WorkTurn, States: []store.WorkState{store.WorkRunning}, Limit: 10,
	})
	if err != nil {
		return 0, fmt.Errorf("finding the running turn of %s: %w", conv, err)
	}
	if len(items) == 0 {
		return 0, nil
	}
	if who = strings.TrimSpace(who); who == "" {
		who = "Someone"
	}
	err = s.st.InTx(ctx, func(q store.Queries) error {
		for _, it := range items {
			id := it.ID
			if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{
				ConversationID: conv, Kind: store.EntrySystem, Author: store.SystemAuthor,
				Content: mustJSON(SystemContent{Text: who + " stopped the reply.", Stop: &id, By: who}), Now: s.now(),
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("recording the stop of %s: %w", conv, err)
	}
	return len(items), nil
}

// stopsWindow is how many of a conversation's latest entries a worker reads
// for a stop request: the stop entry, and what the turn appended after it
// before the wake-up arrived.
const stopsWindow = 16

// checkStops cuts off the turns of conv running here that a stop entry
// names. It is called on a wake-up for conv's entries and on each
// heartbeat of a running turn (wake-ups are best effort).
func (w *Worker) checkStops(ctx context.Context, conv uuid.UUID) {
	c, err := w.opts.Store.ConversationGet(ctx, conv)
	if err != nil {
		if ctx.Err() == nil {
			w.log.WarnContext(ctx, "reading a conversation for stop requests", "conversation_id", conv, "error", err)
		}
		return
	}
	entries, err := w.opts.Store.EntryList(ctx, &store.EntryListParams{ConversationID: conv, AfterSeq: max(0, c.LastSeq-stopsWindow)})
	if err != nil {
		if ctx.Err() == nil {
			w.log.WarnContext(ctx, "reading entries for stop requests", "conversation_id", conv, "error", err)
		}
		return
	}
	for _, e := range entries {
		if e.Kind != store.EntrySystem {
			continue
		}
		var sc SystemContent
		if json.Unmarshal(e.Content, &sc) != nil || sc.Stop == nil {
			continue
		}
		if w.interruptItem(conv, *sc.Stop) {
			w.log.InfoContext(ctx, "turn stopped by a person", "conversation_id", conv, "work_id", *sc.Stop)
		}
	}
}

// interruptItem cuts off one running item of conv, reporting whether it
// ran here.
func (w *Worker) interruptItem(conv, item uuid.UUID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	cancel, ok := w.interrupts[conv][item]
	if ok {
		cancel(ErrInterrupted)
	}
	return ok
}

// runsHere reports whether a turn of conv runs on this worker.
func (w *Worker) runsHere(conv uuid.UUID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.interrupts[conv]) > 0
}

// watchStops reads entry wake-ups and checks the conversations whose turns
// run here for stop requests.
func (w *Worker) watchStops(ctx context.Context, notes <-chan store.Notification) {
	for n := range notes {
		conv, err := uuid.Parse(n.Payload)
		if err != nil || !w.runsHere(conv) {
			continue
		}
		w.checkStops(ctx, conv)
	}
}
