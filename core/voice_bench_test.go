package core_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// voiceReply is the scripted answer; its first sentence is the first
// audio.
const voiceReply = "Sure. I will remind you to water the plants at five."

// BenchmarkVoiceTurn measures what a person waits for, on the offline
// engines and a zero-latency scripted model, SQLite: from the end of their
// speech to the first audio of the answer. The utterance (espeak-ng's
// "remind me to water the plants at five", 16 kHz, then a second of
// silence) is written into Listen at the pace of speech in 20 ms pieces,
// as a microphone gives it; the Endpointer (700 ms of silence) calls the
// end; the final transcript is posted (PostSpoken), the worker runs the
// turn, and SpeakReply plays the first sentence. The clock starts where
// the speech stopped (the end the Endpointer found, before its 700 ms
// wait) and stops at the first Play.
//
// Beside it, in the same run, the engines' own time measured alone:
// pocketsphinx_continuous over the whole utterance's WAV file plus
// espeak-ng speaking the first sentence, as commands. The goal is a
// median of at most 1.5 s plus that.
//
//	go test ./core -run XXX -bench BenchmarkVoiceTurn -benchtime 7x
func BenchmarkVoiceTurn(b *testing.B) {
	needVoice(b)
	dir := b.TempDir()
	_, wav := spoken(b, remindPhrase)
	f, pcm, err := voice.ParseWAV(wav)
	if err != nil {
		b.Fatal(err)
	}
	pcm = voice.Resample(voice.Mono(f, pcm), f.SampleRate, voice.Speech.SampleRate)
	utterance := append(pcm, make([]byte, 2*voice.Speech.SampleRate)...) // and a second of silence
	wavPath := filepath.Join(dir, "utterance.wav")
	if err := os.WriteFile(wavPath, voice.EncodeWAV(voice.Speech, pcm), 0o600); err != nil {
		b.Fatal(err)
	}

	script := filepath.Join(dir, "voice.yaml")
	if err := os.WriteFile(script, []byte("chunk_delay: 0s\nfallback:\n  text: \""+voiceReply+"\"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	st := testenv.SQLite(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, err := bench.TurnService(ctx, st, script, func(a *config.Agent) {
		a.Voice = config.Voice{Transcribe: "offline", Speak: "offline", MaxUtterance: time.Minute, PerMinute: 600}
	})
	if err != nil {
		b.Fatal(err)
	}
	handlers := core.NewHandlers()
	core.AddHandler(handlers, svc.RunTurn)
	w, err := core.NewWorker(core.WorkerOptions{Store: st, WorkerID: "bench", PollInterval: 50 * time.Millisecond, Handlers: handlers})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer w.Stop(context.Background())

	var waits, engines, finals []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wait, final, err := voiceTurnOnce(ctx, svc, utterance)
		if err != nil {
			b.Fatal(err)
		}
		alone, err := enginesAlone(ctx, wavPath, "Sure.")
		if err != nil {
			b.Fatal(err)
		}
		waits, engines, finals = append(waits, wait), append(engines, alone), append(finals, final)
	}
	b.StopTimer()
	p50, e50 := bench.Quantile(waits, 0.5), bench.Quantile(engines, 0.5)
	b.ReportMetric(float64(p50.Microseconds())/1000, "speech_end_to_audio_p50_ms")
	b.ReportMetric(float64(e50.Microseconds())/1000, "engines_alone_p50_ms")
	b.ReportMetric(float64((p50-e50).Microseconds())/1000, "difference_p50_ms")
	b.ReportMetric(float64(p50)/float64(max(1, e50)), "ratio_p50")
	b.ReportMetric(float64(bench.Quantile(finals, 0.5).Microseconds())/1000, "endpoint_to_transcript_p50_ms")
	if goal := 1500*time.Millisecond + e50; p50 > goal {
		b.Errorf("end of speech to first audio: median %s, over the goal of 1.5 s + the engines' own %s = %s", p50, e50, goal)
	}
}

// voiceTurnOnce speaks the utterance into a new console conversation and
// returns the time from the end of speech to the first audio, and from the
// Endpointer's call to the final transcript.
func voiceTurnOnce(ctx context.Context, svc *core.Service, utterance []byte) (wait, final time.Duration, err error) {
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
	ep, err := voice.NewEndpointer(voice.EndpointOptions{Format: voice.Speech})
	if err != nil {
		return 0, 0, err
	}
	const piece = 20 * time.Millisecond
	n := int(piece.Seconds()*float64(voice.Speech.SampleRate)) * 2
	start := time.Now()
	var speechEnd, called time.Time
	for i := 0; i < len(utterance) && called.IsZero(); i += n {
		// The microphone's pace: piece k is captured by start + (k+1)·20ms.
		due := start.Add(voice.Speech.Duration(i + n))
		time.Sleep(time.Until(due))
		chunk := utterance[i:min(i+n, len(utterance))]
		if _, err := l.Write(chunk); err != nil {
			return 0, 0, err
		}
		for _, ev := range ep.Feed(chunk) {
			if ev.Kind == voice.SpeechEnd {
				called = time.Now()
				speechEnd = start.Add(ev.At - 700*time.Millisecond)
			}
		}
	}
	if called.IsZero() {
		return 0, 0, fmt.Errorf("the endpointer found no end of speech")
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
		return 0, 0, fmt.Errorf("no audio within 60s")
	}
}

// enginesAlone is the engines' own time: pocketsphinx over the WAV file,
// then espeak-ng speaking the sentence, each as a command.
func enginesAlone(ctx context.Context, wavPath, sentence string) (time.Duration, error) {
	o, err := voice.NewOffline(voice.OfflineOptions{})
	if err != nil {
		return 0, err
	}
	argv := o.RecognizerCommand(voice.Speech.SampleRate, wavPath)
	start := time.Now()
	if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("pocketsphinx alone: %v: %s", err, out)
	}
	if out, err := exec.CommandContext(ctx, "espeak-ng", "--stdout", sentence).Output(); err != nil || len(out) == 0 {
		return 0, fmt.Errorf("espeak-ng alone: %v", err)
	}
	return time.Since(start), nil
}
