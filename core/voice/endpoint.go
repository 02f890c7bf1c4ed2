package voice

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// EndpointOptions tune an Endpointer. The zero value of each field takes
// the default.
type EndpointOptions struct {
	Format Format // of the PCM fed to it (default Speech)
	// Frame is the analysis step (default 20 ms).
	Frame time.Duration
	// Threshold is the lowest level counted as speech, in dBFS (default
	// -45): the floor under the adaptive threshold.
	Threshold float64
	// Margin is how far above the measured background noise a frame must
	// be to count as speech, in dB (default 12).
	Margin float64
	// MinSpeech is how long speech must last before it counts as started
	// (default 120 ms): a click or a cough is not an utterance.
	MinSpeech time.Duration
	// Silence is how long the level must stay below the threshold after
	// speech for the utterance to end (default 700 ms).
	Silence time.Duration
}

func (o *EndpointOptions) validate() error {
	if o.Format == (Format{}) {
		o.Format = Speech
	}
	if o.Format.SampleRate <= 0 || o.Format.Channels <= 0 {
		return fmt.Errorf("voice endpoint: format %d Hz × %d channels", o.Format.SampleRate, o.Format.Channels)
	}
	if o.Frame == 0 {
		o.Frame = 20 * time.Millisecond
	}
	if o.Threshold == 0 {
		o.Threshold = -45
	}
	if o.Margin == 0 {
		o.Margin = 12
	}
	if o.MinSpeech == 0 {
		o.MinSpeech = 120 * time.Millisecond
	}
	if o.Silence == 0 {
		o.Silence = 700 * time.Millisecond
	}
	switch {
	case o.Frame < 5*time.Millisecond || o.Frame > 100*time.Millisecond:
		return fmt.Errorf("voice endpoint: frame %s is outside 5ms..100ms", o.Frame)
	case o.Threshold > 0:
		return fmt.Errorf("voice endpoint: threshold %.1f dBFS must be ≤ 0", o.Threshold)
	case o.MinSpeech < 0 || o.Silence < 0:
		return fmt.Errorf("voice endpoint: min_speech and silence must not be negative")
	}
	return nil
}

// EndpointKind is what an Endpointer noticed.
type EndpointKind int

const (
	// SpeechStart: the person began speaking (barge-in stops playback on
	// it).
	SpeechStart EndpointKind = iota + 1
	// SpeechEnd: the person stopped speaking for the Silence time: the
	// utterance is over.
	SpeechEnd
)

func (k EndpointKind) String() string {
	switch k {
	case SpeechStart:
		return "speech_start"
	case SpeechEnd:
		return "speech_end"
	}
	return "none"
}

// EndpointEvent is one event, At the position in the audio fed so far
// where it happened (a SpeechStart's At is where the speech began, before
// MinSpeech confirmed it).
type EndpointEvent struct {
	Kind EndpointKind
	At   time.Duration
}

// Endpointer finds where speech starts and ends in a stream of PCM from
// its energy: a frame is speech when its level is above both Threshold and
// the background noise (tracked while nobody speaks) plus Margin. It is
// not safe for concurrent use.
type Endpointer struct {
	opts       EndpointOptions
	frameBytes int
	rest       []byte
	pos        time.Duration // audio consumed, at the start of the next frame
	noise      float64       // background level, dBFS
	speaking   bool
	run        time.Duration // consecutive speech (while silent) or silence (while speaking)
	runStart   time.Duration
}

// NewEndpointer returns an endpointer in the silent state.
func NewEndpointer(opts EndpointOptions) (*Endpointer, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	samples := int(opts.Frame.Seconds() * float64(opts.Format.SampleRate))
	return &Endpointer{opts: opts, frameBytes: samples * 2 * opts.Format.Channels, noise: -90}, nil
}

// Speaking reports whether an utterance is under way.
func (e *Endpointer) Speaking() bool { return e.speaking }

// Reset forgets the state (not the background noise level) and the
// position: the next audio is a new utterance.
func (e *Endpointer) Reset() {
	e.rest, e.pos, e.speaking, e.run = nil, 0, false, 0
}

// Feed takes the next PCM and returns what happened in it.
func (e *Endpointer) Feed(pcm []byte) []EndpointEvent {
	var events []EndpointEvent
	buf := pcm
	if len(e.rest) > 0 {
		buf = append(e.rest, pcm...)
		e.rest = nil
	}
	for len(buf) >= e.frameBytes {
		level := Level(e.opts.Format, buf[:e.frameBytes])
		buf = buf[e.frameBytes:]
		threshold := math.Max(e.opts.Threshold, e.noise+e.opts.Margin)
		loud := level > threshold
		start := e.pos
		e.pos += e.opts.Frame
		if !e.speaking {
			if loud {
				if e.run == 0 {
					e.runStart = start
				}
				e.run += e.opts.Frame
				if e.run >= e.opts.MinSpeech {
					e.speaking, e.run = true, 0
					events = append(events, EndpointEvent{Kind: SpeechStart, At: e.runStart})
				}
				continue
			}
			e.run = 0
			// Follow the background: quickly down, slowly up, so speech
			// that did not last MinSpeech barely moves it.
			if level < e.noise {
				e.noise = level
			} else {
				e.noise += 0.05 * (level - e.noise)
			}
			continue
		}
		if loud {
			e.run = 0
			continue
		}
		if e.run == 0 {
			e.runStart = start
		}
		e.run += e.opts.Frame
		if e.run >= e.opts.Silence {
			e.speaking, e.run = false, 0
			events = append(events, EndpointEvent{Kind: SpeechEnd, At: e.pos})
		}
	}
	if len(buf) > 0 {
		e.rest = append([]byte(nil), buf...)
	}
	return events
}

// Level is the RMS level of PCM in dBFS (-90 for digital silence).
func Level(f Format, pcm []byte) float64 {
	n := len(pcm) / 2
	if n == 0 {
		return -90
	}
	var sum float64
	for i := 0; i < n; i++ {
		v := float64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) / 32768
		sum += v * v
	}
	rms := math.Sqrt(sum / float64(n))
	if rms < 1e-9/2 {
		return -90
	}
	return math.Max(-90, 20*math.Log10(rms))
}
