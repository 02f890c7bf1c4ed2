// Package live is one live voice conversation: a person's microphone in,
// the agent's spoken reply out, with turn-taking. It is the same for every
// surface that carries live audio (the web console's WebSocket today); the
// surface moves bytes and control messages, this package decides what they
// mean.
//
//	            speech start (Endpointer, or push-to-talk down): barge-in, Listen
//	listening ─────────────────────────────────────────────────────► hearing
//	    ▲                                                               │ speech end (or push-to-talk
//	    │                                                               │ up, or the utterance's
//	    │  final sent; Speak started; Utterance.Post                    │ maximum length: ErrTooLong)
//	    └──────────────────────────────── finishing ◄───────────────────┘
//
// Finishing runs on its own goroutine: the session listens again at once,
// so speech during the transcription or the reply is heard.
//
// The surface supplies the two halves of core it needs: Listen opens an
// utterance of the person to the agent (core.Service.Listen, bound to the
// conversation and the person), whose Post enters the words into the
// conversation as the person's spoken message (core.Service.PostSpoken);
// Speak starts speaking the agent's next reply (core.Service.SpeakReply),
// handing each sentence's audio to Play. Speak is started just before the
// words are posted, so it hears the reply from its first delta.
//
// Barge-in: a speech start (or push-to-talk down) while a reply is being
// spoken, or may still be playing at the client by the clock (the audio is
// sent faster than it plays), stops the replies being spoken (their Play
// is refused from that moment, their Speaker cancelled) and sends
// EventStop, so the client stops playback at once. The new words are heard
// as the next utterance.
//
// What happens on failure: a transcriber error ends that utterance with
// EventError and the session listens again; a Post error is reported as
// EventError with the words, which are not retried (the person can say
// them again); a reply that cannot be spoken is still written in the
// conversation. Audio is never logged, only its length.
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
	EventFinal       EventKind = "final"        // Text: the utterance, now posted as the person's message (an EventError follows if that fails)
	EventIgnored     EventKind = "ignored"      // Text, Reason: an utterance not posted (no words, no wake word)
	EventSentence    EventKind = "sentence"     // Sentence, Text, Format, Audio: its frames follow
	EventAudio       EventKind = "audio"        // Sentence, Frame: a piece of the sentence's PCM
	EventStop        EventKind = "stop"         // Sentence, Reason: stop playback of this sentence and those before it
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
	// Reason says why playback stopped ("barge_in") or an utterance was
	// ignored.
	Reason string
}

// Utterance is one utterance being heard (core.Listening, with the
// conversation to post into).
type Utterance interface {
	Write(pcm []byte) (int, error)
	Partials() <-chan voice.Transcript
	// Finish ends the utterance and returns the words heard ("" for
	// none).
	Finish(ctx context.Context) (string, error)
	// Post enters what Finish heard into the conversation as the
	// person's message.
	Post(ctx context.Context) error
	Close() error
}

// ErrTooLong is what an Utterance's Write returns once the utterance is
// as long as it may be: the session finishes it.
var ErrTooLong = errors.New("the utterance is as long as it may be")

// postTimeout bounds the post of an utterance's words.
const postTimeout = 30 * time.Second

// Play hands one spoken sentence of a reply to the client, in order
// (core.PlayFunc).
type Play func(ctx context.Context, a voice.Audio, sentence string) error

// Speech is one reply being spoken (core.ReplySpeech).
type Speech interface {
	// Stop interrupts it and waits until nothing of it plays.
	Stop()
	// Wait waits until it is over, its bookkeeping (usage) included.
	Wait(ctx context.Context) error
}

// Options configure a session.
type Options struct {
	// Listen opens an utterance; required.
	Listen func(ctx context.Context) (Utterance, error)
	// Speak starts speaking the agent's next reply, each sentence through
	// play; nil: replies are not spoken (voice.speak: off).
	Speak func(ctx context.Context, play Play) (Speech, error)
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
	case o.Listen == nil:
		return errors.New("live voice: Options.Listen is required")
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
// by the surface's reader (one goroutine).
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
	speeches  []*speech  // replies being spoken (or done: Stop is harmless then)
	playUntil time.Time  // when the audio sent so far ends playing at the client
	lastSent  int        // the number of the last sentence sent
	wg        sync.WaitGroup
}

type utterance struct {
	u        Utterance
	ctx      context.Context
	cancel   context.CancelFunc
	partials chan struct{} // closed when its partials are all sent
}

// speech is a reply being spoken; once stopped, its Play is refused.
type speech struct {
	sp      Speech
	stopped bool
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
	s := &Session{opts: opts, ep: ep}
	s.ctx, s.stop = context.WithCancel(ctx)
	return s, nil
}

// Close ends the session: an utterance being heard is dropped, speaking
// stops, and Close waits for the session's goroutines.
func (s *Session) Close() {
	s.stop()
	s.mu.Lock()
	if u := s.utter; u != nil {
		u.cancel()
		_ = u.u.Close()
		s.utter = nil
	}
	speeches := s.speeches
	s.speeches = nil
	for _, sp := range speeches {
		sp.stopped = true
	}
	s.mu.Unlock()
	s.stopSpeeches(speeches)
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
				s.beginLocked()
			}
		case voice.SpeechEnd:
			if s.opts.Mode == ModeVoice && s.utter != nil {
				// The rest of this PCM is silence after the speech: it
				// ends the utterance, it is not the next one.
				s.writeLocked(pcm)
				if s.utter != nil {
					s.finishLocked()
				}
				s.keepPreRoll(pcm)
				return nil
			}
		}
	}
	if s.utter != nil {
		s.writeLocked(pcm)
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
		if s.utter == nil {
			s.beginLocked()
		}
		return nil
	}
	if s.utter != nil {
		s.finishLocked()
	}
	return nil
}

// beginLocked opens an utterance: barge-in first, then the transcriber.
func (s *Session) beginLocked() {
	s.bargeInLocked()
	s.send(Event{Kind: EventSpeechStart})
	ctx, cancel := context.WithCancel(s.ctx)
	u, err := s.opts.Listen(ctx)
	if err != nil {
		cancel()
		s.opts.Logger.WarnContext(s.ctx, "live voice: listening", "error", err)
		s.send(Event{Kind: EventError, Text: "cannot listen: " + err.Error()})
		return // the session goes on listening for the next one
	}
	ut := &utterance{u: u, ctx: ctx, cancel: cancel, partials: make(chan struct{})}
	s.utter = ut
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(ut.partials)
		for t := range u.Partials() {
			if strings.TrimSpace(t.Text) != "" {
				s.send(Event{Kind: EventPartial, Text: t.Text})
			}
		}
	}()
	if len(s.pre) > 0 {
		s.writeLocked(s.pre)
		s.pre = s.pre[:0]
	}
}

func (s *Session) writeLocked(pcm []byte) {
	u := s.utter
	_, err := u.u.Write(pcm)
	switch {
	case errors.Is(err, ErrTooLong):
		s.opts.Logger.InfoContext(s.ctx, "live voice: the utterance reached its maximum length")
		s.finishLocked()
	case err != nil:
		s.opts.Logger.WarnContext(s.ctx, "live voice: feeding the transcriber", "error", err)
		s.send(Event{Kind: EventError, Text: "the transcriber failed: " + err.Error()})
		u.cancel()
		_ = u.u.Close()
		s.utter = nil
	}
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
		text, err := u.u.Finish(u.ctx)
		text = strings.TrimSpace(text)
		// The partials come before the final transcript: Close ends them.
		_ = u.u.Close()
		<-u.partials
		switch {
		case err != nil && s.ctx.Err() != nil:
			return
		case err != nil && text == "":
			s.opts.Logger.WarnContext(s.ctx, "live voice: final transcript", "error", err)
			s.send(Event{Kind: EventError, Text: "could not transcribe: " + err.Error()})
			return
		case text == "":
			s.send(Event{Kind: EventIgnored, Reason: "no words were heard"})
			return
		case !HasWake(text, s.opts.Wake):
			s.send(Event{Kind: EventIgnored, Text: text, Reason: fmt.Sprintf("it does not begin with %q", s.opts.Wake)})
			return
		}
		// The final transcript goes out first: the reply to it can be
		// quicker than the post's answer.
		s.send(Event{Kind: EventFinal, Text: text})
		// The reply's speech listens before the words are posted, so it
		// hears the reply from its first delta.
		sp := s.startSpeech()
		// Heard is said: the post outlives the session (the person may
		// turn the microphone off right after speaking).
		pctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), postTimeout)
		defer cancel()
		if err := u.u.Post(pctx); err != nil {
			if sp != nil {
				s.stopSpeeches([]*speech{sp})
			}
			if s.ctx.Err() == nil {
				s.opts.Logger.WarnContext(s.ctx, "live voice: posting the transcript", "error", err)
				s.send(Event{Kind: EventError, Text: fmt.Sprintf("could not send %q: %v", text, err)})
			}
		}
	}()
}

// startSpeech starts speaking the next reply; nil when replies are not
// spoken or it cannot start (reported).
func (s *Session) startSpeech() *speech {
	if s.opts.Speak == nil {
		return nil
	}
	sp := &speech{}
	spk, err := s.opts.Speak(s.ctx, func(ctx context.Context, a voice.Audio, sentence string) error {
		return s.play(ctx, sp, a, sentence)
	})
	if err != nil {
		if s.ctx.Err() == nil {
			s.opts.Logger.WarnContext(s.ctx, "live voice: speaking the reply", "error", err)
			s.send(Event{Kind: EventError, Text: "the reply will not be spoken: " + err.Error()})
		}
		return nil
	}
	sp.sp = spk
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		sp.stopped = true
		go spk.Stop()
		return nil
	}
	// Drop the replies that are over: a Stop of one is harmless, but the
	// list would grow with every utterance.
	if len(s.speeches) > 8 {
		s.speeches = s.speeches[len(s.speeches)-8:]
	}
	s.speeches = append(s.speeches, sp)
	return sp
}

// stopSpeeches stops replies being spoken, then waits until each is over,
// its usage written: Stop returns once nothing of a reply plays, and what
// the reply still writes is waited for here (by Close, or under s.wg), so a
// closed session leaves nothing behind. Stop waits for the reply's
// speaker, which may be waiting for the lock in play, so it is called
// without the lock.
func (s *Session) stopSpeeches(list []*speech) {
	for _, sp := range list {
		if sp.sp != nil {
			sp.sp.Stop()
		}
	}
	for _, sp := range list {
		if sp.sp != nil {
			_ = sp.sp.Wait(context.Background())
		}
	}
}

// bargeInLocked stops what is being said: every reply being spoken is
// stopped (its Play refused from now on), and the client told to stop
// playback when anything may still be playing there.
func (s *Session) bargeInLocked() {
	playing := s.opts.Now().Before(s.playUntil)
	if len(s.speeches) == 0 && !playing {
		return
	}
	list := s.speeches
	s.speeches = nil
	for _, sp := range list {
		sp.stopped = true
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.stopSpeeches(list)
	}()
	s.playUntil = time.Time{}
	if playing {
		s.send(Event{Kind: EventStop, Sentence: s.lastSent, Reason: "barge_in"})
	}
}

// play sends a sentence's audio in frames unless its reply was stopped;
// the check and the sends hold the lock, so no frame of a stopped reply
// follows EventStop.
func (s *Session) play(ctx context.Context, sp *speech, audio voice.Audio, sentence string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp.stopped {
		return context.Canceled
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	dur := audio.Format.Duration(len(audio.PCM))
	s.lastSent++
	now := s.opts.Now()
	if s.playUntil.Before(now) {
		s.playUntil = now
	}
	s.playUntil = s.playUntil.Add(dur)
	s.send(Event{Kind: EventSentence, Sentence: s.lastSent, Text: sentence, Format: audio.Format, Audio: dur})
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
	return s.ctx.Err()
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
