package web_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// The engines of these tests: the ear hears every utterance as the same
// words, the mouth speaks each sentence as a second of 8 kHz audio.
const heardWords = "turn on the lights"

type ear struct{}

func (ear) Transcribe(context.Context, voice.Recording) (voice.Transcript, error) {
	return voice.Transcript{Text: heardWords, Final: true}, nil
}

func (ear) Stream(ctx context.Context, f voice.Format) (voice.Stream, error) {
	return &earStream{f: f, partials: make(chan voice.Transcript, 1)}, nil
}

type earStream struct {
	f        voice.Format
	mu       sync.Mutex
	n        int
	partials chan voice.Transcript
	once     sync.Once
}

func (s *earStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		s.partials <- voice.Transcript{Text: "turn on"}
	}
	s.n += len(p)
	return len(p), nil
}
func (s *earStream) Partials() <-chan voice.Transcript { return s.partials }
func (s *earStream) Finish(context.Context) (voice.Transcript, error) {
	s.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return voice.Transcript{Text: heardWords, Final: true, Audio: s.f.Duration(s.n)}, nil
}
func (s *earStream) Close() error { s.once.Do(func() { close(s.partials) }); return nil }

type mouth struct{}

var mouthFormat = voice.Format{SampleRate: 8000, Channels: 1}

func (mouth) Speak(ctx context.Context, text string) (voice.Audio, error) {
	return voice.Audio{Format: mouthFormat, PCM: make([]byte, 16000), Characters: len(text)}, nil
}

const voiceReplyScript = `
fallback:
  text: "You said it. A second sentence follows. And a third one ends it."
`

// startVoice runs the API with two agents: atlas hears and speaks with
// the fake engines, plain has no voice.
func startVoice(t *testing.T, st store.Store, opts web.Options, perMinute int) *server {
	t.Helper()
	script := writeScript(t, voiceReplyScript)
	atlas := testAgent("atlas", script, true)
	atlas.Voice = config.Voice{Transcribe: "offline", Speak: "offline", PerMinute: perMinute}
	return startTeam(t, st, newClock(), []config.Agent{atlas, testAgent("plain", script, false)}, false, opts, nil,
		func(svc *core.Service, o *web.Options) { o.Voice = svc },
		func(o *core.Options) {
			o.Voice.Engines = func(*config.Agent) (*core.VoiceEngines, error) {
				return &core.VoiceEngines{Transcriber: ear{}, Speaker: mouth{}, Hears: "offline", Speaks: "offline"}, nil
			}
		})
}

// tone is d of 16 kHz PCM: a 300 Hz tone at amp (0: silence).
func tone(d time.Duration, amp float64) []byte {
	n := int(d.Seconds() * 16000)
	b := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(amp*32767*math.Sin(2*math.Pi*300*float64(i)/16000))))
	}
	return b
}

// voiceClient is the page's side of the socket.
type voiceClient struct {
	t      *testing.T
	c      *websocket.Conn
	msgs   chan web.VoiceMessage
	frames chan []byte
	closed chan error
}

func dialVoice(t *testing.T, s *server, conv uuid.UUID, hdr http.Header) (*voiceClient, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	url := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/api/conversations/" + conv.String() + "/voice"
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		return nil, resp, err
	}
	vc := &voiceClient{t: t, c: c, msgs: make(chan web.VoiceMessage, 1024), frames: make(chan []byte, 4096), closed: make(chan error, 1)}
	go func() {
		for {
			typ, b, err := c.Read(context.Background())
			if err != nil {
				vc.closed <- err
				close(vc.msgs)
				return
			}
			if typ == websocket.MessageBinary {
				vc.frames <- b
				continue
			}
			var m web.VoiceMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Errorf("the server sent %q: %v", b, err)
				continue
			}
			vc.msgs <- m
		}
	}()
	t.Cleanup(func() { _ = c.CloseNow() })
	return vc, resp, nil
}

func (vc *voiceClient) send(v any) {
	vc.t.Helper()
	b, _ := json.Marshal(v)
	if err := vc.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		vc.t.Fatalf("sending %s: %v", b, err)
	}
}

// audio sends PCM in 20 ms messages, as the page does.
func (vc *voiceClient) audio(pcm []byte) {
	vc.t.Helper()
	for off := 0; off < len(pcm); off += 640 {
		if err := vc.c.Write(context.Background(), websocket.MessageBinary, pcm[off:min(off+640, len(pcm))]); err != nil {
			vc.t.Fatalf("sending audio: %v", err)
		}
	}
}

// next reads messages until one of type typ, returning it and the types
// read before it.
func (vc *voiceClient) next(typ string) (web.VoiceMessage, []string) {
	vc.t.Helper()
	var before []string
	deadline := time.After(waitTimeout)
	for {
		select {
		case m, ok := <-vc.msgs:
			if !ok {
				vc.t.Fatalf("the socket closed waiting for %q (after %v): %v", typ, before, <-vc.closed)
			}
			if m.Type == typ {
				return m, before
			}
			before = append(before, m.Type)
		case <-deadline:
			vc.t.Fatalf("no %q message (after %v)", typ, before)
		}
	}
}

// TestVoiceSocket: an utterance is heard (partial, final), enters the
// log as the person's spoken message, and the reply is spoken back as
// sentences with their audio frames; speech while it plays stops it.
func TestVoiceSocket(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		s := startVoice(t, open(t), web.Options{}, 0)
		conv := s.create(t)
		vc, _, err := dialVoice(t, s, conv, nil)
		if err != nil {
			t.Fatal(err)
		}
		vc.send(web.VoiceStart{Type: "start", Mode: "voice", SampleRate: 16000})
		ready, _ := vc.next("ready")
		if ready.Agent != "atlas" || ready.Speaks == nil || !*ready.Speaks || ready.SampleRate != 16000 || ready.Mode != "voice" {
			t.Fatalf("ready %+v; want atlas, speaking, 16000 Hz, voice mode", ready)
		}
		vc.audio(tone(300*time.Millisecond, 0))
		vc.audio(tone(time.Second, 0.3))
		vc.audio(tone(time.Second, 0))
		final, before := vc.next("final")
		if final.Text != heardWords || strings.Join(before, ",") != "speech_start,partial" {
			t.Fatalf("final %q after %v; want %q after speech_start, partial", final.Text, before, heardWords)
		}
		// The reply: three sentences, each a second of audio in frames
		// numbered with it.
		for n := 1; n <= 3; n++ {
			sent, _ := vc.next("sentence")
			if sent.Sentence != n || sent.SampleRate != 8000 || sent.Channels != 1 || sent.Ms != 1000 {
				t.Fatalf("sentence %+v; want #%d, 8000 Hz mono, 1000 ms", sent, n)
			}
			got := 0
			for got < 16000 {
				select {
				case f := <-vc.frames:
					if num := binary.LittleEndian.Uint32(f); int(num) != n {
						t.Fatalf("a frame of sentence %d while sentence %d plays", num, n)
					}
					got += len(f) - 4
				case <-time.After(waitTimeout):
					t.Fatalf("sentence %d: %d of 16000 bytes of audio", n, got)
				}
			}
		}
		// The log has the spoken message and the written reply.
		var list struct {
			Entries []entryOut `json:"entries"`
		}
		waitFor(t, "the reply in the log", func() bool {
			s.mustCall(t, http.MethodGet, "/api/conversations/"+conv.String()+"/entries", "", http.StatusOK, &list)
			return kindsOf(list.Entries) == "user,assistant"
		})
		var user struct {
			Text   string          `json:"text"`
			Spoken json.RawMessage `json:"spoken"`
		}
		if err := json.Unmarshal(list.Entries[0].Content, &user); err != nil {
			t.Fatal(err)
		}
		if user.Text != heardWords || len(user.Spoken) == 0 {
			t.Errorf("user entry %s; want %q marked spoken", list.Entries[0].Content, heardWords)
		}
		// Three seconds of audio were just sent: it plays at the page, and
		// speech now stops it.
		vc.audio(tone(300*time.Millisecond, 0.3))
		stop, _ := vc.next("stop")
		if stop.Reason != "barge_in" || stop.Sentence != 3 {
			t.Errorf("stop %+v; want barge_in through sentence 3", stop)
		}
		vc.send(map[string]string{"type": "stop"})
		if err := <-vc.closed; websocket.CloseStatus(err) != websocket.StatusNormalClosure {
			t.Errorf("after stop the socket closed with %v; want a normal closure", err)
		}
	})
}

func TestVoiceSocketPushToTalkAndLimits(t *testing.T) {
	s := startVoice(t, testenv.SQLite(t), web.Options{}, 1)
	conv := s.create(t)
	vc, _, err := dialVoice(t, s, conv, nil)
	if err != nil {
		t.Fatal(err)
	}
	vc.send(web.VoiceStart{Type: "start", Mode: "push_to_talk"})
	vc.next("ready")
	vc.send(map[string]any{"type": "ptt", "down": true})
	vc.audio(tone(500*time.Millisecond, 0.3))
	vc.audio(tone(time.Second, 0)) // a pause, the key still held
	vc.send(map[string]any{"type": "ptt", "down": false})
	if final, _ := vc.next("final"); final.Text != heardWords {
		t.Fatalf("final %q; want %q", final.Text, heardWords)
	}
	// utterances_per_minute is 1: the next is refused with the reason.
	vc.send(map[string]any{"type": "ptt", "down": true})
	e, _ := vc.next("error")
	if !strings.Contains(e.Text, "utterances_per_minute") {
		t.Errorf("error %q; want the limit named", e.Text)
	}
}

func TestVoiceSocketRefusals(t *testing.T) {
	s := startVoice(t, testenv.SQLite(t), web.Options{Token: "op"}, 0)
	auth := http.Header{"Authorization": {"Bearer op"}}
	var c conversationOut
	if got, raw := s.call(t, http.MethodPost, "/api/conversations", `{}`, auth, &c); got != http.StatusCreated {
		t.Fatalf("creating: %d %s", got, raw)
	}
	var plain conversationOut
	if got, raw := s.call(t, http.MethodPost, "/api/conversations", `{"agent":"plain"}`, auth, &plain); got != http.StatusCreated {
		t.Fatalf("creating: %d %s", got, raw)
	}

	// Without the token; and from a page of another origin.
	if _, resp, err := dialVoice(t, s, c.ID, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %v, %v; want 401", err, resp)
	}
	other := http.Header{"Authorization": {"Bearer op"}, "Origin": {"http://127.0.0.1:1"}}
	if _, resp, err := dialVoice(t, s, c.ID, other); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("from another origin: %v, %v; want 403", err, resp)
	}

	// An agent that does not hear: a plain GET says why, a socket closes
	// with the reason.
	if got, raw := s.call(t, http.MethodGet, "/api/conversations/"+plain.ID.String()+"/voice", "", auth, nil); got != http.StatusConflict || !strings.Contains(raw, "voice.transcribe") {
		t.Errorf("GET for an agent without voice: %d %s; want 409 naming voice.transcribe", got, raw)
	}
	vc, _, err := dialVoice(t, s, plain.ID, auth)
	if err != nil {
		t.Fatal(err)
	}
	closedWith(t, vc, websocket.StatusPolicyViolation, "does not hear speech")

	for _, tc := range []struct {
		name  string
		first func(*voiceClient)
		want  string
	}{
		{"audio first", func(vc *voiceClient) { vc.audio(tone(20*time.Millisecond, 0)) }, "JSON start message"},
		{"bad mode", func(vc *voiceClient) { vc.send(map[string]string{"type": "start", "mode": "shout"}) }, `mode "shout"`},
		{"bad rate", func(vc *voiceClient) { vc.send(map[string]any{"type": "start", "sample_rate": 44100}) }, "sample_rate 44100"},
		{"unknown field", func(vc *voiceClient) { vc.send(map[string]any{"type": "start", "volume": 11}) }, "volume"},
		// A reason longer than a close frame holds is cut, not lost.
		{"long reason", func(vc *voiceClient) { vc.send(map[string]any{"type": "start", strings.Repeat("x", 300): 1}) }, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vc, _, err := dialVoice(t, s, c.ID, auth)
			if err != nil {
				t.Fatal(err)
			}
			tc.first(vc)
			closedWith(t, vc, websocket.StatusPolicyViolation, tc.want)
		})
	}
	// push-to-talk in hands-free mode is refused too.
	vc, _, err = dialVoice(t, s, c.ID, auth)
	if err != nil {
		t.Fatal(err)
	}
	vc.send(web.VoiceStart{Type: "start"})
	vc.next("ready")
	vc.send(map[string]any{"type": "ptt", "down": true})
	closedWith(t, vc, websocket.StatusPolicyViolation, "push_to_talk")
}

// closedWith waits for the socket to close with status and a reason
// containing want.
func closedWith(t *testing.T, vc *voiceClient, status websocket.StatusCode, want string) {
	t.Helper()
	for range vc.msgs {
	}
	err := <-vc.closed
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != status || !strings.Contains(ce.Reason, want) {
		t.Errorf("closed with %v; want %v with a reason containing %q", err, status, want)
	}
}
