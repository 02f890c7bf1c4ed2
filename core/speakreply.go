package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/store"
)

// PlayFunc plays one spoken sentence of a reply, in order. It returns when
// the audio is handed on (sent to the page, queued on the voice channel);
// ctx is cancelled when the reply is interrupted.
type PlayFunc func(ctx context.Context, a voice.Audio, sentence string) error

// ReplySpeechOptions say which reply to speak and where.
type ReplySpeechOptions struct {
	Conversation uuid.UUID
	// Agent is the agent whose reply is spoken, with its Speaker.
	Agent string
	Play  PlayFunc
}

// ReplySpeech speaks an agent's reply as it streams: each sentence the
// moment it is complete, synthesised while the one before it plays. Start
// it (SpeakReply) before the message it answers is posted, so it hears the
// reply's first words.
type ReplySpeech struct {
	s      *Service
	o      ReplySpeechOptions
	engine string
	ctx    context.Context
	cancel context.CancelFunc
	quiet  chan struct{} // closed when nothing plays any more
	done   chan struct{} // closed after quiet, once the usage is recorded

	mu      sync.Mutex
	err     error
	chars   int
	audio   time.Duration
	spoken  []string
	stopped bool
}

// SpeakReply starts speaking the next reply of o.Agent in o.Conversation,
// until its turn ends (Wait) or it is interrupted (Stop: barge-in).
func (s *Service) SpeakReply(ctx context.Context, o ReplySpeechOptions) (*ReplySpeech, error) {
	if o.Play == nil || o.Conversation == uuid.Nil {
		return nil, invalid("speaking a reply needs its conversation and a Play")
	}
	eng, a, err := s.VoiceFor(o.Agent)
	if err != nil {
		return nil, err
	}
	if eng.Speaker == nil || !a.Voice.Speaks() {
		return nil, fmt.Errorf("agent %q does not speak (voice.speak is off): %w", o.Agent, ErrVoiceOff)
	}
	events, unsubscribe := s.hub.Subscribe(o.Conversation, 4096)
	ctx, cancel := context.WithCancel(ctx)
	r := &ReplySpeech{s: s, o: o, engine: eng.Speaks, ctx: ctx, cancel: cancel, quiet: make(chan struct{}), done: make(chan struct{})}
	sentences := make(chan string, 256)
	go r.listen(events, unsubscribe, sentences)
	go r.speak(eng.Speaker, sentences)
	return r, nil
}

// listen turns the turn's events into sentences: deltas through
// voice.Sentences; a message that came without deltas, whole; and at the
// turn's end no more.
func (r *ReplySpeech) listen(events <-chan Event, unsubscribe func(), out chan<- string) {
	defer close(out)
	defer unsubscribe()
	var split voice.Sentences
	streamed := false
	send := func(ss ...string) bool {
		for _, s := range ss {
			select {
			case out <- s:
			case <-r.ctx.Done():
				return false
			}
		}
		return true
	}
	for {
		var ev Event
		select {
		case <-r.ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				return
			}
			ev = e
		}
		if ev.Agent != "" && ev.Agent != r.o.Agent {
			continue
		}
		switch ev.Kind {
		case EventDelta:
			streamed = true
			if !send(split.Feed(ev.Text)...) {
				return
			}
		case EventRestart:
			// The model call is retried: what it streamed is dropped; what
			// was already said stays said.
			split = voice.Sentences{}
		case EventEntry:
			if ev.Entry == nil || ev.Entry.Kind != store.EntryAssistant {
				continue
			}
			if name, ok := ev.Entry.Author.Agent(); ok && name != r.o.Agent {
				continue
			}
			if !streamed {
				c, err := Decode[AssistantContent](ev.Entry)
				if err == nil {
					split.Feed(c.Text)
				}
			}
			if rest := split.Flush(); rest != "" {
				if !send(rest) {
					return
				}
			}
			// The stream's sentences were spoken; the next message of the
			// turn (after a tool call) streams anew.
			split, streamed = voice.Sentences{}, false
		case EventTurnEnd:
			if rest := split.Flush(); rest != "" {
				send(rest)
			}
			return
		}
	}
}

// speak synthesises the sentences in order and plays each, the next one
// synthesised while this one plays.
func (r *ReplySpeech) speak(sp voice.Speaker, sentences <-chan string) {
	defer close(r.done)
	defer r.record()
	defer close(r.quiet)
	type spoken struct {
		a voice.Audio
		s string
	}
	ready := make(chan spoken, 1)
	go func() {
		defer close(ready)
		for s := range sentences {
			a, err := sp.Speak(r.ctx, s)
			if err != nil {
				if r.ctx.Err() == nil {
					r.fail(fmt.Errorf("speaking for agent %q: %w", r.o.Agent, err))
				}
				continue
			}
			r.mu.Lock()
			r.chars += a.Characters
			r.audio += a.Format.Duration(len(a.PCM))
			r.mu.Unlock()
			select {
			case ready <- spoken{a, s}:
			case <-r.ctx.Done():
			}
		}
	}()
	for x := range ready {
		if r.ctx.Err() != nil {
			continue // drain: the synthesiser stops at its next sentence
		}
		if err := r.o.Play(r.ctx, x.a, x.s); err != nil && r.ctx.Err() == nil {
			r.fail(fmt.Errorf("playing agent %q's reply: %w", r.o.Agent, err))
			r.cancel()
			continue
		}
		r.mu.Lock()
		r.spoken = append(r.spoken, x.s)
		r.mu.Unlock()
	}
}

func (r *ReplySpeech) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// record writes the speech's usage: the characters synthesised and the
// audio made, played or not.
func (r *ReplySpeech) record() {
	r.mu.Lock()
	chars, audio := r.chars, r.audio
	r.mu.Unlock()
	if chars == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 10*time.Second)
	defer cancel()
	r.s.recordVoiceUsage(ctx, r.o.Agent, r.o.Conversation, store.UsageSpeech, r.engine, "espeak-ng", audio, chars)
}

// Stop interrupts the reply at once (barge-in): the sentence playing is
// cut (its Play's ctx is cancelled) and no other is spoken. It waits until
// nothing plays, not for the speech's usage row (Wait does).
func (r *ReplySpeech) Stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
	<-r.quiet
}

// ErrReplyInterrupted is Wait's error for a reply stopped before its end.
var ErrReplyInterrupted = errors.New("the spoken reply was interrupted")

// Wait waits until the reply's turn has ended and every sentence was
// played, or it was stopped (ErrReplyInterrupted), or ctx ends.
func (r *ReplySpeech) Wait(ctx context.Context) error {
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if r.stopped {
		return ErrReplyInterrupted
	}
	return nil
}

// Spoken are the sentences played so far, in order.
func (r *ReplySpeech) Spoken() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.spoken...)
}
