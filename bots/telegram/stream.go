package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboardhq/switchboard/bots"
)

// StartStream implements bots.Streamer: the reply is one message edited
// as text arrives (editMessageText), at most once per
// StreamUpdateInterval in a private chat and GroupEditInterval in a group,
// and never sooner than a 429's retry_after. Nothing is posted until there
// is text. A reply that grows past 4,096 characters continues in a new
// message.
//
// Telegram has no idempotency key and bots cannot read a chat's history,
// so a message sent by a process that died before the delivery recorded
// it cannot be found again: the stream reports each message the moment
// Telegram answers (Refs), and the delivery records it at once, before
// the next delta; from then on a restart edits that message
// (ResumeStream) instead of posting another. See docs/telegram.md.
func (a *Adapter) StartStream(ctx context.Context, to bots.Target, _ *bots.Identity) (bots.Stream, error) {
	p, err := a.placeOf(to)
	if err != nil {
		return nil, fmt.Errorf("telegram: starting stream: %w", err)
	}
	interval := a.opts.StreamUpdateInterval
	if strings.HasPrefix(p.chat, "-") {
		interval = a.opts.GroupEditInterval
	}
	return &stream{a: a, p: p, interval: interval}, nil
}

// ResumeStream implements bots.StreamResumer: the stream edits the
// messages another attempt or process recorded, and Finish replaces them.
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
			r.Channel = s.p.chat
		}
		s.refs = append(s.refs, r)
		s.shown = append(s.shown, "\x00") // unknown: the next flush edits it
	}
	return s, nil
}

type stream struct {
	a        *Adapter
	p        place
	interval time.Duration

	// mu guards the fields below; flushMu serialises the API calls so
	// two flushes never interleave their edits.
	mu        sync.Mutex
	text      string
	dirty     bool
	notBefore time.Time // no edit before (interval, retry_after)
	timer     *time.Timer
	finished  bool
	flushErr  error
	flushWait sync.WaitGroup

	flushMu sync.Mutex
	refs    []bots.MessageRef
	shown   []string
}

// retryPlaceholder stands in a reset message until the retry writes.
const retryPlaceholder = "…"

// Append implements bots.Stream.
func (st *stream) Append(ctx context.Context, delta string) error {
	if delta == "" {
		return nil
	}
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return errors.New("telegram: append to a finished stream")
	}
	st.text += delta
	st.dirty = true
	if wait := time.Until(st.notBefore); wait > 0 {
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

// Reset implements bots.Stream: the retry's text replaces what was shown,
// in the same messages.
func (st *stream) Reset(ctx context.Context) error {
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return nil
	}
	st.text, st.dirty = "", false
	st.mu.Unlock()
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	if len(st.refs) == 0 {
		return nil
	}
	return st.show(ctx, []string{retryPlaceholder}, nil)
}

// Refs implements bots.Stream.
func (st *stream) Refs() []bots.MessageRef {
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	return append([]bots.MessageRef(nil), st.refs...)
}

// armLocked schedules a trailing flush under the adapter's context,
// counted so Stop waits for it.
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
			st.a.log.WarnContext(st.a.ctx, "streaming edit to telegram failed", "chat_id", st.p.chat, "error", err)
		}
	})
}

// flush shows the text so far, unless the last edit was too recent: then
// a trailing flush is scheduled.
func (st *stream) flush(ctx context.Context) error {
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	st.mu.Lock()
	if !st.dirty {
		st.mu.Unlock()
		return nil
	}
	if wait := time.Until(st.notBefore); wait > 0 {
		if st.timer == nil && !st.finished {
			st.armLocked(wait)
		}
		st.mu.Unlock()
		return nil
	}
	text := st.text
	st.dirty = false
	st.notBefore = time.Now().Add(st.interval)
	st.mu.Unlock()

	err := st.show(ctx, split(text, MaxMessageChars), nil)
	st.mu.Lock()
	defer st.mu.Unlock()
	var tm *tgbot.TooManyRequestsError
	if errors.As(err, &tm) {
		// Telegram asked to wait: the text shows at the next edit after.
		st.notBefore = time.Now().Add(max(time.Duration(tm.RetryAfter)*time.Second, st.interval))
		st.dirty = true
		if st.timer == nil && !st.finished {
			st.armLocked(time.Until(st.notBefore))
		}
		err = nil
	}
	st.flushErr = err
	return err
}

// show makes the stream's messages read parts: a message whose part
// changed is edited, a part without a message is sent; the last part
// carries markup. Callers hold flushMu. A 429 within MaxRetryAfter is
// waited out inside the call (see Adapter.call); a longer one is returned.
func (st *stream) show(ctx context.Context, parts []string, markup models.ReplyMarkup) error {
	for i, part := range parts {
		var mk models.ReplyMarkup
		if i == len(parts)-1 {
			mk = markup
		}
		if i < len(st.refs) {
			if st.shown[i] == part && mk == nil {
				continue
			}
			if err := st.a.edit(ctx, st.refs[i], part, mk); err != nil {
				return fmt.Errorf("editing streamed message %s: %w", st.refs[i].ID, err)
			}
			st.shown[i] = part
			continue
		}
		msg, err := st.a.send(ctx, st.p, part, mk)
		if err != nil {
			return fmt.Errorf("posting streamed message: %w", err)
		}
		st.refs = append(st.refs, bots.MessageRef{Channel: st.p.chat, ID: strconv.Itoa(msg.ID)})
		st.shown = append(st.shown, part)
	}
	return nil
}

// Finish implements bots.Stream: the streamed messages are replaced with
// the final message (its text split as Post splits it, its buttons under
// the last part), surplus streamed messages are deleted, and its files
// follow.
func (st *stream) Finish(ctx context.Context, final *bots.Message) ([]bots.MessageRef, error) {
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return nil, errors.New("telegram: stream already finished")
	}
	st.finished = true
	if st.timer != nil && st.timer.Stop() {
		st.timer = nil
		st.flushWait.Done()
		st.a.leave()
	}
	text := st.text
	st.mu.Unlock()
	st.flushWait.Wait()
	st.a.typing.stop(st.p.chat)

	if final == nil {
		final = &bots.Message{Text: text}
	}
	st.flushMu.Lock()
	defer st.flushMu.Unlock()
	st.mu.Lock()
	wait := time.Until(st.notBefore)
	st.mu.Unlock()
	if wait > 0 && len(st.refs) > 0 {
		// The final edit keeps the chat's pace too.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	if len(st.refs) == 0 {
		return st.a.Post(ctx, bots.Target{Platform: Platform, Channel: st.p.chat, Thread: threadOf(st.p)}, final)
	}
	btns := final.Buttons
	if final.Card != nil {
		btns = append(cardButtons(final.Card), btns...)
	}
	kb, err := keyboard(btns)
	if err != nil {
		return nil, bots.Refused("its buttons do not fit Telegram's limits", err)
	}
	var markup models.ReplyMarkup
	if kb != nil {
		markup = kb
	}
	body := messageText(final)
	var parts []string
	if strings.TrimSpace(body) != "" || len(final.Files) == 0 {
		parts = split(body, MaxMessageChars)
	}
	if len(parts) == 0 {
		parts = []string{"📎"} // the files below are the reply
	}
	for len(st.refs) > len(parts) {
		last := st.refs[len(st.refs)-1]
		if err := st.a.deleteMessage(ctx, last); err != nil {
			return nil, fmt.Errorf("telegram: deleting surplus streamed message %s: %w", last.ID, err)
		}
		st.refs, st.shown = st.refs[:len(st.refs)-1], st.shown[:len(st.shown)-1]
	}
	if err := st.show(ctx, parts, markup); err != nil {
		return nil, fmt.Errorf("telegram: finishing stream: %w", refusal(err))
	}
	refs := append([]bots.MessageRef(nil), st.refs...)
	for _, f := range final.Files {
		msg, err := st.a.sendFile(ctx, st.p, f)
		if err != nil {
			return refs, fmt.Errorf("telegram: posting file %q: %w", f.Name, refusal(err))
		}
		refs = append(refs, bots.MessageRef{Channel: st.p.chat, ID: strconv.Itoa(msg.ID)})
	}
	return refs, nil
}

// threadOf is the Thread of a target that resolves to p.
func threadOf(p place) string {
	switch {
	case p.topic != 0:
		return topicPrefix + strconv.Itoa(p.topic)
	case p.replyTo != 0:
		return strconv.Itoa(p.replyTo)
	}
	return ""
}
