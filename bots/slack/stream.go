package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/mrkdwn"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
)

// A streamed reply uses Slack's chat streaming API (chat.startStream,
// appendStream, stopStream) where it can: in a thread, with the recipient
// known (required outside a DM). Where it cannot, or when startStream fails,
// the reply falls back to one posted message edited with chat.update at most
// once per StreamUpdateInterval, split into more messages as it grows.
//
// Either way a message gets at most one append or edit per
// StreamUpdateInterval, however fast the deltas come: deltas in between are
// buffered and go in the next call, cut to Slack's per-call limit
// (slacklimit.StreamMarkdown); what is left at the end goes out at the same
// pace, its last piece with chat.stopStream (or the final edit), which
// waits for nothing, so a short reply ends as soon as the model does.
//
// The native stream starts at the first Append, not at StartStream, so a turn
// that fails before writing anything leaves no empty message behind.

type streamMode int

const (
	modeUndecided streamMode = iota
	modeNative
	modeFallback
)

type stream struct {
	a        *Adapter
	w        *workspace // the team's client
	to       bots.Target
	channel  string
	identity *bots.Identity
	eligible bool

	mu       sync.Mutex
	text     string // every delta so far, as Markdown
	mode     streamMode
	finished bool

	// native
	ts       string
	sent     int // bytes of text handed to Slack
	lastSend time.Time
	broken   error
	// A stream older than StreamMaxAge moves on to a new message: done are
	// the messages it left (stopped, complete), base is where the current
	// message's text starts in text, opened when it was started.
	done   []bots.MessageRef
	base   int
	opened time.Time

	// fallback
	refs      []bots.MessageRef
	shown     []string
	lastFlush time.Time
}

// StartStream opens an in-progress reply in the target thread.
func (a *Adapter) StartStream(ctx context.Context, to bots.Target, id *bots.Identity) (bots.Stream, error) {
	w, channel, err := a.target(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("starting a slack stream: %w", err)
	}
	return &stream{
		a:        a,
		w:        w,
		to:       to,
		channel:  channel,
		identity: id,
		eligible: nativeEligible(to, channel),
	}, nil
}

// Append adds a delta. Slack is called at most once per
// StreamUpdateInterval, with at most one call's worth of text; Append never
// waits for the pace.
func (s *stream) Append(ctx context.Context, delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return errors.New("appending to a finished slack stream")
	}
	s.text += delta
	now := s.a.opts.Now()
	switch s.mode {
	case modeUndecided:
		if s.eligible {
			err := s.startNative(ctx)
			if err == nil {
				s.mode = modeNative
				return nil
			}
			if ctx.Err() != nil {
				return err
			}
			s.a.log.WarnContext(ctx, "slack chat streaming unavailable; falling back to edits", "channel", s.channel, "err", err)
		}
		s.mode = modeFallback
		return s.flushFallback(ctx, now)
	case modeNative:
		if s.broken != nil {
			return nil // Finish repairs the message
		}
		if now.Sub(s.lastSend) < s.a.opts.StreamUpdateInterval {
			return nil
		}
		if err := s.sendNative(ctx, nil, false); err != nil {
			s.broken = err
			return fmt.Errorf("streaming to slack: %w", err)
		}
		return nil
	default:
		if now.Sub(s.lastFlush) < s.a.opts.StreamUpdateInterval {
			return nil
		}
		return s.flushFallback(ctx, now)
	}
}

// startNative opens the native stream with the text so far (one call's
// worth; the rest follows at the stream's pace) and chunks (task updates).
func (s *stream) startNative(ctx context.Context, chunks ...slack.StreamChunk) error {
	return s.openNative(ctx, chunks)
}

// openNative starts a streaming message carrying the text not sent yet (up
// to one call's worth) and chunks; the rest follows with sendNative.
func (s *stream) openNative(ctx context.Context, chunks []slack.StreamChunk) error {
	first := chunkRunes(s.text[s.sent:], slacklimit.StreamMarkdown)[0]
	opts := []slack.MsgOption{slack.MsgOptionTS(s.to.Thread)}
	if first != "" {
		opts = append(opts, slack.MsgOptionMarkdownText(mrkdwn.Defuse(first)))
	}
	if len(chunks) > 0 {
		opts = append(opts, slack.MsgOptionChunks(chunks...))
	}
	if s.to.UserID != "" {
		opts = append(opts, slack.MsgOptionRecipientUserID(s.to.UserID))
	}
	if s.to.Workspace != "" {
		opts = append(opts, slack.MsgOptionRecipientTeamID(s.to.Workspace))
	}
	opts = append(opts, identityOptions(s.identity)...)
	if err := s.a.waitTurn(ctx, s.channel); err != nil {
		return err
	}
	var ts string
	err := s.a.retry(ctx, "chat.startStream", func(ctx context.Context) error {
		var err error
		_, ts, err = s.w.api.StartStreamContext(ctx, s.channel, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("starting a slack stream in %s/%s: %w", s.channel, s.to.Thread, err)
	}
	s.ts, s.base = ts, s.sent
	s.sent += len(first)
	s.opened = s.a.opts.Now()
	s.lastSend = s.opened
	return nil
}

// sendNative hands Slack the text not sent yet and chunks, in that order:
// one call when all is false, else as many as it takes, each on the
// message's pace. A message streamed for StreamMaxAge is stopped as it is
// and the stream goes on in a new one, before Slack would end it.
func (s *stream) sendNative(ctx context.Context, chunks []slack.StreamChunk, all bool) error {
	for s.sent < len(s.text) || len(chunks) > 0 {
		if s.a.opts.Now().Sub(s.opened) >= s.a.opts.StreamMaxAge {
			if err := s.rotate(ctx); err != nil {
				return err
			}
			if err := s.openNative(ctx, chunks); err != nil {
				return err
			}
			chunks = nil
		} else {
			c := chunkRunes(s.text[s.sent:], slacklimit.StreamMarkdown)[0]
			var opts []slack.MsgOption
			if c != "" {
				opts = append(opts, slack.MsgOptionMarkdownText(mrkdwn.Defuse(c)))
			}
			if len(chunks) > 0 && s.sent+len(c) == len(s.text) {
				opts = append(opts, slack.MsgOptionChunks(chunks...)) // with the last piece of text
				chunks = nil
			}
			if err := s.appendNative(ctx, opts...); err != nil {
				return err
			}
			s.sent += len(c)
		}
		if !all {
			break
		}
	}
	return nil
}

// pace waits until the current message may take its next call: at least
// StreamUpdateInterval after the last one.
func (s *stream) pace(ctx context.Context) error {
	if s.lastSend.IsZero() {
		return nil
	}
	if d := s.lastSend.Add(s.a.opts.StreamUpdateInterval).Sub(s.a.opts.Now()); d > 0 {
		if err := s.a.opts.SleepFunc(ctx, d); err != nil {
			return fmt.Errorf("pacing slack stream %s: %w", s.ts, err)
		}
	}
	return nil
}

// appendNative makes one chat.appendStream call, on the message's pace.
func (s *stream) appendNative(ctx context.Context, opts ...slack.MsgOption) error {
	if err := s.pace(ctx); err != nil {
		return err
	}
	defer func() { s.lastSend = s.a.opts.Now() }()
	err := s.a.retry(ctx, "chat.appendStream", func(ctx context.Context) error {
		_, _, err := s.w.api.AppendStreamContext(ctx, s.channel, s.ts, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("appending to slack stream %s: %w", s.ts, err)
	}
	return nil
}

// rotate stops the current streaming message as it stands; the stream's
// next call opens a new one below it.
func (s *stream) rotate(ctx context.Context) error {
	err := s.a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := s.w.api.StopStreamContext(ctx, s.channel, s.ts)
		return err
	})
	if err != nil && !strings.Contains(err.Error(), "message_not_in_streaming_state") {
		return fmt.Errorf("stopping slack stream %s to move on to a new message: %w", s.ts, err)
	}
	s.a.log.DebugContext(ctx, "slack stream moved on to a new message before it expires", "channel", s.channel, "ts", s.ts)
	s.done = append(s.done, bots.MessageRef{Channel: s.channel, ID: s.ts})
	s.ts = ""
	return nil
}

// ShowsTasks implements bots.TaskStreamer: tasks show in Slack's native
// stream, which a threaded reply with a known recipient gets.
func (a *Adapter) ShowsTasks(to bots.Target) bool {
	return a.opts.TaskUpdates && nativeEligible(to, to.Channel)
}

func nativeEligible(to bots.Target, channel string) bool {
	return to.Thread != "" && (strings.HasPrefix(channel, "D") || (to.UserID != "" && to.Workspace != ""))
}

// Task implements bots.TaskStream: a task_update chunk, after the text
// streamed so far. A stream that fell back to edits shows no tasks (the
// status line says what runs).
func (s *stream) Task(ctx context.Context, t bots.Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return errors.New("showing a task on a finished slack stream")
	}
	chunk := slack.TaskUpdateChunk{
		Type: slack.StreamChunkTaskUpdate, ID: t.ID, Title: truncateRunes(t.Title, slacklimit.TaskText),
		Status: slack.TaskCardStatus(t.Status), Details: truncateRunes(t.Details, slacklimit.TaskText),
		Output: truncateRunes(t.Output, slacklimit.TaskText),
	}
	switch s.mode {
	case modeUndecided:
		if !s.eligible {
			s.mode = modeFallback
			return nil
		}
		err := s.startNative(ctx, chunk)
		if err == nil {
			s.mode = modeNative
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		s.a.log.WarnContext(ctx, "slack chat streaming unavailable; falling back to edits", "channel", s.channel, "err", err)
		s.mode = modeFallback
		return s.flushFallback(ctx, s.a.opts.Now())
	case modeNative:
		if s.broken != nil {
			return nil
		}
		if err := s.sendNative(ctx, []slack.StreamChunk{chunk}, true); err != nil {
			s.broken = err
			return fmt.Errorf("showing a task on slack: %w", err)
		}
	}
	return nil
}

// flushFallback shows the text so far: edits the messages already posted
// whose part changed and posts the parts that are new.
func (s *stream) flushFallback(ctx context.Context, now time.Time) error {
	s.lastFlush = now
	if strings.TrimSpace(s.text) == "" {
		return nil
	}
	parts := mrkdwn.Split(mrkdwn.Convert(s.text), s.a.opts.TextLimit)
	for i, p := range parts {
		if i < len(s.refs) {
			if s.shown[i] == p {
				continue
			}
			if err := s.a.updateMessage(ctx, s.w, s.channel, s.refs[i].ID, p, nil); err != nil {
				return err
			}
			s.shown[i] = p
			continue
		}
		ts, err := s.a.postPart(ctx, s.w, s.channel, s.to.Thread, part{text: p}, s.identity)
		if err != nil {
			return err
		}
		s.refs = append(s.refs, bots.MessageRef{Channel: s.channel, ID: ts})
		s.shown = append(s.shown, p)
	}
	return nil
}

// ResumeStream implements bots.StreamResumer: it takes over the messages a
// live stream of another attempt or process made. A native stream left open
// is stopped first (text appended to it cannot be taken back); from then on
// the messages are edited with chat.update, and Finish replaces them.
func (a *Adapter) ResumeStream(ctx context.Context, to bots.Target, refs []bots.MessageRef, id *bots.Identity) (bots.Stream, error) {
	st, err := a.StartStream(ctx, to, id)
	if err != nil {
		return nil, err
	}
	s := st.(*stream)
	s.mode = modeFallback
	for _, r := range refs {
		if r.Channel == "" || r.ID == "" {
			continue
		}
		s.stopIfStreaming(ctx, r)
		s.refs = append(s.refs, r)
		s.shown = append(s.shown, "\x00") // unknown: the next flush edits it
	}
	return s, nil
}

// stopIfStreaming closes a native stream; a message that is not streaming
// (already stopped, or posted normally) is left as it is.
func (s *stream) stopIfStreaming(ctx context.Context, r bots.MessageRef) {
	err := s.a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := s.w.api.StopStreamContext(ctx, r.Channel, r.ID)
		return err
	})
	if err != nil && !strings.Contains(err.Error(), "message_not_in_streaming_state") {
		s.a.log.WarnContext(ctx, "stopping a slack stream left open", "ts", r.ID, "err", err)
	}
}

// Reset implements bots.Stream: the model call is retried, so what was
// shown is replaced by what comes next. A native stream cannot take text
// back: it is stopped and its message edited from then on. Surplus
// fallback messages are deleted; the first shows a placeholder until the
// retry writes.
func (s *stream) Reset(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return nil
	}
	s.text = ""
	switch s.mode {
	case modeUndecided:
		return nil
	case modeNative:
		s.stopIfStreaming(ctx, bots.MessageRef{Channel: s.channel, ID: s.ts})
		s.mode = modeFallback
		s.refs = append(s.done, bots.MessageRef{Channel: s.channel, ID: s.ts})
		s.shown = make([]string, len(s.refs))
		for i := range s.shown {
			s.shown[i] = "\x00"
		}
		s.done, s.broken = nil, nil
	}
	for _, extra := range s.refs[min(1, len(s.refs)):] {
		err := s.a.retry(ctx, "chat.delete", func(ctx context.Context) error {
			_, _, err := s.w.api.DeleteMessageContext(ctx, extra.Channel, extra.ID)
			return err
		})
		if err != nil {
			return fmt.Errorf("deleting streamed slack message %s: %w", extra.ID, err)
		}
	}
	s.refs, s.shown = s.refs[:min(1, len(s.refs))], s.shown[:min(1, len(s.shown))]
	if len(s.refs) == 1 && s.shown[0] != retryPlaceholder {
		if err := s.a.updateMessage(ctx, s.w, s.channel, s.refs[0].ID, retryPlaceholder, nil); err != nil {
			return err
		}
		s.shown[0] = retryPlaceholder
	}
	return nil
}

// retryPlaceholder stands in a reset message until the retry writes.
const retryPlaceholder = "…"

// Refs implements bots.Stream.
func (s *stream) Refs() []bots.MessageRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == modeNative {
		return s.nativeRefs()
	}
	return append([]bots.MessageRef(nil), s.refs...)
}

// Finish replaces the in-progress reply with final and returns the messages
// it consists of. A nil final keeps the streamed text.
func (s *stream) Finish(ctx context.Context, final *bots.Message) ([]bots.MessageRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return nil, errors.New("finishing a slack stream twice")
	}
	s.finished = true
	if final == nil {
		final = &bots.Message{Text: s.text}
	}
	if final.Identity == nil {
		final.Identity = s.identity
	}
	var (
		refs []bots.MessageRef
		err  error
	)
	switch s.mode {
	case modeUndecided:
		return s.a.Post(ctx, s.to, final)
	case modeNative:
		refs, err = s.finishNative(ctx, final)
	default:
		refs, err = s.finishFallback(ctx, final)
	}
	if err != nil {
		return refs, err
	}
	if err := s.a.uploadFiles(ctx, s.w, s.channel, s.to.Thread, final.Files); err != nil {
		return refs, err
	}
	s.a.postVoice(ctx, s.w, s.channel, s.to.Thread, final)
	return refs, nil
}

// nativeRefs are the messages of a native stream: those it moved on from,
// then the current one.
func (s *stream) nativeRefs() []bots.MessageRef {
	refs := append([]bots.MessageRef(nil), s.done...)
	if s.ts != "" {
		refs = append(refs, bots.MessageRef{Channel: s.channel, ID: s.ts})
	}
	return refs
}

func (s *stream) finishNative(ctx context.Context, final *bots.Message) ([]bots.MessageRef, error) {
	var blocks []slack.Block
	if final.Card != nil || len(final.Buttons) > 0 {
		blocks = buttonBlocks(final.Buttons)
		if final.Card != nil {
			if card, _, err := s.a.opts.RenderCardFunc(final.Card); err == nil {
				blocks = append(card, blocks...)
			}
		}
	}
	if fb := s.a.feedbackBlock(final); fb != nil {
		blocks = append(blocks, fb)
	}
	if s.broken == nil && strings.HasPrefix(final.Text, s.text) {
		// What was streamed is the start of the reply: the rest goes in as
		// text (in a new message if the current one is old), the buttons
		// with the stop.
		var last string
		if s.a.opts.Now().Sub(s.opened) < s.a.opts.StreamMaxAge {
			// The last piece of text goes with the stop.
			pieces := chunkRunes(final.Text[s.sent:], slacklimit.StreamMarkdown)
			last = pieces[len(pieces)-1]
		}
		s.text = final.Text[:len(final.Text)-len(last)]
		err := s.sendNative(ctx, nil, true)
		s.text = final.Text
		if err == nil {
			var opts []slack.MsgOption
			if last != "" {
				opts = append(opts, slack.MsgOptionMarkdownText(mrkdwn.Defuse(last)))
				s.sent += len(last)
			}
			if len(blocks) > 0 {
				opts = append(opts, slack.MsgOptionBlocks(blocks...))
			}
			err = s.a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
				_, _, err := s.w.api.StopStreamContext(ctx, s.channel, s.ts, opts...)
				return err
			})
			if err == nil {
				return s.nativeRefs(), nil
			}
		}
		s.a.log.WarnContext(ctx, "finishing slack stream; replacing the message instead", "ts", s.ts, "err", err)
	} else if s.ts != "" {
		// The final text is not what was streamed (or streaming broke): stop
		// the stream and replace the message.
		s.stopIfStreaming(ctx, bots.MessageRef{Channel: s.channel, ID: s.ts})
	}
	// The whole reply goes in the first message; the ones it moved on to
	// are removed.
	refs := s.nativeRefs()
	for _, extra := range refs[1:] {
		err := s.a.retry(ctx, "chat.delete", func(ctx context.Context) error {
			_, _, err := s.w.api.DeleteMessageContext(ctx, extra.Channel, extra.ID)
			return err
		})
		if err != nil {
			return refs, fmt.Errorf("deleting streamed slack message %s: %w", extra.ID, err)
		}
	}
	text, rendered := s.a.renderOne(ctx, final)
	if err := s.a.updateMessage(ctx, s.w, s.channel, refs[0].ID, text, rendered); err != nil {
		return nil, err
	}
	return refs[:1], nil
}

func (s *stream) finishFallback(ctx context.Context, final *bots.Message) ([]bots.MessageRef, error) {
	parts := s.a.render(ctx, final)
	if strings.TrimSpace(final.Text) == "" && len(final.Buttons) == 0 && final.Card == nil {
		parts = nil
	}
	var refs []bots.MessageRef
	for i, p := range parts {
		if i < len(s.refs) {
			if p.blocks == nil && s.shown[i] == p.text {
				refs = append(refs, s.refs[i])
				continue
			}
			if err := s.a.updateMessage(ctx, s.w, s.channel, s.refs[i].ID, p.text, p.blocks); err != nil {
				return refs, err
			}
			refs = append(refs, s.refs[i])
			continue
		}
		p.key, p.index = final.Key, i
		ts, err := s.a.postPart(ctx, s.w, s.channel, s.to.Thread, p, final.Identity)
		if err != nil {
			return refs, err
		}
		refs = append(refs, bots.MessageRef{Channel: s.channel, ID: ts})
	}
	// The final reply is shorter than what was streamed: remove the rest.
	for _, extra := range s.refs[min(len(parts), len(s.refs)):] {
		err := s.a.retry(ctx, "chat.delete", func(ctx context.Context) error {
			_, _, err := s.w.api.DeleteMessageContext(ctx, extra.Channel, extra.ID)
			return err
		})
		if err != nil {
			return refs, fmt.Errorf("deleting streamed slack message %s: %w", extra.ID, err)
		}
	}
	return refs, nil
}

// chunkRunes cuts s into pieces of at most n characters; it always returns
// at least one (possibly empty) piece.
func chunkRunes(s string, n int) []string {
	var out []string
	for utf8.RuneCountInString(s) > n {
		i, count := 0, 0
		for i < len(s) && count < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			count++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return append(out, s)
}
