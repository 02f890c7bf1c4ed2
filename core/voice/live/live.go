// Package live is one live voice conversation: a person's microphone in,
// the agent's spoken reply out, with turn-taking. It is the same for every
// surface that carries live audio (the web console's WebSocket today); the
// surface moves bytes and control messages, this package decides what they
// mean.
//
//	            speech start (Endpointer, or push-to-talk down)
//	listening ─────────────────────────────────────────────► hearing
//	    ▲                                                       │ speech end
//	    │  final transcript posted (Options.Post)               │ (or push-to-talk up,
//	    └──────────────────────────── finishing ◄───────────────┘  or MaxUtterance)
//
// Replies are spoken independently of that cycle: each reply's text is
// cut into sentences (voice.Sentences) as it streams, and a single speaker
// goroutine speaks them in order and hands the audio to the surface.
//
// Barge-in: a speech start while a reply is being spoken (synthesised, or
// still playing at the client by the clock: the audio is sent faster than
// it plays) cancels the Speaker, drops the sentences not yet spoken, mutes
// the rest of that reply, and sends EventStop so the client stops playback
// at once. The new words are heard as the next utterance.
//
// What happens on failure: a transcriber error ends that utterance with
// EventError and the session listens again; a Speaker error skips the
// sentence (EventError) and goes on with the next; a Post error is
// reported as EventError with the transcript, which is not retried (the
// person can say it again). Audio is never logged, only its length.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/switchboardhq/switchboard/core/voice"
)

// Mode is how an utterance is delimited.
type Mode string

const (
	// ModeVoice: the Endpointer finds where speech starts and ends.
	ModeVoice Mode = "voice"
	// ModePushToTalk: the client says when the person holds and releases
	// the talk key; speech in between is one utterance.
	ModePushToTalk Mode = "push_to_talk"
)

// EventKind is what the session tells the client.
type EventKind string

const (
	EventSpeechStart EventKind = "speech_start" // the person began speaking
	EventPartial     EventKind = "partial"      // Text: heard so far
	EventFinal       EventKind = "final"        // Text: the utterance, posted as the person's message
	EventIgnored     EventKind = "ignored"      // Text: an utterance without the wake word; not posted
	EventReply       EventKind = "reply"        // Text: a delta of the agent's reply
	EventReplyEnd    EventKind = "reply_end"    // the reply is complete
	EventSentence    EventKind = "sentence"     // Sentence, Text, Format, Audio: its frames follow
	EventAudio       EventKind = "audio"        // Sentence, Frame: a piece of the sentence's PCM
	EventStop        EventKind = "stop"         // Sentence: stop playback of this sentence and those before it
	EventError       EventKind = "error"        // Text: what went wrong
)

// Event is one message to the client. A spoken sentence is an
// EventSentence followed by EventAudio frames of its PCM.
type Event struct {
	Kind EventKind
	Text string
	// Sentence numbers the spoken sentences of the session from 1.
	Sentence int
	Format   voice.Format
	// Audio is how long the sentence's audio lasts.
	Audio time.Duration
	// Frame is a piece of a sentence's PCM (EventAudio).
	Frame []byte
	// Reason says why playback stopped ("barge_in").
	Reason string
}

// Options configure a session.
type Options struct {
	// Transcriber hears the utterances; required.
	Transcriber voice.Transcriber
	// Speaker speaks the replies; nil: replies are not spoken (speak: off).
	Speaker voice.Speaker
	// Post enters a final transcript into the conversation as the
	// person's message; required.
	Post func(ctx context.Context, text string) error
	// Send delivers an event to the client; required. It is called from
	// one goroutine at a time.
	Send func(Event) error
	// Format is the PCM the client sends (default voice.Speech).
	Format voice.Format
	// Mode delimits utterances (default ModeVoice).
	Mode Mode
	// Wake, when set, is the phrase a transcript must begin with to be
	// posted (the agent's name, or a configured phrase); others are
	// reported as EventIgnored.
	Wake string
	// Endpoint tunes the speech detector.
	Endpoint voice.EndpointOptions
	// MaxUtterance ends an utterance that lasts longer (default 30s).
	MaxUtterance time.Duration
	// FrameBytes is the size of the audio frames sent for a sentence
	// (default 100 ms of its audio).
	FrameBytes int
	// PreRoll is how much audio before a detected speech start is given to
	// the transcriber (default 300 ms): the Endpointer confirms speech
	// only after MinSpeech of it.
	PreRoll time.Duration
	Logger  *slog.Logger
	Now     func() time.Time
}

func (o *Options) validate() error {
	switch {
	case o.Transcriber == nil:
		return errors.New("live voice: Options.Transcriber is required")
	case o.Post == nil:
		return errors.New("live voice: Options.Post is required")
	case o.Send == nil:
		return errors.New("live voice: Options.Send is required")
	}
	if o.Format == (voice.Format{}) {
		o.Format = voice.Speech
	}
	if o.Format.SampleRate <= 0 || o.Format.Channels <= 0 {
		return fmt.Errorf("live voice: format %d Hz × %d channels", o.Format.SampleRate, o.Format.Channels)
	}
	switch o.Mode {
	case "":
		o.Mode = ModeVoice
	case ModeVoice, ModePushToTalk:
	default:
		return fmt.Errorf("live voice: mode %q is not %q or %q", o.Mode, ModeVoice, ModePushToTalk)
	}
	if o.MaxUtterance == 0 {
		o.MaxUtterance = 30 * time.Second
	}
	if o.MaxUtterance < 0 {
		return fmt.Errorf("live voice: max utterance %s is negative", o.MaxUtterance)
	}
	if o.PreRoll == 0 {
		o.PreRoll = 300 * time.Millisecond
	}
	if o.Endpoint.Format == (voice.Format{}) {
		o.Endpoint.Format = o.Format
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Session is one live voice conversation. Audio and PushToTalk are called
// by the surface's reader, Reply by whatever follows the conversation's
// replies; each may be called from its own goroutine.
type Session struct {
	opts Options
	ctx  context.Context
	stop context.CancelFunc
	ep   *voice.Endpointer

	sendMu sync.Mutex // Send is called by one goroutine at a time

	mu        sync.Mutex
	pre       []byte     // the last PreRoll of audio while listening
	utter     *utterance // the utterance being heard, nil while listening
	pttDown   bool       // push-to-talk held
	sentences voice.Sentences
	// Speaking: one goroutine speaks the queued sentences in order. A
	// barge-in moves to the next generation: sentences of an older one are
	// dropped, and its Speak call is cancelled.
	queue       chan queued
	gen         int
	speakCtx    context.Context
	speakCancel context.CancelFunc
	pending     int       // sentences queued or being spoken
	muted       bool      // the rest of the current reply is not spoken (barge-in)
	replying    bool      // a reply is streaming
	playUntil   time.Time // when the audio sent so far ends playing at the client
	lastSent    int       // the number of the last sentence sent
	wg          sync.WaitGroup
}

type utterance struct {
	stream voice.Stream
	heard  time.Duration
	ctx    context.Context
	cancel context.CancelFunc
}

type queued struct {
	gen  int
	text string
}

// Start opens a session; ctx bounds it (Close also ends it).
func Start(ctx context.Context, opts Options) (*Session, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	ep, err := voice.NewEndpointer(opts.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("live voice: %w", err)
	}
	s := &Session{opts: opts, ep: ep, queue: make(chan queued, 256)}
	s.ctx, s.stop = context.WithCancel(ctx)
	s.speakCtx, s.speakCancel = context.WithCancel(s.ctx)
	s.wg.Add(1)
	go s.speakLoop()
	return s, nil
}

// Close ends the session: an utterance being heard is abandoned, speaking
// stops, and Close waits for the session's goroutines.
func (s *Session) Close() {
	s.stop()
	s.mu.Lock()
	if u := s.utter; u != nil {
		u.cancel()
		_ = u.stream.Close()
		s.utter = nil
	}
	s.speakCancel()
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Session) send(ev Event) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if err := s.opts.Send(ev); err != nil && s.ctx.Err() == nil {
		s.opts.Logger.DebugContext(s.ctx, "live voice: sending to the client", "kind", ev.Kind, "error", err)
		s.stop() // the client is gone
	}
}

// Audio takes the next PCM from the client.
func (s *Session) Audio(pcm []byte) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	events := s.ep.Feed(pcm)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range events {
		switch ev.Kind {
		case voice.SpeechStart:
			if s.opts.Mode == ModePushToTalk {
				// The key opens the utterance; speech without it still
				// interrupts the agent.
				s.bargeInLocked()
				continue
			}
			if s.utter == nil {
				if err := s.beginLocked(); err != nil {
					return err
				}
			}
		case voice.SpeechEnd:
			if s.opts.Mode == ModeVoice && s.utter != nil {
				// The rest of this PCM is silence after the speech: it
				// ends the utterance, it is not the next one.
				s.writeLocked(pcm)
				s.finishLocked()
				s.keepPreRoll(pcm)
				return nil
			}
		}
	}
	if s.utter != nil {
		s.writeLocked(pcm)
		if s.utter != nil && s.utter.heard >= s.opts.MaxUtterance {
			s.opts.Logger.InfoContext(s.ctx, "live voice: utterance cut at the maximum length", "max", s.opts.MaxUtterance)
			s.finishLocked()
		}
		return nil
	}
	s.keepPreRoll(pcm)
	return nil
}

// keepPreRoll keeps the newest PreRoll of audio heard while listening.
func (s *Session) keepPreRoll(pcm []byte) {
	limit := int(s.opts.PreRoll.Seconds()*float64(s.opts.Format.SampleRate)) * 2 * s.opts.Format.Channels
	s.pre = append(s.pre, pcm...)
	if len(s.pre) > limit {
		s.pre = append(s.pre[:0], s.pre[len(s.pre)-limit:]...)
	}
}

// PushToTalk says the person pressed (down) or released the talk key.
func (s *Session) PushToTalk(down bool) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.Mode != ModePushToTalk {
		return fmt.Errorf("live voice: push-to-talk in %q mode; start the session with mode %q", s.opts.Mode, ModePushToTalk)
	}
	if down == s.pttDown {
		return nil
	}
	s.pttDown = down
	if down {
		s.pre = s.pre[:0] // what came before the key is not part of it
		return s.beginLocked()
	}
	if s.utter != nil {
		s.finishLocked()
	}
	return nil
}

// beginLocked opens an utterance: barge-in first, then the transcriber.
func (s *Session) beginLocked() error {
	s.bargeInLocked()
	s.send(Event{Kind: EventSpeechStart})
	ctx, cancel := context.WithCancel(s.ctx)
	stream, err := s.opts.Transcriber.Stream(ctx, s.opts.Format)
	if err != nil {
		cancel()
		s.send(Event{Kind: EventError, Text: "the transcriber could not start: " + err.Error()})
		return nil // the session goes on listening
	}
	u := &utterance{stream: stream, ctx: ctx, cancel: cancel}
	s.utter = u
	if len(s.pre) > 0 {
		s.writeLocked(s.pre)
		s.pre = s.pre[:0]
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for t := range stream.Partials() {
			if strings.TrimSpace(t.Text) != "" {
				s.send(Event{Kind: EventPartial, Text: t.Text})
			}
		}
	}()
	return nil
}

func (s *Session) writeLocked(pcm []byte) {
	u := s.utter
	if _, err := u.stream.Write(pcm); err != nil {
		s.opts.Logger.WarnContext(s.ctx, "live voice: feeding the transcriber", "error", err)
		s.send(Event{Kind: EventError, Text: "the transcriber failed: " + err.Error()})
		u.cancel()
		_ = u.stream.Close()
		s.utter = nil
		return
	}
	u.heard += s.opts.Format.Duration(len(pcm))
}

// finishLocked ends the utterance being heard: its final transcript is
// awaited and posted in a goroutine of its own, so listening goes on.
func (s *Session) finishLocked() {
	u := s.utter
	s.utter = nil
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer u.cancel()
		t, err := u.stream.Finish(u.ctx)
		_ = u.stream.Close()
		if err != nil {
			if s.ctx.Err() == nil {
				s.opts.Logger.WarnContext(s.ctx, "live voice: final transcript", "audio", u.heard, "error", err)
				s.send(Event{Kind: EventError, Text: "could not transcribe: " + err.Error()})
			}
			return
		}
		text := strings.TrimSpace(t.Text)
		if text == "" {
			s.send(Event{Kind: EventIgnored, Reason: "nothing heard"})
			return
		}
		if !HasWake(text, s.opts.Wake) {
			s.send(Event{Kind: EventIgnored, Text: text, Reason: "no wake word"})
			return
		}
		if err := s.opts.Post(s.ctx, text); err != nil {
			if s.ctx.Err() == nil {
				s.opts.Logger.WarnContext(s.ctx, "live voice: posting the transcript", "error", err)
				s.send(Event{Kind: EventError, Text: "could not send the message (" + text + "): " + err.Error()})
			}
			return
		}
		s.send(Event{Kind: EventFinal, Text: text})
	}()
}

// bargeInLocked stops what is being said: the speaker is cancelled, its
// queue dropped, the rest of the reply muted, and the client told to stop
// playback when anything may still be playing there.
func (s *Session) bargeInLocked() {
	playing := s.opts.Now().Before(s.playUntil)
	if s.pending == 0 && !playing && !s.replying {
		return
	}
	s.speakCancel()
	s.gen++
	s.pending = 0
	s.speakCtx, s.speakCancel = context.WithCancel(s.ctx)
	s.muted = s.replying
	s.sentences = voice.Sentences{}
	s.playUntil = time.Time{}
	if s.lastSent > 0 || playing {
		s.send(Event{Kind: EventStop, Sentence: s.lastSent, Reason: "barge_in"})
	}
}

// ReplyKind is what happened to the agent's reply.
type ReplyKind int

const (
	ReplyDelta   ReplyKind = iota + 1 // Text: the next piece of the reply
	ReplyRestart                      // the reply is written again from the start (a retried model call)
	ReplyEnd                          // the turn ended
	ReplyWhole                        // Text: a whole reply that was not streamed
)

// Reply takes what the conversation's agent is saying.
func (s *Session) Reply(kind ReplyKind, text string) {
	if s.ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch kind {
	case ReplyDelta:
		s.replying = true
		s.send(Event{Kind: EventReply, Text: text})
		if !s.muted {
			for _, sentence := range s.sentences.Feed(text) {
				s.speakLocked(sentence)
			}
		}
	case ReplyWhole:
		s.send(Event{Kind: EventReply, Text: text})
		if !s.muted {
			for _, sentence := range s.sentences.Feed(text) {
				s.speakLocked(sentence)
			}
			if rest := s.sentences.Flush(); rest != "" {
				s.speakLocked(rest)
			}
		}
	case ReplyRestart:
		// What was spoken stays spoken; the text is cut again from here.
		s.sentences = voice.Sentences{}
	case ReplyEnd:
		if !s.muted {
			if rest := s.sentences.Flush(); rest != "" {
				s.speakLocked(rest)
			}
		}
		s.sentences = voice.Sentences{}
		s.muted, s.replying = false, false
		s.send(Event{Kind: EventReplyEnd})
	}
}

// speakLocked queues a sentence for the speaker.
func (s *Session) speakLocked(sentence string) {
	if s.opts.Speaker == nil || strings.TrimSpace(sentence) == "" {
		return
	}
	select {
	case s.queue <- queued{gen: s.gen, text: sentence}:
		s.pending++
	default:
		s.opts.Logger.WarnContext(s.ctx, "live voice: too many sentences waiting to be spoken; one skipped")
	}
}

func (s *Session) speakLoop() {
	defer s.wg.Done()
	for {
		var q queued
		select {
		case <-s.ctx.Done():
			return
		case q = <-s.queue:
		}
		s.mu.Lock()
		current, ctx := q.gen == s.gen, s.speakCtx
		s.mu.Unlock()
		if !current {
			continue // dropped by a barge-in
		}
		audio, err := s.opts.Speaker.Speak(ctx, q.text)
		switch {
		case ctx.Err() != nil:
			continue // barge-in, or the end of the session
		case err != nil:
			s.opts.Logger.WarnContext(ctx, "live voice: speaking a sentence", "chars", len(q.text), "error", err)
			s.send(Event{Kind: EventError, Text: "could not speak: " + err.Error()})
			s.done(q.gen)
			continue
		}
		s.sendAudio(q, audio)
	}
}

// done counts a sentence of generation gen as spoken.
func (s *Session) done(gen int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen == s.gen && s.pending > 0 {
		s.pending--
	}
}

// sendAudio sends a sentence's audio in frames unless a barge-in came
// meanwhile; the check and the sends hold the lock, so no frame of a
// stopped reply follows EventStop.
func (s *Session) sendAudio(q queued, audio voice.Audio) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.gen != s.gen {
		return
	}
	s.pending--
	dur := audio.Format.Duration(len(audio.PCM))
	s.lastSent++
	now := s.opts.Now()
	if s.playUntil.Before(now) {
		s.playUntil = now
	}
	s.playUntil = s.playUntil.Add(dur)
	s.send(Event{Kind: EventSentence, Sentence: s.lastSent, Text: q.text, Format: audio.Format, Audio: dur})
	frame := s.opts.FrameBytes
	if frame <= 0 {
		frame = audio.Format.SampleRate / 10 * 2 * max(1, audio.Format.Channels)
	}
	frame -= frame % (2 * max(1, audio.Format.Channels))
	if frame <= 0 {
		frame = 2
	}
	for off := 0; off < len(audio.PCM); off += frame {
		s.send(Event{Kind: EventAudio, Sentence: s.lastSent, Frame: audio.PCM[off:min(off+frame, len(audio.PCM))]})
	}
}

// HasWake reports whether text begins with the wake phrase (its words, in
// any case, punctuation ignored); an empty phrase is always there.
func HasWake(text, wake string) bool {
	w := words(wake)
	if len(w) == 0 {
		return true
	}
	t := words(text)
	if len(t) < len(w) {
		return false
	}
	for i := range w {
		if t[i] != w[i] {
			return false
		}
	}
	return true
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
