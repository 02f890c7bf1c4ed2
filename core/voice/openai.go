package voice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// OpenAIOptions configure the OpenAI-compatible backend: OpenAI itself,
// Groq, or a local whisper.cpp, speaches or Piper server through BaseURL.
type OpenAIOptions struct {
	// BaseURL is the API's root, with /v1 (default OpenAI's,
	// https://api.openai.com/v1/).
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (a local server).
	APIKey string
	// TranscribeModel is the transcription model, e.g. whisper-1,
	// gpt-4o-transcribe, whisper-large-v3 (Groq); empty: this backend does
	// not transcribe.
	TranscribeModel string
	// StreamTranscripts asks the server to stream the transcript
	// (stream=true: transcript.text.delta events, then
	// transcript.text.done). Nil: on for OpenAI's gpt-4o transcription
	// models, the ones that support it, off otherwise.
	StreamTranscripts *bool
	// Language is the ISO-639-1 language of the speech (optional: a hint
	// that improves accuracy and latency).
	Language string
	// PartialEvery, when positive, sends a live utterance's audio so far
	// for a partial transcript each time that much new audio has come.
	// Each is a paid request: off by default; worth it with a local
	// server.
	PartialEvery time.Duration
	// SpeakModel is the speech model, e.g. tts-1, gpt-4o-mini-tts; empty:
	// this backend does not speak.
	SpeakModel string
	// SpeakVoice is the voice (default alloy).
	SpeakVoice string
	// SpeakFormat is the audio asked for: wav (default; its header says
	// the rate, so any server's voice plays at the right speed) or pcm
	// (OpenAI's raw 24 kHz 16-bit mono).
	SpeakFormat string
	// HTTPClient makes the requests (default: http.DefaultClient's
	// transport with a 2 minute timeout).
	HTTPClient *http.Client
	// Decoder decodes recordings the server does not take (its formats:
	// flac, mp3, mp4, m4a, ogg, wav, webm).
	Decoder Decoder
	Logger  *slog.Logger
}

// OpenAIBaseURL is OpenAI's own endpoint.
const OpenAIBaseURL = "https://api.openai.com/v1/"

// PCMRate is the rate of OpenAI's response_format=pcm speech.
const PCMRate = 24000

func (o *OpenAIOptions) validate() error {
	if o.BaseURL == "" {
		o.BaseURL = OpenAIBaseURL
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("voice openai: base_url %q is not an http(s) URL", o.BaseURL)
	}
	if !strings.HasSuffix(o.BaseURL, "/") {
		o.BaseURL += "/"
	}
	if o.TranscribeModel == "" && o.SpeakModel == "" {
		return errors.New("voice openai: neither a transcription nor a speech model is set")
	}
	if o.SpeakVoice == "" {
		o.SpeakVoice = "alloy"
	}
	switch o.SpeakFormat {
	case "":
		o.SpeakFormat = "wav"
	case "wav", "pcm":
	default:
		return fmt.Errorf("voice openai: speak format %q is not wav or pcm", o.SpeakFormat)
	}
	if o.StreamTranscripts == nil {
		m := strings.ToLower(o.TranscribeModel)
		on := strings.HasPrefix(m, "gpt-4o") && strings.Contains(m, "transcribe") && !strings.Contains(m, "diarize")
		o.StreamTranscripts = &on
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 2 * time.Minute}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// OpenAI is the OpenAI-compatible backend, on the official SDK
// (client.Audio.Transcriptions, client.Audio.Speech).
type OpenAI struct {
	opts   OpenAIOptions
	client openai.Client
}

var (
	_ Transcriber = (*OpenAI)(nil)
	_ Speaker     = (*OpenAI)(nil)
)

// NewOpenAI checks the options and builds the client. The base URL and the
// key are always set on it, so OPENAI_BASE_URL or OPENAI_API_KEY in the
// environment (the SDK reads them) cannot point it elsewhere: the caller
// chose them.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	client := openai.NewClient(
		option.WithBaseURL(opts.BaseURL),
		option.WithAPIKey(opts.APIKey),
		option.WithHTTPClient(opts.HTTPClient),
		option.WithMaxRetries(2),
	)
	return &OpenAI{opts: opts, client: client}, nil
}

// uploadable are the containers /v1/audio/transcriptions takes as they
// are; others are decoded and sent as WAV.
var uploadable = map[string]string{"wav": "audio/wav", "ogg": "audio/ogg", "webm": "audio/webm", "mp4": "audio/mp4", "mp3": "audio/mpeg", "flac": "audio/flac"}

// Transcribe sends the recording as it is when the API takes its format
// (Ogg Opus, WebM, MP4…), else decoded to WAV.
func (o *OpenAI) Transcribe(ctx context.Context, rec Recording) (Transcript, error) {
	if o.opts.TranscribeModel == "" {
		return Transcript{}, errors.New("voice openai: no transcription model is set")
	}
	kind := Kind(rec.Data)
	name, mime, data := rec.Name, uploadable[kind], rec.Data
	audio := rec.Duration
	// The duration prices the call: a caller that decoded the recording
	// says it; else WAV's is in its header, and the others need a decode
	// (ffmpeg) that the upload itself does not.
	if audio <= 0 || mime == "" {
		f, pcm, err := o.opts.Decoder.Decode(ctx, rec)
		if err != nil {
			return Transcript{}, err
		}
		audio = f.Duration(len(pcm))
		if mime == "" {
			name, mime, data = "audio.wav", "audio/wav", EncodeWAV(f, pcm)
		}
	}
	if name == "" || !strings.Contains(name, ".") {
		name = "audio." + kind
	}
	text, err := o.transcribe(ctx, name, mime, data, nil)
	if err != nil {
		return Transcript{}, err
	}
	return Transcript{Text: text, Final: true, Audio: audio}, nil
}

// transcribe posts one file; with streaming on, each delta is given to
// partial with the text so far.
func (o *OpenAI) transcribe(ctx context.Context, name, mime string, data []byte, partial func(string)) (string, error) {
	params := openai.AudioTranscriptionNewParams{
		File:           openai.File(bytes.NewReader(data), name, mime),
		Model:          openai.AudioModel(o.opts.TranscribeModel),
		ResponseFormat: openai.AudioResponseFormatJSON,
	}
	if o.opts.Language != "" {
		params.Language = openai.String(o.opts.Language)
	}
	if !*o.opts.StreamTranscripts {
		res, err := o.client.Audio.Transcriptions.New(ctx, params)
		if err != nil {
			return "", o.wrap(ctx, "transcribing", err)
		}
		return strings.TrimSpace(res.Text), nil
	}
	stream := o.client.Audio.Transcriptions.NewStreaming(ctx, params)
	defer stream.Close()
	var sofar strings.Builder
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "transcript.text.delta":
			sofar.WriteString(ev.Delta)
			if partial != nil {
				partial(strings.TrimSpace(sofar.String()))
			}
		case "transcript.text.done":
			return strings.TrimSpace(ev.Text), nil
		}
	}
	if err := stream.Err(); err != nil {
		return "", o.wrap(ctx, "transcribing", err)
	}
	return "", fmt.Errorf("voice openai: transcribing with %s: the stream ended without transcript.text.done", o.opts.TranscribeModel)
}

func (o *OpenAI) wrap(ctx context.Context, doing string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return fmt.Errorf("voice openai: %s: %w: %s", doing, err, apiErr.Message)
	}
	return fmt.Errorf("voice openai: %s: %w", doing, err)
}

// Stream gathers a live utterance and sends it at Finish: the HTTP API
// takes whole files. With streaming transcripts the words arrive as
// partials while the server works; PartialEvery adds partials while the
// person speaks.
func (o *OpenAI) Stream(ctx context.Context, f Format) (Stream, error) {
	if o.opts.TranscribeModel == "" {
		return nil, errors.New("voice openai: no transcription model is set")
	}
	if f.SampleRate <= 0 || f.Channels <= 0 {
		return nil, fmt.Errorf("voice openai: stream format %d Hz × %d channels", f.SampleRate, f.Channels)
	}
	s := &bufferStream{
		in:    f,
		every: o.opts.PartialEvery,
		recognize: func(ctx context.Context, pcm []byte, partial func(string)) (string, error) {
			mono := Format{SampleRate: f.SampleRate, Channels: 1}
			return o.transcribe(ctx, "audio.wav", "audio/wav", EncodeWAV(mono, pcm), partial)
		},
		logger: o.opts.Logger,
	}
	s.start(ctx)
	return s, nil
}

// Speak asks /v1/audio/speech for the text. The API takes at most 4096
// characters; longer text is refused here rather than cut.
func (o *OpenAI) Speak(ctx context.Context, text string) (Audio, error) {
	if o.opts.SpeakModel == "" {
		return Audio{}, errors.New("voice openai: no speech model is set")
	}
	text = strings.TrimSpace(text)
	n := utf8.RuneCountInString(text)
	if n == 0 {
		return Audio{Format: Format{SampleRate: PCMRate, Channels: 1}}, nil
	}
	if n > 4096 {
		return Audio{}, fmt.Errorf("voice openai: speaking %d characters: the API takes at most 4096 at a time", n)
	}
	res, err := o.client.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{
		Input:          text,
		Model:          openai.SpeechModel(o.opts.SpeakModel),
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(o.opts.SpeakVoice)},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormat(o.opts.SpeakFormat),
	})
	if err != nil {
		return Audio{}, o.wrap(ctx, "speaking", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return Audio{}, o.wrap(ctx, "reading speech", err)
	}
	if o.opts.SpeakFormat == "pcm" {
		body = body[:len(body)-len(body)%2]
		return Audio{Format: Format{SampleRate: PCMRate, Channels: 1}, PCM: body, Characters: n}, nil
	}
	f, pcm, err := ParseWAV(body)
	if err != nil {
		return Audio{}, fmt.Errorf("voice openai: speech from %s: %w", o.opts.SpeakModel, err)
	}
	return Audio{Format: Format{SampleRate: f.SampleRate, Channels: 1}, PCM: Mono(f, pcm), Characters: n}, nil
}

// bufferStream is a live utterance for a backend that hears whole files:
// it keeps the audio (mono), optionally recognises the audio so far every
// `every` of new audio, and recognises all of it at Finish.
type bufferStream struct {
	in        Format
	every     time.Duration
	recognize func(ctx context.Context, pcm []byte, partial func(string)) (string, error)
	logger    *slog.Logger

	ctx        context.Context
	cancel     context.CancelFunc
	partCancel context.CancelFunc
	partCtx    context.Context
	kick       chan struct{}
	wg         sync.WaitGroup

	mu       sync.Mutex
	rest     []byte
	pcm      []byte
	lastPart int
	voiced   bool // speech-loud audio came since the last partial
	ended    bool

	*partialQueue
}

func (s *bufferStream) start(ctx context.Context) {
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.partCtx, s.partCancel = context.WithCancel(s.ctx)
	s.partialQueue = newPartialQueue()
	s.kick = make(chan struct{}, 1)
	if s.every > 0 {
		s.wg.Add(1)
		go s.partialLoop()
	}
}

func (s *bufferStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return 0, errors.New("voice: write after the utterance ended")
	}
	frame := 2 * s.in.Channels
	buf := append(s.rest, p...)
	whole := len(buf) - len(buf)%frame
	s.rest = append([]byte(nil), buf[whole:]...)
	added := Mono(s.in, buf[:whole])
	s.pcm = append(s.pcm, added...)
	if Level(s.in, added) > partialLevel {
		s.voiced = true
	}
	mono := Format{SampleRate: s.in.SampleRate, Channels: 1}
	// Each partial is a request (paid, with a provider): none for quiet.
	if s.every > 0 && s.voiced && mono.Duration(len(s.pcm)-s.lastPart) >= s.every {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

func (s *bufferStream) partialLoop() {
	defer s.wg.Done()
	mono := Format{SampleRate: s.in.SampleRate, Channels: 1}
	for {
		select {
		case <-s.partCtx.Done():
			return
		case <-s.kick:
		}
		s.mu.Lock()
		snapshot := append([]byte(nil), s.pcm...)
		s.lastPart, s.voiced = len(s.pcm), false
		s.mu.Unlock()
		text, err := s.recognize(s.partCtx, snapshot, nil)
		if err != nil {
			if s.partCtx.Err() == nil {
				s.logger.WarnContext(s.partCtx, "voice partial transcript failed", "error", err)
			}
			continue
		}
		s.publish(Transcript{Text: text, Audio: mono.Duration(len(snapshot))})
	}
}

func (s *bufferStream) Finish(ctx context.Context) (Transcript, error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return Transcript{}, errors.New("voice: the utterance already ended")
	}
	s.ended = true
	pcm := s.pcm
	s.mu.Unlock()
	s.partCancel()
	s.wg.Wait()
	defer s.cancel()
	defer s.closePartials()
	mono := Format{SampleRate: s.in.SampleRate, Channels: 1}
	audio := mono.Duration(len(pcm))
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-s.ctx.Done():
			stop()
		case <-ctx.Done():
		}
	}()
	text, err := s.recognize(ctx, pcm, func(sofar string) {
		s.publish(Transcript{Text: sofar, Audio: audio})
	})
	if err != nil {
		return Transcript{}, err
	}
	return Transcript{Text: text, Final: true, Audio: audio}, nil
}

func (s *bufferStream) Close() error {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.closePartials()
	return nil
}
