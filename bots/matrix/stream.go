package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/mdsplit"
)

var (
	_ bots.Stream      = (*stream)(nil)
	_ bots.StreamKeyer = (*stream)(nil)
)

// StartStream implements bots.Streamer by editing posted messages (m.replace)
// as text arrives, at most once per StreamUpdateInterval. Nothing is posted
// until there is text. A reply that grows past MaxMessageChars continues in
// a new message.
func (a *Adapter) StartStream(ctx context.Context, to bots.Target, _ *bots.Identity) (bots.Stream, error) {
	roomID, err := a.targetRoom(ctx, to, false)
	if err != nil {
		return nil, fmt.Errorf("matrix: starting stream: %w", err)
	}
	return &stream{a: a, to: to, room: roomID}, nil
}

// ResumeStream implements bots.StreamResumer: the stream edits the messages
// another attempt or process left, and Finish replaces them.
func (a *Adapter) ResumeStream(ctx context.Context, to bots.Target, refs []bots.MessageRef, id *bots.Identity) (bots.Stream, error) {
	st, err := a.StartStream(ctx, to, id)
	if err != nil {
		return nil, err
	}
	s := st.(*stream)
	for _, r := range refs {
		if r.ID == "" {
			continue
		}
		if r.Channel == "" {
			r.Channel = s.room.String()
		}
		s.refs = append(s.refs, r)
		s.shown = append(s.shown, "\x00") // unknown: the next flush edits it
	}
	return s, nil
}

type stream struct {
	a    *Adapter
	to   bots.Target
	room id.RoomID
	key  string // idempotency key of the stream's messages (SetKey)

	// mu guards the fields below; flushMu serialises the requests so two
	// flushes never interleave their edits.
	mu        sync.Mutex
	text      string
	dirty     bool
	lastFlush time.Time
	timer     *time.Timer
	finished  bool
	flushErr  error
	flushWait sync.WaitGroup

	flushMu sync.Mutex
	refs    []bots.MessageRef
	shown   []string
}

// SetKey implements bots.StreamKeyer: the stream's messages are sent with
// transaction ids made from key, so a stream started again with the same
// key gets a dead process's message back and edits it.
func (st *stream) SetKey(key string) {
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	st.key = key
}

// Refs implements bots.Stream.
func (st *stream) Refs() []bots.MessageRef {
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	return append([]bots.MessageRef(nil), st.refs...)
}

// Append implements bots.Stream. It edits at once when the interval has
// passed since the last edit, and otherwise schedules one edit for when it
// has, so a pause in the model's output still shows what came before it.
func (st *stream) Append(ctx context.Context, delta string) error {
	if delta == "" {
		return nil
	}
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return errors.New("matrix: append to a finished stream")
	}
	st.text += delta
	st.dirty = true
	wait := st.a.opts.StreamUpdateInterval - time.Since(st.lastFlush)
	if wait > 0 {
		if st.timer == nil {
			st.armLocked(wait)
		}
		err := st.flushErr
		st.mu.Unlock()
		return err
	}
	st.mu.Unlock()
	return st.flush(ctx)
}

// armLocked schedules a trailing flush; it runs under the adapter's
// context, counted so Stop waits for it.
func (st *stream) armLocked(wait time.Duration) {
	if !st.a.enter() {
		return
	}
	st.flushWait.Add(1)
	st.timer = time.AfterFunc(wait, func() {
		defer st.a.leave()
		defer st.flushWait.Done()
		st.mu.Lock()
		st.timer = nil
		done := st.finished
		st.mu.Unlock()
		if done {
			return
		}
		if err := st.flush(st.a.ctx); err != nil {
			st.a.log.WarnContext(st.a.ctx, "streaming edit to matrix failed", "room_id", st.room, "err", err)
		}
	})
}

// flush shows the text so far. It never runs twice within
// StreamUpdateInterval; a flush that comes too early is rescheduled.
func (st *stream) flush(ctx context.Context) error {
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	st.mu.Lock()
	if !st.dirty || st.finished {
		st.mu.Unlock()
		return nil
	}
	if wait := st.a.opts.StreamUpdateInterval - time.Since(st.lastFlush); wait > 0 {
		if st.timer == nil {
			st.armLocked(wait)
		}
		st.mu.Unlock()
		return nil
	}
	text := st.text
	st.dirty = false
	st.lastFlush = time.Now()
	st.mu.Unlock()

	var parts []outgoing
	for _, p := range mdsplit.Split(text, st.a.opts.MaxMessageChars) {
		parts = append(parts, outgoing{text: p})
	}
	err := st.show(ctx, parts, "")
	st.mu.Lock()
	st.flushErr = err
	st.mu.Unlock()
	return err
}

// show makes the posted messages read parts: a message whose text changed
// is edited (with a transaction id from finalKey when set, else a fresh
// one), and a part without a message is posted with a transaction id
// from the stream's key. Callers hold flushMu.
func (st *stream) show(ctx context.Context, parts []outgoing, finalKey string) error {
	for i, p := range parts {
		c := contentOf(p, event.MsgText)
		if i < len(st.refs) {
			if st.shown[i] == p.text && len(p.options) == 0 && finalKey == "" {
				continue
			}
			txn := txnID("", "", 0)
			if finalKey != "" {
				txn = txnID(finalKey+"/"+st.refs[i].ID, "f", i)
			}
			if err := st.a.edit(ctx, st.room, id.EventID(st.refs[i].ID), c, txn); err != nil {
				return fmt.Errorf("editing streamed message %s: %w", st.refs[i].ID, err)
			}
			st.shown[i] = p.text
			continue
		}
		txn := txnID(st.key, "s", i)
		if st.key == "" && finalKey != "" {
			txn = txnID(finalKey, "p", i)
		}
		c.RelatesTo = relation(st.to)
		evID, err := st.a.send(ctx, st.room, event.EventMessage, c, txn)
		if err != nil {
			return fmt.Errorf("posting streamed message: %w", err)
		}
		ref := bots.MessageRef{Channel: st.room.String(), ID: evID.String()}
		if st.key != "" && !st.a.reads(ctx, st.room, evID, p.text) {
			// The transaction id was used: a dead process made this message,
			// and it shows what that one streamed.
			if err := st.a.edit(ctx, st.room, evID, c, txnID("", "", 0)); err != nil {
				return fmt.Errorf("taking over streamed message %s: %w", ref.ID, err)
			}
		}
		st.refs = append(st.refs, ref)
		st.shown = append(st.shown, p.text)
	}
	return nil
}

// reads reports whether an event of the bot's reads text as first sent
// (true when it cannot tell: the next edit shows the text anyway).
func (a *Adapter) reads(ctx context.Context, roomID id.RoomID, evID id.EventID, text string) bool {
	ev, err := a.cli.GetEvent(ctx, roomID, evID)
	if err != nil {
		return false
	}
	var c struct {
		Body string `json:"body"`
	}
	if err := json.Unmarshal(ev.Content.VeryRaw, &c); err != nil {
		return false
	}
	return c.Body == text
}

// retryPlaceholder stands in a reset message until the retry writes.
const retryPlaceholder = "…"

// Reset implements bots.Stream: the retry's text replaces what was shown,
// in the same messages, from the next flush on.
func (st *stream) Reset(ctx context.Context) error {
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return nil
	}
	st.text = ""
	st.dirty = false
	st.mu.Unlock()
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	if len(st.refs) == 0 {
		return nil
	}
	return st.show(ctx, []outgoing{{text: retryPlaceholder}}, "")
}

// Finish implements bots.Stream: the streamed messages are replaced with
// the final message (its text split as Post would; options, which a
// reaction reads from the event that was posted with them, and files
// follow in events of their own); surplus streamed messages are redacted.
func (st *stream) Finish(ctx context.Context, final *bots.Message) ([]bots.MessageRef, error) {
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return nil, errors.New("matrix: stream already finished")
	}
	st.finished = true
	if st.timer != nil && st.timer.Stop() {
		// The trailing flush will never run; release what it held.
		st.timer = nil
		st.flushWait.Done()
		st.a.leave()
	}
	text := st.text
	st.mu.Unlock()
	st.flushWait.Wait()

	if final == nil {
		final = &bots.Message{Text: text}
	}
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	if len(st.refs) == 0 && st.key == "" {
		return st.a.Post(ctx, st.to, final)
	}
	all, err := st.a.render(final)
	if err != nil {
		return nil, err
	}
	var texts, extras []outgoing
	for _, p := range all {
		switch {
		case p.file != nil:
			extras = append(extras, p)
		case len(p.options) > 0:
			// Options go in an event posted with them (a reaction reads
			// them from the event it annotates), with the bot's reactions.
			opts := p.options
			p.options = nil
			texts = append(texts, p)
			extras = append(extras, outgoing{text: "Choose:", options: opts})
		default:
			texts = append(texts, p)
		}
	}
	if len(texts) < len(st.refs) {
		for i, ref := range st.refs[len(texts):] {
			if err := st.a.redact(ctx, st.room, id.EventID(ref.ID), txnID(final.Key+"/"+ref.ID, "d", i)); err != nil {
				return nil, fmt.Errorf("matrix: redacting surplus streamed message %s: %w", ref.ID, err)
			}
		}
		st.refs, st.shown = st.refs[:len(texts)], st.shown[:len(texts)]
	}
	if err := st.show(ctx, texts, final.Key); err != nil {
		return nil, fmt.Errorf("matrix: finishing stream: %w", err)
	}
	refs := append([]bots.MessageRef(nil), st.refs...)
	for i, p := range extras {
		evID, err := st.a.sendPart(ctx, st.room, st.to, p, txnID(final.Key, "x", i), event.MsgText)
		if err != nil {
			return refs, fmt.Errorf("matrix: finishing stream: %w", err)
		}
		refs = append(refs, bots.MessageRef{Channel: st.room.String(), ID: evID.String()})
		if err := st.a.offer(ctx, st.room, evID, p.options, final.Key); err != nil {
			return refs, err
		}
	}
	return refs, nil
}
