package bots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/store"
)

// WorkDeliver is the work kind that delivers a conversation's undelivered
// entries outside a turn (after a restart, for entries written by the
// scheduler, for command replies). Its payload is empty; the conversation is
// the item's.
const WorkDeliver = core.WorkDeliver

// RouterOptions configures a Router.
type RouterOptions struct {
	Store    store.Store
	Hub      *core.Hub
	Adapters []Adapter
	// IdentityFunc gives the name and icon an agent posts with; nil posts
	// under the agent's name.
	IdentityFunc func(agent string) *Identity
	Logger       *slog.Logger
	Now          func() time.Time
}

// Router delivers a conversation's entries to every platform binding it has.
// Each binding keeps a delivered cursor; delivery reads entries past it and
// records the platform's message ids per entry, so an entry is posted once
// and live streams are replaced by their final entry.
//
// Delivery is driven by the turn's live events on the instance that runs the
// turn (which holds the conversation's lease, so two instances never deliver
// one conversation at once) and, outside turns, by "deliver" work items.
type Router struct {
	opts     RouterOptions
	log      *slog.Logger
	adapters map[string]Adapter

	mu    sync.Mutex
	convs map[uuid.UUID]*convDelivery

	cancel context.CancelFunc
	done   chan struct{}
}

// convDelivery serialises one conversation's delivery.
type convDelivery struct {
	events  chan core.Event
	streams map[uuid.UUID]*liveStream // by binding
	// bindings is read at turn start and on each entry, not for every delta.
	bindings []*store.Binding
	loaded   bool
}

type liveStream struct {
	stream Stream
	text   string
	failed bool
}

// NewRouter validates opts.
func NewRouter(opts RouterOptions) (*Router, error) {
	if opts.Store == nil || opts.Hub == nil {
		return nil, errors.New("bots: RouterOptions.Store and Hub are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IdentityFunc == nil {
		opts.IdentityFunc = func(agent string) *Identity {
			if agent == "" {
				return nil
			}
			return &Identity{Name: agent}
		}
	}
	r := &Router{opts: opts, log: opts.Logger, adapters: map[string]Adapter{}, convs: map[uuid.UUID]*convDelivery{}}
	for _, a := range opts.Adapters {
		r.adapters[a.Name()] = a
	}
	return r, nil
}

// Start follows the hub until Stop.
func (r *Router) Start(ctx context.Context) error {
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	events, unsubscribe := r.opts.Hub.Subscribe(uuid.Nil, 4096)
	go func() {
		defer close(r.done)
		defer unsubscribe()
		var wg sync.WaitGroup
		defer wg.Wait()
		for {
			select {
			case <-ctx.Done():
				r.mu.Lock()
				for _, c := range r.convs {
					close(c.events)
				}
				r.convs = map[uuid.UUID]*convDelivery{}
				r.mu.Unlock()
				return
			case ev := <-events:
				r.mu.Lock()
				c, ok := r.convs[ev.ConversationID]
				if !ok {
					c = &convDelivery{events: make(chan core.Event, 1024), streams: map[uuid.UUID]*liveStream{}}
					r.convs[ev.ConversationID] = c
					wg.Add(1)
					go func(id uuid.UUID) {
						defer wg.Done()
						r.follow(ctx, id, c)
					}(ev.ConversationID)
				}
				r.mu.Unlock()
				select {
				case c.events <- ev:
				default:
					// Too far behind: the next entry or turn end flushes from the log.
				}
			}
		}
	}()
	return nil
}

// Stop ends delivery; entries not yet delivered go out with the next turn or
// deliver item.
func (r *Router) Stop() {
	if r.cancel != nil {
		r.cancel()
		<-r.done
	}
}

// follow handles one conversation's events in order. It ends when the turn
// ends and nothing more arrives for a while.
func (r *Router) follow(ctx context.Context, conv uuid.UUID, c *convDelivery) {
	idle := time.NewTimer(time.Minute)
	defer idle.Stop()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return
			}
			r.handle(ctx, conv, c, ev)
			idle.Reset(time.Minute)
		case <-idle.C:
			r.mu.Lock()
			if len(c.events) == 0 {
				delete(r.convs, conv)
				r.mu.Unlock()
				return
			}
			r.mu.Unlock()
		}
	}
}

func (r *Router) handle(ctx context.Context, conv uuid.UUID, c *convDelivery, ev core.Event) {
	switch ev.Kind {
	case core.EventTurnStart, core.EventEntry, core.EventTurnEnd:
		c.loaded = false // a binding may have been added since
	}
	if !c.loaded {
		bindings, err := r.opts.Store.BindingListByConversation(ctx, conv)
		if err != nil {
			r.log.ErrorContext(ctx, "listing bindings", "conversation_id", conv, "error", redact.String(err.Error()))
			return
		}
		c.bindings, c.loaded = bindings, true
	}
	bindings := c.bindings
	if len(bindings) == 0 {
		return
	}
	switch ev.Kind {
	case core.EventTurnStart:
		r.status(ctx, bindings, "is thinking…")
	case core.EventStatus:
		r.status(ctx, bindings, ev.Text)
	case core.EventDelta:
		for _, b := range bindings {
			r.streamDelta(ctx, c, b, ev)
		}
	case core.EventRestart:
		for _, b := range bindings {
			if ls := c.streams[b.ID]; ls != nil {
				ls.text = ""
			}
		}
	case core.EventEntry:
		if err := r.flush(ctx, conv, c); err != nil {
			r.log.WarnContext(ctx, "delivering", "conversation_id", conv, "error", redact.String(err.Error()))
		}
	case core.EventTurnEnd:
		if err := r.flush(ctx, conv, c); err != nil {
			// Nothing live will try again: leave it to a durable deliver
			// item, retried with backoff by whichever worker claims it.
			r.log.ErrorContext(ctx, "delivering at turn end; queueing a retry", "conversation_id", conv, "error", redact.String(err.Error()))
			if _, qerr := r.opts.Store.WorkEnqueue(ctx, &store.WorkEnqueueParams{
				Kind: WorkDeliver, ConversationID: &conv, RunAt: r.opts.Now().Add(5 * time.Second), Now: r.opts.Now(),
			}); qerr != nil {
				r.log.ErrorContext(ctx, "queueing a delivery retry", "conversation_id", conv, "error", redact.String(qerr.Error()))
			}
		}
		r.status(ctx, bindings, "")
	}
}

func (r *Router) status(ctx context.Context, bindings []*store.Binding, text string) {
	for _, b := range bindings {
		if s, ok := r.adapters[b.Platform].(StatusSetter); ok {
			if err := s.SetStatus(ctx, targetOf(b), text); err != nil {
				r.log.DebugContext(ctx, "setting status", "platform", b.Platform, "error", redact.String(err.Error()))
			}
		}
	}
}

func (r *Router) streamDelta(ctx context.Context, c *convDelivery, b *store.Binding, ev core.Event) {
	st, ok := r.adapters[b.Platform].(Streamer)
	if !ok {
		return
	}
	ls := c.streams[b.ID]
	if ls == nil {
		ls = &liveStream{}
		c.streams[b.ID] = ls
		to := targetOf(b)
		if conv, err := r.opts.Store.ConversationGet(ctx, b.ConversationID); err == nil && to.UserID == "" {
			to.UserID = core.StarterOf(conv) // the person the reply is for
		}
		s, err := st.StartStream(ctx, to, r.opts.IdentityFunc(ev.Agent))
		if err != nil {
			r.log.WarnContext(ctx, "starting stream", "platform", b.Platform, "error", redact.String(err.Error()))
			ls.failed = true
			return
		}
		ls.stream = s
	}
	if ls.failed {
		return
	}
	ls.text += ev.Text
	if err := ls.stream.Append(ctx, ev.Text); err != nil {
		r.log.WarnContext(ctx, "streaming", "platform", b.Platform, "error", redact.String(err.Error()))
		ls.failed = true
	}
}

// Flush delivers a conversation's undelivered entries; the deliver work
// handler and tests call it directly.
func (r *Router) Flush(ctx context.Context, conv uuid.UUID) error {
	return r.flush(ctx, conv, &convDelivery{streams: map[uuid.UUID]*liveStream{}})
}

// HandleDeliver is the HandlerFunc of WorkDeliver items.
func (r *Router) HandleDeliver(ctx context.Context, item *store.WorkItem) error {
	if item.ConversationID == nil {
		return fmt.Errorf("deliver item %s has no conversation", item.ID)
	}
	return r.Flush(ctx, *item.ConversationID)
}

func (r *Router) flush(ctx context.Context, conv uuid.UUID, c *convDelivery) error {
	bindings, err := r.opts.Store.BindingListByConversation(ctx, conv)
	if err != nil {
		return fmt.Errorf("listing bindings: %w", err)
	}
	for _, b := range bindings {
		ad, ok := r.adapters[b.Platform]
		if !ok {
			continue // that platform is not running in this process
		}
		if err := r.flushBinding(ctx, ad, b, c); err != nil {
			return fmt.Errorf("delivering to %s: %w", b.Platform, err)
		}
	}
	return nil
}

func (r *Router) flushBinding(ctx context.Context, ad Adapter, b *store.Binding, c *convDelivery) error {
	entries, err := r.opts.Store.EntryList(ctx, &store.EntryListParams{ConversationID: b.ConversationID, AfterSeq: b.DeliveredSeq, WithErrors: true})
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := r.deliverEntry(ctx, ad, b, c, e); err != nil {
			return err
		}
		if e.Seq != nil {
			if _, err := r.opts.Store.BindingAdvance(ctx, &store.BindingAdvanceParams{ID: b.ID, DeliveredSeq: *e.Seq, Now: r.opts.Now()}); err != nil {
				return fmt.Errorf("advancing cursor: %w", err)
			}
		}
	}
	return r.promptPending(ctx, ad, b)
}

// deliverEntry posts one entry unless it was posted before.
func (r *Router) deliverEntry(ctx context.Context, ad Adapter, b *store.Binding, c *convDelivery, e *store.Entry) error {
	msg, err := render(e)
	if err != nil || msg == nil {
		return err
	}
	if e.Kind == store.EntryAssistant {
		if c, err := core.Decode[core.AssistantContent](e); err == nil {
			msg.Identity = r.opts.IdentityFunc(c.Agent)
		}
	}
	if _, err := r.opts.Store.PostedGet(ctx, b.ID, e.ID); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var refs []MessageRef
	if ls := c.streams[b.ID]; ls != nil && ls.stream != nil && !ls.failed && e.Kind == store.EntryAssistant {
		refs, err = ls.stream.Finish(ctx, msg)
		delete(c.streams, b.ID)
	} else {
		refs, err = ad.Post(ctx, targetOf(b), msg)
	}
	if err != nil {
		return fmt.Errorf("posting %s entry %s: %w", e.Kind, e.ID, err)
	}
	return r.record(ctx, b, e.ID, refs)
}

func (r *Router) record(ctx context.Context, b *store.Binding, entry uuid.UUID, refs []MessageRef) error {
	ids := make([]string, 0, len(refs))
	for _, ref := range refs {
		ids = append(ids, ref.Channel+"/"+ref.ID)
	}
	if err := r.opts.Store.PostedRecord(ctx, &store.Posted{BindingID: b.ID, EntryID: entry, MessageIDs: ids, CreatedAt: r.opts.Now()}); err != nil {
		return fmt.Errorf("recording posted entry %s: %w", entry, err)
	}
	return nil
}

// promptPending posts the buttons of every call that waits for a person and
// has not been shown on this binding yet.
func (r *Router) promptPending(ctx context.Context, ad Adapter, b *store.Binding) error {
	entries, err := r.opts.Store.EntryList(ctx, &store.EntryListParams{ConversationID: b.ConversationID})
	if err != nil {
		return err
	}
	answered := map[string]bool{}
	for _, e := range entries {
		if e.Kind == store.EntryToolResult {
			c, err := core.Decode[core.ToolResultContent](e)
			if err == nil {
				answered[c.CallID] = true
			}
		}
	}
	for _, e := range entries {
		if e.Kind != store.EntryToolCall {
			continue
		}
		call, err := core.Decode[core.ToolCallContent](e)
		if err != nil || answered[call.CallID] {
			continue
		}
		ap, err := r.opts.Store.ApprovalFindByCall(ctx, b.ConversationID, call.CallID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if ap.Status != store.ApprovalPending {
			continue
		}
		if _, err := r.opts.Store.PostedGet(ctx, b.ID, e.ID); err == nil {
			continue
		}
		msg, err := PromptMessage(ap)
		if err != nil {
			return err
		}
		refs, err := ad.Post(ctx, targetOf(b), msg)
		if err != nil {
			return fmt.Errorf("posting prompt for %s: %w", call.Name, err)
		}
		if err := r.record(ctx, b, e.ID, refs); err != nil {
			return err
		}
	}
	return nil
}

// PromptMessage renders an approval request as a message with buttons. A
// button's ActionID names the approval (core.ApprovalActionID); its Value is
// the choice's index, so it fits every platform's limits.
func PromptMessage(ap *store.Approval) (*Message, error) {
	var req struct {
		Prompt  string          `json:"prompt"`
		Choices []string        `json:"choices"`
		Tool    string          `json:"tool"`
		Input   json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(ap.Request, &req); err != nil {
		return nil, fmt.Errorf("decoding approval %s: %w", ap.ID, err)
	}
	m := &Message{Text: req.Prompt}
	if ap.Kind == store.ApprovalConfirm {
		m.Text = fmt.Sprintf("**Approval needed:** run `%s` with `%s`?", req.Tool, string(req.Input))
		m.Buttons = []Button{
			{ActionID: core.ApprovalActionID(ap.ID), Value: "approve", Label: "Approve", Style: "primary"},
			{ActionID: core.ApprovalActionID(ap.ID), Value: "deny", Label: "Deny", Style: "danger"},
		}
		return m, nil
	}
	for i, ch := range req.Choices {
		m.Buttons = append(m.Buttons, Button{ActionID: core.ApprovalActionID(ap.ID), Value: strconv.Itoa(i), Label: ch})
	}
	return m, nil
}

// render turns an entry into what people see, or nil for entries that are
// not shown (user messages are already there; tool calls and plain results
// are the agent's business).
func render(e *store.Entry) (*Message, error) {
	switch e.Kind {
	case store.EntryAssistant:
		c, err := core.Decode[core.AssistantContent](e)
		if err != nil || c.Text == "" {
			return nil, err
		}
		return &Message{Text: c.Text}, nil
	case store.EntryToolResult:
		c, err := core.Decode[core.ToolResultContent](e)
		if err != nil || len(c.Attachments) == 0 {
			return nil, err
		}
		m := &Message{}
		for _, a := range c.Attachments {
			m.Files = append(m.Files, File{Name: a.Name, MimeType: a.MimeType, Data: a.Data, Title: a.Title})
		}
		return m, nil
	case store.EntryCard:
		c, err := core.Decode[core.CardContent](e)
		if err != nil {
			return nil, err
		}
		var st cards.Stamped
		if err := json.Unmarshal(c.Card, &st); err != nil {
			return nil, fmt.Errorf("decoding card %s: %w", e.ID, err)
		}
		return &Message{Card: &Card{EntryID: e.ID, Stamped: &st}, Text: st.PlainText()}, nil
	case store.EntryError:
		c, err := core.Decode[core.ErrorContent](e)
		if err != nil || c.Interim {
			return nil, err
		}
		return &Message{Text: "⚠️ " + c.Message}, nil
	}
	return nil, nil
}

// targetOf is where a binding's messages go. Two conventions of core.Start
// are resolved here: a Channel "user:<id>" is a DM to that person, and a
// Thread part "run:<id>" only makes a routine run's binding unique; it is
// not a platform thread.
func targetOf(b *store.Binding) Target {
	t := Target{Platform: b.Platform, Workspace: b.Workspace, Channel: b.Channel, Thread: b.Thread}
	if user, ok := strings.CutPrefix(t.Channel, "user:"); ok {
		t.Channel, t.UserID = "", user
	}
	if thread, _, ok := strings.Cut(t.Thread, "|run:"); ok {
		t.Thread = thread
	} else if strings.HasPrefix(t.Thread, "run:") {
		t.Thread = ""
	}
	return t
}
