package voicenote_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots/voicenote"
	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/internal/voicenotetest"
)

func TestEncode(t *testing.T) {
	voicenotetest.Need(t, "ffmpeg")
	tone := voicenotetest.Tone(voice.Speech, 1.5, false)
	for _, tc := range []struct {
		c     voicenote.Container
		magic []byte
	}{
		{voicenote.OggOpus, []byte("OggS")},
		{voicenote.WebMOpus, []byte{0x1a, 0x45, 0xdf, 0xa3}},
	} {
		t.Run(string(tc.c), func(t *testing.T) {
			file, err := voicenote.Encoder{}.Encode(context.Background(), tone, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(file, tc.magic) {
				t.Fatalf("the %s file starts % x, want % x", tc.c, file[:min(8, len(file))], tc.magic)
			}
			if tc.c == voicenote.OggOpus && !bytes.Contains(file[:200], []byte("OpusHead")) {
				t.Fatal("the ogg file has no OpusHead: not Opus")
			}
			// Decoded again, it lasts as long as the tone (Opus adds a few
			// ms of padding at most).
			back := voicenotetest.PCM(t, file)
			got, want := back.Format.Duration(len(back.PCM)), tone.Format.Duration(len(tone.PCM))
			if d := got - want; d < -30*time.Millisecond || d > 30*time.Millisecond {
				t.Fatalf("decoded %s lasts %s, want %s", tc.c, got, want)
			}
		})
	}
}

func TestEncodeRefusesEmptyAudio(t *testing.T) {
	_, err := voicenote.Encoder{}.Encode(context.Background(), voice.Audio{Format: voice.Speech}, voicenote.OggOpus)
	if err == nil {
		t.Fatal("encoding empty audio succeeded; want an error")
	}
	_, err = voicenote.Encoder{FFmpeg: "/nonexistent/ffmpeg"}.Encode(context.Background(), voicenotetest.Tone(voice.Speech, 0.1, false), voicenote.OggOpus)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("not installed")) {
		t.Fatalf("encoding without ffmpeg: %v; want an error saying it is not installed", err)
	}
}

func TestWaveform(t *testing.T) {
	for _, tc := range []struct {
		name    string
		audio   voice.Audio
		points  int
		loudest byte // every point's value, for a steady signal
	}{
		{"one second of tone: a point per 100 ms", voicenotetest.Tone(voice.Speech, 1, false), 10, 128},
		{"silence is zeros", voicenotetest.Tone(voice.Speech, 1, true), 10, 0},
		{"a minute: at most 256 points", voicenotetest.Tone(voice.Speech, 60, false), 256, 128},
		{"ten minutes: at most 256 points", voicenotetest.Tone(voice.Format{SampleRate: 8000, Channels: 2}, 600, false), 256, 128},
		{"empty", voice.Audio{Format: voice.Speech}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := voicenote.Waveform(tc.audio)
			if len(w) != tc.points {
				t.Fatalf("%d points, want %d", len(w), tc.points)
			}
			for i, v := range w {
				if d := int(v) - int(tc.loudest); d < -1 || d > 1 {
					t.Fatalf("point %d is %d, want %d", i, v, tc.loudest)
				}
			}
		})
	}
}

func TestAudioType(t *testing.T) {
	for _, tc := range []struct {
		mime, name string
		clip       bool
		want       string
	}{
		{"audio/webm", "audio_message.webm", true, "audio/webm"},
		{"video/mp4", "audio_message.mp4", true, "audio/mp4"},
		{"", "audio_message.m4a", true, "audio/mp4"},
		{"", "clip", true, "audio/webm"},
		{"audio/ogg", "voice-message.ogg", false, "audio/ogg"},
		{"audio/mpeg; charset=binary", "song.mp3", false, "audio/mpeg"},
		{"application/octet-stream", "memo.wav", false, "audio/wav"},
		{"video/mp4", "holiday.mp4", false, ""},
		{"image/png", "shot.png", false, ""},
		{"", "notes.txt", false, ""},
	} {
		if got := voicenote.AudioType(tc.mime, tc.name, tc.clip); got != tc.want {
			t.Errorf("AudioType(%q, %q, %v) = %q, want %q", tc.mime, tc.name, tc.clip, got, tc.want)
		}
	}
}
