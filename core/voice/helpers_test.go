package voice_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func needFFmpeg(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ffmpeg is not installed (.ci/run installs it)")
		}
		t.Skip("ffmpeg is not installed")
	}
}

// oggOpus is a short Ogg Opus file, as Discord's voice messages are.
func oggOpus(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "note.ogg")
	if msg, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=300:duration=1",
		"-c:a", "libopus", out).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
