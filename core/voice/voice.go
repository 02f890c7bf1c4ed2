// Package voice is the service's one voice layer: a Transcriber turns speech
// into text (partial transcripts while a person speaks, a final one at the
// end of speech) and a Speaker turns text into audio, a sentence at a time.
// Each agent chooses its backends the way it chooses its model
// (config.Voice): an OpenAI-compatible HTTP server, or the offline engines
// (pocketsphinx and espeak-ng run as subprocesses).
//
// Audio inside the service is 16-bit little-endian mono PCM at the rate a
// Format names; files from platforms (WAV, Ogg Opus, MP4 audio…) are decoded
// to it at the edge. Audio is never logged: only its length and the
// transcript reach logs, spans and usage.
package voice

import (
	"context"
	"time"
)

// Format is a PCM layout: signed 16-bit little-endian samples, interleaved
// when Channels > 1.
type Format struct {
	SampleRate int // samples per second, e.g. 16000
	Channels   int // 1 for mono
}

// Speech is the layout the offline recogniser wants and the console sends.
var Speech = Format{SampleRate: 16000, Channels: 1}

// Duration is how long n bytes of PCM in format f last.
func (f Format) Duration(n int) time.Duration {
	if f.SampleRate <= 0 || f.Channels <= 0 {
		return 0
	}
	samples := n / (2 * f.Channels)
	return time.Duration(samples) * time.Second / time.Duration(f.SampleRate)
}

// Transcript is what a Transcriber heard so far (Final false) or in all
// (Final true) for one utterance.
type Transcript struct {
	Text  string
	Final bool
	// Audio is how long the utterance's audio was (usage is priced by it).
	Audio time.Duration
}

// Recording is a whole audio file: a platform's voice note or a clip.
type Recording struct {
	Name     string // file name, for the provider's upload and the entry
	MimeType string // audio/wav, audio/ogg, audio/mp4, audio/webm…
	Data     []byte
	// Duration, when the caller has decoded the recording already, is
	// its length: a backend that uploads the file as it is then need not
	// decode it to learn it (0: unknown).
	Duration time.Duration
}

// Transcriber hears speech.
type Transcriber interface {
	// Transcribe returns the final transcript of a whole recording.
	Transcribe(ctx context.Context, rec Recording) (Transcript, error)
	// Stream opens one live utterance: PCM in format f is written as it is
	// captured; partial transcripts arrive on Partials while it lasts;
	// Finish (end of speech) returns the final one. Cancelling ctx or
	// calling Close abandons it.
	Stream(ctx context.Context, f Format) (Stream, error)
}

// Stream is one live utterance being heard.
type Stream interface {
	Write(pcm []byte) (int, error)
	Partials() <-chan Transcript
	Finish(ctx context.Context) (Transcript, error)
	Close() error
}

// Speaker speaks.
type Speaker interface {
	// Speak returns text spoken as PCM in the returned format. Cancelling
	// ctx stops it (barge-in) and returns ctx's error.
	Speak(ctx context.Context, text string) (Audio, error)
}

// Audio is spoken text.
type Audio struct {
	Format Format
	PCM    []byte
	// Characters is how many characters were spoken (usage is priced by
	// it).
	Characters int
}
