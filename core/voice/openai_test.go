package voice_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/internal/modeltest"
)

func newOpenAI(t *testing.T, fake *modeltest.AudioFake, opts voice.OpenAIOptions) *voice.OpenAI {
	t.Helper()
	opts.BaseURL = fake.URL
	opts.APIKey = "test-key"
	o, err := voice.NewOpenAI(opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func wav(d time.Duration) []byte {
	n := int(d.Seconds() * 16000)
	return voice.EncodeWAV(voice.Speech, make([]byte, 2*n))
}

func TestOpenAITranscribe(t *testing.T) {
	fake := modeltest.NewOpenAIAudio(t)
	fake.APIKey = "test-key"
	fake.SetText("remind me to water the plants at five")
	o := newOpenAI(t, fake, voice.OpenAIOptions{TranscribeModel: "whisper-1", Language: "en"})
	got, err := o.Transcribe(context.Background(), voice.Recording{Name: "note.wav", MimeType: "audio/wav", Data: wav(1500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "remind me to water the plants at five" || !got.Final || got.Audio != 1500*time.Millisecond {
		t.Fatalf("got %+v", got)
	}
	req := fake.Requests()[0]
	if req.Model != "whisper-1" || req.Language != "en" || req.Stream || req.FileName != "note.wav" || req.ResponseFormat != "json" {
		t.Fatalf("request %+v", req)
	}
}

// gpt-4o-transcribe streams: the deltas arrive as partials of a live
// utterance, the done event is the final transcript.
func TestOpenAIStreamedTranscript(t *testing.T) {
	fake := modeltest.NewOpenAIAudio(t)
	fake.SetText("water the plants at five")
	fake.SetDelay(5 * time.Millisecond)
	o := newOpenAI(t, fake, voice.OpenAIOptions{TranscribeModel: "gpt-4o-transcribe"})
	s, err := o.Stream(context.Background(), voice.Format{SampleRate: 48000, Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(make([]byte, 48000*4)); err != nil { // 1 s of stereo
		t.Fatal(err)
	}
	var partials []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range s.Partials() {
			partials = append(partials, p.Text)
		}
	}()
	got, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if got.Text != "water the plants at five" || got.Audio != time.Second {
		t.Fatalf("final %+v", got)
	}
	if len(partials) == 0 || !strings.HasPrefix("water the plants at five", partials[len(partials)-1]) {
		t.Fatalf("partials %q, want growing prefixes of the transcript", partials)
	}
	req := fake.Requests()[0]
	if !req.Stream || req.FileName != "audio.wav" || req.FileType != "audio/wav" {
		t.Fatalf("request %+v", req)
	}
	f, pcm, err := voice.ParseWAV(req.File)
	if err != nil || f != (voice.Format{SampleRate: 48000, Channels: 1}) || len(pcm) != 48000*2 {
		t.Fatalf("uploaded %+v, %d bytes, %v: want 1 s of 48 kHz mono", f, len(pcm), err)
	}
}

// A recording the API takes is uploaded as it is; an error names the
// provider's message.
func TestOpenAIUploadsAndErrors(t *testing.T) {
	needFFmpeg(t)
	fake := modeltest.NewOpenAIAudio(t)
	o := newOpenAI(t, fake, voice.OpenAIOptions{TranscribeModel: "whisper-1"})
	ogg := oggOpus(t)
	if _, err := o.Transcribe(context.Background(), voice.Recording{Name: "voice-message.ogg", MimeType: "audio/ogg", Data: ogg}); err != nil {
		t.Fatal(err)
	}
	if req := fake.Requests()[0]; string(req.File) != string(ogg) || req.FileName != "voice-message.ogg" || req.FileType != "audio/ogg" {
		t.Fatalf("uploaded %s (%s, %d bytes), want the Ogg file as it is", req.FileName, req.FileType, len(req.File))
	}
	fake.Fail(modeltest.AudioFailure{Status: 400, Message: "Audio file is too short."})
	_, err := o.Transcribe(context.Background(), voice.Recording{Name: "x.wav", Data: wav(time.Second)})
	if err == nil || !strings.Contains(err.Error(), "Audio file is too short.") || !strings.Contains(err.Error(), "400") {
		t.Fatalf("error %v, want the status and the provider's message", err)
	}
}

func TestOpenAISpeak(t *testing.T) {
	fake := modeltest.NewOpenAIAudio(t)
	for _, format := range []string{"wav", "pcm"} {
		o := newOpenAI(t, fake, voice.OpenAIOptions{SpeakModel: "tts-1", SpeakVoice: "nova", SpeakFormat: format})
		a, err := o.Speak(context.Background(), "Water the plants.")
		if err != nil {
			t.Fatal(err)
		}
		if a.Format != (voice.Format{SampleRate: 24000, Channels: 1}) || a.Characters != 17 {
			t.Fatalf("%s: %+v", format, a.Format)
		}
		if d := a.Format.Duration(len(a.PCM)); d != 17*60*time.Millisecond {
			t.Fatalf("%s: %s of audio, want the fake's 60 ms a character", format, d)
		}
		req := fake.Requests()[len(fake.Requests())-1]
		if req.Model != "tts-1" || req.Voice != "nova" || req.ResponseFormat != format || req.Input != "Water the plants." {
			t.Fatalf("request %+v", req)
		}
	}
	o := newOpenAI(t, fake, voice.OpenAIOptions{SpeakModel: "tts-1"})
	if _, err := o.Speak(context.Background(), strings.Repeat("a", 4097)); err == nil {
		t.Fatal("4097 characters were sent")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Speak(ctx, "never"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled speech: %v", err)
	}
}

func TestOpenAIOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		opts voice.OpenAIOptions
		want string
	}{
		{voice.OpenAIOptions{}, "neither"},
		{voice.OpenAIOptions{TranscribeModel: "whisper-1", BaseURL: "ftp://127.0.0.1/"}, "base_url"},
		{voice.OpenAIOptions{SpeakModel: "tts-1", SpeakFormat: "mp3"}, "speak format"},
	} {
		if _, err := voice.NewOpenAI(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about %s", c.opts, err, c.want)
		}
	}
}

// A caller that knows the recording's length (core decoded it to check
// max_utterance) spares the backend a decode: no ffmpeg runs.
func TestOpenAIKnownDurationNeedsNoDecoder(t *testing.T) {
	fake := modeltest.NewOpenAIAudio(t)
	o := newOpenAI(t, fake, voice.OpenAIOptions{TranscribeModel: "whisper-1", Decoder: voice.Decoder{FFmpeg: "/nonexistent/ffmpeg"}})
	ogg := []byte("OggS\x00\x02 a voice message")
	got, err := o.Transcribe(context.Background(), voice.Recording{Name: "voice-message.ogg", Data: ogg, Duration: 4 * time.Second})
	if err != nil || got.Audio != 4*time.Second {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := o.Transcribe(context.Background(), voice.Recording{Name: "voice-message.ogg", Data: ogg}); err == nil || !strings.Contains(err.Error(), "/nonexistent/ffmpeg") {
		t.Fatalf("without a duration the file is decoded (and here fails): %v", err)
	}
}
