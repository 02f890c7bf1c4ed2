package discord

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/mdsplit"
)

// StartStream implements bots.Streamer by editing posted messages as text
// arrives, at most once per StreamUpdateInterval. Nothing is posted until
// there is text (Discord refuses empty messages). A reply that grows past
// 2,000 characters continues in a new message.
func (a *Adapter) StartStream(ctx context.Context, to bots.Target, id *bots.Identity) (bots.Stream, error) {
	channelID, err := a.targetChannel(ctx, to, false)
	if err != nil {
		return nil, fmt.Errorf("discord: starting stream: %w", err)
	}
	a.tagForumPost(ctx, to, id)
	return &stream{a: a, to: to, channel: channelID, via: a.viaFor(ctx, to, channelID, id, false)}, nil
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
			r.Channel = s.channel
		}
		s.refs = append(s.refs, r)
		s.shown = append(s.shown, "\x00") // unknown: the next flush edits it
	}
	return s, nil
}

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
	hasRefs := len(st.refs) > 0
	st.mu.Unlock()
	if !hasRefs {
		return nil
	}
	// Show at once that the reply starts over, rather than the old text
	// until the retry's first flush.
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	return st.show(ctx, []outgoing{{content: retryPlaceholder}})
}

// retryPlaceholder stands in a reset message until the retry writes.
const retryPlaceholder = "…"

// SetKey implements bots.StreamKeyer: the stream's messages are sent with
// nonces made from key, so a stream started again with the same key gets a
// dead process's message back (Discord's enforce_nonce) and edits it.
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

type stream struct {
	a       *Adapter
	to      bots.Target
	channel string
	via     via    // how the stream's new messages are sent
	key     string // idempotency key of the stream's messages (SetKey)

	// mu guards the fields below; flushMu serialises REST calls so two
	// flushes never interleave their edits.
	mu        sync.Mutex
	text      string
	dirty     bool
	lastFlush time.Time
	timer     *time.Timer
	finished  bool
	flushMu   sync.Mutex
	refs      []bots.MessageRef
	shown     []string
	flushErr  error
	flushWait sync.WaitGroup
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
		return errors.New("discord: append to a finished stream")
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
			st.a.log.WarnContext(st.a.ctx, "streaming edit to discord failed", "channel_id", st.channel, "err", err)
		}
	})
}

// flush shows the text so far: it edits the messages whose part changed and
// posts a new message for a part that has none yet. It never runs twice
// within StreamUpdateInterval; a flush that comes too early is rescheduled.
func (st *stream) flush(ctx context.Context) error {
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	st.mu.Lock()
	if !st.dirty {
		st.mu.Unlock()
		return nil
	}
	if wait := st.a.opts.StreamUpdateInterval - time.Since(st.lastFlush); wait > 0 {
		if st.timer == nil && !st.finished {
			st.armLocked(wait)
		}
		st.mu.Unlock()
		return nil
	}
	text := st.text
	st.dirty = false
	st.lastFlush = time.Now()
	st.mu.Unlock()

	parts := mdsplit.Split(text, MaxMessageChars)
	out := make([]outgoing, len(parts))
	for i, p := range parts {
		out[i] = outgoing{content: p}
	}
	err := st.show(ctx, out)
	st.mu.Lock()
	st.flushErr = err
	st.mu.Unlock()
	return err
}

// show makes the posted messages read parts: a message is edited when its
// text changed or when the part carries embeds, buttons or files, and a
// part without a message is posted. Callers hold flushMu.
func (st *stream) show(ctx context.Context, parts []outgoing) error {
	for i, p := range parts {
		extras := p.embeds != nil || p.components != nil || p.files != nil || p.cardFiles != nil
		if i < len(st.refs) {
			if st.shown[i] == p.content && !extras {
				continue
			}
			if err := st.a.edit(ctx, st.refs[i], p); err != nil {
				return fmt.Errorf("editing streamed message %s: %w", st.refs[i].ID, err)
			}
			st.shown[i] = p.content
			continue
		}
		p.nonce = nonceFor(st.key, i)
		msg, err := st.a.sendVia(ctx, st.via, st.channel, p)
		if err != nil {
			return fmt.Errorf("posting streamed message: %w", err)
		}
		ref := bots.MessageRef{Channel: st.channel, ID: msg.ID}
		if msg.Content != p.content {
			// The nonce was used: a dead process made this message, and it
			// shows what that one streamed.
			if err := st.a.edit(ctx, ref, p); err != nil {
				return fmt.Errorf("taking over streamed message %s: %w", ref.ID, err)
			}
		}
		st.refs = append(st.refs, ref)
		st.shown = append(st.shown, p.content)
	}
	return nil
}

// Finish implements bots.Stream: the streamed messages are replaced with
// the final message (its text split as Post would, with buttons, card and
// files on the last part); surplus streamed messages are deleted.
func (st *stream) Finish(ctx context.Context, final *bots.Message) ([]bots.MessageRef, error) {
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return nil, errors.New("discord: stream already finished")
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
	st.a.stopTyping(st.channel)
	parts, err := st.a.render(final)
	if err != nil {
		return nil, fmt.Errorf("discord: rendering final message: %w", err)
	}
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	if len(st.refs) == 0 && st.key == "" {
		return st.a.Post(ctx, st.to, final)
	}
	if len(parts) < len(st.refs) {
		for _, ref := range st.refs[len(parts):] {
			if err := st.a.deleteVia(ctx, ref); err != nil {
				return nil, fmt.Errorf("discord: deleting surplus streamed message %s: %w", ref.ID, err)
			}
		}
		st.refs, st.shown = st.refs[:len(parts)], st.shown[:len(parts)]
	}
	if err := st.show(ctx, parts); err != nil {
		return nil, fmt.Errorf("discord: finishing stream: %w", refusal(err))
	}
	st.a.postVoice(ctx, st.channel, final)
	return append([]bots.MessageRef(nil), st.refs...), nil
}
