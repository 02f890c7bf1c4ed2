// Package deliver is the delivery stage: it shows what is written to a
// conversation's log on every platform the conversation is bound to.
//
// Delivery is durable and owned by the conversation's lease. Every commit
// that appends an entry people should see also enqueues a deliver work item
// (core.WorkDeliver); the turn that wrote the entry delivers it at once,
// under its lease, and the work item, claimed only after the turn lets the
// lease go, finishes whatever the turn could not (a platform error, a
// crash). A delivery records a post intent (the posted row, pending) before
// it calls the platform and the platform's message ids after, so an entry
// reaches a platform exactly once across crashes: Discord sends carry a
// nonce with enforce_nonce, and Slack messages carry the entry id in their
// metadata, looked up (bots.Finder) before an intent is posted again.
//
// One entry never holds up the rest. An entry the platform refuses for good
// (bots.ErrRefused: a scope the app lacks, a channel it is not in, a file
// too large) is recorded as undeliverable with the reason, in its posted
// row, before one short notice is posted in its place; the cursor then
// passes it, on every instance and after a restart. Other errors are
// retried by the deliver item.
//
// Live token deltas are never stored. They flow into one in-progress
// message per binding (bots.Stream); its platform message ids are recorded
// as they are made (core.LiveStream), so a retried model call resets the
// same message, and a later attempt, instance or delivery item takes over
// the message a dead one left and replaces it with the final entry: nothing
// is left cut or streaming. Only the entries of the turn that opened a live
// message finish it; a later turn never takes over an earlier turn's reply.
//
// A run's progress message is recorded the same way (core.RunMessage:
// an intent with a unique key before the first post, the message after),
// so a restart or another instance edits it instead of posting another
// (see ShowRun).
//
// State per conversation exists only while one of its turns runs on this
// instance (see Deliverer.OpenTurn); a quiet conversation costs no memory.
package deliver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/redact"
)

// Options configures a Deliverer.
type Options struct {
	// Store is where delivery keeps its records and reads what it shows;
	// a store.Store is one.
	Store    core.DeliveryStore
	Adapters []bots.Adapter
	// IdentityFunc gives the name and icon an agent posts with; nil posts
	// under the agent's name.
	IdentityFunc func(agent string) *bots.Identity
	Logger       *slog.Logger
	Now          func() time.Time
	// Observer is told of failed and retried deliveries, for metrics; nil
	// observes nothing.
	Observer Observer
	// LinkFunc gives the address people follow to read a conversation (a
	// side thread's, from its marker); nil or "" shows its id instead.
	LinkFunc func(conv uuid.UUID) string
	// SpeakReplyFunc speaks an agent's replies to a voice note, for the
	// platform to post with their text (see voice.go); nil posts text
	// alone.
	SpeakReplyFunc SpeakReplyFunc
}

// Observer is told how delivery goes. It is called inline: it must be quick.
type Observer interface {
	// DeliveryFailed: posting to a binding on platform failed; gone says
	// it failed for good (bots.ErrGone; or bots.ErrRefused, the entry
	// passed with a notice in its place), else the deliver item retries.
	DeliveryFailed(ctx context.Context, platform string, gone bool)
	// DeliveryRetried: a deliver item runs again after a failed attempt.
	DeliveryRetried(ctx context.Context)
}

type nopObserver struct{}

func (nopObserver) DeliveryFailed(context.Context, string, bool) {}
func (nopObserver) DeliveryRetried(context.Context)              {}

func (o *Options) validate() error {
	if o.Store == nil {
		return errors.New("deliver: Options.Store is required")
	}
	for i, a := range o.Adapters {
		if a == nil {
			return fmt.Errorf("deliver: Options.Adapters[%d] is nil", i)
		}
	}
	return nil
}

// Deliverer delivers conversations' entries to their platform bindings. It
// implements core.Deliverer for turns, and HandleDeliver for deliver work
// items.
type Deliverer struct {
	opts     Options
	st       core.DeliveryStore
	log      *slog.Logger
	adapters map[string]bots.Adapter
}

var _ core.Deliverer = (*Deliverer)(nil)

// New validates opts.
func New(opts Options) (*Deliverer, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	if opts.LinkFunc == nil {
		opts.LinkFunc = func(uuid.UUID) string { return "" }
	}
	if opts.IdentityFunc == nil {
		opts.IdentityFunc = func(agent string) *bots.Identity {
			if agent == "" {
				return nil
			}
			return &bots.Identity{Name: agent}
		}
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	d := &Deliverer{opts: opts, st: opts.Store, log: opts.Logger, adapters: map[string]bots.Adapter{}}
	for _, a := range opts.Adapters {
		d.adapters[a.Name()] = a
	}
	return d, nil
}

// bound is a binding whose platform runs in this process.
type bound struct {
	b  *core.Binding
	ad bots.Adapter
	to bots.Target
	// cardOnly is set in a briefing run's conversation
	// (core.ConversationMeta.CardOnly).
	cardOnly bool
}

// bindings lists conv's bindings that this process can deliver to.
func (d *Deliverer) bindings(ctx context.Context, conv *core.Conversation) ([]*bound, error) {
	bs, err := d.st.BindingListByConversation(ctx, conv.ID)
	if err != nil {
		return nil, fmt.Errorf("listing bindings of %s: %w", conv.ID, err)
	}
	meta, _ := core.DecodeConversationMeta(conv.Metadata)
	var out []*bound
	for _, b := range bs {
		ad, ok := d.adapters[b.Place.Platform]
		if !ok {
			continue // that platform does not run here (or is the scheduler's silent one)
		}
		to := targetOf(b)
		if to.UserID == "" {
			to.UserID = core.StarterOf(conv) // the person a reply is for
		}
		out = append(out, &bound{b: b, ad: ad, to: to, cardOnly: meta.CardOnly})
	}
	return out, nil
}

// HandleDeliver is the handler of core.DeliverArgs items (core.AddHandler):
// it delivers the conversation's undelivered entries and closes a live
// stream a dead turn left open. It runs under the conversation's lease, so
// no turn of the conversation runs meanwhile.
func (d *Deliverer) HandleDeliver(ctx context.Context, item *core.WorkItem, _ core.DeliverArgs) error {
	if item.ConversationID == nil {
		return fmt.Errorf("deliver item %s has no conversation", item.ID)
	}
	if item.Attempts > 1 {
		d.opts.Observer.DeliveryRetried(ctx)
	}
	return d.Flush(ctx, *item.ConversationID)
}

// Flush delivers a conversation's undelivered entries and pending prompts
// to every binding, outside any turn, and finishes a live stream that no
// turn owns any more.
func (d *Deliverer) Flush(ctx context.Context, convID uuid.UUID) error {
	conv, err := d.st.ConversationGet(ctx, convID)
	if err != nil {
		return fmt.Errorf("loading conversation %s: %w", convID, err)
	}
	bs, err := d.bindings(ctx, conv)
	if err != nil {
		return err
	}
	// A turn still to run takes a dead attempt's live stream over; only
	// when none is left is an orphaned stream closed here.
	turns, err := core.ReadTurnQueue(ctx, d.st, convID)
	if err != nil {
		return fmt.Errorf("looking for turns of %s: %w", convID, err)
	}
	var errs []error
	for _, b := range bs {
		if err := d.flushBinding(ctx, b, nil); err != nil {
			if errors.Is(err, bots.ErrGone) {
				// Retrying cannot help (the app was uninstalled there): the
				// item ends, and other bindings go on.
				d.log.ErrorContext(ctx, "not delivered, for good", "conversation_id", convID, "platform", b.b.Place.Platform,
					"workspace", b.b.Place.Workspace, "error", redact.String(err.Error()))
				continue
			}
			errs = append(errs, err)
			continue
		}
		if !turns.Empty() {
			continue
		}
		if err := d.closeOrphan(ctx, b); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// flushBinding posts the entries past the binding's cursor, then the
// prompts of calls waiting for a person. live is the binding's in-process
// stream of the running turn, or nil.
func (d *Deliverer) flushBinding(ctx context.Context, b *bound, live *liveStream) (err error) {
	defer func() {
		if err != nil && ctx.Err() == nil {
			d.opts.Observer.DeliveryFailed(ctx, b.b.Place.Platform, errors.Is(err, bots.ErrGone))
		}
	}()
	entries, err := d.st.EntryList(ctx, &core.EntryListParams{ConversationID: b.b.ConversationID, AfterSeq: b.b.DeliveredSeq, WithErrors: true})
	if err != nil {
		return fmt.Errorf("reading entries to deliver to %s: %w", b.b.Place.Platform, err)
	}
	for _, e := range entries {
		if err := d.deliverEntry(ctx, b, live, e); err != nil {
			return err
		}
		if e.Seq != nil && *e.Seq > b.b.DeliveredSeq {
			if _, err := d.st.BindingAdvance(ctx, &core.BindingAdvanceParams{ID: b.b.ID, DeliveredSeq: *e.Seq, Now: d.opts.Now()}); err != nil {
				return fmt.Errorf("advancing %s cursor: %w", b.b.Place.Platform, err)
			}
			b.b.DeliveredSeq = *e.Seq
		}
	}
	return d.promptPending(ctx, b)
}

// deliverEntry posts one entry unless it was posted before. An assistant
// reply or an error takes over the binding's live stream, if there is one:
// it replaces the streamed text in the same message.
func (d *Deliverer) deliverEntry(ctx context.Context, b *bound, live *liveStream, e *core.Entry) error {
	if e.Kind == core.EntrySideThread {
		msg, err := d.sideThreadMessage(ctx, e)
		if err != nil || msg == nil {
			return err
		}
		if err := d.post(ctx, b, e.ID, msg, nil, nil); err != nil {
			return err
		}
		return d.sideThreadOpened(ctx, b, e)
	}
	msg, err := render(e)
	if err != nil || msg == nil {
		return err
	}
	if msg.Card != nil {
		// A platform without modal windows asks a card's forms in text.
		if st := bots.CardFor(b.ad, msg.Card.Stamped); st != msg.Card.Stamped {
			msg.Card.Stamped, msg.Text = st, st.PlainText()
		}
	}
	if e.Kind == core.EntryAssistant && b.cardOnly {
		if quiet, err := d.cardOnlyQuiet(ctx, b.b.ConversationID, e.Seq); err != nil || quiet {
			return err
		}
	}
	switch e.Kind {
	case core.EntryAssistant:
		if c, err := core.Decode[core.AssistantContent](e); err == nil {
			msg.Identity = d.opts.IdentityFunc(c.Agent)
			if _, byAgent := e.Author.Agent(); byAgent {
				if err := d.withVoiceNote(ctx, b, e, c.Agent, c.Text, msg); err != nil {
					return err
				}
			}
		}
	case core.EntryCard, core.EntryToolResult:
		// A card or a chart an agent made goes out under its name too (on
		// Discord, through the agent's webhook like its text replies).
		if agent, ok := e.Author.Agent(); ok {
			msg.Identity = d.opts.IdentityFunc(agent)
		}
	}
	if e.Kind == core.EntryAssistant || e.Kind == core.EntryError {
		// It replaces its own turn's live message; a live message of
		// another turn is never taken over (it holds that turn's reply).
		return d.post(ctx, b, e.ID, msg, live, &replacing{turn: e.TurnID})
	}
	return d.post(ctx, b, e.ID, msg, nil, nil)
}

// replacing says which live stream a post replaces: the one of turn, if
// that turn's live message is open on the binding. A nil turn replaces
// none.
type replacing struct{ turn *uuid.UUID }

// cardOnlyQuiet reports whether the agent's text at seq (0: now) in a
// card-only conversation (a briefing run) stays in the log unposted: it
// does until a person has written in the conversation.
func (d *Deliverer) cardOnlyQuiet(ctx context.Context, conv uuid.UUID, seq *int64) (bool, error) {
	p := &core.EntryListParams{ConversationID: conv}
	if seq != nil {
		p.UpToSeq = *seq
	}
	entries, err := d.st.EntryList(ctx, p)
	if err != nil {
		return false, fmt.Errorf("reading %s for a person's message: %w", conv, err)
	}
	for _, e := range entries {
		if e.Kind == core.EntryUser {
			return false, nil
		}
	}
	return true, nil
}

// post delivers msg for the entry (or prompt) id exactly once on binding b:
// intent, platform call, record. replaces, when set, names the turn whose
// live message the post replaces. A post the platform refuses for good
// (bots.ErrRefused) is recorded as undeliverable and a notice is posted
// in its place: the entry is passed, and the entries after it go out.
func (d *Deliverer) post(ctx context.Context, b *bound, id uuid.UUID, msg *bots.Message, live *liveStream, replaces *replacing) error {
	msg.Key = id.String()
	prev, err := d.st.PostedGet(ctx, &core.PostedGetParams{BindingID: b.b.ID, EntryID: id})
	switch {
	case err == nil && !prev.Pending:
		return nil // posted before (or its notice)
	case err == nil && prev.Undeliverable != "":
		// Refused before: only its notice is left to post.
		return d.postNotice(ctx, b, id, msg, prev.Undeliverable, prev.MessageIDs, &prev.CreatedAt)
	case err != nil && !errors.Is(err, core.ErrNotFound):
		return fmt.Errorf("reading delivery of %s: %w", id, err)
	}
	var stream bots.Stream
	if replaces != nil {
		if stream, err = d.streamToFinish(ctx, b, live, replaces.turn); err != nil {
			return err
		}
	}
	if prev == nil {
		if err := d.st.PostedRecord(ctx, &core.Posted{BindingID: b.b.ID, EntryID: id, Pending: true, CreatedAt: d.opts.Now()}); err != nil {
			return fmt.Errorf("recording the intent to post %s: %w", id, err)
		}
	} else if stream == nil {
		// An intent with no outcome: the post may have reached the platform
		// before the process died. Look before posting again; a platform
		// without a Finder makes the post itself idempotent (a nonce).
		if f, ok := b.ad.(bots.Finder); ok {
			refs, err := f.FindPosted(ctx, b.to, msg.Key, prev.CreatedAt)
			if err != nil {
				return fmt.Errorf("looking for an earlier post of %s: %w", id, err)
			}
			if len(refs) > 0 {
				d.log.InfoContext(ctx, "found a post whose record was lost; not posting again", "entry_id", id, "platform", b.b.Place.Platform)
				return d.record(ctx, b, id, refs, false)
			}
		}
	}
	var refs []bots.MessageRef
	if stream != nil {
		refs, err = stream.Finish(ctx, msg)
		if live != nil && live.stream == stream {
			live.stream = nil
		}
	} else {
		refs, err = b.ad.Post(ctx, b.to, msg)
	}
	if re := (*bots.RefusedError)(nil); errors.As(err, &re) {
		return d.refused(ctx, b, id, msg, refs, re)
	}
	if err != nil {
		return fmt.Errorf("posting %s to %s: %w", id, b.b.Place.Platform, err)
	}
	if err := d.record(ctx, b, id, refs, stream != nil); err != nil {
		return err
	}
	d.anchorRun(ctx, b, refs)
	return nil
}

// refused records that the platform refused the entry (or prompt) id for
// good, then posts the notice that stands in its place. The record comes
// first and holds the reason, so every later attempt, on any instance,
// only posts the notice and never the entry again. shown are messages the
// post made before it was refused (the first parts of a long text).
func (d *Deliverer) refused(ctx context.Context, b *bound, id uuid.UUID, msg *bots.Message, shown []bots.MessageRef, re *bots.RefusedError) error {
	d.log.WarnContext(ctx, "not delivered: the platform refused it for good; a notice stands in its place",
		"entry_id", id, "platform", b.b.Place.Platform, "reason", re.Reason, "error", redact.String(re.Err.Error()))
	d.opts.Observer.DeliveryFailed(ctx, b.b.Place.Platform, true)
	now := d.opts.Now()
	partial := encodeRefs(shown)
	if err := d.st.PostedRecord(ctx, &core.Posted{BindingID: b.b.ID, EntryID: id, MessageIDs: partial, Pending: true, Undeliverable: re.Reason, CreatedAt: now}); err != nil {
		return fmt.Errorf("recording that %s was refused: %w", id, err)
	}
	return d.postNotice(ctx, b, id, msg, re.Reason, partial, nil)
}

// postNotice posts, once, the short notice in place of an entry the
// platform refused, and records it. lookSince, for a notice whose intent
// was recorded by an earlier attempt, is when: a platform with a Finder is
// asked first whether that attempt posted it. A notice the platform
// refuses too (the app cannot post here at all) is not retried: the entry
// is passed all the same, and the log says so.
func (d *Deliverer) postNotice(ctx context.Context, b *bound, id uuid.UUID, msg *bots.Message, reason string, partial []string, lookSince *time.Time) error {
	notice := &bots.Message{Text: noticeText(msg, reason), Key: uuid.NewSHA1(id, []byte("undeliverable")).String()}
	var refs []bots.MessageRef
	if f, ok := b.ad.(bots.Finder); ok && lookSince != nil {
		found, err := f.FindPosted(ctx, b.to, notice.Key, *lookSince)
		if err != nil {
			return fmt.Errorf("looking for an earlier notice in place of %s: %w", id, err)
		}
		refs = found
	}
	if len(refs) == 0 {
		var err error
		refs, err = b.ad.Post(ctx, b.to, notice)
		switch {
		case errors.Is(err, bots.ErrRefused):
			d.log.WarnContext(ctx, "the notice in place of a refused entry was refused too; passing the entry", "entry_id", id,
				"platform", b.b.Place.Platform, "error", redact.String(err.Error()))
			refs = nil
		case err != nil:
			return fmt.Errorf("posting the notice in place of %s to %s: %w", id, b.b.Place.Platform, err)
		}
	}
	ids := append(slices.Clone(partial), encodeRefs(refs)...)
	if err := d.st.PostedRecord(ctx, &core.Posted{BindingID: b.b.ID, EntryID: id, MessageIDs: ids, Undeliverable: reason, CreatedAt: d.opts.Now()}); err != nil {
		return fmt.Errorf("recording the notice in place of %s: %w", id, err)
	}
	return nil
}

// noticeText is the one line shown in place of msg, which the platform
// refused for reason.
func noticeText(msg *bots.Message, reason string) string {
	what := "A reply"
	switch {
	case len(msg.Files) > 1:
		what = "Files"
	case len(msg.Files) == 1:
		what = "A file"
	case msg.Card != nil:
		what = "A card"
	case len(msg.Buttons) > 0:
		what = "A question"
	}
	return fmt.Sprintf("⚠️ %s could not be posted here: %s.", what, strings.TrimSuffix(reason, "."))
}

// scheduledRun reports a run key of a scheduled occurrence (the schedule's
// id, a dash, its due time: routines, loops). Those runs find their
// conversation through their run record when a fire is retried, so their
// place may change. The posts the scheduler makes without a run (a
// reminder, a notice to an owner: "reminder-…") are made idempotent by
// their place alone, and keep it.
func scheduledRun(key string) bool {
	if len(key) < 38 || key[36] != '-' {
		return false
	}
	_, err := uuid.Parse(key[:36])
	return err == nil
}

// anchorRun makes a scheduled run's place the thread under the run's first
// post, where the platform threads replies under a message: a reply there
// then reaches the run's conversation (core finds the thread bound) and the
// agent answers it without a mention, in the thread. A failure only leaves
// the run where it was.
func (d *Deliverer) anchorRun(ctx context.Context, b *bound, refs []bots.MessageRef) {
	p := b.b.Place
	ts, ok := b.ad.(bots.ThreadStarter)
	if !ok || !scheduledRun(p.Run) || p.Thread != "" || len(refs) == 0 {
		return
	}
	channel, thread := ts.ThreadOf(refs[0])
	if channel == "" || thread == "" {
		return
	}
	to := core.Place{Platform: p.Platform, Workspace: p.Workspace, Channel: channel, Thread: thread}
	moved, err := d.st.BindingRelocate(ctx, &core.BindingRelocateParams{ID: b.b.ID, Place: to, Now: d.opts.Now()})
	if err != nil {
		d.log.WarnContext(ctx, "binding a run to the thread under its post", "binding_id", b.b.ID, "place", to.String(), "error", err)
		return
	}
	b.b, b.to = moved, targetOf(moved)
}

// streamToFinish is the live stream an entry of turn replaces: the
// running turn's, else one a dead attempt of that turn recorded (taken
// over). The live message of any other turn is left alone: it holds that
// turn's reply, which must stay whole.
func (d *Deliverer) streamToFinish(ctx context.Context, b *bound, live *liveStream, turn *uuid.UUID) (bots.Stream, error) {
	if turn == nil {
		return nil, nil
	}
	if live != nil && live.stream != nil && live.turn == *turn {
		return live.stream, nil
	}
	return d.resume(ctx, b, turn)
}

// resume takes over the live stream recorded for b, or returns nil. With
// owner set, only a stream of that turn is taken over; a stream of another
// turn stays recorded, for its own entries to finish.
func (d *Deliverer) resume(ctx context.Context, b *bound, owner *uuid.UUID) (bots.Stream, error) {
	rec, err := d.st.LiveStreamGet(ctx, b.b.ID)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the live stream of %s: %w", b.b.Place.Platform, err)
	}
	if owner != nil && rec.TurnID != nil && *rec.TurnID != *owner {
		return nil, nil
	}
	refs := decodeRefs(rec.MessageIDs)
	if len(refs) == 0 {
		// The stream was about to start when its process died: whether the
		// platform made its message is not known. Look for it.
		if f, ok := b.ad.(bots.StreamFinder); ok {
			if refs, err = f.FindStream(ctx, b.to, rec.UpdatedAt); err != nil {
				return nil, fmt.Errorf("looking for a live stream on %s: %w", b.b.Place.Platform, err)
			}
		}
	}
	if len(refs) == 0 && rec.TurnID != nil {
		// A platform whose stream messages are idempotent: a stream with
		// the dead one's key gets its message back, if it was made.
		if st, ok := b.ad.(bots.Streamer); ok {
			if _, finds := b.ad.(bots.StreamFinder); !finds {
				s, err := st.StartStream(ctx, b.to, nil)
				if err != nil {
					return nil, fmt.Errorf("taking over the live stream on %s: %w", b.b.Place.Platform, err)
				}
				if k, ok := s.(bots.StreamKeyer); ok {
					key, err := d.streamKeyOf(ctx, b, *rec.TurnID)
					if err != nil {
						return nil, fmt.Errorf("taking over the live stream on %s: %w", b.b.Place.Platform, err)
					}
					k.SetKey(key)
					return s, nil
				}
			}
		}
	}
	r, ok := b.ad.(bots.StreamResumer)
	if !ok || len(refs) == 0 {
		// Nothing to take over here: forget it.
		return nil, d.st.LiveStreamDelete(ctx, b.b.ID)
	}
	s, err := r.ResumeStream(ctx, b.to, refs, nil)
	if err != nil {
		return nil, fmt.Errorf("taking over the live stream on %s: %w", b.b.Place.Platform, err)
	}
	if k, ok := s.(bots.StreamKeyer); ok && rec.TurnID != nil {
		if key, err := d.streamKeyOf(ctx, b, *rec.TurnID); err == nil {
			k.SetKey(key)
		}
	}
	return s, nil
}

// closeOrphan finishes a live stream that no turn owns any more (its turn
// died and nothing replaced it): the streamed text is cut, so it is
// replaced by a short notice rather than left half-written and open.
func (d *Deliverer) closeOrphan(ctx context.Context, b *bound) error {
	s, err := d.resume(ctx, b, nil)
	if err != nil || s == nil {
		return err
	}
	return d.closeInterrupted(ctx, b, s)
}

// closeInterrupted replaces a live stream whose text never became an entry
// with the interruption notice, closes it, and forgets its record.
func (d *Deliverer) closeInterrupted(ctx context.Context, b *bound, s bots.Stream) error {
	if _, err := s.Finish(ctx, &bots.Message{Text: interruptedText}); err != nil {
		return fmt.Errorf("closing an interrupted live stream on %s: %w", b.b.Place.Platform, err)
	}
	return d.st.LiveStreamDelete(ctx, b.b.ID)
}

// interruptedText replaces a reply that was cut off and not retried.
const interruptedText = "⚠️ This reply was interrupted."

// record stores the messages a post became; a finished stream's record is
// forgotten in the same transaction.
func (d *Deliverer) record(ctx context.Context, b *bound, id uuid.UUID, refs []bots.MessageRef, finishedStream bool) error {
	return core.RecordPost(ctx, d.st, &core.Posted{BindingID: b.b.ID, EntryID: id, MessageIDs: encodeRefs(refs), CreatedAt: d.opts.Now()}, finishedStream)
}

// promptPending posts the buttons of every request to a person that has not
// been shown on this binding yet. It reads the approvals table, not the log.
func (d *Deliverer) promptPending(ctx context.Context, b *bound) error {
	aps, err := d.st.ApprovalListPending(ctx, b.b.ConversationID)
	if err != nil {
		return fmt.Errorf("listing pending approvals: %w", err)
	}
	for _, ap := range aps {
		msg, err := PromptMessage(ap)
		if err != nil {
			return err
		}
		// Keyed by the approval: one prompt per request, however often a
		// flush runs.
		if err := d.post(ctx, b, ap.ID, msg, nil, nil); err != nil {
			return fmt.Errorf("posting prompt for %s: %w", ap.Tool, err)
		}
	}
	return nil
}

// PromptMessage renders an approval request as a message with buttons. A
// button's ActionID names the approval (core.ApprovalActionID); its Value is
// the choice's index, so it fits every platform's limits.
func PromptMessage(ap *core.Approval) (*bots.Message, error) {
	var req struct {
		Prompt  string          `json:"prompt"`
		Choices []string        `json:"choices"`
		Tool    string          `json:"tool"`
		Input   json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(ap.Request, &req); err != nil {
		return nil, fmt.Errorf("decoding approval %s: %w", ap.ID, err)
	}
	m := &bots.Message{Text: req.Prompt}
	if ap.Kind == core.ApprovalConfirm {
		m.Text = fmt.Sprintf("**Approval needed:** run `%s` with `%s`?", req.Tool, string(req.Input))
		// Always allow makes a standing grant for this agent and tool in
		// this workspace, for any arguments or only these.
		m.Buttons = []bots.Button{
			{ActionID: core.ApprovalActionID(ap.ID), Value: core.ChoiceAllowOnce, Label: "Allow once", Style: "primary"},
			{ActionID: core.ApprovalActionID(ap.ID), Value: core.ChoiceAlwaysAllow, Label: "Always allow"},
			{ActionID: core.ApprovalActionID(ap.ID), Value: core.ChoiceAlwaysAllowArgs, Label: "Always allow these arguments"},
			{ActionID: core.ApprovalActionID(ap.ID), Value: core.ChoiceDeny, Label: "Deny", Style: "danger"},
		}
		return m, nil
	}
	for i, ch := range req.Choices {
		m.Buttons = append(m.Buttons, bots.Button{ActionID: core.ApprovalActionID(ap.ID), Value: strconv.Itoa(i), Label: ch})
	}
	return m, nil
}

// render turns an entry into what people see, or nil for entries that are
// not shown (user messages are already there; tool calls and plain results
// are the agent's business; interim notices are for the log).
func render(e *core.Entry) (*bots.Message, error) {
	switch e.Kind {
	case core.EntryAssistant:
		c, err := core.Decode[core.AssistantContent](e)
		if err != nil || c.Text == "" {
			return nil, err
		}
		_, byAgent := e.Author.Agent()
		m := &bots.Message{Text: c.Text, Feedback: byAgent && len(c.Buttons) == 0, Markdown: byAgent}
		for _, b := range c.Buttons {
			m.Buttons = append(m.Buttons, bots.Button{ActionID: b.ActionID, Value: b.Value, Label: b.Label, Style: b.Style})
		}
		return m, nil
	case core.EntryToolResult:
		c, err := core.Decode[core.ToolResultContent](e)
		if err != nil || len(c.Attachments) == 0 {
			return nil, err
		}
		m := &bots.Message{}
		for _, a := range c.Attachments {
			m.Files = append(m.Files, bots.File{Name: a.Name, MimeType: a.MimeType, Data: a.Data, Title: a.Title, Caption: a.Caption, Chart: a.Chart})
		}
		return m, nil
	case core.EntryCard:
		c, err := core.Decode[core.CardContent](e)
		if err != nil {
			return nil, err
		}
		var st cards.Stamped
		if err := json.Unmarshal(c.Card, &st); err != nil {
			return nil, fmt.Errorf("decoding card %s: %w", e.ID, err)
		}
		return &bots.Message{Card: &bots.Card{EntryID: e.ID, Stamped: &st}, Text: st.PlainText()}, nil
	case core.EntrySystem:
		c, err := core.Decode[core.SystemContent](e)
		if err != nil || !c.Notice {
			return nil, err
		}
		return &bots.Message{Text: "ℹ️ " + redact.String(c.Text)}, nil
	case core.EntryError:
		c, err := core.Decode[core.ErrorContent](e)
		if err != nil || c.Interim {
			return nil, err
		}
		return &bots.Message{Text: "⚠️ " + redact.String(c.Message)}, nil
	}
	return nil, nil
}

// targetOf is where a binding's messages go: its place, less the Run that
// only makes a routine run's binding unique.
func targetOf(b *core.Binding) bots.Target {
	p := b.Place
	return bots.Target{Platform: p.Platform, Workspace: p.Workspace, Channel: p.Channel, Thread: p.Thread, UserID: p.User}
}

func encodeRefs(refs []bots.MessageRef) []string {
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		ids = append(ids, r.Channel+"/"+r.ID)
	}
	return ids
}

func decodeRefs(ids []string) []bots.MessageRef {
	refs := make([]bots.MessageRef, 0, len(ids))
	for _, id := range ids {
		ch, msg, ok := strings.Cut(id, "/")
		if !ok {
			continue
		}
		refs = append(refs, bots.MessageRef{Channel: ch, ID: msg})
	}
	return refs
}
