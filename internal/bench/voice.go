package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/store"
)

// The voice figure: from the end of a person's speech to the first audio
// of the answer, on the offline engines and a zero-latency scripted model,
// against the engines' own time measured alone in the same run.

// VoicePhrase is what the utterance says (espeak-ng speaks it).
const VoicePhrase = "remind me to water the plants at five"

// VoiceReply is the scripted answer; its first sentence is the first
// audio.
const VoiceReply = "Sure. I will remind you to water the plants at five."

// VoiceFirstSentence is VoiceReply's first sentence.
const VoiceFirstSentence = "Sure."

// VoiceSilence is the Endpointer's end-of-speech wait (its default).
const VoiceSilence = 700 * time.Millisecond

// ErrNoVoiceEngines is returned when pocketsphinx_continuous, espeak-ng or
// ffmpeg is missing.
var ErrNoVoiceEngines = errors.New("the offline voice engines are not installed (apt-get install pocketsphinx pocketsphinx-en-us espeak-ng ffmpeg)")

// VoiceEnginesInstalled reports ErrNoVoiceEngines, naming the program,
// when one is missing.
func VoiceEnginesInstalled() error {
	for _, p := range []string{"pocketsphinx_continuous", "espeak-ng", "ffmpeg"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNoVoiceEngines, p, err)
		}
	}
	return nil
}

// VoiceUtterance has espeak-ng speak VoicePhrase, resampled to 16 kHz
// (voice.Speech, what the console sends): it returns the utterance as
// written to Listen (the speech and a second of silence after it) and the
// path of a WAV file of the speech alone, for the engine alone.
func VoiceUtterance(ctx context.Context, dir string) (utterance []byte, wavPath string, err error) {
	raw := filepath.Join(dir, "espeak.wav")
	if out, err := exec.CommandContext(ctx, "espeak-ng", "-w", raw, VoicePhrase).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("espeak-ng: %w: %s", err, out)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		return nil, "", err
	}
	f, pcm, err := voice.ParseWAV(data)
	if err != nil {
		return nil, "", err
	}
	pcm = voice.Resample(voice.Mono(f, pcm), f.SampleRate, voice.Speech.SampleRate)
	wavPath = filepath.Join(dir, "utterance.wav")
	if err := os.WriteFile(wavPath, voice.EncodeWAV(voice.Speech, pcm), 0o600); err != nil {
		return nil, "", err
	}
	return append(pcm, make([]byte, 2*voice.Speech.SampleRate)...), wavPath, nil
}

// VoiceService is a started service on st whose one agent, "bench", hears
// and speaks offline and answers VoiceReply at once, with a worker running
// its turns; stop ends the worker.
func VoiceService(ctx context.Context, st store.Store, dir string) (svc *core.Service, stop func(), err error) {
	script := filepath.Join(dir, "voice.yaml")
	if err := os.WriteFile(script, []byte("chunk_delay: 0s\nfallback:\n  text: \""+VoiceReply+"\"\n"), 0o600); err != nil {
		return nil, nil, err
	}
	svc, err = TurnService(ctx, st, script, func(a *config.Agent) {
		a.Voice = config.Voice{Transcribe: config.VoiceOffline, Speak: config.VoiceOffline, MaxUtterance: time.Minute, PerMinute: 600}
	})
	if err != nil {
		return nil, nil, err
	}
	handlers := core.NewHandlers()
	core.AddHandler(handlers, svc.RunTurn)
	w, err := core.NewWorker(core.WorkerOptions{Store: st, WorkerID: "bench-voice", PollInterval: 50 * time.Millisecond, Handlers: handlers})
	if err != nil {
		return nil, nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	if err := w.Start(wctx); err != nil {
		cancel()
		return nil, nil, err
	}
	return svc, func() { cancel(); _ = w.Stop(context.Background()) }, nil
}

// VoiceTurnOnce speaks the utterance into a new console conversation of
// svc's agent "bench": written into Listen in 20 ms pieces at the pace of
// speech, as a microphone gives it, with the Endpointer calling the end;
// the final transcript is posted (PostSpoken), the worker runs the turn,
// and SpeakReply plays the answer. wait runs from where the speech stopped
// (the end the Endpointer found, before its wait) to the first Play;
// final from the Endpointer's call to the final transcript.
func VoiceTurnOnce(ctx context.Context, svc *core.Service, utterance []byte) (wait, final time.Duration, err error) {
	conv, err := svc.CreateConversation(ctx, "bench", "console", "u")
	if err != nil {
		return 0, 0, err
	}
	firstAudio := make(chan time.Time, 1)
	rs, err := svc.SpeakReply(ctx, core.ReplySpeechOptions{Conversation: conv.ID, Agent: "bench",
		Play: func(ctx context.Context, a voice.Audio, sentence string) error {
			select {
			case firstAudio <- time.Now():
			default:
			}
			return nil
		}})
	if err != nil {
		return 0, 0, err
	}
	defer rs.Stop()
	l, err := svc.Listen(ctx, "bench", "console/u", voice.Speech)
	if err != nil {
		return 0, 0, err
	}
	defer l.Close()
	ep, err := voice.NewEndpointer(voice.EndpointOptions{Format: voice.Speech, Silence: VoiceSilence})
	if err != nil {
		return 0, 0, err
	}
	const piece = 20 * time.Millisecond
	n := int(piece.Seconds()*float64(voice.Speech.SampleRate)) * 2
	start := time.Now()
	var speechEnd, called time.Time
	for i := 0; i < len(utterance) && called.IsZero(); i += n {
		// The microphone's pace: the piece ending at position p is
		// captured at start + p.
		time.Sleep(time.Until(start.Add(voice.Speech.Duration(min(i+n, len(utterance))))))
		chunk := utterance[i:min(i+n, len(utterance))]
		if _, err := l.Write(chunk); err != nil {
			return 0, 0, err
		}
		for _, ev := range ep.Feed(chunk) {
			if ev.Kind == voice.SpeechEnd {
				called = time.Now()
				speechEnd = start.Add(ev.At - VoiceSilence)
			}
		}
	}
	if called.IsZero() {
		return 0, 0, errors.New("the endpointer found no end of speech")
	}
	heard, err := l.Finish(ctx)
	if err != nil {
		return 0, 0, err
	}
	final = time.Since(called)
	if _, err := svc.PostSpoken(ctx, conv.ID, "u", heard, core.MessageOptions{}); err != nil {
		return 0, 0, err
	}
	select {
	case t := <-firstAudio:
		return t.Sub(speechEnd), final, nil
	case <-time.After(60 * time.Second):
		return 0, 0, errors.New("no audio within 60s")
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
}

// EnginesAlone is the engines' own time: pocketsphinx_continuous over the
// WAV file, then espeak-ng speaking the sentence, each as a command.
func EnginesAlone(ctx context.Context, wavPath, sentence string) (time.Duration, error) {
	o, err := voice.NewOffline(voice.OfflineOptions{})
	if err != nil {
		return 0, err
	}
	argv := o.RecognizerCommand(voice.Speech.SampleRate, wavPath)
	start := time.Now()
	if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("pocketsphinx alone: %w: %s", err, out)
	}
	if out, err := exec.CommandContext(ctx, "espeak-ng", "--stdout", sentence).Output(); err != nil || len(out) == 0 {
		return 0, fmt.Errorf("espeak-ng alone: %v", err)
	}
	return time.Since(start), nil
}

// VoiceRun measures n voice turns, each followed by the engines alone.
func VoiceRun(ctx context.Context, svc *core.Service, utterance []byte, wavPath string, n int) (waits, engines, finals []time.Duration, err error) {
	for range n {
		wait, final, err := VoiceTurnOnce(ctx, svc, utterance)
		if err != nil {
			return nil, nil, nil, err
		}
		alone, err := EnginesAlone(ctx, wavPath, VoiceFirstSentence)
		if err != nil {
			return nil, nil, nil, err
		}
		waits, engines, finals = append(waits, wait), append(engines, alone), append(finals, final)
	}
	return waits, engines, finals, nil
}

// VoiceGoal is the figure's goal: the median at most this much over the
// engines' own time.
const VoiceGoal = 1500 * time.Millisecond

func runVoice(ctx context.Context, e *env) (*Result, error) {
	if err := VoiceEnginesInstalled(); err != nil {
		return &Result{Metric: "speech end to first audio p50", Unit: "ms", Skipped: err.Error()}, nil
	}
	n := e.opts.size(15, 3)
	utterance, wavPath, err := VoiceUtterance(ctx, e.dir)
	if err != nil {
		return nil, err
	}
	svc, stop, err := VoiceService(ctx, e.st, e.dir)
	if err != nil {
		return nil, err
	}
	defer stop()
	waits, engines, finals, err := VoiceRun(ctx, svc, utterance, wavPath, n)
	if err != nil {
		return nil, err
	}
	e50 := Quantile(engines, 0.5)
	return &Result{
		Metric: "speech end to first audio p50", Value: ms(Quantile(waits, 0.5)), Unit: "ms",
		Baseline: "pocketsphinx + espeak-ng alone p50", BaselineValue: ms(e50),
		Limit: "goal: 1.5 s + the engines alone", LimitValue: ms(VoiceGoal + e50),
		Extra: map[string]float64{
			"endpoint_to_transcript_p50_ms": ms(Quantile(finals, 0.5)),
			"end_of_speech_wait_ms":         ms(VoiceSilence),
			"n":                             float64(n),
		},
	}, nil
}
