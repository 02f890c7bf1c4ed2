package voice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Decoder turns a recording (a WAV file, a Discord voice message's Ogg
// Opus, a Slack clip's WebM or MP4…) into mono 16-bit PCM. A WAV of 16-bit
// PCM is read in Go at its own rate; anything else goes through ffmpeg,
// which writes 16 kHz (Speech).
type Decoder struct {
	// FFmpeg is the ffmpeg program (default "ffmpeg" on PATH).
	FFmpeg string
	// MaxDuration cuts longer recordings (default 10 minutes); the caller
	// enforces its own, shorter limit on the result.
	MaxDuration time.Duration
}

// Kind names a recording's container from its first bytes, whatever its
// declared MIME type says: "wav", "ogg", "webm", "mp4", "mp3", "flac" or ""
// when unknown.
func Kind(data []byte) string {
	switch {
	case len(data) >= 12 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		return "wav"
	case bytes.HasPrefix(data, []byte("OggS")):
		return "ogg"
	case bytes.HasPrefix(data, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return "webm"
	case len(data) >= 8 && string(data[4:8]) == "ftyp":
		return "mp4"
	case bytes.HasPrefix(data, []byte("fLaC")):
		return "flac"
	case bytes.HasPrefix(data, []byte("ID3")), len(data) >= 2 && data[0] == 0xFF && data[1]&0xE0 == 0xE0:
		return "mp3"
	}
	return ""
}

// Decode returns the recording's audio as mono PCM.
func (d Decoder) Decode(ctx context.Context, rec Recording) (Format, []byte, error) {
	if len(rec.Data) == 0 {
		return Format{}, nil, fmt.Errorf("decoding %q: the recording is empty", rec.Name)
	}
	if Kind(rec.Data) == "wav" {
		f, pcm, err := ParseWAV(rec.Data)
		if err == nil {
			max := d.maxDuration()
			if limit := int(max.Seconds() * float64(f.SampleRate*f.Channels*2)); len(pcm) > limit {
				pcm = pcm[:limit-limit%(2*f.Channels)]
			}
			return Format{SampleRate: f.SampleRate, Channels: 1}, Mono(f, pcm), nil
		}
		if !errors.Is(err, ErrNotPCM16) {
			return Format{}, nil, fmt.Errorf("decoding %q: %w", rec.Name, err)
		}
	}
	return d.ffmpeg(ctx, rec)
}

func (d Decoder) maxDuration() time.Duration {
	if d.MaxDuration > 0 {
		return d.MaxDuration
	}
	return 10 * time.Minute
}

// ffmpeg decodes through a temporary file rather than a pipe: an MP4 whose
// index (moov) follows its data cannot be read from a pipe.
func (d Decoder) ffmpeg(ctx context.Context, rec Recording) (Format, []byte, error) {
	prog := d.FFmpeg
	if prog == "" {
		prog = "ffmpeg"
	}
	tmp, err := os.CreateTemp("", "switchboard-voice-*")
	if err != nil {
		return Format{}, nil, fmt.Errorf("decoding %q: %w", rec.Name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(rec.Data); err != nil {
		tmp.Close()
		return Format{}, nil, fmt.Errorf("decoding %q: %w", rec.Name, err)
	}
	if err := tmp.Close(); err != nil {
		return Format{}, nil, fmt.Errorf("decoding %q: %w", rec.Name, err)
	}
	cmd := exec.CommandContext(ctx, prog,
		"-nostdin", "-hide_banner", "-loglevel", "error",
		"-i", tmp.Name(),
		"-t", strconv.FormatFloat(d.maxDuration().Seconds(), 'f', 3, 64),
		"-vn", "-ac", "1", "-ar", strconv.Itoa(Speech.SampleRate),
		"-f", "s16le", "pipe:1")
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Format{}, nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return Format{}, nil, fmt.Errorf("decoding %q (%s) with %s: %w: %s", rec.Name, Kind(rec.Data), prog, err, msg)
	}
	pcm := out.Bytes()
	pcm = pcm[:len(pcm)-len(pcm)%2]
	return Speech, pcm, nil
}
