package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

// The window. A turn reads the latest summary and the log after the seq it
// covers (summary.go). While summaries keep up that part is short, but not
// before a conversation's first summary when its log is long already: one
// imported, forked from a long one, or filled by channel history before
// anyone asked the agent. So the read starts at the newest entry and goes
// back a page at a time, and stops once it holds the most a context grows
// to before a turn summarises it inline (context.summarize_at and a
// fifth), and context.keep_recent more, in estimated tokens. What it
// reached is:
//
//   - all of it, back to the summary or the log's start: the whole
//     context, as before; a turn past the budget and a fifth summarises it
//     inline;
//   - a window of a longer backlog (partial): the view keeps the newest
//     context.keep_recent tokens of it, the verbatim tail a summary will
//     keep, and the turn queues the summary item, which reads the backlog
//     in the background and folds it in rounds (RunSummarize). The turn
//     never summarises a partial view inline: the summary would claim to
//     cover entries it has not read.
//
//	log:    1 ……………………………………… 49,700 │ 49,701 … 50,000     (no summary)
//	pages:                   ◄── … ◄── 1,024 ◄── 1,024   until summarize_at × 1.2
//	                                                    + keep_recent is read
//	view:                              49,981 … 50,000   (keep_recent, from a
//	                                                      person's message)
//
// So the first turn of a conversation of 50,000 entries reads what a turn
// of one at its budget does, whatever the log's length. The first page is a sixteenth of the tokens to
// read, in seqs (64 to 1,024); each further one is sized from what the
// entries read so far weigh, up to 1,024.
//
// Calls still waiting for a result stay in the view as a summary's cut
// keeps them: the view never starts after a call it has read without its
// result (tailWindow), and a call further back that is known to wait (a
// pending approval or question, the call a resumed turn runs, a call a
// client posts a result for) makes the read go on back to it.
//
// What happens on failure: a store error fails the read like any other;
// nothing is written.

// Pages of a windowed read, in seqs: the fewest and the most one takes.
const (
	windowPage    = 64
	maxWindowPage = 1024
)

// maxUnbudgetedTokens bounds the view of an agent that never summarises
// (context.summarize_at -1): about the largest context window a model
// offers.
const maxUnbudgetedTokens = 1_000_000

// logWindow bounds what loadModelLog reads of the log after the latest
// summary.
type logWindow struct {
	// read ends the read once the entries read weigh this many estimated
	// tokens (rawTokens); 0 reads everything after the summary.
	read int
	// keep is what a partial view keeps of what was read, in tokens
	// (tailWindow).
	keep int
	// calls are calls the view must hold when the log has them (the call a
	// resumed turn runs, calls a client posts results for): the read goes
	// back to them.
	calls []string
}

// windowOf is what a reader of a's conversations takes of the log (see the
// comment at the top of this file).
func windowOf(a *config.Agent, calls ...string) logWindow {
	at, keep, ok := a.Context.Budget()
	if !ok {
		return logWindow{read: maxUnbudgetedTokens, keep: maxUnbudgetedTokens, calls: calls}
	}
	return logWindow{read: summaryLimit(at) + keep, keep: keep, calls: calls}
}

// maxEntries caps the entries a windowed read takes however little they
// weigh (cards and notices weigh nothing): as many as its tokens hold at
// the least an entry that counts weighs, and a page.
func (w logWindow) maxEntries() int { return w.read/tokensPerEntry + maxWindowPage }

// rawTokens is entryTokens estimated from the stored JSON without decoding
// it (a little more: the JSON has keys), for deciding how far to read.
func rawTokens(e *store.Entry) int {
	switch e.Kind {
	case store.EntryUser, store.EntryAssistant, store.EntryToolCall, store.EntryToolResult, store.EntrySystem, store.EntryAction:
		return estimate(len(e.Content)) + tokensPerEntry
	}
	return 0
}

// readWindow fills ml with the newest entries of conv after seq after,
// w's worth (see the comment at the top of this file).
func (ml *modelLog) readWindow(ctx context.Context, q store.Queries, conv *store.Conversation, after int64, w logWindow) error {
	var (
		entries []*store.Entry // ascending, as read so far
		tokens  int
		first   = min(max(w.read/16, windowPage), maxWindowPage)
		from    = max(after, conv.LastSeq-int64(first)) // the next read is (from, upTo]
		upTo    int64                                   // 0: to the end, for what lands meanwhile
	)
	back := func() error {
		es, err := q.EntryList(ctx, &store.EntryListParams{ConversationID: conv.ID, AfterSeq: from, UpToSeq: upTo})
		if err != nil {
			return fmt.Errorf("loading the log of %s after seq %d: %w", conv.ID, from, err)
		}
		for _, e := range es {
			tokens += rawTokens(e)
		}
		entries = append(es, entries...)
		// The next page: what the rest of the read should take at the
		// weight of the entries so far, and a quarter more (past the
		// budget, a read goes on back to a call: the largest pages).
		page := int64(maxWindowPage)
		if tokens > 0 && tokens < w.read {
			page = int64(max(w.read-tokens, 0)) * int64(len(entries)) / int64(tokens)
			page = min(max(page+page/4, windowPage), maxWindowPage)
		}
		upTo, from = from, max(after, from-page)
		return nil
	}
	for {
		if err := back(); err != nil {
			return err
		}
		if upTo <= after || tokens >= w.read || len(entries) >= w.maxEntries() {
			break
		}
	}
	if upTo > after {
		need, err := waitingBefore(ctx, q, conv, entries, w.calls)
		if err != nil {
			return err
		}
		for len(need) > 0 && upTo > after {
			n := len(entries)
			if err := back(); err != nil {
				return err
			}
			dropCalled(need, entries[:len(entries)-n])
		}
	}
	if upTo <= after {
		// Everything after the summary: the whole context, as before.
		ml.entries = entries
		return nil
	}
	ml.entries, ml.partial = tailWindow(entries, w.keep), true
	return nil
}

// waitingBefore are the calls the view must hold that entries do not: the
// calls named and those of conv's pending approvals and questions.
func waitingBefore(ctx context.Context, q store.Queries, conv *store.Conversation, entries []*store.Entry, named []string) (map[string]bool, error) {
	need := map[string]bool{}
	for _, id := range named {
		need[id] = true
	}
	aps, err := q.ApprovalListPending(ctx, conv.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("listing the pending approvals of %s: %w", conv.ID, err)
	}
	for _, ap := range aps {
		need[ap.CallID] = true
	}
	dropCalled(need, entries)
	return need, nil
}

// dropCalled removes from need the calls made in entries.
func dropCalled(need map[string]bool, entries []*store.Entry) {
	if len(need) == 0 {
		return
	}
	for _, e := range entries {
		if e.Kind != store.EntryToolCall {
			continue
		}
		if c, err := Decode[ToolCallContent](e); err == nil {
			delete(need, c.CallID)
		}
	}
}

// turnWindow is what a turn reads: the window of the agent the args name,
// else of the conversation's (the agent of a call it resumes is known only
// from what it reads), reaching back to the call it resumes.
func (s *Service) turnWindow(conv *store.Conversation, args TurnArgs) logWindow {
	a, ok := s.agents().Find(args.Agent)
	if !ok {
		a = s.agentOf(conv)
	}
	if args.ResumeCall != "" {
		return windowOf(a, args.ResumeCall)
	}
	return windowOf(a)
}
