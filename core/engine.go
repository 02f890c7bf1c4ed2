package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/run/coding"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// CardMimeType marks a tool attachment that is a stamped card: the engine
// turns it into a card entry instead of a file.
const CardMimeType = "application/vnd.switchboard.card+json"

// turn is one run of the engine over one conversation. It is single use:
// everything it knows comes from the log when it starts, and everything it
// produces goes to the log as soon as it is finished.
type turn struct {
	s    *Service
	item *store.WorkItem
	conv *store.Conversation
	// tc is what the turn read of its conversation before the model
	// (TurnContextGet); tc.Conversation is conv.
	tc    *store.TurnContext
	agent *config.Agent
	meta  ConversationMeta
	model model.Backend
	tools map[string]*tool.Tool
	list  []*tool.Tool
	// workspace is the platform workspace the conversation is bound to ("":
	// none); the guard's policy and standing grants are per workspace.
	workspace string
	// place is where the conversation is bound (its first binding with a
	// workspace; zero: none): the channel a budget counts.
	place store.Place
	// res is the running model call's hold on its budgets, charged with
	// its usage (nil: none applies).
	res *reservation
	// workspaceID is the workspace the conversation belongs to (nil: none);
	// standing grants hold by it when it is set.
	workspaceID *uuid.UUID
	// dir is a coding step's worktree, where its CLI works ("": none).
	dir string

	// td delivers the turn to the conversation's platforms (nil: nowhere).
	// deliveryQueued records that this attempt's durable deliver item is
	// in the log already.
	td             TurnDelivery
	deliveryQueued bool

	mu sync.Mutex // guards entries and appends from concurrent tools
	// entries is the log after what summary covers (all of it when there
	// is no summary yet, or its newest part; see partial), as the model
	// sees it; the turn's own appends join it.
	entries    []*store.Entry
	summary    *SummaryContent           // the latest summary; nil: none
	summarySeq int64                     // the seq of that summary's entry
	names      map[store.Identity]string // the speakers' display names
	// partial: entries are the newest of a longer backlog after the
	// summary (window.go); the turn asks for the summary, never writes it.
	partial bool
	// seen is the seq through which the turn has read the whole log (see
	// advanceSeen).
	seen int64
	// stable holds the StableParts of this turn's prompt once built.
	stable []string

	skillIndex string // the index of the skills offered (see offerSkills)

	// args are the item's: which agent, and who answers after it.
	args TurnArgs
	// trigger wrote the entry the turn answers ("" when unknown).
	trigger store.Author
	// done: the agent said it is done (the done tool or its marker).
	done bool
	// failures counts the calls of this turn that failed, by tool and
	// arguments (see callKey); fmu guards it and done, since calls run
	// concurrently.
	fmu      sync.Mutex
	failures map[string]int
	// stopped is the line that ends the turn once the guard stopped a call
	// for failing again and again ("" while none was); fmu guards it.
	stopped string
	// memory is the turn's memory text (see loadMemory), read once.
	memory       string
	memoryLoaded bool
}

// turnOutcome is how a turn ended.
type turnOutcome int

const (
	turnDone   turnOutcome = iota // nothing pending
	turnPaused                    // waiting for a person or a client
)

// RunTurn runs the turn a claimed work item asks for; it is the handler of
// TurnArgs (AddHandler). It returns an error only when the turn could not be
// finished and the item should not be marked done (the context ended:
// shutdown or a lost lease). Model and tool failures are recorded in the log
// as error entries and end the turn normally.
//
// The args name the agent that takes the turn (and those after it); a
// turn, resumed or not, starts from the log.
func (s *Service) RunTurn(ctx context.Context, item *store.WorkItem, args TurnArgs) (err error) {
	if item.ConversationID == nil {
		return fmt.Errorf("turn %s has no conversation", item.ID)
	}
	// What the turn reads before the model, in one call (one round trip
	// on Postgres): the conversation and the rows around it.
	tc, cerr := s.st.TurnContextGet(ctx, *item.ConversationID)
	if cerr != nil {
		return fmt.Errorf("loading conversation for turn %s: %w", item.ID, cerr)
	}
	conv := tc.Conversation
	// A run step cancelled before its turn started is not started: the
	// cancel found no running turn to stop.
	if stop, err := s.runStepGone(ctx, conv); err != nil || stop {
		return err
	}
	// The model's view of the log: the latest summary and what follows it,
	// the newest of it when that is long (window.go).
	window := s.turnWindow(conv, args)
	ml, err := loadModelLogAfter(ctx, s.st, conv, window, tc.LatestSummary)
	if err != nil {
		return fmt.Errorf("loading log: %w", err)
	}
	// A message that landed while an earlier reply was written is read
	// after that reply (seen.go).
	entries := inSeenOrder(ml.entries)
	log := s.log.With("conversation_id", conv.ID, "turn_id", item.ID, "attempt", item.Attempts)
	base, args := s.turnAgent(conv, entries, args)
	trigger := authorAt(entries, args.TriggerSeq)
	if _, fromAgent := trigger.Agent(); fromAgent {
		// An agent's message queued before the floor filled up wakes
		// nobody once it has.
		if stop, err := s.halted(ctx, s.st, conv.ID); err != nil || stop {
			return err
		}
	}
	// Live viewers see every turn start and end, also one that ends at once
	// (a backend that cannot be built, the attempt cap).
	agentName := base.Name
	ctx, tr := s.traceTurn(ctx, conv, item, agentName)
	defer func() { tr.end(ctx, err) }()
	s.hub.Publish(Event{ConversationID: conv.ID, Kind: EventTurnStart, Agent: agentName})
	defer s.hub.Publish(Event{ConversationID: conv.ID, Kind: EventTurnEnd, Agent: agentName})
	td := s.openDelivery(ctx, conv, item, agentName)
	if td != nil {
		// A turn cut off (a shutdown, or a lease lost, which its own write
		// may notice before the heartbeat does) leaves its live message to
		// whoever continues it. A turn a person stopped is not continued:
		// its live message is closed like a finished turn's.
		defer func() {
			stopped := errors.Is(context.Cause(ctx), ErrInterrupted)
			s.closeDelivery(ctx, conv.ID, td, !stopped && (ctx.Err() != nil || errors.Is(err, store.ErrLeaseLost)))
		}()
	}

	// A second attempt means an earlier one died holding the lease (a crash
	// or a lost heartbeat; a graceful stop releases without counting). The
	// turn resumes from its last committed step.
	if item.Attempts > 1 {
		if err := s.recoverTurn(ctx, conv, item); err != nil {
			return err
		}
		// Recovery writes to the log: the turn starts from what it left.
		if ml, err = loadModelLog(ctx, s.st, conv, window); err != nil {
			return fmt.Errorf("loading log: %w", err)
		}
		entries = inSeenOrder(ml.entries)
	}
	// Past the cap: every attempt died. Say so once, plainly, and stop.
	if item.Attempts > s.opts.MaxTurnAttempts {
		msg := fmt.Sprintf("Sorry, this reply failed after %d attempts. Send your message again to retry.", s.opts.MaxTurnAttempts)
		tr.outcome = TurnOutcomeFailed
		return s.endTurn(ctx, conv.ID, item, turnDone, s.fail(ctx, conv.ID, item, msg, true, td, args))
	}
	// The claim marked an idle conversation running; a paused one (this turn
	// resumes it) and a retry's attempt count still need writing.
	if conv.Status != store.ConversationRunning || item.Attempts > 1 {
		attempts := item.Attempts
		if _, err := s.st.ConversationSetStatus(ctx, &store.ConversationStatusParams{
			ConversationID: conv.ID, Status: store.ConversationRunning, TurnAttempts: &attempts, Now: s.now(),
		}); err != nil {
			return fmt.Errorf("marking conversation running: %w", err)
		}
	}

	ag, err := s.withPersonalityOf(ctx, base, conv, tc.Personality)
	if err != nil {
		return err
	}
	backend, err := s.backendFor(ag)
	if err != nil {
		tr.outcome = TurnOutcomeFailed
		return s.endTurn(ctx, conv.ID, item, turnDone, s.fail(ctx, conv.ID, item, err.Error(), false, td, args))
	}
	place := placeIn(tc.Bindings)
	workspace := place.Workspace
	// Read with the conversation: a conversation's workspace is set once
	// and never moved.
	workspaceID := conv.WorkspaceID
	t := &turn{s: s, item: item, conv: conv, tc: tc, agent: ag, meta: metaOf(conv), model: backend, entries: entries, td: td,
		workspace: workspace, workspaceID: workspaceID, place: place, args: args, trigger: trigger, summary: ml.summary, summarySeq: ml.summarySeq, partial: ml.partial, seen: lastSeq(entries)}
	t.countFailures()
	if sc := t.meta.Run; sc != nil && sc.Repo != "" {
		// A coding step works in its own worktree of the repository,
		// fetched now; a step that cannot get one fails with why.
		if t.dir, err = s.stepWorktree(ctx, conv.ID); err != nil {
			if ctx.Err() != nil || errors.Is(err, store.ErrLeaseLost) {
				return err
			}
			log.WarnContext(ctx, "preparing a coding step's worktree", "error", redact.String(err.Error()))
			tr.outcome = TurnOutcomeFailed
			msg := "I could not prepare the step's repository: " + redact.String(err.Error())
			return s.endTurn(ctx, conv.ID, item, turnDone, s.fail(ctx, conv.ID, item, msg, false, td, args))
		}
	}
	if s.opts.People != nil {
		// Before the model runs: the speakers' names, and a fresh profile
		// of the latest one.
		t.names = s.opts.People.speakerNames(ctx, entries)
	}
	t.offer()
	t.offerSkills(ctx)

	outcome, err := t.run(ctx)
	if t.res != nil {
		// A model call's reservation the turn never charged (it was
		// stopped, or failed between the call and its commit) is given
		// back now rather than at its expiry.
		t.release(ctx, t.res)
		t.res = nil
	}
	if err == nil {
		t.askSummary(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, store.ErrLeaseLost) {
			// A fenced write found the lease taken over before the heartbeat
			// noticed: the new holder goes on, and this turn writes nothing more.
			log.WarnContext(ctx, "lease lost; stopping the turn")
			return err
		}
		log.ErrorContext(ctx, "turn failed", "error", redact.String(err.Error()))
		tr.outcome = TurnOutcomeFailed
		err = s.failDetailed(ctx, conv.ID, item, failureText(err), "The turn failed: "+err.Error(), true, td, args)
	}
	if outcome == turnPaused && tr.outcome == TurnOutcomeDone {
		tr.outcome = TurnOutcomePaused
	}
	return s.endTurn(ctx, conv.ID, item, outcome, err)
}

// failureText is what people are told of a failed turn: a model failure
// classified (model.Describe), anything else one plain sentence. Library
// and provider text stays in the log, never in the chat.
func failureText(err error) string {
	if bw := (*BridgeWaitError)(nil); errors.As(err, &bw) {
		return bw.Sentence()
	}
	if text, ok := model.Describe(err); ok {
		return text
	}
	return "Sorry, something went wrong while answering; the details are in the service log."
}

// endTurn sets the conversation's coarse state after a turn.
func (s *Service) endTurn(ctx context.Context, conv uuid.UUID, item *store.WorkItem, outcome turnOutcome, err error) error {
	if err != nil {
		return err
	}
	// Completing the item releases the lease, which turns a running
	// conversation idle; only a pause or a retry's count needs a write here.
	if outcome != turnPaused && item.Attempts <= 1 {
		return nil
	}
	status := store.ConversationIdle
	if outcome == turnPaused {
		status = store.ConversationPaused
	}
	zero := 0
	if _, err := s.st.ConversationSetStatus(ctx, &store.ConversationStatusParams{
		ConversationID: conv, Status: status, TurnAttempts: &zero, Now: s.now(),
	}); err != nil {
		return fmt.Errorf("marking conversation %s: %w", status, err)
	}
	return nil
}

// fail appends an error entry (seq NULL: people see it, models never do),
// with its delivery when the turn has somewhere to deliver (td); the turn's
// end delivers it. The agents queued after the failed one (args.Then)
// still answer the message: one agent failing does not silence the others.
func (s *Service) fail(ctx context.Context, conv uuid.UUID, item *store.WorkItem, msg string, retryable bool, td TurnDelivery, args TurnArgs) error {
	return s.failDetailed(ctx, conv, item, msg, msg, retryable, td, args)
}

// failDetailed is fail where people see msg and the run step or delegation
// the turn served records detail (a classified model failure and the
// provider's own words).
func (s *Service) failDetailed(ctx context.Context, conv uuid.UUID, item *store.WorkItem, msg, detail string, retryable bool, td TurnDelivery, args TurnArgs) error {
	var turnID *uuid.UUID
	var owner string // fenced: a turn that lost its lease writes nothing
	if item != nil {
		turnID, owner = &item.ID, item.ClaimedBy
	}
	var res *store.EntryAppendResult
	err := s.st.InTx(ctx, func(q store.Queries) error {
		var err error
		res, err = q.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: conv, Kind: store.EntryError, Author: store.SystemAuthor,
			Content: mustJSON(ErrorContent{Message: redact.String(msg), Retryable: retryable}), TurnID: turnID,
			LeaseOwner: owner, Now: s.now(),
		})
		if err != nil {
			return err
		}
		if next, ok := args.next(); ok {
			if err := s.enqueueTurnArgs(ctx, q, conv, next); err != nil {
				return err
			}
		}
		// A failed turn of a run step fails the step.
		if err := s.runStepFailure(ctx, q, conv, redact.String(detail)); err != nil {
			return err
		}
		// A delegate whose task's turn failed has failed the task.
		if err := s.delegationFailed(ctx, q, conv, redact.String(detail)); err != nil {
			return err
		}
		if td == nil {
			return nil
		}
		return enqueueDelivery(ctx, q, conv, s.now())
	})
	if err != nil {
		return fmt.Errorf("recording error entry: %w", err)
	}
	s.hub.Publish(Event{ConversationID: conv, Kind: EventEntry, Entry: res.Entry})
	return nil
}

// openDelivery starts delivering a turn. A retried attempt first delivers
// what the dead one committed (a reply saved just before a crash) and
// takes over the live message it left. When the bindings cannot be read,
// the turn runs undelivered and its deliver items finish the job.
func (s *Service) openDelivery(ctx context.Context, conv *store.Conversation, item *store.WorkItem, agentName string) TurnDelivery {
	if s.opts.Deliverer == nil {
		return nil
	}
	td, err := s.opts.Deliverer.OpenTurn(ctx, conv, item, agentName)
	if err != nil {
		s.log.WarnContext(ctx, "opening delivery", "conversation_id", conv.ID, "error", redact.String(err.Error()))
		return nil
	}
	if td != nil && item.Attempts > 1 {
		if err := td.Flush(ctx); err != nil {
			s.log.WarnContext(ctx, "delivering what an earlier attempt committed", "conversation_id", conv.ID, "error", redact.String(err.Error()))
		}
	}
	return td
}

// closeDelivery ends a turn's delivery. A turn cut off by a shutdown or a
// lost lease leaves its live message for whoever continues; otherwise
// delivery gets a little time of its own, even if the turn's context ended.
func (s *Service) closeDelivery(ctx context.Context, conv uuid.UUID, td TurnDelivery, interrupted bool) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := td.Close(cctx, interrupted); err != nil {
		// The deliver item queued with the entries retries.
		s.log.WarnContext(ctx, "delivering at turn end; the deliver item retries", "conversation_id", conv, "error", redact.String(err.Error()))
	}
}

// recoverTurn notes that a dead attempt of this turn is being retried.
// Nothing is discarded: the entries the dead attempt committed (assistant
// text, tool calls, tool results, cards) stay, and the turn resumes after
// the last of them, so no finished model call or tool runs again. Messages
// people sent meanwhile stay where they landed, in order. A call the dead
// attempt had started but not recorded is settled when the resumed turn
// reaches it: execute finds its executing marker, records that the call was
// interrupted and does not run it again.
func (s *Service) recoverTurn(ctx context.Context, conv *store.Conversation, item *store.WorkItem) error {
	if item.Attempts > s.opts.MaxTurnAttempts {
		return nil // RunTurn reports the final failure
	}
	res, err := s.st.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: conv.ID, Kind: store.EntryError, Author: store.SystemAuthor, TurnID: &item.ID,
		Content: mustJSON(ErrorContent{
			Message: fmt.Sprintf("The previous attempt was interrupted; retrying (attempt %d of %d).", item.Attempts, s.opts.MaxTurnAttempts),
			Interim: true,
		}),
		LeaseOwner: item.ClaimedBy, Now: s.now(),
	})
	if err != nil {
		return fmt.Errorf("noting the retry of turn %s: %w", item.ID, err)
	}
	s.hub.Publish(Event{ConversationID: conv.ID, Kind: EventEntry, Entry: res.Entry})
	return nil
}

// offer computes the tools this turn may use: the context's tools, limited
// to the agent's list when it has one and to those whose audience takes
// this agent in this workspace.
func (t *turn) offer() {
	t.tools = map[string]*tool.Tool{}
	for _, tl := range t.s.opts.Tools(t.meta.Context) {
		// The worktree tools are a coding step's own: offered there
		// whatever the agent's and lead's lists say, nowhere else.
		if coding.IsTool(tl.Name()) {
			if t.dir != "" {
				t.tools[tl.Name()] = tl
				t.list = append(t.list, tl)
			}
			continue
		}
		if (len(t.agent.Tools) > 0 || tl.OptIn()) && !slices.Contains(t.agent.Tools, tl.Name()) {
			continue
		}
		// A run step gets at most its lead's tools.
		if !t.meta.Run.allows(tl.Name()) {
			continue
		}
		if !tl.Audience().Allows(t.agent.Name, t.workspace, workspaceIDString(t.workspaceID)) {
			continue
		}
		t.tools[tl.Name()] = tl
		t.list = append(t.list, tl)
	}
	sort.Slice(t.list, func(i, j int) bool { return t.list[i].Name() < t.list[j].Name() })
}

// stepBudget caps the turn's model calls: the agent's, or a run step's
// (at most its lead's) when lower.
func (t *turn) stepBudget() int {
	if r := t.meta.Run; r != nil && r.StepBudget > 0 && r.StepBudget < t.agent.StepBudget {
		return r.StepBudget
	}
	return t.agent.StepBudget
}

func workspaceIDString(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

func (t *turn) run(ctx context.Context) (turnOutcome, error) {
	// A card's tool button: run the declared tool as a call of its own, so it
	// passes the guard and the model sees what happened.
	if n := len(t.entries); n > 0 && t.entries[n-1].Kind == store.EntryAction {
		act, err := Decode[ActionContent](t.entries[n-1])
		if err != nil {
			return turnDone, err
		}
		if act.Tool != "" {
			args := act.Args
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			call := ToolCallContent{CallID: "card_" + uuid.NewString(), Name: act.Tool, Input: args}
			if _, err := t.append(ctx, store.EntryToolCall, call); err != nil {
				return turnDone, err
			}
		}
	}
	if pending := t.ownPending(); len(pending) > 0 {
		movedOn := t.movedOn(pending)
		if movedOn {
			if err := t.closeMovedOn(ctx, pending); err != nil {
				return turnDone, err
			}
			pending = t.ownPending()
		}
		waiting, err := t.resolvePending(ctx, pending)
		if err != nil {
			return turnDone, err
		}
		// A person who sent a new message is answered even while an
		// approval still waits; the reply says it waits.
		if waiting && !movedOn {
			return turnPaused, nil
		}
	}
	if !needsResponse(t.entries, t.agent.Name) {
		return turnDone, nil
	}
	for step := 0; step < t.stepBudget(); step++ {
		t.mu.Lock()
		seen := t.seen // what this model call reads
		t.mu.Unlock()
		resp, usage, err := t.callModel(ctx)
		if refused, ok := errors.AsType[*BudgetRefusal](err); ok {
			// One line for the person, in the audit too; no retry: the
			// budget stays spent until it resets or is extended.
			t.auditRefusal(ctx, refused)
			t.s.observeBudgetRefusal(refused)
			return turnDone, t.s.fail(ctx, t.conv.ID, t.item, refused.Line(), false, t.td, t.args)
		}
		if err != nil {
			return turnDone, err
		}
		var calls []ToolCallContent
		var text string
		var thinking []ThinkingBlock
		for _, p := range resp.Parts {
			switch p.Kind {
			case model.PartThinking:
				thinking = append(thinking, ThinkingBlock{Text: p.Text, Signature: p.Signature, Redacted: p.Redacted})
			case model.PartText:
				text += p.Text
			case model.PartToolCall:
				in := p.Input
				if len(in) == 0 {
					in = json.RawMessage(`{}`)
				}
				calls = append(calls, ToolCallContent{CallID: p.CallID, Name: p.ToolName, Input: in})
			}
		}
		// The model call's text and calls are finished together, when its
		// stream ends: they are appended at once, with its usage, in one commit.
		// <dm> tags go to side threads (committed with the reply), never
		// to people.
		text, dms := SplitDMs(text)
		if m := t.agent.DoneMarker; m != "" && strings.Contains(text, m) {
			// The marker is the agent's signal, not something to show.
			t.done = true
			text = strings.TrimSpace(strings.ReplaceAll(text, m, ""))
		}
		var step []pendingEntry
		if text != "" || len(thinking) > 0 || len(dms) > 0 {
			ac := AssistantContent{Text: text, Agent: t.agent.Name, Thinking: thinking, DMs: dms, SeenThrough: seen}
			if s := resp.Session; s != nil {
				ac.Session = &CLISession{Provider: s.Provider, ID: s.ID, Totals: s.Totals}
			}
			step = append(step, pendingEntry{store.EntryAssistant, ac})
		}
		for _, c := range calls {
			c.Then = t.args.Then
			step = append(step, pendingEntry{store.EntryToolCall, c})
		}
		var reply *string
		if len(calls) == 0 {
			// The last step: the reply and what it causes commit together.
			reply = &text
		}
		if _, err := t.commit(ctx, usage, step, reply); err != nil {
			return turnDone, err
		}
		if len(calls) == 0 {
			return turnDone, nil
		}
		waiting, err := t.runCalls(ctx, calls)
		if err != nil {
			return turnDone, err
		}
		if line := t.stoppedLine(); line != "" {
			// The guard stopped a call that kept failing: the turn ends
			// here, with one line saying why, and no more model calls.
			if err := t.s.fail(ctx, t.conv.ID, t.item, line, false, t.td, t.args); err != nil {
				return turnDone, err
			}
			if waiting {
				return turnPaused, nil
			}
			return turnDone, nil
		}
		if waiting {
			return turnPaused, nil
		}
	}
	return turnDone, t.s.fail(ctx, t.conv.ID, t.item,
		fmt.Sprintf("Stopped after %d model calls (the step budget) without finishing. Send a message to continue.", t.stepBudget()), true, t.td, t.args)
}

// callModel streams one model call, publishing deltas for live viewers, and
// returns the response with the usage row to record.
func (t *turn) callModel(ctx context.Context) (*model.Response, *store.Usage, error) {
	if t.stable == nil {
		// Once per turn: every step sends the same stable block.
		parts, err := t.s.stableParts(ctx, t.tc, t.agent)
		if err != nil {
			return nil, nil, err
		}
		t.stable = append([]string{}, parts...)
	}
	t.loadMemory(ctx)
	req, err := t.request(ctx)
	if err != nil {
		return nil, nil, err
	}
	conv := t.conv.ID
	res, err := t.reserve(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	t.res = res
	t.status("is thinking…")
	ctx, mt := t.traceModel(ctx, req)
	var dmf dmFilter // live viewers never see a <dm> tag either
	resp, err := t.model.Generate(ctx, req, func(ev model.Event) {
		mt.event(ev)
		switch ev.Kind {
		case model.EventTextDelta:
			text := dmf.feed(ev.Text)
			if text == "" {
				return
			}
			t.s.hub.Publish(Event{ConversationID: conv, Kind: EventDelta, Text: text, Agent: t.agent.Name})
			if t.td != nil {
				t.td.Delta(text)
			}
		case model.EventRestart:
			dmf.reset()
			t.s.hub.Publish(Event{ConversationID: conv, Kind: EventRestart, Agent: t.agent.Name})
			if t.td != nil {
				t.td.Reset()
			}
		case model.EventStatus:
			t.status(ev.Text)
		case model.EventToolCallStart:
			t.status("is running " + ev.ToolName + "…")
		case model.EventToolCallEnd:
			if t.dir != "" {
				// A coding step's CLI edits and runs things itself: the
				// run's log shows each as it happens.
				t.s.stepActivity(ctx, t.meta.Run, ev.ToolName, ev.Input)
			}
		}
	})
	if err != nil {
		mt.end(ctx, nil, nil, err)
		t.release(ctx, t.res)
		t.res = nil
		return nil, nil, fmt.Errorf("calling %s: %w", t.agent.Model, redact.Error(err))
	}
	spec, _ := model.ParseSpec(t.agent.Model)
	u := t.s.usageOf(t.conv, &t.item.ID, spec, resp, t.s.now())
	if id := t.s.agentID(t.agent.Name); id != nil {
		// In a conversation of several agents the call is the turn's
		// agent's, not the conversation's (its latency and cost are).
		u.AgentID = id
	}
	mt.end(ctx, resp, u, nil)
	return resp, u, nil
}

// usageOf is the usage row of one model call made for conv by the work
// item turnID, priced when the model's price is known.
func (s *Service) usageOf(conv *store.Conversation, turnID *uuid.UUID, spec model.Spec, resp *model.Response, now time.Time) *store.Usage {
	u := &store.Usage{
		ConversationID: conv.ID, TurnID: turnID, AgentID: conv.AgentID,
		Provider: spec.Provider, Model: resp.Model,
		InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens,
		CachedTokens: resp.Usage.CachedTokens, CacheWriteTokens: resp.Usage.CacheWriteTokens,
		ReasoningTokens: resp.Usage.ReasoningTokens, CreatedAt: now,
	}
	if u.Model == "" {
		u.Model = spec.Model
	}
	if resp.CostReported {
		// The CLI knows what it spent (its own model calls included).
		u.CostMicroUSD = resp.CostMicroUSD
	} else if price, ok := s.priceFor(spec.Provider, u.Model, spec.Model); ok {
		u.CostMicroUSD = resp.Usage.CostMicroUSD(price)
	}
	return u
}

// pendingEntry is an entry about to be appended.
type pendingEntry struct {
	kind    store.EntryKind
	content any
}

// status tells live viewers and the platforms what the agent is doing.
func (t *turn) status(text string) {
	t.s.hub.Publish(Event{ConversationID: t.conv.ID, Kind: EventStatus, Text: text, Agent: t.agent.Name})
	if t.td != nil {
		t.td.Status(text)
	}
}

// taskText is the most of a call's input or output a task shows: Slack
// takes 256 characters in a task's details and output.
const taskText = 256

// task shows a tool call's progress on platforms that show tasks.
func (t *turn) task(c ToolCallContent, status TaskStatus, output json.RawMessage) {
	tr, ok := t.td.(TaskReporter)
	if !ok {
		return
	}
	u := TaskUpdate{ID: c.CallID, Title: c.Name, Status: status, Details: shorten(redact.String(compactJSON(c.Input)), taskText)}
	if output != nil {
		u.Output = shorten(redact.String(compactJSON(output)), taskText)
	}
	tr.Task(u)
}

// compactJSON is raw as one line, a JSON string as its text.
func compactJSON(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// shorten cuts s to at most n characters, marking the cut.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// commit appends entries (and the usage row, if any) in one transaction.
// The first entry of this attempt that people see carries the durable
// deliver item in the same commit; then the entries are delivered at once,
// under the turn's lease. A delivery that fails here is left to that item.
// reply, on the turn's last step, is its final text: what it causes (the
// agents it wakes, the loop guard's count) commits with it (see replied).
func (t *turn) commit(ctx context.Context, u *store.Usage, step []pendingEntry, reply *string) ([]*store.Entry, error) {
	return t.commitWith(ctx, u, step, reply, nil)
}

// commitWith is commit with also, when set, run in the same transaction
// after the entries are appended.
func (t *turn) commitWith(ctx context.Context, u *store.Usage, step []pendingEntry, reply *string, also func(q store.Queries) error) ([]*store.Entry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var appended []*store.Entry
	queued, visible := false, false
	res := t.res
	if u != nil && res != nil {
		// Renewing stops: the charge below deletes the reservation, and
		// if the commit fails it is released.
		res.end()
	}
	err := t.s.st.InTx(ctx, func(q store.Queries) error {
		appended, queued, visible = appended[:0], false, false
		if u != nil {
			if err := q.UsageRecord(ctx, u); err != nil {
				return fmt.Errorf("recording usage: %w", err)
			}
			if err := t.s.charge(ctx, q, res, u, t.agent.Name, t.place); err != nil {
				return err
			}
		}
		for _, p := range step {
			res, err := q.EntryAppend(ctx, t.appendParams(p.kind, p.content))
			if err != nil {
				return fmt.Errorf("appending %s: %w", p.kind, err)
			}
			appended = append(appended, res.Entry)
			visible = visible || Visible(res.Entry)
			if ac, ok := p.content.(AssistantContent); ok && len(ac.DMs) > 0 {
				markers, err := t.openSideThreads(ctx, q, res.Entry, ac.DMs)
				if err != nil {
					return err
				}
				for _, e := range markers {
					appended = append(appended, e)
					visible = visible || Visible(e)
				}
			}
		}
		if also != nil {
			if err := also(q); err != nil {
				return err
			}
		}
		if reply != nil {
			more, err := t.replied(ctx, q, *reply)
			if err != nil {
				return err
			}
			for _, e := range more {
				appended = append(appended, e)
				visible = visible || Visible(e)
			}
		}
		if visible && t.td != nil && !t.deliveryQueued {
			queued = true
			return enqueueDelivery(ctx, q, t.conv.ID, t.s.now())
		}
		return nil
	})
	if u != nil && res != nil {
		if err != nil {
			t.release(ctx, res)
		}
		t.res = nil
	}
	if err != nil {
		return nil, err
	}
	t.deliveryQueued = t.deliveryQueued || queued
	t.published(appended...)
	if t.td != nil && visible {
		if err := t.td.Flush(ctx); err != nil && ctx.Err() == nil {
			t.s.log.WarnContext(ctx, "delivering; the deliver item retries", "conversation_id", t.conv.ID, "error", redact.String(err.Error()))
		}
	}
	return appended, nil
}

// appendParams are the turn's appends, fenced by the lease it runs under
// (the worker that claimed the item): a turn whose lease was taken over
// gets store.ErrLeaseLost instead of writing after the new holder.
func (t *turn) appendParams(kind store.EntryKind, content any) *store.EntryAppendParams {
	return &store.EntryAppendParams{
		ConversationID: t.conv.ID, Kind: kind, Author: store.AgentAuthor(t.agent.Name), Content: mustJSON(content), TurnID: &t.item.ID,
		LeaseOwner: t.item.ClaimedBy, Now: t.s.now(),
	}
}

// published adds committed entries to the turn's view of the log and tells
// live viewers. Callers hold t.mu.
func (t *turn) published(es ...*store.Entry) {
	t.advanceSeen(es...)
	for _, e := range es {
		t.entries = append(t.entries, e)
		t.s.hub.Publish(Event{ConversationID: t.conv.ID, Kind: EventEntry, Entry: e, Agent: t.agent.Name})
	}
}

// append writes one finished entry to the log at once, publishes and
// delivers it.
func (t *turn) append(ctx context.Context, kind store.EntryKind, content any) (*store.Entry, error) {
	es, err := t.commit(ctx, nil, []pendingEntry{{kind, content}}, nil)
	if err != nil {
		return nil, err
	}
	return es[0], nil
}

// runCalls runs a model step's tool calls, concurrently, through the guard.
// It reports whether any call now waits for a person or a client.
func (t *turn) runCalls(ctx context.Context, calls []ToolCallContent) (bool, error) {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		waiting  bool
		firstErr error
	)
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := t.runCall(ctx, c)
			mu.Lock()
			defer mu.Unlock()
			waiting = waiting || w
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	return waiting, firstErr
}

// runCall guards and runs one call.
func (t *turn) runCall(ctx context.Context, c ToolCallContent) (bool, error) {
	tl, ok := t.tools[c.Name]
	if !ok {
		return false, t.record(ctx, c, tool.UnknownTool(c.Name), policyDenied)
	}
	if n := t.failedBefore(c); n >= maxSameFailures {
		t.stop(c, n)
		return false, t.record(ctx, c, repeatedFailure(c, n), verdict{DecidedBy: store.DecidedBySystem, Outcome: store.AuditCancelled})
	}
	decision := t.s.settings().policies.For(t.agent.Name, t.workspace).Decide(c.Name, tl.Risk(), t.meta.Context)
	switch decision {
	case tool.DecisionDeny:
		return false, t.record(ctx, c, tool.Result{
			Output: mustJSON(map[string]string{"error": "the policy does not allow " + c.Name + " here"}), IsError: true,
		}, policyDenied)
	case tool.DecisionConfirm:
		// A standing grant ("Always allow") answers for the person.
		g, err := t.granted(ctx, c)
		if err != nil {
			return false, err
		}
		if g != nil {
			return t.execute(ctx, c, tl, verdict{Decision: decisionGranted, DecidedBy: store.DecidedByGrant})
		}
		return true, t.ask(ctx, c, store.ApprovalConfirm, tl, &tool.Pause{Kind: tool.PauseConfirm, Prompt: "Allow " + c.Name + "?"}, string(decision))
	}
	return t.execute(ctx, c, tl, verdict{Decision: string(decision), DecidedBy: store.DecidedByPolicy})
}

// verdict is what the audit row of a call records besides the call: the
// guard's decision, who decided, and the outcome when it is not the
// result's own (ok or failed).
type verdict struct {
	Decision  string // "" keeps the row's
	DecidedBy string // "" keeps the row's
	Outcome   store.AuditOutcome
	// interrupted: an earlier run started the call and was cut off; its
	// marker ends as interrupted in the commit that records the result.
	interrupted bool
}

var policyDenied = verdict{Decision: string(tool.DecisionDeny), DecidedBy: store.DecidedByPolicy, Outcome: store.AuditDenied}

// execute runs an allowed call and records its result, or the pause it asks for.
//
// A durable executing marker goes down before the handler starts, so a call
// is started at most once: when the marker is already there (an earlier
// attempt or run of the turn started the call and never recorded it), the
// call is recorded as interrupted and not run again.
func (t *turn) execute(ctx context.Context, c ToolCallContent, tl *tool.Tool, v verdict) (bool, error) {
	started, err := t.s.st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{
		ConversationID: t.conv.ID, CallID: c.CallID, LeaseOwner: t.item.ClaimedBy, Now: t.s.now(),
	})
	if err != nil {
		return false, fmt.Errorf("marking %s call %s executing: %w", c.Name, c.CallID, err)
	}
	if !started.Started {
		// Whether it ran is unknown: audited as failed, and no notify line.
		// A marker still executing ends as interrupted with the result.
		v.Outcome = store.AuditFailed
		v.interrupted = started.Execution.State == store.ToolExecuting
		return false, t.record(ctx, c, interrupted(started.Execution), v)
	}
	t.status("is running " + c.Name + "…")
	t.task(c, TaskRunning, nil)
	callCtx, endTool := t.traceTool(ctx, c)
	res := tl.Call(callCtx, &tool.Request{
		CallID: c.CallID, ConversationID: t.conv.ID, Agent: t.agent.Name, AgentID: t.conv.AgentID,
		Context: t.meta.Context, Starter: t.meta.Starter, TurnID: t.item.ID,
		Speaker: t.speaker(ctx), WorkspaceID: t.workspaceID, Dir: t.dir,
	}, c.Input)
	endTool(res.IsError, ctx.Err())
	if ctx.Err() != nil {
		if res.IsError || res.Pause != nil {
			// Cut off while it ran: whether it finished is unknown. The
			// marker stays, and the resumed turn reports the interruption.
			return false, ctx.Err()
		}
		// It finished although the turn was cut off (a stop's deadline):
		// keep its result. The append is fenced by the lease, so this
		// writes nothing once another worker has taken the turn over.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := t.record(wctx, c, res, v); err != nil {
			t.s.log.WarnContext(ctx, "recording a call that finished as the turn was cut off", "call_id", c.CallID, "error", redact.String(err.Error()))
		} else {
			t.finished(wctx, c)
		}
		return false, ctx.Err()
	}
	if res.Pause != nil {
		t.finished(ctx, c)
		kind := store.ApprovalQuestion
		if res.Pause.Kind == tool.PauseFrontend {
			// A live client runs it and posts the result; nothing to ask.
			return true, t.audit(ctx, c, tl.Risk(), verdict{Decision: v.Decision, DecidedBy: v.DecidedBy, Outcome: store.AuditPending}, nil)
		}
		return true, t.ask(ctx, c, kind, tl, res.Pause, v.Decision)
	}
	if err := t.record(ctx, c, res, v); err != nil {
		return false, err
	}
	t.finished(ctx, c)
	t.ran(c, res)
	return false, nil
}

// decisionGranted is the audit decision of a call a standing grant let run.
const decisionGranted = "granted"

// finished marks a call's run over. The result in the log is what counts; the
// marker only tells a later attempt the handler returned, so a failure to
// write it is logged, not fatal.
func (t *turn) finished(ctx context.Context, c ToolCallContent) {
	if _, err := t.s.st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{
		ConversationID: t.conv.ID, CallID: c.CallID, Now: t.s.now(),
	}); err != nil && ctx.Err() == nil {
		t.s.log.WarnContext(ctx, "marking a tool call finished", "call_id", c.CallID, "error", redact.String(err.Error()))
	}
}

// interrupted is the result of a call an earlier run started and never
// recorded: the process died or the turn was cut off while it ran.
func interrupted(x *store.ToolExecution) tool.Result {
	msg := fmt.Sprintf("This call was interrupted: it started at %s, but the turn was cut off (a restart or a crash) before its result was recorded. "+
		"It may or may not have finished, and it was not run again. Check its effect before retrying it.",
		x.StartedAt.UTC().Format(time.RFC3339))
	return tool.Result{
		Output:  mustJSON(map[string]string{"error": msg}),
		IsError: true,
		Err:     errors.New("interrupted: started by an earlier run, result never recorded"),
	}
}

// record appends a call's result (and any card it produced) and audits it.
func (t *turn) record(ctx context.Context, c ToolCallContent, res tool.Result, v verdict) (err error) {
	content := ToolResultContent{CallID: c.CallID, Name: c.Name, Output: res.Output, IsError: res.IsError}
	if len(content.Output) == 0 {
		content.Output = json.RawMessage(`null`)
	}
	for _, a := range res.Attachments {
		if a.MimeType == CardMimeType {
			if _, err := t.append(ctx, store.EntryCard, CardContent{CallID: c.CallID, Card: a.Data, Text: cardText(a.Data, a.Title)}); err != nil {
				return err
			}
			continue
		}
		content.Attachments = append(content.Attachments, Attachment{Name: a.Name, MimeType: a.MimeType, Data: a.Data, Title: a.Title, Caption: a.Caption, Chart: a.Chart})
	}
	step := []pendingEntry{{store.EntryToolResult, content}}
	defer func() {
		if err == nil {
			st := TaskDone
			if res.IsError {
				st = TaskFailed
			}
			t.task(c, st, content.Output)
		}
	}()
	if v.Decision == string(tool.DecisionNotify) && v.Outcome == "" {
		// Notify: the conversation is told the call ran, as a line of its
		// own, committed with the result: a crash or a retried turn can
		// neither lose the line nor post it twice (the result is never
		// recorded again). A call with its outcome set by the caller
		// (interrupted, cancelled) ran, if at all, in an earlier run: no line.
		step = append(step, pendingEntry{store.EntrySystem, notice(c)})
	}
	var detail json.RawMessage
	if res.IsError && res.Err != nil {
		detail = mustJSON(map[string]string{"error": redact.String(res.Err.Error())})
	}
	if v.Outcome == "" {
		v.Outcome = store.AuditOK
		if res.IsError {
			v.Outcome = store.AuditFailed
		}
	}
	var risk tool.Risk
	if tl, ok := t.tools[c.Name]; ok {
		risk = tl.Risk()
	}
	// The call's audit row (and, with audit sinks, its deliveries) commits
	// with its result: a crash between the two left a result no row
	// recorded, and a later attempt, finding the result, never audits it.
	also := func(q store.Queries) error {
		if v.interrupted {
			if _, err := q.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{
				ConversationID: t.conv.ID, CallID: c.CallID, State: store.ToolInterrupted, Now: t.s.now(),
			}); err != nil {
				return fmt.Errorf("marking call %s interrupted: %w", c.CallID, err)
			}
		}
		if err := q.AuditRecord(ctx, t.auditRecord(c, risk, v, detail)); err != nil {
			return fmt.Errorf("auditing %s: %w", c.Name, err)
		}
		return nil
	}
	_, err = t.commitWith(ctx, nil, step, nil, also)
	return err
}

// ask persists a request to a person and leaves the call pending.
func (t *turn) ask(ctx context.Context, c ToolCallContent, kind store.ApprovalKind, tl *tool.Tool, p *tool.Pause, decision string) error {
	var deciders []string
	if starter := t.turnStarter(); starter != "" {
		deciders = []string{starter}
	}
	req := map[string]any{"prompt": p.Prompt, "choices": p.Choices, "tool": c.Name, "input": c.Input}
	if kind == store.ApprovalConfirm {
		req["choices"] = []string{ChoiceAllowOnce, ChoiceAlwaysAllow, ChoiceAlwaysAllowArgs, ChoiceDeny}
		req["agent"], req["workspace"] = t.agent.Name, t.workspace
		if t.s.settings().deciders == DecidersAdmins {
			// Admins decide: the rule is kept with the request, and Act asks
			// Admins at the click.
			req["deciders"], deciders = DecidersAdmins, nil
		}
	}
	now := t.s.now()
	// The prompt people answer is delivered like an entry: durably, with
	// the request.
	err := t.s.st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.ApprovalCreate(ctx, &store.ApprovalCreateParams{
			ConversationID: t.conv.ID, CallID: c.CallID, Tool: c.Name, Kind: kind, Risk: string(tl.Risk()),
			Request: mustJSON(req), Deciders: deciders, ExpiresAt: now.Add(t.s.settings().approvalTTL), Now: now,
		}); err != nil {
			return err
		}
		if t.td == nil {
			return nil
		}
		return enqueueDelivery(ctx, q, t.conv.ID, now)
	})
	if err != nil {
		return fmt.Errorf("asking for %s on %s: %w", kind, c.Name, err)
	}
	return t.audit(ctx, c, tl.Risk(), verdict{Decision: decision, Outcome: store.AuditPending}, nil)
}

// audit writes the call's one audit row, or updates it with what is known
// now (see store.AuditQueries.AuditRecord).
func (t *turn) audit(ctx context.Context, c ToolCallContent, risk tool.Risk, v verdict, detail json.RawMessage) error {
	if err := t.s.st.AuditRecord(ctx, t.auditRecord(c, risk, v, detail)); err != nil {
		return fmt.Errorf("auditing %s: %w", c.Name, err)
	}
	return nil
}

// auditRecord is the call's audit row as it stands with v.
func (t *turn) auditRecord(c ToolCallContent, risk tool.Risk, v verdict, detail json.RawMessage) *store.AuditRecord {
	conv := t.conv.ID
	return &store.AuditRecord{
		ConversationID: &conv, CallID: c.CallID, Agent: t.agent.Name, Actor: string(store.AgentAuthor(t.agent.Name)),
		Action: c.Name, Risk: string(risk), Decision: v.Decision, Outcome: v.Outcome, DecidedBy: v.DecidedBy,
		Detail: detail, CreatedAt: t.s.now(),
	}
}

// movedOn reports whether a person wrote after the newest pending call: the
// turn then answers them instead of waiting on.
func (t *turn) movedOn(pending map[string]pendingCall) bool {
	var last int64
	for _, p := range pending {
		last = max(last, p.Seq)
	}
	for i := len(t.entries) - 1; i >= 0; i-- {
		e := t.entries[i]
		if e.Seq == nil || *e.Seq <= last {
			return false
		}
		if e.Kind == store.EntryUser {
			return true
		}
	}
	return false
}

// closeMovedOn closes the calls a new message made moot: a question to the
// person and a frontend call get a result saying the person moved on (the
// question's request is closed too). An approval keeps waiting.
func (t *turn) closeMovedOn(ctx context.Context, pending map[string]pendingCall) error {
	calls := make([]pendingCall, 0, len(pending))
	for _, p := range pending {
		calls = append(calls, p)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].Seq < calls[j].Seq })
	for _, p := range calls {
		ap, err := t.s.st.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: t.conv.ID, CallID: p.CallID})
		switch {
		case errors.Is(err, store.ErrNotFound):
			tl, ok := t.s.opts.Registry.Get(p.Name)
			if !ok || tl.Tier() != tool.TierFrontend {
				continue // a server call: resolvePending runs it
			}
		case err != nil:
			return fmt.Errorf("finding approval for %s: %w", p.CallID, err)
		case ap.Kind != store.ApprovalQuestion || ap.Status != store.ApprovalPending:
			continue
		default:
			if _, err := t.s.st.ApprovalDecide(ctx, &store.ApprovalDecideParams{
				ID: ap.ID, Status: store.ApprovalDenied, Decision: movedOnResult, DecidedBy: "system", Now: t.s.now(),
			}); err != nil && !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("closing question %s: %w", p.CallID, err)
			}
		}
		if err := t.record(ctx, p.ToolCallContent, tool.Result{Output: movedOnResult, IsError: true},
			verdict{DecidedBy: store.DecidedBySystem, Outcome: store.AuditCancelled}); err != nil {
			return err
		}
	}
	return nil
}

// resolvePending settles calls left pending by an earlier turn: approved
// ones run now, expired ones fail, the rest keep waiting.
func (t *turn) resolvePending(ctx context.Context, pending map[string]pendingCall) (bool, error) {
	calls := make([]pendingCall, 0, len(pending))
	for _, p := range pending {
		calls = append(calls, p)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].Seq < calls[j].Seq })
	waiting := false
	for _, p := range calls {
		c := p.ToolCallContent
		tl, ok := t.tools[c.Name]
		if !ok {
			// Resolved by name: a tool gone since the call was made.
			if tl, ok = t.s.opts.Registry.Get(c.Name); !ok {
				if err := t.record(ctx, c, tool.UnknownTool(c.Name), policyDenied); err != nil {
					return false, err
				}
				continue
			}
		}
		ap, err := t.s.st.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: t.conv.ID, CallID: c.CallID})
		switch {
		case errors.Is(err, store.ErrNotFound):
			if tl.Tier() == tool.TierFrontend {
				// The client posts the result. A hand-over cut off before
				// its marker ended (the handler only hands the call over)
				// is ended now, so the call shows as the client's.
				if x, err := t.s.st.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: t.conv.ID, CallID: c.CallID}); err == nil && x.State == store.ToolExecuting {
					t.finished(ctx, c)
				}
				waiting = true
				continue
			}
			// A server call with no result and no request yet (a card's tool
			// button): it goes through the guard like any call.
			w, err := t.runCall(ctx, c)
			if err != nil {
				return false, err
			}
			waiting = waiting || w
		case err != nil:
			return false, fmt.Errorf("finding approval for %s: %w", c.CallID, err)
		case ap.Status == store.ApprovalPending && ap.ExpiresAt.After(t.s.now()):
			waiting = true
		case ap.Status == store.ApprovalPending, ap.Status == store.ApprovalExpired:
			expired := verdict{DecidedBy: store.DecidedBySystem, Outcome: store.AuditExpired}
			if err := t.record(ctx, c, tool.Result{Output: mustJSON(map[string]string{"error": "nobody answered in time"}), IsError: true}, expired); err != nil {
				return false, err
			}
		case ap.Status == store.ApprovalApproved && ap.Kind == store.ApprovalConfirm:
			// The person who approved it stays on the row as who decided.
			// A frontend tool's call is handed to the client: the turn
			// waits for it.
			w, err := t.execute(ctx, c, tl, verdict{Decision: string(tool.DecisionConfirm)})
			if err != nil {
				return false, err
			}
			waiting = waiting || w
		default:
			// Answered or denied: the decision appended the result already.
		}
	}
	return waiting, nil
}
