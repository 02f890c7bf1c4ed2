package live

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/voice"
)

// fakeEar is a Transcriber double: the final transcript names how much
// audio the utterance had and how loud it was, so a test can tell one
// utterance from another.
type fakeEar struct {
	mu      sync.Mutex
	streams int
	text    func(n int) string
}

func (f *fakeEar) Transcribe(context.Context, voice.Recording) (voice.Transcript, error) {
	return voice.Transcript{}, fmt.Errorf("not used")
}

func (f *fakeEar) Stream(ctx context.Context, fm voice.Format) (voice.Stream, error) {
	f.mu.Lock()
	f.streams++
	f.mu.Unlock()
	return &fakeStream{f: f, partials: make(chan voice.Transcript, 8)}, nil
}

type fakeStream struct {
	f        *fakeEar
	n        int
	partials chan voice.Transcript
	once     sync.Once
}

func (s *fakeStream) Write(p []byte) (int, error) {
	if s.n == 0 {
		s.partials <- voice.Transcript{Text: "partial words"}
	}
	s.n += len(p)
	return len(p), nil
}
func (s *fakeStream) Partials() <-chan voice.Transcript { return s.partials }
func (s *fakeStream) Finish(ctx context.Context) (voice.Transcript, error) {
	s.Close()
	return voice.Transcript{Text: s.f.text(s.n), Final: true}, nil
}
func (s *fakeStream) Close() error { s.once.Do(func() { close(s.partials) }); return nil }

// fakeMouth is a Speaker double: each sentence is a second of audio;
// with block set, Speak waits for its context (a slow synthesiser).
type fakeMouth struct {
	block              bool
	started, cancelled chan string
}

func (m *fakeMouth) Speak(ctx context.Context, text string) (voice.Audio, error) {
	if m.block {
		m.started <- text
		<-ctx.Done()
		m.cancelled <- text
		return voice.Audio{}, ctx.Err()
	}
	f := voice.Format{SampleRate: 8000, Channels: 1}
	return voice.Audio{Format: f, PCM: make([]byte, 16000), Characters: len(text)}, nil
}

// pcm makes d of audio at 16 kHz: a 300 Hz tone at amp (0: silence).
func pcm(d time.Duration, amp float64) []byte {
	n := int(d.Seconds() * 16000)
	b := make([]byte, 2*n)
	for i := range n {
		v := amp * math.Sin(2*math.Pi*300*float64(i)/16000)
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(v*32767)))
	}
	return b
}

// feed sends audio in 20 ms pieces, as the page does.
func feed(t *testing.T, s *Session, b []byte) {
	t.Helper()
	for off := 0; off < len(b); off += 640 {
		if err := s.Audio(b[off:min(off+640, len(b))]); err != nil {
			t.Fatalf("Audio: %v", err)
		}
	}
}

type recorder struct {
	mu     sync.Mutex
	events []Event
	posted []string
	change chan struct{}
}

func newRecorder() *recorder { return &recorder{change: make(chan struct{}, 1)} }

func (r *recorder) send(ev Event) error {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	select {
	case r.change <- struct{}{}:
	default:
	}
	return nil
}

func (r *recorder) post(_ context.Context, text string) error {
	r.mu.Lock()
	r.posted = append(r.posted, text)
	r.mu.Unlock()
	return nil
}

func (r *recorder) kinds() []EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []EventKind
	for _, e := range r.events {
		if e.Kind != EventAudio {
			out = append(out, e.Kind)
		}
	}
	return out
}

// wait waits until cond holds over the events.
func (r *recorder) wait(t *testing.T, what string, cond func(events []Event) bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		r.mu.Lock()
		ok := cond(r.events)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.change:
		case <-deadline:
			t.Fatalf("waiting for %s; events: %v", what, r.kinds())
		}
	}
}

func has(kind EventKind) func([]Event) bool {
	return func(evs []Event) bool {
		for _, e := range evs {
			if e.Kind == kind {
				return true
			}
		}
		return false
	}
}

func count(evs []Event, kind EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func start(t *testing.T, o Options) (*Session, *recorder) {
	t.Helper()
	r := newRecorder()
	o.Send, o.Post = r.send, r.post
	if o.Transcriber == nil {
		o.Transcriber = &fakeEar{text: func(n int) string { return fmt.Sprintf("heard %d bytes", n) }}
	}
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, r
}

func TestUtteranceIsPosted(t *testing.T) {
	s, r := start(t, Options{})
	feed(t, s, pcm(time.Second, 0))
	feed(t, s, pcm(time.Second, 0.3))
	feed(t, s, pcm(time.Second, 0))
	r.wait(t, "the final transcript", has(EventFinal))
	kinds := r.kinds()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.posted) != 1 || !strings.HasPrefix(r.posted[0], "heard ") {
		t.Fatalf("posted %q; want one transcript", r.posted)
	}
	// The transcriber got the speech and the pre-roll before it was
	// confirmed, not the second of silence before it.
	var n int
	fmt.Sscanf(r.posted[0], "heard %d bytes", &n)
	speech := len(pcm(time.Second, 0.3))
	if n < speech || n > speech+len(pcm(1100*time.Millisecond, 0)) {
		t.Errorf("the transcriber got %d bytes; want the %d of speech, the pre-roll and the trailing silence (at most 1.1 s more)", n, speech)
	}
	want := []EventKind{EventSpeechStart, EventPartial, EventFinal}
	if got := kinds; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v; want %v", got, want)
	}
}

func TestSilenceIsNotAnUtterance(t *testing.T) {
	ear := &fakeEar{text: func(int) string { return "x" }}
	s, r := start(t, Options{Transcriber: ear})
	feed(t, s, pcm(3*time.Second, 0))
	feed(t, s, pcm(60*time.Millisecond, 0.3)) // a click, shorter than MinSpeech
	feed(t, s, pcm(time.Second, 0))
	if ear.streams != 0 || len(r.kinds()) != 0 { // Audio is synchronous: all it caused is recorded
		t.Errorf("silence and a click opened %d utterances, sent %v; want none", ear.streams, r.kinds())
	}
}

func TestRepliesAreSpokenSentenceBySentence(t *testing.T) {
	s, r := start(t, Options{Speaker: &fakeMouth{}})
	for _, d := range []string{"Hello the", "re. How are", " you? Fine", " thanks"} {
		s.Reply(ReplyDelta, d)
	}
	r.wait(t, "two sentences spoken", func(evs []Event) bool { return count(evs, EventSentence) == 2 })
	s.Reply(ReplyEnd, "")
	r.wait(t, "the rest spoken at the end of the reply", func(evs []Event) bool { return count(evs, EventSentence) == 3 && count(evs, EventAudio) >= 30 })
	r.mu.Lock()
	defer r.mu.Unlock()
	var texts []string
	frames := 0
	for _, e := range r.events {
		switch e.Kind {
		case EventSentence:
			texts = append(texts, e.Text)
			if e.Audio != time.Second || e.Format.SampleRate != 8000 {
				t.Errorf("sentence %q: %s at %d Hz; want 1s at 8000 Hz", e.Text, e.Audio, e.Format.SampleRate)
			}
		case EventAudio:
			frames++
		}
	}
	if want := []string{"Hello there.", "How are you?", "Fine thanks"}; fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("spoken %q; want %q", texts, want)
	}
	if frames != 30 {
		t.Errorf("%d audio frames; want 10 of 100 ms per sentence", frames)
	}
}

func TestBargeInStopsPlaybackAndIsHeard(t *testing.T) {
	s, r := start(t, Options{Speaker: &fakeMouth{}})
	feed(t, s, pcm(500*time.Millisecond, 0))
	s.Reply(ReplyDelta, "One. Two. Three. Four. ")
	s.Reply(ReplyEnd, "")
	r.wait(t, "the reply spoken", func(evs []Event) bool { return count(evs, EventSentence) == 4 })
	// Four seconds of audio were sent just now: it is still playing.
	feed(t, s, pcm(time.Second, 0.3))
	r.wait(t, "playback stopped", has(EventStop))
	feed(t, s, pcm(time.Second, 0))
	r.wait(t, "the interruption heard", has(EventFinal))
	r.mu.Lock()
	defer r.mu.Unlock()
	var stop Event
	for _, e := range r.events {
		if e.Kind == EventStop {
			stop = e
		}
	}
	if stop.Sentence != 4 || stop.Reason != "barge_in" {
		t.Errorf("stop %+v; want sentence 4, reason barge_in", stop)
	}
	if len(r.posted) != 1 {
		t.Errorf("posted %q; want the interruption", r.posted)
	}
}

func TestBargeInCancelsTheSpeaker(t *testing.T) {
	mouth := &fakeMouth{block: true, started: make(chan string, 4), cancelled: make(chan string, 4)}
	s, r := start(t, Options{Speaker: mouth})
	feed(t, s, pcm(500*time.Millisecond, 0))
	s.Reply(ReplyDelta, "A long first sentence. And a second one. ")
	// The first sentence is being synthesised (Speak blocks); speech now
	// cancels it and drops the second.
	<-mouth.started
	feed(t, s, pcm(time.Second, 0.3))
	select {
	case got := <-mouth.cancelled:
		if got != "A long first sentence." {
			t.Errorf("cancelled %q; want the first sentence", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the speaker was not cancelled by the barge-in")
	}
	// The rest of the interrupted reply is not spoken.
	s.Reply(ReplyDelta, "A third. ")
	feed(t, s, pcm(time.Second, 0))
	r.wait(t, "the interruption heard", has(EventFinal))
	s.Close() // the speaker's goroutine has ended: nothing more can start
	select {
	case got := <-mouth.started:
		t.Errorf("%q was spoken after the barge-in", got)
	default:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := count(r.events, EventSentence); n != 0 {
		t.Errorf("%d sentences sent; want none", n)
	}
}

func TestWakeWord(t *testing.T) {
	for _, tc := range []struct {
		text, wake string
		want       bool
	}{
		{"Atlas, what time is it", "atlas", true},
		{"atlas what time is it", "Atlas", true},
		{"what time is it atlas", "atlas", false},
		{"hey atlas remind me", "hey atlas", true},
		{"hey at last", "hey atlas", false},
		{"anything", "", true},
		{"", "atlas", false},
	} {
		if got := HasWake(tc.text, tc.wake); got != tc.want {
			t.Errorf("HasWake(%q, %q) = %v; want %v", tc.text, tc.wake, got, tc.want)
		}
	}
	ear := &fakeEar{text: func(int) string { return "what time is it" }}
	s, r := start(t, Options{Transcriber: ear, Wake: "atlas"})
	feed(t, s, pcm(300*time.Millisecond, 0))
	feed(t, s, pcm(time.Second, 0.3))
	feed(t, s, pcm(time.Second, 0))
	r.wait(t, "the utterance ignored", has(EventIgnored))
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.posted) != 0 {
		t.Errorf("posted %q without the wake word", r.posted)
	}
}

func TestPushToTalk(t *testing.T) {
	s, r := start(t, Options{Mode: ModePushToTalk, Speaker: &fakeMouth{}})
	// Speech without the key is not an utterance.
	feed(t, s, pcm(300*time.Millisecond, 0))
	feed(t, s, pcm(time.Second, 0.3))
	feed(t, s, pcm(time.Second, 0))
	if r.mu.Lock(); has(EventSpeechStart)(r.events) {
		t.Fatalf("speech without the key opened an utterance: %v", r.kinds())
	}
	r.mu.Unlock()
	if err := s.PushToTalk(true); err != nil {
		t.Fatal(err)
	}
	// Held through a pause: still one utterance.
	feed(t, s, pcm(500*time.Millisecond, 0.3))
	feed(t, s, pcm(time.Second, 0))
	feed(t, s, pcm(500*time.Millisecond, 0.3))
	if err := s.PushToTalk(false); err != nil {
		t.Fatal(err)
	}
	r.wait(t, "the final transcript", has(EventFinal))
	r.mu.Lock()
	defer r.mu.Unlock()
	if want := len(pcm(2*time.Second, 0)); len(r.posted) != 1 || r.posted[0] != fmt.Sprintf("heard %d bytes", want) {
		t.Errorf("posted %q; want one utterance of the %d bytes between the key's press and release", r.posted, want)
	}
	voiceOnly, _ := start(t, Options{})
	if err := voiceOnly.PushToTalk(true); err == nil || !strings.Contains(err.Error(), "push_to_talk") {
		t.Errorf("push-to-talk in voice mode: %v; want an error naming the mode", err)
	}
}

func TestOptionsNameTheField(t *testing.T) {
	_, err := Start(context.Background(), Options{Post: func(context.Context, string) error { return nil }, Send: func(Event) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "Transcriber") {
		t.Errorf("no transcriber: %v", err)
	}
	_, err = Start(context.Background(), Options{Transcriber: &fakeEar{}, Post: func(context.Context, string) error { return nil }, Send: func(Event) error { return nil }, Mode: "shout"})
	if err == nil || !strings.Contains(err.Error(), "shout") {
		t.Errorf("bad mode: %v", err)
	}
}
