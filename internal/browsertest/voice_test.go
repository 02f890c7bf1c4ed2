package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboardhq/switchboard/core/voice"
)

// The two things said into the fake microphone, and the agent's answer:
// long enough (about thirty-five seconds spoken) that the second phrase
// comes while it still plays.
const (
	firstPhrase  = "remind me to water the plants at five"
	secondPhrase = "what is the weather tomorrow"
	// voiceGap is the silence between the phrases: the end of the first
	// (the Endpointer's 700 ms), its recognition, the turn and the first
	// sentence's synthesis all happen in it, and playback has begun when
	// the second phrase starts. On a quiet machine that takes 1.5–2.5 s;
	// under CI's load pocketsphinx alone took 5 s and 9 s was not enough
	// (the second phrase came before playback began), so the gap leaves
	// room for several times that.
	voiceGap = 20 * time.Second
	// bargeInBound is the bound on the time from the person's
	// voice onset to the stop of playback.
	bargeInBound = 300 * time.Millisecond
)

var voiceScript = `
name: voice
turns:
  - when_last_user_contains: "hello"
    text: "Hello. Press the microphone and speak."
fallback:
  text: "You said {{last_user}}. ` + strings.Repeat("Here is a long answer, read out one sentence after another. ", 10) + `That is all."
`

// needVoiceTools skips without the offline engines (and fails in CI,
// whose .ci/run installs them).
func needVoiceTools(t *testing.T) {
	t.Helper()
	for _, p := range []string{"espeak-ng", "pocketsphinx_continuous"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("no %s on PATH: the voice browser test needs it in CI", p)
			}
			t.Skipf("no %s on PATH: install espeak-ng, pocketsphinx and pocketsphinx-en-us to run the voice browser test", p)
		}
	}
}

// speak makes a WAV of text with espeak-ng and returns its PCM.
func speak(t *testing.T, dir, name, text string) (voice.Format, []byte) {
	t.Helper()
	path := filepath.Join(dir, name)
	if out, err := exec.Command("espeak-ng", "-w", path, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng %q: %v: %s", text, err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, pcm, err := voice.ParseWAV(b)
	if err != nil {
		t.Fatalf("reading espeak-ng's %s: %v", name, err)
	}
	return f, pcm
}

// micWAV writes what the fake microphone plays: silence while the page
// connects, the first phrase, the gap, the second phrase, and silence.
func micWAV(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	f1, p1 := speak(t, dir, "first.wav", firstPhrase)
	f2, p2 := speak(t, dir, "second.wav", secondPhrase)
	if f1 != f2 {
		t.Fatalf("espeak-ng wrote %v and %v", f1, f2)
	}
	silence := func(d time.Duration) []byte {
		return make([]byte, 2*f1.Channels*int(d.Seconds()*float64(f1.SampleRate)))
	}
	var pcm []byte
	pcm = append(pcm, silence(2*time.Second)...)
	pcm = append(pcm, p1...)
	pcm = append(pcm, silence(voiceGap)...)
	pcm = append(pcm, p2...)
	pcm = append(pcm, silence(4*time.Second)...)
	path := filepath.Join(dir, "mic.wav")
	if err := os.WriteFile(path, voice.EncodeWAV(f1, pcm), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// browserWithMic is browser with Chromium's fake microphone playing wav
// once (%noloop: without it the file plays again and again).
func browserWithMic(t *testing.T, wav string) context.Context {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 860),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", wav+"%noloop"),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	_ = os.RemoveAll(shotDir(t))
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

type voiceStop struct {
	T          float64 `json:"t"`
	Sentence   int     `json:"sentence"`
	Reason     string  `json:"reason"`
	WasPlaying bool    `json:"wasPlaying"`
}

type voiceStats struct {
	Frames    int `json:"frames"`
	Sentences []struct {
		N    int     `json:"n"`
		Text string  `json:"text"`
		T    float64 `json:"t"`
	} `json:"sentences"`
	Partials []string `json:"partials"`
	Finals   []string `json:"finals"`
	Onsets   []struct {
		T       float64 `json:"t"`
		Playing bool    `json:"playing"`
	} `json:"onsets"`
	Stops        []voiceStop `json:"stops"`
	SpeechStarts []float64   `json:"speechStarts"`
	Errors       []string    `json:"errors"`
}

// TestVoiceConsole is the second Done-when line: in Chromium with
// espeak-ng's WAV as the microphone, the transcript appears, the scripted
// agent's answer is spoken (its audio frames arrive at the page), and the
// second phrase, said while the answer plays, stops playback within 300 ms
// of the voice's onset (measured in the page) and is answered next.
func TestVoiceConsole(t *testing.T) {
	t.Parallel()
	chromium(t)
	needVoiceTools(t)
	wav := micWAV(t)
	eachStore(t, func(t *testing.T, db string) {
		e := startEnvWith(t, db, func(script string) string {
			voiceScriptPath := filepath.Join(filepath.Dir(script), "voice.yaml")
			if err := os.WriteFile(voiceScriptPath, []byte(voiceScript), 0o600); err != nil {
				t.Fatal(err)
			}
			return "agents:\n  - name: switchboard\n    model: scripted:" + script + "\n    answers: {default: true}\n" +
				"  - name: atlas\n    model: scripted:" + voiceScriptPath + "\n    voice: {transcribe: offline, speak: offline}\n"
		})
		p := page{t: t, ctx: browserWithMic(t, wav)}
		p.do("sign in", chromedp.Navigate(e.loginLink("EvLoginV")))
		p.waitJS("signed in", `!document.getElementById("shell").hidden && document.getElementById("who").textContent !== ""`)

		// A conversation with atlas, opened by a typed message.
		p.do("a new conversation", chromedp.KeyEvent("n", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.WaitVisible(chromedp.CSS("#agent-pick")))
		p.do("pick atlas", chromedp.SetValue(chromedp.CSS("#agent-pick"), "atlas"))
		p.do("say hello", chromedp.SendKeys(chromedp.CSS("#composer"), "hello"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the greeting", `[...document.querySelectorAll("#log .msg.assistant .body")].some(b => b.textContent.includes("Press the microphone"))`)
		convID := eval[string](p, `new URLSearchParams(location.search).get("c")`)

		// The microphone: the fake device starts playing the WAV now.
		p.doOnStillDOM("the microphone on", chromedp.Click(chromedp.CSS("#mic")))
		p.waitJS("the session ready", `document.getElementById("voice-state").textContent === "listening"`)
		p.waitJS("the first transcript", `window.switchboardVoice.finals.length >= 1`)
		p.shot("voice-01-heard")
		p.waitJS("the answer spoken", `window.switchboardVoice.frames > 0`)
		p.waitJS("the interruption heard and answered", `window.switchboardVoice.finals.length >= 2 && window.switchboardVoice.sentences.some(s => s.text.startsWith("You said") && s.n > 1 && window.switchboardVoice.stops.some(x => x.reason === "barge_in" && x.t < s.t))`)
		p.shot("voice-02-answered")
		st := eval[voiceStats](p, `window.switchboardVoice`)
		t.Logf("page: %d audio frames, %d sentences, finals %q, partials %d, errors %q", st.Frames, len(st.Sentences), st.Finals, len(st.Partials), st.Errors)

		if len(st.Finals) != 2 || st.Finals[0] == "" || st.Finals[1] == "" || st.Finals[0] == st.Finals[1] {
			t.Fatalf("finals %q; want two different transcripts", st.Finals)
		}
		// The transcripts appear in the chat as the person's messages,
		// marked spoken.
		shown := eval[[]string](p, `[...document.querySelectorAll("#log .msg.user")].filter(m => m.querySelector(".pill.spoken")).map(m => m.querySelector(".body").textContent)`)
		if fmt.Sprint(shown) != fmt.Sprint(st.Finals) {
			t.Errorf("spoken messages in the chat %q; want the transcripts %q", shown, st.Finals)
		}
		if len(st.SpeechStarts) > 0 && len(st.Sentences) > 0 {
			t.Logf("timing: the first sentence arrived %.0f ms after the first speech start; the second phrase begins about %s after it",
				st.Sentences[0].T-st.SpeechStarts[0], time.Duration(float64(time.Second)*2.5)+voiceGap)
		}
		// The first answer was spoken: audio frames of its sentences
		// reached the page before the interruption.
		var stop *voiceStop
		for i := range st.Stops {
			if st.Stops[i].Reason == "barge_in" {
				stop = &st.Stops[i]
				break
			}
		}
		if stop == nil || !stop.WasPlaying || stop.Sentence < 1 {
			t.Fatalf("stops %+v; want a barge-in stop while the answer played", st.Stops)
		}
		// The onset of the second phrase, as the page heard it while the
		// answer played, and the stop after it.
		onset := -1.0
		for _, o := range st.Onsets {
			if o.Playing && o.T <= stop.T {
				onset = o.T
			}
		}
		if onset < 0 {
			t.Fatalf("onsets %+v: none while the answer played before the stop at %.0f ms", st.Onsets, stop.T)
		}
		latency := time.Duration((stop.T - onset) * float64(time.Millisecond))
		serverStart := -1.0
		for _, s := range st.SpeechStarts {
			if s >= onset {
				serverStart = s
				break
			}
		}
		t.Logf("barge-in: voice onset (page) to playback stop %s (bound %s); to the server's speech_start message %.0f ms; Endpointer MinSpeech 120 ms",
			latency.Round(time.Millisecond), bargeInBound, serverStart-onset)
		if latency > bargeInBound {
			t.Errorf("playback stopped %s after the voice's onset; want at most %s", latency.Round(time.Millisecond), bargeInBound)
		}

		// In the log: the two spoken messages, each answered, in order,
		// with the words the page showed.
		var entries struct {
			Entries []struct {
				Kind    string         `json:"kind"`
				Content map[string]any `json:"content"`
			} `json:"entries"`
		}
		e.waitFor("the second answer in the log", func() bool {
			e.operator("GET", "/api/conversations/"+convID+"/entries", nil, &entries)
			n := 0
			for _, en := range entries.Entries {
				if en.Kind == "assistant" {
					n++
				}
			}
			return n >= 3
		})
		var said, answered []string
		for _, en := range entries.Entries {
			text, _ := en.Content["text"].(string)
			switch {
			case en.Kind == "user" && en.Content["spoken"] != nil:
				said = append(said, text)
			case en.Kind == "assistant" && strings.HasPrefix(text, "You said"):
				answered = append(answered, text)
			}
		}
		if fmt.Sprint(said) != fmt.Sprint(st.Finals) {
			t.Errorf("spoken messages in the log %q; want the page's transcripts %q", said, st.Finals)
		}
		if len(answered) != 2 || !strings.Contains(answered[0], st.Finals[0]) || !strings.Contains(answered[1], st.Finals[1]) {
			t.Errorf("answers %q; want one to each transcript, in order", answered)
		}
		// Push-to-talk: the mode chosen in the page, the talk button held
		// for a second of audio and released: the server hears an
		// utterance between the two (whatever the fake microphone plays
		// then: a final transcript, or nothing heard).
		p.doOnStillDOM("the microphone off", chromedp.Click(chromedp.CSS("#mic")))
		p.waitJS("voice off", `document.getElementById("voice-state").textContent === "voice off"`)
		eval[bool](p, `(() => { const m = document.getElementById("voice-mode"); m.value = "push_to_talk"; m.dispatchEvent(new Event("change")); return true })()`)
		p.doOnStillDOM("the microphone on for push-to-talk", chromedp.Click(chromedp.CSS("#mic")))
		p.waitJS("push-to-talk ready", `document.getElementById("voice-state").textContent === "hold to talk" && !document.getElementById("talk").hidden`)
		eval[bool](p, `(() => { const v = switchboardVoice; window.__ptt = {sent: v.sent, starts: v.speechStarts.length, ends: v.finals.length + v.ignored.length}; document.getElementById("talk").dispatchEvent(new PointerEvent("pointerdown")); return true })()`)
		p.waitJS("the key's speech start", `window.switchboardVoice.speechStarts.length === window.__ptt.starts + 1`)
		p.waitJS("a second of audio held", `window.switchboardVoice.sent >= window.__ptt.sent + 50`)
		eval[bool](p, `document.getElementById("talk").dispatchEvent(new PointerEvent("pointerup"))`)
		p.waitJS("the utterance ended", `window.switchboardVoice.finals.length + window.switchboardVoice.ignored.length === window.__ptt.ends + 1`)

		// The page counted the frames; the server spoke more than one
		// sentence of the first answer before it was stopped.
		first := 0
		for _, s := range st.Sentences {
			if s.T < stop.T {
				first++
			}
		}
		if st.Frames == 0 || first == 0 {
			t.Errorf("%d audio frames, %d sentences before the stop; want the first answer spoken", st.Frames, first)
		}
	})
}
