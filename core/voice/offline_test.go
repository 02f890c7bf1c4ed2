package voice

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const phrase = "remind me to water the plants at five"

// needPrograms skips when the engines are not installed, except in CI
// (CI=true), where a missing engine is a failure.
func needPrograms(t testing.TB, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (.ci/run installs it)", p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
}

// spokenWAV has espeak-ng speak text into a WAV file and returns its path
// and bytes.
func spokenWAV(t testing.TB, text string) (string, []byte) {
	t.Helper()
	needPrograms(t, "espeak-ng")
	path := filepath.Join(t.TempDir(), "spoken.wav")
	if out, err := exec.Command("espeak-ng", "-w", path, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// engineAlone is what pocketsphinx prints for the WAV file, run by hand
// with the same model and rate, its lines joined.
func engineAlone(t testing.TB, o *Offline, path string, rate int) string {
	t.Helper()
	argv := o.RecognizerCommand(rate, path)
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatalf("%s alone: %v", strings.Join(argv, " "), err)
	}
	return JoinHypotheses(string(out))
}

func newOffline(t testing.TB, opts OfflineOptions) *Offline {
	t.Helper()
	needPrograms(t, "pocketsphinx_continuous", "espeak-ng")
	o, err := NewOffline(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOfflineTranscribeIsTheEngine(t *testing.T) {
	o := newOffline(t, OfflineOptions{})
	path, wav := spokenWAV(t, phrase)
	f, pcm, err := ParseWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
	want := engineAlone(t, o, path, f.SampleRate)
	if want == "" {
		t.Fatal("pocketsphinx alone heard nothing in espeak-ng's phrase")
	}
	got, err := o.Transcribe(context.Background(), Recording{Name: "note.wav", MimeType: "audio/wav", Data: wav})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want || !got.Final {
		t.Fatalf("transcript %q (final %v), want what pocketsphinx alone prints: %q", got.Text, got.Final, want)
	}
	if got.Audio != f.Duration(len(pcm)) {
		t.Fatalf("audio %s, want %s", got.Audio, f.Duration(len(pcm)))
	}
	t.Logf("pocketsphinx hears %q for %q", got.Text, phrase)
}

// A live utterance fed in 20 ms pieces ends with the transcript the engine
// gives for the whole file, and a partial while it lasts is what the engine
// hears in the audio so far.
func TestOfflineStream(t *testing.T) {
	o := newOffline(t, OfflineOptions{PartialEvery: 500 * time.Millisecond})
	path, wav := spokenWAV(t, phrase+", and feed the cat tomorrow morning")
	f, pcm, err := ParseWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
	want := engineAlone(t, o, path, f.SampleRate)
	ctx := context.Background()
	s, err := o.Stream(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunk := 2 * f.SampleRate / 50
	half := len(pcm) / 2
	half -= half % chunk
	for i := 0; i < half; i += chunk {
		if _, err := s.Write(pcm[i:min(i+chunk, half)]); err != nil {
			t.Fatal(err)
		}
	}
	var partial Transcript
	select {
	case partial = <-s.Partials():
	case <-time.After(30 * time.Second):
		t.Fatal("no partial transcript within 30s of writing half the utterance")
	}
	prefix := pcm[:int(partial.Audio.Seconds()*float64(f.SampleRate))*2]
	prefixPath := filepath.Join(t.TempDir(), "prefix.wav")
	if err := os.WriteFile(prefixPath, EncodeWAV(f, prefix), 0o600); err != nil {
		t.Fatal(err)
	}
	if wantPartial := engineAlone(t, o, prefixPath, f.SampleRate); partial.Text != wantPartial || partial.Final {
		t.Fatalf("partial over %s: %q (final %v), want the engine's %q", partial.Audio, partial.Text, partial.Final, wantPartial)
	}
	for i := half; i < len(pcm); i += chunk {
		if _, err := s.Write(pcm[i:min(i+chunk, len(pcm))]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want || !got.Final {
		t.Fatalf("final %q (final %v), want what pocketsphinx alone prints: %q", got.Text, got.Final, want)
	}
	if got.Audio != f.Duration(len(pcm)) {
		t.Fatalf("audio %s, want %s", got.Audio, f.Duration(len(pcm)))
	}
	for range s.Partials() { // closed after Finish
	}
	if _, err := s.Write(pcm[:chunk]); err == nil {
		t.Fatal("a write after Finish was accepted")
	}
}

// Stereo at 48 kHz (a browser's capture) and 8 kHz (a phone line) give the
// transcript the same audio gives as a file.
func TestOfflineStreamFormats(t *testing.T) {
	o := newOffline(t, OfflineOptions{PartialEvery: -1})
	_, wav := spokenWAV(t, phrase)
	f, pcm, err := ParseWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []Format{{SampleRate: 48000, Channels: 2}, {SampleRate: 8000, Channels: 1}} {
		mono := Resample(pcm, f.SampleRate, to.SampleRate)
		data := mono
		if to.Channels == 2 {
			data = nil
			for i := 0; i+1 < len(mono); i += 2 {
				data = append(data, mono[i], mono[i+1], mono[i], mono[i+1])
			}
		}
		file, err := o.Transcribe(context.Background(), Recording{Name: "x.wav", Data: EncodeWAV(to, data)})
		if err != nil {
			t.Fatal(err)
		}
		s, err := o.Stream(context.Background(), to)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(data); i += 999 { // odd pieces split frames
			if _, err := s.Write(data[i:min(i+999, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		live, err := s.Finish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if live.Text != file.Text || live.Text == "" {
			t.Fatalf("%+v: live %q, file %q", to, live.Text, file.Text)
		}
	}
}

func TestOfflineStreamClose(t *testing.T) {
	o := newOffline(t, OfflineOptions{})
	s, err := o.Stream(context.Background(), Speech)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(tone(Speech, 200, 2*time.Second, 0.3)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(context.Background()); err == nil {
		t.Fatal("Finish after Close gave a transcript")
	}
}

func TestOfflineSpeak(t *testing.T) {
	o := newOffline(t, OfflineOptions{})
	a, err := o.Speak(context.Background(), "-v en --help. Water the plants.")
	if err != nil {
		t.Fatal(err)
	}
	if a.Format.SampleRate != 22050 || a.Format.Channels != 1 {
		t.Fatalf("format %+v", a.Format)
	}
	if d := a.Format.Duration(len(a.PCM)); d < time.Second || d > 6*time.Second {
		t.Fatalf("spoke %s for two short sentences", d)
	}
	if Level(a.Format, a.PCM) < -40 {
		t.Fatalf("the speech is silent: %.1f dBFS", Level(a.Format, a.PCM))
	}
	if a.Characters != len("-v en --help. Water the plants.") {
		t.Fatalf("characters %d", a.Characters)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Speak(ctx, "never said"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}

func TestDecodeOggOpus(t *testing.T) {
	needPrograms(t, "ffmpeg")
	path, wav := spokenWAV(t, phrase)
	f, pcm, _ := ParseWAV(wav)
	for _, c := range []struct{ ext, codec string }{{"ogg", "libopus"}, {"webm", "libopus"}, {"m4a", "aac"}} {
		out := filepath.Join(t.TempDir(), "note."+c.ext)
		args := []string{"-nostdin", "-loglevel", "error", "-i", path, "-c:a", c.codec}
		if c.ext == "m4a" {
			args = append(args, "-movflags", "+faststart")
		}
		if msg, err := exec.Command("ffmpeg", append(args, out)...).CombinedOutput(); err != nil {
			t.Fatalf("making the %s fixture: %v: %s", c.ext, err, msg)
		}
		data, _ := os.ReadFile(out)
		got, dec, err := Decoder{}.Decode(context.Background(), Recording{Name: "note." + c.ext, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if got != Speech {
			t.Fatalf("%s decoded to %+v", c.ext, got)
		}
		if d := got.Duration(len(dec)) - f.Duration(len(pcm)); d < -50*time.Millisecond || d > 150*time.Millisecond {
			t.Fatalf("%s decoded to %s, the WAV is %s", c.ext, got.Duration(len(dec)), f.Duration(len(pcm)))
		}
	}
	if _, _, err := (Decoder{}).Decode(context.Background(), Recording{Name: "junk.ogg", Data: bytes.Repeat([]byte("x"), 100)}); err == nil {
		t.Fatal("junk decoded")
	}
}
