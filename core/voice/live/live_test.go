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

// ear is the Listen double: the final transcript names how much audio
// the utterance had, so a test can tell what reached the transcriber.
type ear struct {
	mu     sync.Mutex
	opened int
	posted []string
	text   func(n int) string
	// posting, when set, is called as a post begins (with its context).
	posting func(ctx context.Context)
}

func (e *ear) listen(ctx context.Context) (Utterance, error) {
	e.mu.Lock()
	e.opened++
	e.mu.Unlock()
	return &heard{e: e, partials: make(chan voice.Transcript, 8)}, nil
}

func (e *ear) posts() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.posted...)
}

type heard struct {
	e        *ear
	n        int
	text     string
	partials chan voice.Transcript
	once     sync.Once
}

func (h *heard) Write(p []byte) (int, error) {
	if h.n == 0 {
		h.partials <- voice.Transcript{Text: "partial words"}
	}
	h.n += len(p)
	return len(p), nil
}
func (h *heard) Partials() <-chan voice.Transcript { return h.partials }
func (h *heard) Finish(ctx context.Context) (string, error) {
	h.Close()
	h.text = h.e.text(h.n)
	return h.text, nil
}
func (h *heard) Post(ctx context.Context) error {
	if h.e.posting != nil {
		h.e.posting(ctx)
	}
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	h.e.posted = append(h.e.posted, h.text)
	return nil
}
func (h *heard) Close() error { h.once.Do(func() { close(h.partials) }); return nil }

// mouth is the Speak double (core.SpeakReply's part here): the test says
// the reply's sentences; each is a second of audio, handed to play in
// order; with block set, synthesis waits for its context (a slow
// synthesiser) and reports what it was cancelled on.
type mouth struct {
	block              bool
	started, cancelled chan string
	replies            chan chan string // a reply's sentences, one channel per Speak
}

func newMouth(block bool) *mouth {
	return &mouth{block: block, started: make(chan string, 8), cancelled: make(chan string, 8), replies: make(chan chan string, 8)}
}

type reply struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *reply) Stop() { r.cancel(); <-r.done }

func (r *reply) Wait(ctx context.Context) error {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *mouth) speak(ctx context.Context, play Play) (Speech, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &reply{cancel: cancel, done: make(chan struct{})}
	sentences := make(chan string, 16)
	m.replies <- sentences
	go func() {
		defer close(r.done)
		for {
			var text string
			select {
			case <-ctx.Done():
				return
			case text = <-sentences:
			}
			if m.block {
				m.started <- text
				<-ctx.Done()
				m.cancelled <- text
				return
			}
			a := voice.Audio{Format: voice.Format{SampleRate: 8000, Channels: 1}, PCM: make([]byte, 16000), Characters: len(text)}
			if err := play(ctx, a, text); err != nil {
				return
			}
		}
	}()
	return r, nil
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

func start(t *testing.T, o Options, e *ear) (*Session, *recorder) {
	t.Helper()
	r := newRecorder()
	o.Send = r.send
	o.Listen = e.listen
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, r
}

// waitPosts waits until n messages were posted.
func waitPosts(t *testing.T, e *ear, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(e.posts()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d messages posted; want %d", len(e.posts()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func bytesHeard() *ear {
	return &ear{text: func(n int) string { return fmt.Sprintf("heard %d bytes", n) }}
}

func TestUtteranceIsPosted(t *testing.T) {
	e := bytesHeard()
	s, r := start(t, Options{}, e)
	feed(t, s, pcm(time.Second, 0))
	feed(t, s, pcm(time.Second, 0.3))
	feed(t, s, pcm(time.Second, 0))
	r.wait(t, "the final transcript", has(EventFinal))
	waitPosts(t, e, 1)
	posted := e.posts()
	if len(posted) != 1 || !strings.HasPrefix(posted[0], "heard ") {
		t.Fatalf("posted %q; want one transcript", posted)
	}
	// The transcriber got the speech and the pre-roll before it was
	// confirmed, not the second of silence before it.
	var n int
	fmt.Sscanf(posted[0], "heard %d bytes", &n)
	speech := len(pcm(time.Second, 0.3))
	if n < speech || n > speech+len(pcm(1100*time.Millisecond, 0)) {
		t.Errorf("the transcriber got %d bytes; want the %d of speech, the pre-roll and the trailing silence (at most 1.1 s more)", n, speech)
	}
	want := []EventKind{EventSpeechStart, EventPartial, EventFinal}
	if got := r.kinds(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v; want %v", got, want)
	}
}

func TestSilenceIsNotAnUtterance(t *testing.T) {
	e := bytesHeard()
	s, r := start(t, Options{}, e)
	feed(t, s, pcm(3*time.Second, 0))
	feed(t, s, pcm(60*time.Millisecond, 0.3)) // a click, shorter than MinSpeech
	feed(t, s, pcm(time.Second, 0))
	if e.opened != 0 || len(r.kinds()) != 0 { // Audio is synchronous: all it caused is recorded
		t.Errorf("silence and a click opened %d utterances, sent %v; want none", e.opened, r.kinds())
	}
}

// say speaks one utterance of a second.
func say(t *testing.T, s *Session) {
	t.Helper()
	feed(t, s, pcm(300*time.Millisecond, 0))
	feed(t, s, pcm(time.Second, 0.3))
	feed(t, s, pcm(time.Second, 0))
}

func TestTheReplyIsSpoken(t *testing.T) {
	m := newMouth(false)
	s, r := start(t, Options{Speak: m.speak}, bytesHeard())
	say(t, s)
	r.wait(t, "the final transcript", has(EventFinal))
	sentences := <-m.replies // Speak was started before the words were posted
	for _, x := range []string{"Hello there.", "How are you?", "Fine thanks"} {
		sentences <- x
	}
	r.wait(t, "three sentences played", func(evs []Event) bool { return count(evs, EventSentence) == 3 && count(evs, EventAudio) == 30 })
	r.mu.Lock()
	defer r.mu.Unlock()
	var texts []string
	for _, e := range r.events {
		if e.Kind == EventSentence {
			texts = append(texts, e.Text)
			if e.Audio != time.Second || e.Format.SampleRate != 8000 || e.Sentence != len(texts) {
				t.Errorf("sentence %q: #%d, %s at %d Hz; want #%d, 1s at 8000 Hz", e.Text, e.Sentence, e.Audio, e.Format.SampleRate, len(texts))
			}
		}
	}
	if want := []string{"Hello there.", "How are you?", "Fine thanks"}; fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("spoken %q; want %q", texts, want)
	}
}

func TestBargeInStopsPlaybackAndIsHeard(t *testing.T) {
	m := newMouth(false)
	e := bytesHeard()
	s, r := start(t, Options{Speak: m.speak}, e)
	say(t, s)
	r.wait(t, "the final transcript", has(EventFinal))
	sentences := <-m.replies
	for _, x := range []string{"One.", "Two.", "Three.", "Four."} {
		sentences <- x
	}
	r.wait(t, "the reply played", func(evs []Event) bool { return count(evs, EventAudio) == 40 })
	// Four seconds of audio were sent just now: it is still playing.
	feed(t, s, pcm(time.Second, 0.3))
	r.wait(t, "playback stopped", has(EventStop))
	sentences <- "Five." // the stopped reply says no more
	feed(t, s, pcm(time.Second, 0))
	r.wait(t, "the interruption heard", func(evs []Event) bool { return count(evs, EventFinal) == 2 })
	waitPosts(t, e, 2)
	r.mu.Lock()
	defer r.mu.Unlock()
	var stop Event
	afterStop := 0
	for _, ev := range r.events {
		if ev.Kind == EventStop {
			stop = ev
		}
		if stop.Kind != "" && (ev.Kind == EventSentence || ev.Kind == EventAudio) {
			afterStop++
		}
	}
	if stop.Sentence != 4 || stop.Reason != "barge_in" {
		t.Errorf("stop %+v; want sentence 4, reason barge_in", stop)
	}
	if afterStop != 0 {
		t.Errorf("%d sentence or audio events after the stop; want none", afterStop)
	}
	if n := len(e.posts()); n != 2 {
		t.Errorf("%d messages posted; want the first words and the interruption", n)
	}
}

func TestBargeInCancelsTheSpeaker(t *testing.T) {
	m := newMouth(true)
	s, r := start(t, Options{Speak: m.speak}, bytesHeard())
	say(t, s)
	r.wait(t, "the final transcript", has(EventFinal))
	sentences := <-m.replies
	sentences <- "A long first sentence."
	// The first sentence is being synthesised; speech now cancels it.
	<-m.started
	feed(t, s, pcm(time.Second, 0.3))
	select {
	case got := <-m.cancelled:
		if got != "A long first sentence." {
			t.Errorf("cancelled %q; want the first sentence", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the speaker was not cancelled by the barge-in")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if has(EventStop)(r.events) {
		t.Error("a stop was sent though nothing was playing")
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
	e := &ear{text: func(int) string { return "what time is it" }}
	s, r := start(t, Options{Wake: "atlas"}, e)
	say(t, s)
	r.wait(t, "the utterance ignored", has(EventIgnored))
	if p := e.posts(); len(p) != 0 {
		t.Errorf("posted %q without the wake word", p)
	}
}

func TestPushToTalk(t *testing.T) {
	e := bytesHeard()
	s, r := start(t, Options{Mode: ModePushToTalk}, e)
	// Speech without the key is not an utterance.
	say(t, s)
	if r.mu.Lock(); has(EventSpeechStart)(r.events) {
		t.Fatalf("speech without the key opened an utterance")
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
	waitPosts(t, e, 1)
	if want, p := len(pcm(2*time.Second, 0)), e.posts(); len(p) != 1 || p[0] != fmt.Sprintf("heard %d bytes", want) {
		t.Errorf("posted %q; want one utterance of the %d bytes between the key's press and release", p, want)
	}
	voiceOnly, _ := start(t, Options{}, e)
	if err := voiceOnly.PushToTalk(true); err == nil || !strings.Contains(err.Error(), "push_to_talk") {
		t.Errorf("push-to-talk in voice mode: %v; want an error naming the mode", err)
	}
}

func TestOptionsNameTheField(t *testing.T) {
	_, err := Start(context.Background(), Options{Send: func(Event) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "Listen") {
		t.Errorf("no Listen: %v", err)
	}
	_, err = Start(context.Background(), Options{Listen: bytesHeard().listen, Send: func(Event) error { return nil }, Mode: "shout"})
	if err == nil || !strings.Contains(err.Error(), "shout") {
		t.Errorf("bad mode: %v", err)
	}
}

// TestHeardIsPostedWhenTheSessionCloses: the person turns the microphone
// off right after speaking; what was heard is still sent.
func TestHeardIsPostedWhenTheSessionCloses(t *testing.T) {
	e := bytesHeard()
	started, release := make(chan struct{}), make(chan struct{})
	var postErr error
	e.posting = func(ctx context.Context) {
		close(started)
		<-release
		postErr = ctx.Err()
	}
	s, _ := start(t, Options{}, e)
	say(t, s)
	<-started
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	<-s.ctx.Done() // the session has ended
	close(release)
	<-closed // Close waits for the post
	if postErr != nil || len(e.posts()) != 1 {
		t.Errorf("post context %v, %d posted; want the words posted whole", postErr, len(e.posts()))
	}
}
