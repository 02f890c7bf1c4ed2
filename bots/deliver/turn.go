package deliver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/redact"
)

// eventBuffer bounds the live events queued for one turn. A turn never
// waits on a platform for a delta: when the queue is full a delta is
// dropped, and the final entry replaces whatever the stream showed.
const eventBuffer = 512

type eventKind int

const (
	evStatus eventKind = iota
	evDelta
	evReset
	evFlush
	evClose
	evTask
)

type event struct {
	kind        eventKind
	text        string
	interrupted bool
	task        core.TaskUpdate
	ctx         context.Context
	done        chan error
}

// liveStream is one binding's in-progress reply during a turn.
type liveStream struct {
	stream bots.Stream
	turn   uuid.UUID // the turn whose reply it shows
	failed bool      // the platform refused to stream: the entry is posted instead
	saved  []string  // the refs last recorded in the store
	// text is what the stream has shown since it (re)started, so a turn
	// a person stopped keeps it.
	text strings.Builder
	// prefix opens the stream, and opens it again after a reset: the
	// quote of the voice note the reply answers (voice.go).
	prefix string
}

// turnDelivery delivers one running turn. Its goroutine handles the turn's
// events in order, so a flush never overtakes the deltas before it; it ends
// at Close, and nothing of the conversation stays in memory after.
type turnDelivery struct {
	d      *Deliverer
	conv   *core.Conversation
	turnID uuid.UUID
	agent  string
	// retry is set on a later attempt of the turn; queuedAt is when the
	// turn was queued: nothing of the bot's in the thread after it belongs
	// to another turn.
	retry    bool
	queuedAt time.Time
	// trigger is the seq of the entry the turn answers (0 when unknown).
	trigger int64
	bound   []*bound
	live    map[uuid.UUID]*liveStream // by binding

	events chan event
	done   chan struct{}

	// quiet shows nothing live (no status, no stream): a briefing run
	// before a person wrote in it.
	quiet bool
}

// OpenTurn implements core.Deliverer. It returns nil when the conversation
// has no binding on a platform running here.
func (d *Deliverer) OpenTurn(ctx context.Context, conv *core.Conversation, item *core.WorkItem, agent string) (core.TurnDelivery, error) {
	bs, err := d.bindings(ctx, conv)
	if err != nil || len(bs) == 0 {
		return nil, err
	}
	quiet := false
	if bs[0].cardOnly {
		// A briefing run shows nothing live until a person writes in it:
		// only its entries are delivered, and of those its card.
		if quiet, err = d.cardOnlyQuiet(ctx, conv.ID, nil); err != nil {
			return nil, err
		}
	}
	t := &turnDelivery{
		quiet: quiet,
		d:     d, conv: conv, turnID: item.ID, agent: agent, bound: bs,
		retry: item.Attempts > 1, queuedAt: item.CreatedAt,
		trigger: triggerOf(item),
		live:    map[uuid.UUID]*liveStream{},
		events:  make(chan event, eventBuffer),
		done:    make(chan struct{}),
	}
	go t.loop(ctx)
	return t, nil
}

// Status implements core.TurnDelivery.
func (t *turnDelivery) Status(text string) { t.send(event{kind: evStatus, text: text}) }

// Delta implements core.TurnDelivery.
func (t *turnDelivery) Delta(text string) { t.send(event{kind: evDelta, text: text}) }

// Reset implements core.TurnDelivery.
func (t *turnDelivery) Reset() { t.send(event{kind: evReset}) }

// Task implements core.TaskReporter.
func (t *turnDelivery) Task(u core.TaskUpdate) { t.send(event{kind: evTask, task: u}) }

// send queues a live event without waiting.
func (t *turnDelivery) send(ev event) {
	select {
	case t.events <- ev:
	case <-t.done:
	default:
	}
}

// Flush implements core.TurnDelivery: it delivers every committed entry and
// waits for it.
func (t *turnDelivery) Flush(ctx context.Context) error {
	return t.call(ctx, event{kind: evFlush})
}

// Close implements core.TurnDelivery.
func (t *turnDelivery) Close(ctx context.Context, interrupted bool) error {
	err := t.call(ctx, event{kind: evClose, interrupted: interrupted})
	<-t.done
	return err
}

func (t *turnDelivery) call(ctx context.Context, ev event) error {
	ev.ctx, ev.done = ctx, make(chan error, 1)
	select {
	case t.events <- ev:
	case <-t.done:
		return errors.New("delivery of the turn has ended")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-ev.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *turnDelivery) loop(ctx context.Context) {
	defer close(t.done)
	if !t.quiet {
		t.status(ctx, "is thinking…")
	}
	for {
		var ev event
		select {
		case ev = <-t.events:
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), core.ErrInterrupted) {
				// A person stopped the turn: nobody continues it, so its
				// end (Close) still comes here and closes the live message.
				ctx = context.WithoutCancel(ctx)
				continue
			}
			// The turn is over for this process (shutdown, lost lease): a
			// live stream stays recorded for whoever continues.
			return
		}
		if t.quiet && ev.kind != evFlush && ev.kind != evClose {
			continue
		}
		switch ev.kind {
		case evStatus:
			t.status(ctx, ev.text)
		case evDelta:
			t.delta(ctx, ev.text)
		case evReset:
			t.reset(ctx)
		case evTask:
			t.task(ctx, ev.task)
		case evFlush:
			ev.done <- t.flush(ev.ctx)
		case evClose:
			ev.done <- t.close(ev.ctx, ev.interrupted)
			return
		}
	}
}

func (t *turnDelivery) status(ctx context.Context, text string) {
	for _, b := range t.bound {
		if s, ok := b.ad.(bots.StatusSetter); ok {
			if err := s.SetStatus(ctx, b.to, text); err != nil {
				t.d.log.DebugContext(ctx, "setting status", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
			}
		}
	}
}

func (t *turnDelivery) delta(ctx context.Context, text string) {
	for _, b := range t.bound {
		ls := t.streamOf(ctx, b)
		if ls == nil {
			continue
		}
		ls.text.WriteString(text)
		if err := ls.stream.Append(ctx, text); err != nil {
			t.d.log.WarnContext(ctx, "streaming", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
		}
		t.save(ctx, b, ls)
	}
}

// task shows a tool call's progress in the live reply of every binding
// whose platform shows tasks; the others have the status line.
func (t *turnDelivery) task(ctx context.Context, u core.TaskUpdate) {
	for _, b := range t.bound {
		ts, ok := b.ad.(bots.TaskStreamer)
		if !ok || !ts.ShowsTasks(b.to) {
			continue
		}
		ls := t.streamOf(ctx, b)
		if ls == nil {
			continue
		}
		s, ok := ls.stream.(bots.TaskStream)
		if !ok {
			continue // a stream taken over shows no tasks
		}
		task := bots.Task{ID: u.ID, Title: u.Title, Status: string(u.Status), Details: u.Details, Output: u.Output}
		if err := s.Task(ctx, task); err != nil {
			t.d.log.WarnContext(ctx, "showing a task", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
		}
		t.save(ctx, b, ls)
	}
}

// streamOf is the binding's live stream, opened at the first delta: a
// stream a dead attempt left is taken over and started over, so the user
// never sees two replies or one cut off beside the real one.
func (t *turnDelivery) streamOf(ctx context.Context, b *bound) *liveStream {
	ls := t.live[b.b.ID]
	if ls == nil {
		ls = &liveStream{}
		t.live[b.b.ID] = ls
	}
	if ls.failed {
		return nil
	}
	if ls.stream != nil {
		return ls
	}
	st, ok := b.ad.(bots.Streamer)
	if !ok {
		ls.failed = true
		return nil
	}
	t.closeOtherTurn(ctx, b)
	ls.turn = t.turnID
	s, err := t.d.resume(ctx, b, &t.turnID)
	if err == nil && s == nil && t.retry {
		// An earlier attempt may have made a message it could not record
		// (the database was down): look for it.
		s, err = t.findLost(ctx, b)
	}
	if err == nil && s != nil {
		if err := s.Reset(ctx); err != nil {
			t.d.log.WarnContext(ctx, "starting over a live stream left by an earlier attempt", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
		}
		ls.stream = s
		t.openWith(ctx, b, ls)
		return ls
	}
	if err != nil {
		t.d.log.WarnContext(ctx, "taking over a live stream", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
	}
	key, err := t.d.streamKeyOf(ctx, b, t.turnID)
	if err != nil {
		t.d.log.WarnContext(ctx, "reading the conversation for a stream key", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
	}
	s, err = st.StartStream(ctx, b.to, t.d.opts.IdentityFunc(t.agent))
	if err != nil {
		t.d.log.WarnContext(ctx, "starting stream", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
		ls.failed = true
		return nil
	}
	// The intent, before the platform makes a message: a process that dies
	// in between leaves a record that says to look for one.
	turn := t.turnID
	if err := t.d.st.LiveStreamSave(ctx, &core.LiveStream{BindingID: b.b.ID, TurnID: &turn, MessageIDs: []string{}, UpdatedAt: t.d.opts.Now()}); err != nil {
		t.d.log.WarnContext(ctx, "recording the intent to stream", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
	}
	if k, ok := s.(bots.StreamKeyer); ok && key != "" {
		k.SetKey(key)
	}
	ls.stream, ls.saved = s, []string{}
	t.openWith(ctx, b, ls)
	return ls
}

// openWith shows the stream's prefix (the voice note's quote) at the
// start of a stream just opened or reset.
func (t *turnDelivery) openWith(ctx context.Context, b *bound, ls *liveStream) {
	if ls.prefix == "" {
		ls.prefix = t.streamPrefix(ctx, b)
	}
	if ls.prefix == "" {
		return
	}
	ls.text.WriteString(ls.prefix)
	if err := ls.stream.Append(ctx, ls.prefix); err != nil {
		t.d.log.WarnContext(ctx, "streaming", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
	}
}

// closeOtherTurn finishes a live message another turn left open on b
// before this turn opens its own (one is recorded per binding): that
// turn's entries still to deliver replace it, as they would have; one
// whose text never became an entry (its turn died and was not retried) is
// closed with the interruption notice. It is never reused for this
// turn's reply, which would cut the earlier one.
func (t *turnDelivery) closeOtherTurn(ctx context.Context, b *bound) {
	other := func() bool {
		rec, err := t.d.st.LiveStreamGet(ctx, b.b.ID)
		return err == nil && rec.TurnID != nil && *rec.TurnID != t.turnID
	}
	if !other() {
		return
	}
	if err := t.d.flushBinding(ctx, b, nil); err != nil {
		t.d.log.WarnContext(ctx, "delivering an earlier turn's entries before streaming", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
		return // its entries are still to come: they finish it
	}
	if !other() {
		return
	}
	if err := t.d.closeOrphan(ctx, b); err != nil {
		t.d.log.WarnContext(ctx, "closing a live message an earlier turn left open", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
	}
}

// streamKeyOf is the idempotency key of the live stream a turn starts on a
// binding now: the turn, and the log's last seq, which names the step (a
// step's entries commit when its model call ends, so a retry of that call,
// or a process taking it over, sees the same seq; the next step's stream
// gets a key of its own). Empty when the conversation cannot be read.
func (d *Deliverer) streamKeyOf(ctx context.Context, b *bound, turn uuid.UUID) (string, error) {
	conv, err := d.st.ConversationGet(ctx, b.b.ConversationID)
	if err != nil {
		return "", err
	}
	name := append(turn[:], []byte(strconv.FormatInt(conv.LastSeq, 10))...)
	return uuid.NewSHA1(b.b.ID, name).String(), nil
}

// findLost takes over the messages an earlier attempt of the turn streamed
// without recording them, on a platform that can find them.
func (t *turnDelivery) findLost(ctx context.Context, b *bound) (bots.Stream, error) {
	f, ok := b.ad.(bots.StreamFinder)
	r, ok2 := b.ad.(bots.StreamResumer)
	if !ok || !ok2 {
		return nil, nil
	}
	found, err := f.FindStream(ctx, b.to, t.queuedAt)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	// What the turn's entries became is the earlier attempts' delivered
	// work, not a lost stream. (A rare path: the whole log is read.)
	known := map[string]bool{}
	entries, err := t.d.st.EntryList(ctx, &core.EntryListParams{ConversationID: t.conv.ID, WithErrors: true})
	if err != nil {
		return nil, fmt.Errorf("reading the turn's entries: %w", err)
	}
	for _, e := range entries {
		if e.TurnID == nil || *e.TurnID != t.turnID {
			continue
		}
		if p, err := t.d.st.PostedGet(ctx, &core.PostedGetParams{BindingID: b.b.ID, EntryID: e.ID}); err == nil {
			for _, id := range p.MessageIDs {
				known[id] = true
			}
		}
	}
	var refs []bots.MessageRef
	for _, ref := range found {
		if !known[ref.Channel+"/"+ref.ID] {
			refs = append(refs, ref)
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	return r.ResumeStream(ctx, b.to, refs, nil)
}

// save records the stream's messages when they changed, so a retry or a
// recovery can take them over.
func (t *turnDelivery) save(ctx context.Context, b *bound, ls *liveStream) {
	refs := encodeRefs(ls.stream.Refs())
	if slices.Equal(refs, ls.saved) {
		return
	}
	turn := t.turnID
	if err := t.d.st.LiveStreamSave(ctx, &core.LiveStream{BindingID: b.b.ID, TurnID: &turn, MessageIDs: refs, UpdatedAt: t.d.opts.Now()}); err != nil {
		t.d.log.WarnContext(ctx, "recording live stream", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
		return
	}
	ls.saved = refs
}

// reset starts every live stream over: the model call is retried.
func (t *turnDelivery) reset(ctx context.Context) {
	for _, b := range t.bound {
		ls := t.live[b.b.ID]
		if ls == nil || ls.stream == nil {
			continue
		}
		ls.text.Reset()
		if err := ls.stream.Reset(ctx); err != nil {
			t.d.log.WarnContext(ctx, "resetting live stream", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
		}
		t.openWith(ctx, b, ls)
		t.save(ctx, b, ls)
	}
}

func (t *turnDelivery) flush(ctx context.Context) error {
	var errs []error
	for _, b := range t.bound {
		if err := t.d.flushBinding(ctx, b, t.live[b.b.ID]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// close ends the turn's delivery. A turn that ended (not one cut off by a
// shutdown or a lost lease) has every entry delivered and no stream left
// open. A stream whose text never became an entry is closed: a turn a
// person stopped keeps what was shown and says who stopped it; one that
// showed no text (a turn that opened with a question and paused) closes
// as it is; otherwise its text was cut, and a notice replaces it.
func (t *turnDelivery) close(ctx context.Context, interrupted bool) error {
	if interrupted {
		return nil
	}
	err := t.flush(ctx)
	if err == nil {
		var stoppedBy *string
		for _, b := range t.bound {
			ls := t.live[b.b.ID]
			if ls == nil || ls.stream == nil {
				continue
			}
			if stoppedBy == nil {
				who := t.stoppedBy(ctx)
				stoppedBy = &who
			}
			err = errors.Join(err, t.closeStream(ctx, b, ls, *stoppedBy))
			ls.stream = nil
		}
	}
	t.status(ctx, "")
	if err == nil {
		t.markDone(ctx)
	}
	return err
}

// closeStream closes the turn's live stream on b whose text never became
// an entry (see close); stoppedBy names who stopped the turn, "" when no
// one did.
func (t *turnDelivery) closeStream(ctx context.Context, b *bound, ls *liveStream, stoppedBy string) error {
	text := ls.text.String()
	switch {
	case stoppedBy != "":
		final := &bots.Message{Text: stoppedText(text, stoppedBy), Markdown: true, Identity: t.d.opts.IdentityFunc(t.agent)}
		if _, err := ls.stream.Finish(ctx, final); err != nil {
			return fmt.Errorf("closing a stopped live stream on %s: %w", b.b.Place.Platform, err)
		}
		return t.d.st.LiveStreamDelete(ctx, b.b.ID)
	case strings.TrimSpace(strings.TrimPrefix(text, ls.prefix)) == "":
		// Nothing was cut: the turn showed only its tasks (a question it
		// asked, then paused), or nothing at all.
		if len(ls.stream.Refs()) > 0 {
			if _, err := ls.stream.Finish(ctx, nil); err != nil {
				return fmt.Errorf("closing a live stream on %s: %w", b.b.Place.Platform, err)
			}
		}
		return t.d.st.LiveStreamDelete(ctx, b.b.ID)
	}
	return t.d.closeInterrupted(ctx, b, ls.stream)
}

// stoppedText is a stopped reply: what was shown, and who stopped it.
func stoppedText(shown, who string) string {
	note := "_Stopped by " + who + "._"
	if strings.TrimSpace(shown) == "" {
		return note
	}
	return strings.TrimRight(shown, "\n") + "\n\n" + note
}

// stoppedBy is the name of the person who stopped the turn (the stop
// request in the log, core.SystemContent.Stop), or "" when none did. The
// request is among the last entries: it was written while the turn ran.
func (t *turnDelivery) stoppedBy(ctx context.Context) string {
	conv, err := t.d.st.ConversationGet(ctx, t.conv.ID)
	if err != nil {
		t.d.log.WarnContext(ctx, "reading the conversation for a stop request", "error", err)
		return ""
	}
	es, err := t.d.st.EntryList(ctx, &core.EntryListParams{ConversationID: t.conv.ID, AfterSeq: max(0, conv.LastSeq-stopWindow)})
	if err != nil {
		t.d.log.WarnContext(ctx, "reading entries for a stop request", "error", err)
		return ""
	}
	for _, e := range slices.Backward(es) {
		if e.Kind != core.EntrySystem {
			continue
		}
		c, err := core.Decode[core.SystemContent](e)
		if err != nil || c.Stop == nil || *c.Stop != t.turnID {
			continue
		}
		return cmp.Or(strings.TrimSpace(c.By), "someone")
	}
	return ""
}

// stopWindow is how many of the latest entries stoppedBy reads.
const stopWindow = 32

// triggerOf is the seq of the message a turn item answers, or 0.
func triggerOf(item *core.WorkItem) int64 {
	if item.Kind != core.WorkTurn {
		return 0
	}
	var args core.TurnArgs
	if json.Unmarshal(item.Payload, &args) != nil || args.Reason != "message" {
		return 0
	}
	return args.TriggerSeq
}

// markDone tells each platform that can show it that the message the turn
// answered has its reply (Slack and Discord swap the acknowledgement
// reaction for the done one). A failure only loses the mark.
func (t *turnDelivery) markDone(ctx context.Context) {
	if t.trigger < 1 {
		return
	}
	var markers []*bound
	for _, b := range t.bound {
		if _, ok := b.ad.(bots.DoneMarker); ok {
			markers = append(markers, b)
		}
	}
	if len(markers) == 0 {
		return
	}
	es, err := t.d.st.EntryList(ctx, &core.EntryListParams{ConversationID: t.conv.ID, AfterSeq: t.trigger - 1, UpToSeq: t.trigger, Limit: 1})
	if err != nil || len(es) == 0 || es[0].Kind != core.EntryUser {
		return
	}
	c, err := core.Decode[core.UserContent](es[0])
	if err != nil || c.MessageID == "" {
		return
	}
	for _, b := range markers {
		if c.Platform != "" && c.Platform != b.b.Place.Platform {
			continue
		}
		if err := b.ad.(bots.DoneMarker).MarkDone(ctx, b.to, c.MessageID); err != nil {
			t.d.log.WarnContext(ctx, "marking the message answered", "platform", b.b.Place.Platform, "error", redact.String(err.Error()))
		}
	}
}
