package modeltest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// AudioFake is a fake of OpenAI's audio API, held to its documented
// formats:
//
//   - POST /v1/audio/transcriptions: multipart/form-data with file (a name
//     whose extension is one the API takes: flac, m4a, mp3, mp4, mpeg,
//     mpga, oga, ogg, wav, webm), model, and optionally language,
//     response_format (json, text or verbose_json here) and stream. It
//     answers {"text": …, "usage": …} (usage by duration for whisper-1, by
//     tokens for the gpt-4o models), or with stream=true, allowed for the
//     gpt-4o transcription models only, Server-Sent Events:
//     transcript.text.delta events with the words, then one
//     transcript.text.done with the whole text.
//   - POST /v1/audio/speech: JSON {model, input (at most 4096 characters),
//     voice, response_format}; it answers audio/wav or, for pcm, raw
//     24 kHz 16-bit mono samples: a tone 60 ms per character, so a test
//     can tell how much was spoken.
//
// Errors use OpenAI's error JSON. The text heard is TranscriptFunc's, or
// Text for every file.
type AudioFake struct {
	URL string // with /v1, as OPENAI_BASE_URL
	// APIKey, when set, is the key every request must bear.
	APIKey string

	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	text     string
	fn       func(file []byte) string
	failures []AudioFailure
	reqs     []AudioRequest
	delay    time.Duration
}

// AudioRequest is one request the fake took.
type AudioRequest struct {
	Path   string
	Header http.Header
	// Transcription fields.
	Model, Language, ResponseFormat string
	Stream                          bool
	FileName, FileType              string
	File                            []byte
	// Speech fields.
	Input, Voice string
}

// AudioFailure makes one request fail with an HTTP status and OpenAI's
// error JSON.
type AudioFailure struct {
	Status  int
	Message string
}

// NewOpenAIAudio starts the fake, closed when the test ends.
func NewOpenAIAudio(t testing.TB) *AudioFake {
	f := &AudioFake{t: t, text: "hello"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL + "/v1"
	return f
}

// SetText sets what the fake hears in every file.
func (f *AudioFake) SetText(text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.text, f.fn = text, nil
}

// SetTranscriptFunc sets what the fake hears, by file.
func (f *AudioFake) SetTranscriptFunc(fn func(file []byte) string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fn = fn
}

// SetDelay holds each streamed transcription event back by d.
func (f *AudioFake) SetDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
}

// Fail queues failures: the next requests fail, one each.
func (f *AudioFake) Fail(failures ...AudioFailure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, failures...)
}

// Requests returns the requests so far.
func (f *AudioFake) Requests() []AudioRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]AudioRequest(nil), f.reqs...)
}

var audioExtensions = map[string]bool{"flac": true, "m4a": true, "mp3": true, "mp4": true, "mpeg": true, "mpga": true, "oga": true, "ogg": true, "wav": true, "webm": true}

func audioError(w http.ResponseWriter, status int, param, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	var p any
	if param != "" {
		p = param
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": p, "code": nil}})
}

func (f *AudioFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		audioError(w, 404, "", fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	if f.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+f.APIKey {
		audioError(w, 401, "", "Incorrect API key provided.")
		return
	}
	req := AudioRequest{Path: r.URL.Path, Header: r.Header.Clone()}
	var bad *refusal
	switch r.URL.Path {
	case "/v1/audio/transcriptions":
		bad = f.readTranscription(r, &req)
	case "/v1/audio/speech":
		bad = f.readSpeech(r, &req)
	default:
		audioError(w, 404, "", fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	var fail *AudioFailure
	if len(f.failures) > 0 {
		fail = &f.failures[0]
		f.failures = f.failures[1:]
	}
	text, fn, delay := f.text, f.fn, f.delay
	f.mu.Unlock()
	if bad != nil {
		// Recorded first, so a test sees what was refused.
		f.t.Logf("modeltest audio: %s refused: %d %s", r.URL.Path, bad.status, bad.msg)
		audioError(w, bad.status, bad.param, bad.msg)
		return
	}
	if fail != nil {
		audioError(w, fail.Status, "", fail.Message)
		return
	}
	if req.Path == "/v1/audio/speech" {
		f.speak(w, req)
		return
	}
	if fn != nil {
		text = fn(req.File)
	}
	f.transcribe(w, r, req, text, delay)
}

// refusal is the 400 the real API gives a malformed request.
type refusal struct {
	status     int
	param, msg string
}

func refuse(param, msg string) *refusal { return &refusal{status: 400, param: param, msg: msg} }

func (f *AudioFake) readTranscription(r *http.Request, req *AudioRequest) *refusal {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return refuse("", "Content-Type must be multipart/form-data")
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return refuse("", "reading the form: "+err.Error())
		}
		data, _ := io.ReadAll(p)
		switch p.FormName() {
		case "file":
			req.FileName, req.FileType, req.File = p.FileName(), p.Header.Get("Content-Type"), data
		case "model":
			req.Model = string(data)
		case "language":
			req.Language = string(data)
		case "response_format":
			req.ResponseFormat = string(data)
		case "stream":
			req.Stream = string(data) == "true"
		}
	}
	switch {
	case req.File == nil:
		return refuse("file", "you must provide a file")
	case req.Model == "":
		return refuse("model", "you must provide a model parameter")
	case !audioExtensions[strings.TrimPrefix(path.Ext(req.FileName), ".")]:
		return refuse("file", "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']")
	case req.Stream && !strings.HasPrefix(req.Model, "gpt-4o"):
		return refuse("stream", "Streaming is not supported for this model.")
	case req.ResponseFormat != "" && req.ResponseFormat != "json" && req.ResponseFormat != "text" && req.ResponseFormat != "verbose_json":
		return refuse("response_format", "modeltest: the fake answers json, text and verbose_json")
	}
	return nil
}

func (f *AudioFake) readSpeech(r *http.Request, req *AudioRequest) *refusal {
	var body struct {
		Model          string `json:"model"`
		Input          string `json:"input"`
		Voice          any    `json:"voice"`
		ResponseFormat string `json:"response_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return refuse("", "We could not parse the JSON body of your request.")
	}
	req.Model, req.Input, req.ResponseFormat = body.Model, body.Input, body.ResponseFormat
	if v, ok := body.Voice.(string); ok {
		req.Voice = v
	}
	switch {
	case body.Model == "":
		return refuse("model", "you must provide a model parameter")
	case body.Input == "":
		return refuse("input", "input is required")
	case utf8.RuneCountInString(body.Input) > 4096:
		return refuse("input", "string too long: input has more than 4096 characters")
	case body.Voice == nil:
		return refuse("voice", "voice is required")
	case body.ResponseFormat != "" && body.ResponseFormat != "wav" && body.ResponseFormat != "pcm":
		return refuse("response_format", "modeltest: the fake speaks wav and pcm only")
	}
	return nil
}

func (f *AudioFake) transcribe(w http.ResponseWriter, r *http.Request, req AudioRequest, text string, delay time.Duration) {
	seconds := float64(len(req.File)) / 32000 // a rough figure for usage; the client prices by its own measure
	usage := map[string]any{"type": "duration", "seconds": math.Ceil(seconds)}
	if strings.HasPrefix(req.Model, "gpt-4o") {
		tokens := len(strings.Fields(text)) + 1
		usage = map[string]any{"type": "tokens", "input_tokens": int(seconds*10) + 1, "output_tokens": tokens, "total_tokens": int(seconds*10) + 1 + tokens,
			"input_token_details": map[string]any{"text_tokens": 0, "audio_tokens": int(seconds*10) + 1}}
	}
	if !req.Stream {
		if req.ResponseFormat == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintln(w, text)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"text": text, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(v map[string]any) bool {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return false
			}
		}
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	for i, word := range strings.Fields(text) {
		if i > 0 {
			word = " " + word
		}
		if !send(map[string]any{"type": "transcript.text.delta", "delta": word, "logprobs": []any{}}) {
			return
		}
	}
	send(map[string]any{"type": "transcript.text.done", "text": text, "logprobs": []any{}, "usage": usage})
}

// speak answers with a 24 kHz tone 60 ms per character of input.
func (f *AudioFake) speak(w http.ResponseWriter, req AudioRequest) {
	const rate = 24000
	n := utf8.RuneCountInString(req.Input) * rate * 60 / 1000
	pcm := make([]byte, 0, 2*n)
	for i := 0; i < n; i++ {
		v := int16(8000 * math.Sin(2*math.Pi*220*float64(i)/rate))
		pcm = binary.LittleEndian.AppendUint16(pcm, uint16(v))
	}
	if req.ResponseFormat == "pcm" {
		w.Header().Set("Content-Type", "audio/pcm")
		_, _ = w.Write(pcm)
		return
	}
	var b bytes.Buffer
	put := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	put(uint32(36 + len(pcm)))
	b.WriteString("WAVEfmt ")
	put(uint32(16))
	put(uint16(1))
	put(uint16(1))
	put(uint32(rate))
	put(uint32(rate * 2))
	put(uint16(2))
	put(uint16(16))
	b.WriteString("data")
	put(uint32(len(pcm)))
	b.Write(pcm)
	w.Header().Set("Content-Type", "audio/wav")
	_, _ = w.Write(b.Bytes())
}
