package core_test

import (
	"context"
	"testing"

	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// BenchmarkVoiceTurn measures what a person waits for, on the offline
// engines and a zero-latency scripted model, SQLite: from the end of their
// speech to the first audio of the answer (bench.VoiceTurnOnce: the
// utterance, espeak-ng's "remind me to water the plants at five" at
// 16 kHz and a second of silence, is written into Listen at the pace of
// speech; the Endpointer's 700 ms of quiet ends it; PostSpoken, the
// worker's turn, SpeakReply's first sentence). Beside it, in the same run,
// the engines' own time alone: pocketsphinx_continuous over the utterance's
// WAV file plus espeak-ng on the first sentence. The goal: a median of at
// most 1.5 s plus that. `switchboard bench voice` measures the same.
//
//	go test ./core -run XXX -bench BenchmarkVoiceTurn -benchtime 7x
func BenchmarkVoiceTurn(b *testing.B) {
	needVoice(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := b.TempDir()
	utterance, wavPath, err := bench.VoiceUtterance(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	svc, stop, err := bench.VoiceService(ctx, testenv.SQLite(b), dir)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	b.ResetTimer()
	waits, engines, finals, err := bench.VoiceRun(ctx, svc, utterance, wavPath, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	p50, e50 := bench.Quantile(waits, 0.5), bench.Quantile(engines, 0.5)
	b.ReportMetric(float64(p50.Microseconds())/1000, "speech_end_to_audio_p50_ms")
	b.ReportMetric(float64(e50.Microseconds())/1000, "engines_alone_p50_ms")
	b.ReportMetric(float64((p50-e50).Microseconds())/1000, "difference_p50_ms")
	b.ReportMetric(float64(p50)/float64(max(1, e50)), "ratio_p50")
	b.ReportMetric(float64(bench.Quantile(finals, 0.5).Microseconds())/1000, "endpoint_to_transcript_p50_ms")
	if goal := bench.VoiceGoal + e50; p50 > goal {
		b.Errorf("end of speech to first audio: median %s, over the goal of %s + the engines' own %s = %s", p50, bench.VoiceGoal, e50, goal)
	}
}
