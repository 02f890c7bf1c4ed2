package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/store"
)

// Long conversations. The log is never cut; what the model is sent is. A
// turn sends the latest summary entry and the entries after the seq it
// covers, so a conversation of 10,000 entries reads one summary and a tail,
// not 10,000 rows (and before its first summary, a window of its newest
// entries: window.go):
//
//	log:    1 … 480 │ 481 … 530 │ 531 summary(through 480) │ 532 … 560
//	sent:           summary ───► 481 … 530, 532 … 560 (the summary entry itself is not history)
//
// When a turn ends with its context (that summary and those entries, in
// estimated tokens) over the agent's context.summarize_at, it queues a
// WorkSummarize item for the conversation, unless one is queued already:
// at most one waits per conversation. The item runs under the
// conversation's lease like a turn (never beside one), asks the agent's
// model (or context.summary_model) to fold the previous summary and the
// entries before a cut into a new summary, and appends it. The cut keeps
// the newest context.keep_recent tokens verbatim, falls just before a
// person's message and never separates a tool call from its result (nor
// passes a call still waiting for one).
//
// The item is upkeep and runs behind turns, so under a steady stream of
// messages it may not run before the next turn does. A turn therefore
// checks the context before each model call: past summaryLimit (the budget
// and a fifth) it writes the summary itself, under the lease it holds, and
// only then calls the model. Should that fail, or find no place to cut,
// the call is sent the newest entries that fit the limit (tailWindow):
// a request's history never grows past the budget by more than a fifth.
//
// What happens on failure: a model or store error fails the item, which
// is retried with backoff; the conversation meanwhile goes on with the
// context it had, just longer, up to the limit. Nothing is written until
// the summary is whole (one entry and its usage rows in one commit), so a
// crash costs the rounds of the item it cut off, never a half summary. A
// turn that ends over the budget with no item queued queues another; one
// that finds the context back under the budget does nothing.

// WorkSummarize summarises a conversation's context (Service.RunSummarize).
const WorkSummarize = "summarize"

// SummarizeArgs are the args of a WorkSummarize item.
type SummarizeArgs struct {
	// AtSeq is the conversation's last seq when the summary was asked
	// for; with the conversation it names the request (its unique key).
	AtSeq int64 `json:"at_seq"`
}

// Kind is WorkSummarize.
func (SummarizeArgs) Kind() string { return WorkSummarize }

// summarizePriority runs summaries after the turns and deliveries waiting
// beside them: people are not kept waiting for upkeep.
const summarizePriority = -1

// maxSummaryRounds bounds one item's work: a conversation summarised for
// the first time when it is already far over the budget catches up in
// rounds of at most summarize_at tokens each, and an item that reaches the
// bound queues a follow-up for the rest.
const maxSummaryRounds = 32

// summaryMaxTokens bounds the summary the model writes.
const summaryMaxTokens = 2048

// modelLog is what a turn sends the model of the log: the latest summary
// (nil: none yet) and the entries after the seq it covers, or the newest
// of them (partial; see window.go).
type modelLog struct {
	summary    *SummaryContent
	summarySeq int64
	entries    []*store.Entry
	weights    []int // entryTokens of each entry, once weighed
	// partial: entries start after entries of the log past the summary
	// that were not read (a window of a long backlog). A summary written
	// from it would cover them unread.
	partial bool
}

// loadModelLog reads the model's view of a conversation's log: one index
// probe for the latest summary, then the entries after what it covers, w's
// worth of the newest of them (all of them for a zero w).
func loadModelLog(ctx context.Context, q store.Queries, conv *store.Conversation, w logWindow) (*modelLog, error) {
	e, err := q.EntryLatestSummary(ctx, conv.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		e = nil
	case err != nil:
		return nil, fmt.Errorf("finding the latest summary of %s: %w", conv.ID, err)
	}
	return loadModelLogAfter(ctx, q, conv, w, e)
}

// loadModelLogAfter is loadModelLog from the latest summary e read
// already (nil: the conversation has none).
func loadModelLogAfter(ctx context.Context, q store.Queries, conv *store.Conversation, w logWindow, e *store.Entry) (*modelLog, error) {
	ml := &modelLog{}
	var err error
	if e != nil {
		c, err := Decode[SummaryContent](e)
		if err != nil {
			return nil, err
		}
		ml.summary, ml.summarySeq = &c, e.SeqValue()
	}
	var after int64
	if ml.summary != nil {
		after = ml.summary.ThroughSeq
	}
	if w.read > 0 {
		return ml, ml.readWindow(ctx, q, conv, after, w)
	}
	ml.entries, err = q.EntryList(ctx, &store.EntryListParams{ConversationID: conv.ID, AfterSeq: after})
	if err != nil {
		return nil, fmt.Errorf("loading the log of %s after seq %d: %w", conv.ID, after, err)
	}
	return ml, nil
}

// weigh estimates each entry's tokens, once.
func (ml *modelLog) weigh() []int {
	if len(ml.weights) != len(ml.entries) {
		ml.weights = make([]int, len(ml.entries))
		for i, e := range ml.entries {
			ml.weights[i] = entryTokens(e)
		}
	}
	return ml.weights
}

// tokens estimates what ml costs in the prompt.
func (ml *modelLog) tokens() int {
	n := summaryTokens(ml.summary)
	for _, w := range ml.weigh() {
		n += w
	}
	return n
}

// Token estimates. Both providers' tokenizers average about four
// characters a token over English prose and JSON; the estimate decides
// when to summarise, where being a tenth off costs nothing.
const (
	charsPerToken  = 4
	tokensPerEntry = 4 // the message and block framing around each entry
)

func estimate(chars int) int { return chars / charsPerToken }

// EstimateTokens is the service's estimate of what text costs in a
// prompt, the one context.summarize_at is measured in; each message or
// block adds TokensPerEntry for its framing.
func EstimateTokens(text string) int { return estimate(len(text)) }

// TokensPerEntry is the framing EstimateTokens adds per message.
const TokensPerEntry = tokensPerEntry

func summaryTokens(s *SummaryContent) int {
	if s == nil {
		return 0
	}
	return estimate(len(s.Text)) + 2*tokensPerEntry
}

// entryTokens estimates what an entry adds to the prompt: what buildRequest
// sends of it, not its stored JSON (attachments and ids are not sent).
func entryTokens(e *store.Entry) int {
	switch e.Kind {
	case store.EntryUser:
		c, err := Decode[UserContent](e)
		if err != nil {
			break
		}
		return estimate(len(c.Text)+len(c.UserName)+3) + tokensPerEntry
	case store.EntryAssistant:
		c, err := Decode[AssistantContent](e)
		if err != nil {
			break
		}
		n := len(c.Text)
		for _, th := range c.Thinking {
			n += len(th.Text) + len(th.Signature)
		}
		return estimate(n) + tokensPerEntry
	case store.EntryToolCall:
		c, err := Decode[ToolCallContent](e)
		if err != nil {
			break
		}
		return estimate(len(c.Name)+len(c.Input)+len(c.CallID)) + tokensPerEntry
	case store.EntryToolResult:
		c, err := Decode[ToolResultContent](e)
		if err != nil {
			break
		}
		return estimate(len(c.Output)+len(c.CallID)) + tokensPerEntry
	case store.EntrySystem:
		c, err := Decode[SystemContent](e)
		if err != nil || c.Notice {
			return 0
		}
		return estimate(len(c.Text)+9) + tokensPerEntry
	case store.EntryAction:
		return estimate(len(e.Content)) + tokensPerEntry
	default:
		// Cards, errors and summaries are not history.
		return 0
	}
	return estimate(len(e.Content)) + tokensPerEntry
}

// cutPoint picks where a summary ends: the entries before the returned
// index are summarised, the rest stay verbatim. 0 means there is no place
// to cut. A cut lies just before a person's message (or click), so the
// kept history starts with one, and only where every tool call before it
// has its result before it too: a call is never sent without its result,
// nor a result without its call, and a call still waiting for a person
// keeps everything from it on.
//
// The cut keeps as much as fits in keepRecent tokens (else as little as a
// cut allows), and summarises at most maxChunk tokens at once when a cut
// exists within that; the caller summarises again for the rest.
func cutPoint(entries []*store.Entry, tokens []int, keepRecent, maxChunk int) int {
	n := len(entries)
	prefix := make([]int, n+1)
	for i, t := range tokens {
		prefix[i+1] = prefix[i] + t
	}
	var valid []int
	open := map[string]bool{}
	for c := 1; c < n; c++ {
		switch e := entries[c-1]; e.Kind {
		case store.EntryToolCall:
			if tc, err := Decode[ToolCallContent](e); err == nil {
				open[tc.CallID] = true
			}
		case store.EntryToolResult:
			if tr, err := Decode[ToolResultContent](e); err == nil {
				delete(open, tr.CallID)
			}
		}
		if k := entries[c].Kind; len(open) == 0 && (k == store.EntryUser || k == store.EntryAction) {
			valid = append(valid, c)
		}
	}
	if len(valid) == 0 {
		return 0
	}
	target := valid[len(valid)-1]
	for _, c := range valid {
		if prefix[n]-prefix[c] <= keepRecent {
			target = c
			break
		}
	}
	if prefix[target] <= maxChunk {
		return target
	}
	best := valid[0]
	for _, c := range valid {
		if c <= target && prefix[c] <= maxChunk {
			best = c
		}
	}
	return best
}

// summaryLimit is how far past the budget a request's history may grow
// while the queued summary has not run: a fifth. Past it the turn
// summarises before its model call (turn.request).
func summaryLimit(summarizeAt int) int { return summarizeAt + summarizeAt/5 }

// askSummary queues a summary when the turn's context ended over the
// agent's budget. A failure to queue costs nothing but a longer context:
// the next turn asks again, and summarises itself past the limit.
func (t *turn) askSummary(ctx context.Context) {
	at, _, ok := t.agent.Context.Budget()
	if !ok {
		return
	}
	t.mu.Lock()
	ml := &modelLog{summary: t.summary, entries: t.entries}
	// A partial view left a backlog unread: only a summary brings it in.
	over, last := ml.tokens() > at || t.partial, lastSeq(t.entries) // the view is not in seq order after a gap (seen.go)
	t.mu.Unlock()
	if !over {
		return
	}
	key := fmt.Sprintf("%s:%s:%d", WorkSummarize, t.conv.ID, last)
	if err := t.s.queueSummary(ctx, t.conv, last, key); err != nil && ctx.Err() == nil {
		t.s.log.WarnContext(ctx, "queueing a summary; the next turn asks again", "conversation_id", t.conv.ID, "error", redact.String(err.Error()))
	}
}

// queueSummary queues a summary of conv unless one is queued already: one
// item catches up with whatever the log holds when it runs, so a second
// would only wait behind it and find nothing to do. Every caller holds the
// conversation's lease (a turn, or the summary item itself), which orders
// the check before the insert; key makes a repeated request (a retried
// attempt) return the first item.
func (s *Service) queueSummary(ctx context.Context, conv *store.Conversation, atSeq int64, key string) error {
	queued, err := s.st.WorkList(ctx, &store.WorkListParams{
		States: []store.WorkState{store.WorkAvailable}, Kind: WorkSummarize, ConversationID: &conv.ID, Limit: 1,
	})
	if err != nil {
		return fmt.Errorf("finding the queued summary of %s: %w", conv.ID, err)
	}
	if len(queued) > 0 {
		return nil
	}
	_, err = Enqueue(ctx, s.st, SummarizeArgs{AtSeq: atSeq}, &EnqueueOpts{
		ConversationID: &conv.ID, AgentID: conv.AgentID, Priority: summarizePriority, UniqueKey: &key, Now: s.now(),
	})
	return err
}

// RunSummarize summarises a conversation whose context passed its agent's
// budget; it is the handler of SummarizeArgs (AddHandler). It runs under
// the conversation's lease. A context far over the budget is folded in
// rounds of at most summarize_at tokens, in memory; the item then appends
// one summary entry (fenced by the lease) with the usage of every round, so
// a catch-up does not fill the log's tail with summaries.
func (s *Service) RunSummarize(ctx context.Context, item *store.WorkItem, _ SummarizeArgs) error {
	if item.ConversationID == nil {
		return fmt.Errorf("summary item %s has no conversation", item.ID)
	}
	conv, err := s.st.ConversationGet(ctx, *item.ConversationID)
	if err != nil {
		return fmt.Errorf("loading conversation for summary %s: %w", item.ID, err)
	}
	ag := s.agentOf(conv)
	if _, _, ok := ag.Context.Budget(); !ok {
		return nil
	}
	// The whole backlog: the rounds fold it from its oldest entry.
	ml, err := loadModelLog(ctx, s.st, conv, logWindow{})
	if err != nil {
		return err
	}
	_, e, more, err := s.summarize(ctx, &summaryJob{conv: conv, agent: ag, turnID: item.ID, owner: item.ClaimedBy}, ml)
	if err != nil || !more {
		return err
	}
	// Still over after the rounds one item may take: a follow-up item goes
	// on from the summary just written (after this one lets the lease go).
	key := fmt.Sprintf("%s:%s:after:%d", WorkSummarize, conv.ID, e.SeqValue())
	if err := s.queueSummary(ctx, conv, e.SeqValue(), key); err != nil {
		return fmt.Errorf("queueing the rest of the summary of %s: %w", conv.ID, err)
	}
	return nil
}

// summaryJob is who summarises: the conversation and agent, the work item
// (a summary item or the turn summarising before its model call) whose id
// the entry and the usage carry, and the lease that fences the append.
type summaryJob struct {
	conv   *store.Conversation
	agent  *config.Agent
	turnID uuid.UUID
	owner  string
	// extra are the tokens of the context outside ml that stay verbatim
	// whatever the cut (a turn's own entries after one it has not read).
	extra int
}

// summarize folds ml in rounds while it is over the agent's budget and
// appends the summary, in one commit with the usage of every round. It
// returns the model's view after it (ml itself when nothing was written),
// the summary entry (nil: none), and whether the context is still over
// the budget after the rounds one call may take.
func (s *Service) summarize(ctx context.Context, job *summaryJob, ml *modelLog) (*modelLog, *store.Entry, bool, error) {
	conv, ag := job.conv, job.agent
	at, keep, ok := ag.Context.Budget()
	if !ok {
		return ml, nil, false, nil
	}
	before, previous := ml.tokens(), ml.summarySeq
	var (
		usage  []*store.Usage
		from   int64
		rounds int
	)
	cur := ml
	for ; rounds < maxSummaryRounds && cur.tokens()+job.extra > at; rounds++ {
		next, u, err := s.summarizeRound(ctx, job.turnID, conv, ag, cur, max(0, keep-job.extra), at)
		if err != nil {
			return ml, nil, false, err
		}
		if next == nil {
			break
		}
		if from == 0 {
			from = next.summary.FromSeq
		}
		usage, cur = append(usage, u), next
	}
	if len(usage) == 0 {
		return ml, nil, false, nil
	}
	sc := *cur.summary
	sc.FromSeq, sc.Previous = from, previous
	sc.Tokens = before - (cur.tokens() - summaryTokens(cur.summary))
	var res *store.EntryAppendResult
	turnID := job.turnID
	err := s.st.InTx(ctx, func(q store.Queries) error {
		for _, u := range usage {
			if err := q.UsageRecord(ctx, u); err != nil {
				return fmt.Errorf("recording the summary's usage: %w", err)
			}
			if err := s.chargeAfter(ctx, q, ag.Name, u); err != nil {
				return err
			}
		}
		var err error
		res, err = q.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: conv.ID, Kind: store.EntrySummary, Author: store.SystemAuthor, Content: mustJSON(sc),
			TurnID: &turnID, LeaseOwner: job.owner, Now: s.now(),
		})
		return err
	})
	if err != nil {
		return ml, nil, false, fmt.Errorf("appending the summary of %s through seq %d: %w", conv.ID, sc.ThroughSeq, err)
	}
	s.log.InfoContext(ctx, "summarised", "conversation_id", conv.ID, "from_seq", sc.FromSeq, "through_seq", sc.ThroughSeq,
		"rounds", len(usage), "replaced_tokens", sc.Tokens, "summary_tokens", summaryTokens(&sc))
	s.hub.Publish(Event{ConversationID: conv.ID, Kind: EventEntry, Entry: res.Entry, Agent: ag.Name})
	cur.summary, cur.summarySeq = &sc, res.Entry.SeqValue()
	more := rounds >= maxSummaryRounds && cur.tokens()+job.extra > at
	return cur, res.Entry, more, nil
}

// summarizeRound asks the model to fold ml's summary and its entries up to
// a cut into a new summary, and returns the model's view after it (the new
// summary, in memory, and the entries from the cut on) with the call's
// usage; nil when there is no place to cut.
func (s *Service) summarizeRound(ctx context.Context, turnID uuid.UUID, conv *store.Conversation, ag *config.Agent, ml *modelLog, keep, maxChunk int) (*modelLog, *store.Usage, error) {
	weights := ml.weigh()
	cut := cutPoint(ml.entries, weights, keep, maxChunk)
	if cut == 0 {
		s.log.InfoContext(ctx, "the context is over its budget but has no place to cut yet", "conversation_id", conv.ID)
		return nil, nil, nil
	}
	part := ml.entries[:cut]
	spec, backend, err := s.summaryBackend(ag)
	if err != nil {
		return nil, nil, err
	}
	var names map[store.Identity]string
	if s.opts.People != nil {
		names = s.opts.People.speakerNames(ctx, part)
	}
	resp, err := backend.Generate(ctx, summaryRequest(ag, spec, ml.summary, part, names), func(model.Event) {})
	if err != nil {
		return nil, nil, fmt.Errorf("summarising %s with %s: %w", conv.ID, spec, redact.Error(err))
	}
	var text strings.Builder
	for _, p := range resp.Parts {
		if p.Kind == model.PartText {
			text.WriteString(p.Text)
		}
	}
	if strings.TrimSpace(text.String()) == "" {
		return nil, nil, fmt.Errorf("summarising %s with %s: the model wrote no summary", conv.ID, spec)
	}
	sc := &SummaryContent{
		Text: strings.TrimSpace(text.String()), FromSeq: part[0].SeqValue(), ThroughSeq: part[len(part)-1].SeqValue(), Model: spec.String(),
	}
	next := &modelLog{summary: sc, summarySeq: ml.summarySeq, entries: ml.entries[cut:], weights: weights[cut:]}
	return next, s.usageOf(conv, &turnID, spec, resp, s.now()), nil
}

// summaryBackend is the backend that writes an agent's summaries: its
// context.summary_model, else its own model.
func (s *Service) summaryBackend(a *config.Agent) (model.Spec, model.Backend, error) {
	if a.Context.SummaryModel == "" || a.Context.SummaryModel == a.Model {
		spec, err := model.ParseSpec(a.Model)
		if err != nil {
			return model.Spec{}, nil, fmt.Errorf("agent %q: model %q: %w", a.Name, a.Model, err)
		}
		b, err := s.backendFor(a)
		return spec, b, err
	}
	spec, err := model.ParseSpec(a.Context.SummaryModel)
	if err != nil {
		return model.Spec{}, nil, fmt.Errorf("agent %q: context.summary_model %q: %w", a.Name, a.Context.SummaryModel, err)
	}
	sa := *a
	sa.Name, sa.Model = a.Name+"#summary", a.Context.SummaryModel
	if own, _ := model.ParseSpec(a.Model); own.Provider != spec.Provider {
		// Another provider: its own key variable and endpoint.
		sa.APIKeyEnv, sa.BaseURL = "", ""
	}
	b, err := s.backendFor(&sa)
	return spec, b, err
}

// summaryInstructions is the summariser's system prompt.
const summaryInstructions = `You keep the running summary of a chat conversation between people and an AI agent. The summary replaces the older messages in the agent's context, so the agent relies on it to go on as if it remembered them.

Keep: facts, figures, names and who said what; decisions and their reasons; what people asked for, prefer or told the agent not to do; open questions and promises not yet kept; what the agent did with its tools and the results that still matter. Drop greetings, chit-chat and anything later messages made moot.

Write in the conversation's language, in the third person, as short Markdown bullet points grouped under a few headings, newest state of each matter only. Never invent anything. Answer with the summary alone.`

// summaryRequest asks the model for a new summary: the previous one folded
// together with the entries after it, as a plain transcript (no tool blocks,
// so the request needs no tool schemas).
func summaryRequest(a *config.Agent, spec model.Spec, prev *SummaryContent, part []*store.Entry, names map[store.Identity]string) *model.Request {
	var b strings.Builder
	if prev != nil {
		fmt.Fprintf(&b, "The summary so far (through message %d):\n\n%s\n\n", prev.ThroughSeq, prev.Text)
	}
	fmt.Fprintf(&b, "The messages after it, %d to %d (the agent is %s):\n\n", part[0].SeqValue(), part[len(part)-1].SeqValue(), a.Name)
	b.WriteString(transcript(a.Name, part, names))
	b.WriteString("\nWrite the updated summary of the whole conversation so far.")
	return &model.Request{
		Model:     spec.Model,
		MaxTokens: summaryMaxTokens,
		System:    []model.SystemBlock{{Text: summaryInstructions}},
		Messages:  []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Kind: model.PartText, Text: b.String()}}}},
	}
}

// transcriptLimit shortens a tool's input or output in the transcript:
// what matters of a long result is in the agent's reply to it.
const transcriptLimit = 1500

// transcript renders entries as the lines the summariser reads.
func transcript(agentName string, entries []*store.Entry, names map[store.Identity]string) string {
	var b strings.Builder
	for _, e := range entries {
		switch e.Kind {
		case store.EntryUser:
			if c, err := Decode[UserContent](e); err == nil {
				fmt.Fprintf(&b, "[%s] %s\n", speakerName(c, names), c.Text)
			}
		case store.EntryAssistant:
			if c, err := Decode[AssistantContent](e); err == nil && c.Text != "" {
				fmt.Fprintf(&b, "%s: %s\n", agentName, c.Text)
			}
		case store.EntryToolCall:
			if c, err := Decode[ToolCallContent](e); err == nil {
				fmt.Fprintf(&b, "%s called %s %s\n", agentName, c.Name, clip(string(c.Input)))
			}
		case store.EntryToolResult:
			if c, err := Decode[ToolResultContent](e); err == nil {
				verb := "returned"
				if c.IsError {
					verb = "failed"
				}
				fmt.Fprintf(&b, "  %s %s: %s\n", c.Name, verb, clip(string(c.Output)))
			}
		case store.EntryAction:
			if c, err := Decode[ActionContent](e); err == nil {
				if len(c.Values) > 0 {
					fmt.Fprintf(&b, "[%s] filled in the form of %q: %s\n", cmp.Or(c.UserName, c.UserID), c.ActionID, clip(string(c.Values)))
				} else {
					fmt.Fprintf(&b, "[%s] clicked %q (value %q)\n", cmp.Or(c.UserName, c.UserID), c.ActionID, c.Value)
				}
			}
		case store.EntrySystem:
			if c, err := Decode[SystemContent](e); err == nil && !c.Notice {
				fmt.Fprintf(&b, "[system] %s\n", c.Text)
			}
		}
	}
	return b.String()
}

func clip(s string) string {
	if len(s) <= transcriptLimit {
		return s
	}
	cut := transcriptLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more characters)", len(s)-cut)
}

// request builds the turn's next model request. Past summaryLimit (the
// history, the summary and the per-turn block, which the request carries
// besides the log) the summary the queue has not written yet is written
// here, under the turn's lease, before the call; should that fail or find
// no place to cut, the call gets the newest entries that fit the limit
// (tailWindow), and the turn's view stays whole for the next try. Only a
// lost lease or the turn's end stop the turn.
func (t *turn) request(ctx context.Context) (*model.Request, error) {
	build := func(history []*store.Entry) (*model.Request, error) {
		req, err := buildRequest(t.agent, t.meta.Context, t.stable, t.list, t.summary, history, t.names, t.s.now())
		if err != nil {
			return nil, fmt.Errorf("building prompt: %w", err)
		}
		withSkillIndex(req, t.skillIndex)
		req.Turn = withMemory(req.Turn, t.memory)
		req.Dir = t.dir
		return req, nil
	}
	t.mu.Lock()
	entries := t.entries
	t.mu.Unlock()
	req, err := build(entries)
	at, _, ok := t.agent.Context.Budget()
	if err != nil || !ok {
		return req, err
	}
	limit := summaryLimit(at)
	if promptTokens(req, t.summary) <= limit {
		return req, nil
	}
	perTurn := estimate(len(req.Turn))
	// A partial view is not summarised here: the summary would cover the
	// entries before it unread. The item askSummary queues reads them.
	if t.partial {
		t.s.log.InfoContext(ctx, "the newest entries of a long log are over the limit; this call sends those that fit",
			"conversation_id", t.conv.ID)
	} else if err := t.summarize(ctx, perTurn); err != nil {
		if ctx.Err() != nil || errors.Is(err, store.ErrLeaseLost) {
			return nil, err
		}
		t.s.log.WarnContext(ctx, "summarising before the model call; this call sends the newest entries only",
			"conversation_id", t.conv.ID, "error", redact.String(err.Error()))
	}
	t.mu.Lock()
	entries = t.entries
	t.mu.Unlock()
	if req, err = build(entries); err != nil {
		return nil, err
	}
	n := promptTokens(req, t.summary)
	if n <= limit {
		return req, nil
	}
	// No summary brought it under: the newest entries that fit, the room
	// narrowed by what the estimate of the entries missed.
	room, window := limit-perTurn-summaryTokens(t.summary), entries
	for tries := 0; n > limit && tries < 4; tries++ {
		window = tailWindow(entries, room)
		if req, err = build(window); err != nil {
			return nil, err
		}
		over := promptTokens(req, t.summary) - limit
		n, room = limit+over, room-max(over, 1)
	}
	t.s.log.WarnContext(ctx, "the context is over its limit without a summary; this call sends the newest entries only",
		"conversation_id", t.conv.ID, "tokens", n, "limit", limit, "entries", len(window), "of", len(entries))
	return req, nil
}

// promptTokens estimates the context a request carries besides the
// stable block and the tools: the summary, the history and the per-turn
// block, as sent. It is what summaryLimit bounds.
func promptTokens(req *model.Request, summary *SummaryContent) int {
	n := estimate(len(req.Turn))
	if summary != nil {
		n += estimate(len(summaryBlock(summary))) + tokensPerEntry
	}
	for _, m := range req.Messages {
		n += tokensPerEntry
		for _, p := range m.Parts {
			n += estimate(len(p.Text)) + estimate(len(p.Input)) + estimate(len(p.Output))
		}
	}
	return n
}

// summarize writes the conversation's summary from the turn's own view,
// as a summary item would from the log: only the entries through t.seen
// may be covered (one that landed meanwhile is not in the view, and a
// summary past it would hide it from the model); the turn's appends after
// a gap stay verbatim, and perTurn tokens of the request are not the log's.
// The view then holds the summary and what follows it.
func (t *turn) summarize(ctx context.Context, perTurn int) error {
	t.mu.Lock()
	var read []*store.Entry
	extra := perTurn
	for _, e := range t.entries {
		if e.Seq != nil && *e.Seq <= t.seen {
			read = append(read, e)
		} else {
			extra += entryTokens(e)
		}
	}
	slices.SortStableFunc(read, func(a, b *store.Entry) int { return cmp.Compare(a.SeqValue(), b.SeqValue()) })
	ml := &modelLog{summary: t.summary, summarySeq: t.summarySeq, entries: read}
	t.mu.Unlock()

	next, e, _, err := t.s.summarize(ctx, &summaryJob{conv: t.conv, agent: t.agent, turnID: t.item.ID, owner: t.item.ClaimedBy, extra: extra}, ml)
	if err != nil || e == nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	through := next.summary.ThroughSeq
	kept := make([]*store.Entry, 0, len(t.entries)-len(read)+len(next.entries)+1)
	for _, e := range t.entries {
		if e.Seq == nil || *e.Seq > through {
			kept = append(kept, e)
		}
	}
	t.entries = append(kept, e)
	t.summary, t.summarySeq = next.summary, next.summarySeq
	t.advanceSeen(e)
	return nil
}

// tailWindow is the newest part of entries that fits in limit tokens,
// starting where a summary could cut (before a person's message, no call
// parted from its result), else at any entry that parts no call from its
// result; the smallest such part when none fits. It is what a model call
// is sent when the context is over its limit and no summary could be
// written, and what a turn keeps of a long log before its first summary
// (window.go): the older entries are left out of the view, not of the log.
// A call without a result keeps everything from it on, and a part never
// starts before a result whose call is not in entries (a read that began
// between the two).
func tailWindow(entries []*store.Entry, limit int) []*store.Entry {
	n := len(entries)
	// over: every part from an index at or before it weighs more than
	// limit. The entries are weighed from the newest back only that far:
	// a long read of which little fits decodes little.
	over, weight := -1, 0
	for i := n - 1; i >= 0; i-- {
		if weight += entryTokens(entries[i]); weight > limit {
			over = i
			break
		}
	}
	// closed[c]: no call before c has its result at or after c (or none),
	// and no result at or after c lacks its call.
	closed := make([]bool, n)
	open, called := map[string]bool{}, map[string]bool{}
	orphan := -1 // the last result whose call is not in entries
	for c := range n {
		closed[c] = len(open) == 0
		switch e := entries[c]; e.Kind {
		case store.EntryToolCall:
			if tc, err := Decode[ToolCallContent](e); err == nil {
				open[tc.CallID], called[tc.CallID] = true, true
			}
		case store.EntryToolResult:
			if tr, err := Decode[ToolResultContent](e); err == nil {
				if !called[tr.CallID] {
					orphan = c
				}
				delete(open, tr.CallID)
			}
		}
	}
	for c := 0; c <= orphan; c++ {
		closed[c] = false
	}
	// pick is the first cut ok allows that fits, and the last it allows.
	pick := func(ok func(c int) bool) (fit, last int) {
		fit, last = -1, -1
		for c := range n {
			if !closed[c] || !ok(c) {
				continue
			}
			if fit < 0 && c > over {
				fit = c
			}
			last = c
		}
		return fit, last
	}
	c, _ := pick(func(c int) bool { k := entries[c].Kind; return k == store.EntryUser || k == store.EntryAction })
	if c < 0 {
		fit, last := pick(func(int) bool { return true })
		c = max(fit, 0)
		if fit < 0 {
			c = max(last, 0)
		}
	}
	return entries[c:]
}
