// Package voicenotetest makes the voice notes tests send, at test time and
// without a network: espeak-ng speaks a phrase to a WAV, and ffmpeg encodes
// it as the platform's clients do (Ogg Opus for a Discord voice message,
// Opus in WebM or AAC in MP4 for a Slack audio clip). A machine without
// the programs skips the test, unless CI=true, where it fails.
package voicenotetest

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/core/voice"
)

// Need skips (or, in CI, fails) t when a program is missing.
func Need(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (apt-get install %s)", p, p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
}

// WAV is phrase spoken by espeak-ng, as a WAV file.
func WAV(t testing.TB, phrase string) []byte {
	t.Helper()
	Need(t, "espeak-ng")
	out := filepath.Join(t.TempDir(), "phrase.wav")
	cmd := exec.Command("espeak-ng", "-v", "en-us", "-w", out, phrase)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Encode converts an audio file to the named format with ffmpeg: "ogg"
// (Opus, as a Discord voice message), "webm" (Opus, as a Slack clip) or
// "mp4" (AAC, as a Slack clip recorded on a phone).
func Encode(t testing.TB, file []byte, format string) []byte {
	t.Helper()
	Need(t, "ffmpeg")
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin", "-i", "pipe:0", "-ac", "1"}
	switch format {
	case "ogg", "webm":
		args = append(args, "-ar", "48000", "-c:a", "libopus", "-b:a", "32000", "-f", format, "pipe:1")
	case "mp4":
		// MP4 needs its index at the front to be written to a pipe.
		args = append(args, "-c:a", "aac", "-movflags", "frag_keyframe+empty_moov", "-f", "mp4", "pipe:1")
	default:
		t.Fatalf("voicenotetest: unknown format %q", format)
	}
	cmd := exec.Command("ffmpeg", args...)
	cmd.Stdin = bytes.NewReader(file)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg to %s: %v: %s", format, err, stderr.String())
	}
	return out.Bytes()
}

// PCM decodes an audio file to 16 kHz mono PCM with ffmpeg.
func PCM(t testing.TB, file []byte) voice.Audio {
	t.Helper()
	Need(t, "ffmpeg")
	cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-i", "pipe:0",
		"-ac", "1", "-ar", "16000", "-f", "s16le", "pipe:1")
	cmd.Stdin = bytes.NewReader(file)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg to pcm: %v: %s", err, stderr.String())
	}
	return voice.Audio{Format: voice.Speech, PCM: out.Bytes()}
}

// Tone is seconds of a 440 Hz sine at half scale, or silence when silent.
func Tone(f voice.Format, seconds float64, silent bool) voice.Audio {
	n := int(seconds * float64(f.SampleRate))
	pcm := make([]byte, 0, n*2*f.Channels)
	for i := range n {
		v := int16(0)
		if !silent {
			v = int16(16384 * math.Sin(2*3.141592653589793*440*float64(i)/float64(f.SampleRate)))
		}
		for range f.Channels {
			pcm = binary.LittleEndian.AppendUint16(pcm, uint16(v))
		}
	}
	return voice.Audio{Format: f, PCM: pcm}
}
