// Package voicenote is what the chat adapters share about voice notes: a
// Slack audio clip or a Discord voice message coming in (is this file a
// recording to transcribe, and as what type), and an agent's spoken answer
// going out (its audio encoded for the platform, and the waveform a
// Discord voice message shows).
//
// Encoding runs ffmpeg as a subprocess (Debian's ffmpeg has libopus): Ogg
// Opus for Discord, whose clients upload "1 channel, 48000 Hz, 32kbps Opus
// in an OGG container", and Opus in WebM for Slack, the container of
// Slack's own audio clips. The audio is piped through stdin and stdout and
// never written to disk or logged.
package voicenote

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/voice"
)

// Container is an encoded file's format.
type Container string

const (
	// OggOpus is Opus in an Ogg container (audio/ogg): a Discord voice
	// message.
	OggOpus Container = "ogg"
	// WebMOpus is Opus in a WebM container (audio/webm): what a Slack
	// audio clip is.
	WebMOpus Container = "webm"
)

// MimeType is the container's media type.
func (c Container) MimeType() string { return "audio/" + string(c) }

// Ext is the container's file name extension, with its dot.
func (c Container) Ext() string { return "." + string(c) }

// Encoder turns PCM into an audio file.
type Encoder struct {
	// FFmpeg is the ffmpeg program; "" finds "ffmpeg" on PATH.
	FFmpeg string
	// Bitrate is the Opus bitrate in bits per second; 0 is 32000, a
	// Discord client's.
	Bitrate int
}

// Encode encodes a's PCM into container c, resampled to 48 kHz mono (the
// rate Opus codes at).
func (e Encoder) Encode(ctx context.Context, a voice.Audio, c Container) ([]byte, error) {
	if a.Format.SampleRate <= 0 || a.Format.Channels <= 0 {
		return nil, fmt.Errorf("encoding %s: the audio has no format (sample rate %d, channels %d)", c, a.Format.SampleRate, a.Format.Channels)
	}
	if len(a.PCM) == 0 {
		return nil, fmt.Errorf("encoding %s: the audio is empty", c)
	}
	switch c {
	case OggOpus, WebMOpus:
	default:
		return nil, fmt.Errorf("encoding audio: unknown container %q", c)
	}
	bitrate := e.Bitrate
	if bitrate == 0 {
		bitrate = 32000
	}
	prog := e.FFmpeg
	if prog == "" {
		prog = "ffmpeg"
	}
	cmd := exec.CommandContext(ctx, prog, "-hide_banner", "-loglevel", "error", "-nostdin",
		"-f", "s16le", "-ar", strconv.Itoa(a.Format.SampleRate), "-ac", strconv.Itoa(a.Format.Channels), "-i", "pipe:0",
		"-ac", "1", "-ar", "48000", "-c:a", "libopus", "-b:a", strconv.Itoa(bitrate), "-application", "voip",
		"-f", string(c), "pipe:1")
	cmd.Stdin = bytes.NewReader(a.PCM)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("encoding %s: ffmpeg is not installed (%s): %w", c, prog, err)
		}
		return nil, fmt.Errorf("encoding %s with ffmpeg: %w: %s", c, err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}

// MaxWaveform is the most points a Discord voice message's waveform has.
const MaxWaveform = 256

// waveformStep is how often Discord's clients sample the waveform at most.
const waveformStep = 100 * time.Millisecond

// Waveform is a's waveform as a Discord voice message shows it: a byte
// (0-255) per point, the loudest sample's share of full scale, a point for
// every 100 ms at most and never more than 256 points. Silence is all
// zeros; empty audio has one point.
func Waveform(a voice.Audio) []byte {
	f := a.Format
	if f.SampleRate <= 0 || f.Channels <= 0 {
		return []byte{0}
	}
	frame := 2 * f.Channels
	samples := len(a.PCM) / frame
	if samples == 0 {
		return []byte{0}
	}
	per := max(f.SampleRate*int(waveformStep/time.Millisecond)/1000, (samples+MaxWaveform-1)/MaxWaveform)
	points := (samples + per - 1) / per
	out := make([]byte, points)
	for p := range points {
		peak := 0
		for i := p * per; i < min((p+1)*per, samples); i++ {
			for ch := range f.Channels {
				off := i*frame + 2*ch
				v := int(int16(binary.LittleEndian.Uint16(a.PCM[off:])))
				if v < 0 {
					v = -v
				}
				peak = max(peak, v)
			}
		}
		out[p] = byte(math.Round(float64(min(peak, 32767)) * 255 / 32767))
	}
	return out
}

// audioExts are the file name extensions of the audio files a voice note
// or a shared recording comes as, with their media types.
var audioExts = map[string]string{
	".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/ogg",
	".webm": "audio/webm", ".m4a": "audio/mp4", ".mp4": "audio/mp4",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".flac": "audio/flac",
	".aac": "audio/aac",
}

// AudioType is the media type to transcribe a shared file as, or "" when
// it is not a recording. mimeType is what the platform says; name is the
// file's name; clip says the platform marks it as a voice recording
// (Slack's subtype slack_audio, Discord's IS_VOICE_MESSAGE). Slack serves
// its clips as video/mp4 or video/webm, or with no type at all: a clip's
// video type is read as audio, and a missing type is taken from the name.
func AudioType(mimeType, name string, clip bool) string {
	mt := strings.ToLower(strings.TrimSpace(strings.Split(mimeType, ";")[0]))
	switch {
	case strings.HasPrefix(mt, "audio/"):
		return mt
	case clip && strings.HasPrefix(mt, "video/"):
		return "audio/" + strings.TrimPrefix(mt, "video/")
	case mt == "" || mt == "application/octet-stream" || clip:
		if t, ok := audioExts[strings.ToLower(path.Ext(name))]; ok {
			return t
		}
		if clip {
			return "audio/webm"
		}
	}
	return ""
}

// HearFunc hears a voice note: in is a message addressed to an agent, and
// rec the recording it came with (a Slack audio clip, a Discord voice
// message, an audio file). It transcribes rec for the agent the message
// goes to and makes in the spoken message core takes (the transcript as
// its text, marked as spoken, the recording kept as a file). It runs in
// the event's durable work item, after the platform's ack: an error is
// retried with the item, so a HearFunc returns one only for a failure
// that may pass (a provider's 5xx, a timeout); a recording that cannot be
// heard for good is noted on the message, and nil returned.
type HearFunc func(ctx context.Context, in *core.Inbound, rec voice.Recording) error
