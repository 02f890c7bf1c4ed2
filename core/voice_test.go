package core_test

import (
	"cmp"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

const remindPhrase = "remind me to water the plants at five"

// needVoice skips without the offline engines, except in CI (CI=true).
func needVoice(t testing.TB) {
	t.Helper()
	for _, p := range []string{"pocketsphinx_continuous", "espeak-ng", "ffmpeg"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (.ci/run installs it)", p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
}

// spoken has espeak-ng speak text into a WAV file.
func spoken(t testing.TB, text string) (path string, wav []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "spoken.wav")
	if out, err := exec.Command("espeak-ng", "-w", path, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	wav, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, wav
}

// pocketsphinxAlone is what the recogniser prints for the WAV file, run
// by hand (lines joined by spaces).
func pocketsphinxAlone(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := voice.ParseWAV(data)
	if err != nil {
		t.Fatal(err)
	}
	o, err := voice.NewOffline(voice.OfflineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	argv := o.RecognizerCommand(f.SampleRate, path)
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return voice.JoinHypotheses(string(out))
}

// withVoice gives the test agent a voice block.
func withVoice(v config.Voice) func(*core.Options) {
	return func(o *core.Options) {
		if v.MaxUtterance == 0 {
			v.MaxUtterance = config.DefaultMaxUtterance
		}
		if v.PerMinute == 0 {
			v.PerMinute = config.DefaultVoicePerMinute
		}
		o.Agents.Agents[0].Voice = v
	}
}

// The first Done-when: espeak-ng speaks the phrase to a WAV; fed
// through the offline transcriber and core, the text that reaches the
// agent's turn is exactly what pocketsphinx alone prints for that WAV.
func TestSpokenMessageReachesTheTurnAsTheEngineHeardIt(t *testing.T) {
	t.Parallel()
	needVoice(t)
	path, wav := spoken(t, remindPhrase)
	alone := pocketsphinxAlone(t, path)
	if alone == "" {
		t.Fatal("pocketsphinx alone heard nothing")
	}
	t.Logf("espeak-ng said %q; pocketsphinx alone heard %q", remindPhrase, alone)
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, configure: withVoice(config.Voice{Transcribe: "offline", Speak: "off"})}
		// The reply repeats what the model was given as the last user
		// message: the text that reached the turn.
		in := s.start(t, "fallback:\n  text: \"heard: {{last_user}}\"\n")
		ctx := context.Background()
		heard, err := in.svc.TranscribeFor(ctx, "atlas", "slack/U1", voice.Recording{Name: "voice-note.wav", MimeType: "audio/wav", Data: wav})
		if err != nil {
			t.Fatal(err)
		}
		res, err := in.svc.SubmitSpoken(ctx, slackMessage("Ev1", "U1", ""), heard)
		if err != nil || res.ConversationID == uuid.Nil {
			t.Fatalf("SubmitSpoken = %+v, %v", res, err)
		}
		waitStatus(t, s.st, res.ConversationID, store.ConversationIdle)
		es := entries(t, s.st, res.ConversationID, true)
		if got := kinds(es); got != "user,assistant" {
			t.Fatalf("log = %s, want user,assistant", got)
		}
		user, err := core.Decode[core.UserContent](es[0])
		if err != nil {
			t.Fatal(err)
		}
		if user.Text != alone {
			t.Fatalf("the user entry's text is %q; pocketsphinx alone heard %q", user.Text, alone)
		}
		if got, want := textOf(t, es[1]), "heard: [U1] "+alone; got != want {
			t.Fatalf("the turn was given %q, want %q (the engine's words, after the speaker's name)", got, want)
		}
		sp := user.Spoken
		if sp == nil || sp.Engine != "offline" || sp.Agent != "atlas" || sp.Live || sp.File != "voice-note.wav" {
			t.Fatalf("spoken = %+v, want the offline engine and the recording named", sp)
		}
		if f, pcm, _ := voice.ParseWAV(wav); sp.AudioMs != f.Duration(len(pcm)).Milliseconds() {
			t.Fatalf("audio_ms %d", sp.AudioMs)
		}
		if len(user.Files) != 1 || string(user.Files[0].Data) != string(wav) || user.Files[0].MimeType != "audio/wav" {
			t.Fatalf("files = %d, want the recording kept as it came", len(user.Files))
		}
		usage, err := s.st.UsageList(ctx, res.ConversationID)
		if err != nil {
			t.Fatal(err)
		}
		var heardRows []*store.Usage
		for _, u := range usage {
			if u.Kind == store.UsageTranscription {
				heardRows = append(heardRows, u)
			}
		}
		if len(heardRows) != 1 || heardRows[0].Provider != "offline" || heardRows[0].AudioMs != sp.AudioMs || heardRows[0].CostMicroUSD != 0 {
			t.Fatalf("transcription usage = %+v, want one free offline row of %d ms", heardRows, sp.AudioMs)
		}
		// The same event again (a platform's retry) stores nothing and
		// records no usage twice.
		again, err := in.svc.SubmitSpoken(ctx, slackMessage("Ev1", "U1", ""), heard)
		if err != nil || !again.Duplicate {
			t.Fatalf("the retried event: %+v, %v; want Duplicate", again, err)
		}
		usage, _ = s.st.UsageList(ctx, res.ConversationID)
		if len(usage) != len(heardRows)+1 {
			t.Fatalf("usage rows after the retry: %d, want %d", len(usage), len(heardRows)+1)
		}
	})
}

// collector is a PlayFunc that keeps what it was given.
type collector struct {
	mu        sync.Mutex
	sentences []string
	audio     time.Duration
	first     chan time.Time
	block     chan struct{} // when set, Play waits on it or its ctx
	cut       chan struct{} // closed when a Play's ctx was cancelled
	once      sync.Once
}

func newCollector() *collector { return &collector{first: make(chan time.Time, 1)} }

func (c *collector) play(ctx context.Context, a voice.Audio, sentence string) error {
	select {
	case c.first <- time.Now():
	default:
	}
	c.mu.Lock()
	c.sentences = append(c.sentences, sentence)
	c.audio += a.Format.Duration(len(a.PCM))
	block := c.block
	c.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			c.once.Do(func() { close(c.cut) })
			return ctx.Err()
		}
	}
	return nil
}

func (c *collector) said() ([]string, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sentences...), c.audio
}

// Live speech through Listen enters the console's conversation as a spoken
// message, and the reply is spoken sentence by sentence as it streams,
// its speech recorded as usage.
func TestLiveSpeechIsAnsweredAloud(t *testing.T) {
	t.Parallel()
	needVoice(t)
	_, wav := spoken(t, remindPhrase)
	f, pcm, err := voice.ParseWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, configure: withVoice(config.Voice{Transcribe: "offline", Speak: "offline"})}
		in := s.start(t, "turns:\n  - text: \"Sure. I will remind you at five. Anything else?\"\n")
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "atlas", "console", "alice")
		if err != nil {
			t.Fatal(err)
		}
		l, err := in.svc.Listen(ctx, "atlas", "console/alice", f)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for i := 0; i < len(pcm); i += 882 {
			if _, err := l.Write(pcm[i:min(i+882, len(pcm))]); err != nil {
				t.Fatal(err)
			}
		}
		heard, err := l.Finish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !heard.Spoken.Live || heard.Recording.MimeType != "audio/wav" {
			t.Fatalf("heard %+v", heard.Spoken)
		}
		c := newCollector()
		rs, err := in.svc.SpeakReply(ctx, core.ReplySpeechOptions{Conversation: conv.ID, Agent: "atlas", Play: c.play})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostSpoken(ctx, conv.ID, "alice", heard, core.MessageOptions{}); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := rs.Wait(wctx); err != nil {
			t.Fatal(err)
		}
		said, audio := c.said()
		if strings.Join(said, "|") != "Sure.|I will remind you at five.|Anything else?" {
			t.Fatalf("spoke %q, want the reply's three sentences in order", said)
		}
		if audio < time.Second {
			t.Fatalf("%s of audio for three sentences", audio)
		}
		es := entries(t, s.st, conv.ID, true)
		user, _ := core.Decode[core.UserContent](es[0])
		if user.Text != heard.Text || user.Spoken == nil || !user.Spoken.Live || len(user.Files) != 1 {
			t.Fatalf("user entry %q spoken %+v files %d", user.Text, user.Spoken, len(user.Files))
		}
		usage, _ := s.st.UsageList(ctx, conv.ID)
		var chars int64
		var heardMs int64
		for _, u := range usage {
			switch u.Kind {
			case store.UsageSpeech:
				chars += u.SpeechChars
			case store.UsageTranscription:
				heardMs += u.AudioMs
			}
		}
		if chars != int64(len("Sure.I will remind you at five.Anything else?")) || heardMs != heard.Spoken.AudioMs {
			t.Fatalf("usage: %d characters spoken, %d ms heard; want %d and %d", chars, heardMs, len("Sure.I will remind you at five.Anything else?"), heard.Spoken.AudioMs)
		}
	})
}

// fakeVoice hears a fixed text and speaks a 100 ms tone per sentence.
type fakeVoice struct{ text string }

func (f fakeVoice) Transcribe(ctx context.Context, rec voice.Recording) (voice.Transcript, error) {
	return voice.Transcript{Text: f.text, Final: true}, nil
}
func (f fakeVoice) Stream(ctx context.Context, fm voice.Format) (voice.Stream, error) {
	return nil, errors.New("fakeVoice does not stream")
}
func (f fakeVoice) Speak(ctx context.Context, text string) (voice.Audio, error) {
	if err := ctx.Err(); err != nil {
		return voice.Audio{}, err
	}
	return voice.Audio{Format: voice.Speech, PCM: make([]byte, 3200), Characters: len(text)}, nil
}

func fakeEngines(o *core.Options) {
	o.Voice.Engines = func(a *config.Agent) (*core.VoiceEngines, error) {
		v := fakeVoice{text: "water the plants"}
		return &core.VoiceEngines{Transcriber: v, Speaker: v, Hears: "openai:whisper-1", Speaks: "openai:tts-1"}, nil
	}
}

// Speaking during the reply stops it at once: the sentence playing is cut
// and no other is spoken.
func TestReplySpeechStopsOnBargeIn(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		s.configure = func(o *core.Options) {
			withVoice(config.Voice{Transcribe: "openai:whisper-1", Speak: "openai:tts-1"})(o)
			fakeEngines(o)
		}
		in := s.start(t, "chunk_delay: 5ms\nturns:\n  - text: \"One. Two. Three. Four. Five. Six.\"\n")
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "atlas", "console", "alice")
		if err != nil {
			t.Fatal(err)
		}
		c := newCollector()
		c.block, c.cut = make(chan struct{}), make(chan struct{})
		rs, err := in.svc.SpeakReply(ctx, core.ReplySpeechOptions{Conversation: conv.ID, Agent: "atlas", Play: c.play})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "count"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.first:
		case <-time.After(30 * time.Second):
			t.Fatal("nothing was played")
		}
		start := time.Now()
		rs.Stop()
		select {
		case <-c.cut:
		default:
			t.Fatal("the sentence playing was not cut")
		}
		if d := time.Since(start); d > 300*time.Millisecond {
			t.Fatalf("stopping took %s", d)
		}
		if err := rs.Wait(ctx); !errors.Is(err, core.ErrReplyInterrupted) {
			t.Fatalf("Wait after Stop: %v", err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		if said, _ := c.said(); len(said) != 1 || said[0] != "One." {
			t.Fatalf("spoke %q, want only the first sentence", said)
		}
	})
}

// An utterance past voice.max_utterance and a person past
// voice.utterances_per_minute are refused with a reason for them.
func TestVoiceLimits(t *testing.T) {
	t.Parallel()
	s := &setup{st: testenv.SQLite(t), clock: newClock(), tools: &testTools{}}
	s.configure = func(o *core.Options) {
		withVoice(config.Voice{Transcribe: "openai:whisper-1", Speak: "off", MaxUtterance: 2 * time.Second, PerMinute: 2})(o)
		fakeEngines(o)
	}
	in := s.start(t, "fallback:\n  text: ok\n")
	ctx := context.Background()
	second := voice.EncodeWAV(voice.Speech, make([]byte, 32000))
	long := voice.EncodeWAV(voice.Speech, make([]byte, 3*32000))
	var lim *core.VoiceLimited
	if _, err := in.svc.TranscribeFor(ctx, "atlas", "ana", voice.Recording{Name: "long.wav", Data: long}); !errors.As(err, &lim) || !strings.Contains(lim.Reason, "voice.max_utterance") {
		t.Fatalf("3 s against a 2 s limit: %v", err)
	}
	if h, err := in.svc.TranscribeFor(ctx, "atlas", "ana", voice.Recording{Name: "a.wav", Data: second}); err != nil || h.Text != "water the plants" {
		t.Fatalf("first: %+v, %v", h, err)
	}
	if _, err := in.svc.TranscribeFor(ctx, "atlas", "ana", voice.Recording{Name: "b.wav", Data: second}); !errors.As(err, &lim) || !strings.Contains(lim.Reason, "voice.utterances_per_minute") {
		t.Fatalf("third in a minute (the refused long one counted): %v", err)
	}
	if _, err := in.svc.TranscribeFor(ctx, "atlas", "ben", voice.Recording{Name: "c.wav", Data: second}); err != nil {
		t.Fatalf("another person: %v", err)
	}
	s.clock.Advance(time.Minute)
	if _, err := in.svc.TranscribeFor(ctx, "atlas", "ana", voice.Recording{Name: "d.wav", Data: second}); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
	if _, err := in.svc.SpeakReply(ctx, core.ReplySpeechOptions{Conversation: uuid.New(), Agent: "atlas", Play: newCollector().play}); !errors.Is(err, core.ErrVoiceOff) {
		t.Fatalf("speaking with speak: off: %v", err)
	}
}

// An agent whose offline engine is missing stops the start, naming the
// agent and the package to install.
func TestStartNeedsTheVoiceEngines(t *testing.T) {
	t.Parallel()
	s := &setup{st: testenv.SQLite(t), clock: newClock(), tools: &testTools{}}
	reg := registry(t, s.tools)
	agents := &config.Config{Agents: []config.Agent{{
		Name: "atlas", Persona: "p", Model: "scripted:" + writeScript(t, "fallback:\n  text: ok\n"), MaxTokens: 100, StepBudget: 5,
		Answers: config.Answers{Default: true},
		Voice:   config.Voice{Transcribe: "offline", Speak: "off", MaxUtterance: time.Minute, PerMinute: 5},
	}}}
	svc, err := core.New(core.Options{
		Store: s.st, Agents: agents, Registry: reg, Tools: func(c tool.ContextName) []*tool.Tool { return nil },
		Voice: core.VoiceOptions{Offline: voice.OfflineOptions{Recognizer: "/nonexistent/pocketsphinx_continuous"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = svc.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), `agent "atlas"`) || !strings.Contains(err.Error(), "apt-get install pocketsphinx") {
		t.Fatalf("Start = %v, want an error naming the agent and the package", err)
	}
}

// openai: voice models ask for the credentials of an openai: model of the
// agent: the voice block's base_url and api_key_env first, then the
// agent's own only when its model is openai: too.
func TestVoiceEnginesCredentials(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		agent         config.Agent
		wantKeyEnv    string
		wantBaseURL   string
		wantHears     string
		wantTranscrbr bool
	}{
		{"an anthropic agent uses OPENAI_API_KEY, not its own key",
			config.Agent{Name: "a", Model: "anthropic:claude-sonnet-4-5", APIKeyEnv: "ATLAS_ANTHROPIC", BaseURL: "http://127.0.0.1:1/anthropic",
				Voice: config.Voice{Transcribe: "openai:whisper-1", Speak: "off"}},
			"", "", "openai:whisper-1", true},
		{"an openai agent lends its key and server",
			config.Agent{Name: "a", Model: "openai:gpt-4.1-mini", APIKeyEnv: "ATLAS_OPENAI", BaseURL: "http://127.0.0.1:1/v1",
				Voice: config.Voice{Transcribe: "off", Speak: "openai:tts-1"}},
			"ATLAS_OPENAI", "http://127.0.0.1:1/v1", "", false},
		{"the voice block's own come first",
			config.Agent{Name: "a", Model: "openai:gpt-4.1-mini", APIKeyEnv: "ATLAS_OPENAI", BaseURL: "http://127.0.0.1:1/v1",
				Voice: config.Voice{Transcribe: "openai:whisper-large-v3", Speak: "off", APIKeyEnv: "GROQ_API_KEY", BaseURL: "http://127.0.0.1:2/openai/v1"}},
			"GROQ_API_KEY", "http://127.0.0.1:2/openai/v1", "openai:whisper-large-v3", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked config.Agent
			creds := func(a *config.Agent) (model.Credentials, error) {
				asked = *a
				return model.Credentials{APIKey: "k", BaseURL: cmp.Or(a.BaseURL, "http://127.0.0.1:3/v1")}, nil
			}
			e, err := core.NewVoiceEngines(&c.agent, core.VoiceOptions{}, creds, testenv.Logger(t))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(asked.Model, "openai:") || asked.APIKeyEnv != c.wantKeyEnv || asked.BaseURL != c.wantBaseURL {
				t.Fatalf("credentials asked for model %q, key env %q, base URL %q; want openai:, %q, %q", asked.Model, asked.APIKeyEnv, asked.BaseURL, c.wantKeyEnv, c.wantBaseURL)
			}
			if e.Hears != c.wantHears || (e.Transcriber != nil) != c.wantTranscrbr || (e.Speaker != nil) == c.wantTranscrbr {
				t.Fatalf("engines %+v", e)
			}
		})
	}
}
