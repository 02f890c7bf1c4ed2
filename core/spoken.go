package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/voice"
	"github.com/switchboardhq/switchboard/store"
)

// Spoken messages: a voice note or live speech is transcribed by the
// agent's Transcriber (TranscribeFor, Listen), and the transcript enters
// core as an ordinary message from that person, by the same path as typed
// text (Submit, Accept or PostSpoken: the same gate, guard and log). The
// user entry records that it was spoken (UserContent.Spoken) and keeps the
// recording among its files; the model gets the words only. The
// transcription's usage is recorded with the message, once.
//
// Audio is never logged: logs, spans and usage carry its length only.

// ErrNothingHeard is returned for speech in which the transcriber heard no
// words.
var ErrNothingHeard = errors.New("no words were heard")

// Heard is speech an agent's transcriber heard, ready to enter core as a
// message (Heard.Apply on an Inbound, or PostSpoken).
type Heard struct {
	// Text is the final transcript.
	Text   string
	Spoken Spoken
	// Recording is the audio, kept with the message.
	Recording UserFile
}

// Apply makes in the spoken message: its text the transcript, marked
// spoken, with the recording among its files. An adapter's finisher calls
// it in Prepare; Submit records the transcription's usage with the
// message.
func (h *Heard) Apply(in *Inbound) {
	in.Text = h.Text
	sp := h.Spoken
	in.Spoken = &sp
	in.Files = append(in.Files, h.Recording)
}

// TranscribeFor hears a recording (a voice note) with the agent's
// transcriber. person (platform and user id, or any stable key) is
// counted against voice.utterances_per_minute; a recording longer than
// voice.max_utterance is refused. Both refusals are *VoiceLimited, whose
// Reason is for the person.
func (s *Service) TranscribeFor(ctx context.Context, agent, person string, rec voice.Recording) (*Heard, error) {
	eng, a, err := s.hearer(agent, person)
	if err != nil {
		return nil, err
	}
	f, pcm, err := s.opts.Voice.Decoder.Decode(ctx, rec)
	if err != nil {
		return nil, fmt.Errorf("hearing %s for agent %q: %w", rec.Name, agent, err)
	}
	length := f.Duration(len(pcm))
	if max := maxUtterance(a); length > max {
		return nil, &VoiceLimited{Reason: fmt.Sprintf("the recording lasts %s; %s hears at most %s at a time (voice.max_utterance)", length.Round(time.Second), agent, max)}
	}
	in := rec
	in.Duration = length
	if eng.Hears == voice.ProviderOffline {
		// The offline engine hears the PCM; decoded once here, it is not
		// decoded again.
		in = voice.Recording{Name: rec.Name, MimeType: "audio/wav", Data: voice.EncodeWAV(f, pcm)}
	}
	start := time.Now()
	t, err := eng.Transcriber.Transcribe(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("hearing %s for agent %q: %w", rec.Name, agent, err)
	}
	s.log.InfoContext(ctx, "voice transcribed", "agent", agent, "engine", eng.Hears, "audio_ms", length.Milliseconds(),
		"took_ms", time.Since(start).Milliseconds(), "chars", len(t.Text))
	return s.heard(agent, eng.Hears, strings.TrimSpace(t.Text), length, recordingFile(rec), false)
}

func (s *Service) heard(agent, engine, text string, length time.Duration, rec UserFile, live bool) (*Heard, error) {
	h := &Heard{
		Text:      text,
		Spoken:    Spoken{Engine: engine, AudioMs: length.Milliseconds(), File: rec.Name, Live: live, Agent: agent},
		Recording: rec,
	}
	if text == "" {
		return h, ErrNothingHeard
	}
	return h, nil
}

// hearer is the agent's voice engines when it transcribes and person may
// speak to it now (voice.utterances_per_minute, counted here).
func (s *Service) hearer(agent, person string) (*VoiceEngines, *config.Agent, error) {
	eng, a, err := s.VoiceFor(agent)
	if err != nil {
		return nil, nil, err
	}
	if eng.Transcriber == nil || !a.Voice.Hears() {
		return nil, nil, fmt.Errorf("agent %q does not transcribe (voice.transcribe is off): %w", agent, ErrVoiceOff)
	}
	if err := s.allowUtterance(a, person); err != nil {
		return nil, nil, err
	}
	return eng, a, nil
}

// recordingFile is the recording as a message's file.
func recordingFile(rec voice.Recording) UserFile {
	kind := voice.Kind(rec.Data)
	name := rec.Name
	if name == "" {
		name = "voice." + map[string]string{"": "bin", "mp4": "m4a"}[kind]
		if kind != "" && kind != "mp4" {
			name = "voice." + kind
		}
	}
	mt := rec.MimeType
	if mt == "" {
		mt = map[string]string{"wav": "audio/wav", "ogg": "audio/ogg", "webm": "audio/webm", "mp4": "audio/mp4", "mp3": "audio/mpeg", "flac": "audio/flac"}[kind]
	}
	return UserFile{Name: name, MimeType: mt, Size: int64(len(rec.Data)), Data: rec.Data}
}

// Listen opens a live utterance of person to the agent: write PCM in format
// f as it is captured (see Listening). The utterance counts against
// voice.utterances_per_minute when it opens.
func (s *Service) Listen(ctx context.Context, agent, person string, f voice.Format) (*Listening, error) {
	eng, a, err := s.hearer(agent, person)
	if err != nil {
		return nil, err
	}
	st, err := eng.Transcriber.Stream(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("listening for agent %q: %w", agent, err)
	}
	return &Listening{s: s, agent: agent, engine: eng.Hears, f: f, max: maxUtterance(a), stream: st}, nil
}

// Listening is a live utterance being heard: Write the PCM, read Partials
// while it lasts, Finish at the end of speech (the Endpointer's
// SpeechEnd), or Close to drop it.
type Listening struct {
	s      *Service
	agent  string
	engine string
	f      voice.Format
	max    time.Duration
	stream voice.Stream

	mu   sync.Mutex
	pcm  []byte
	full bool
}

// ErrUtteranceTooLong is returned by Listening.Write once the utterance
// reaches voice.max_utterance: the audio past it is dropped, and the
// caller should Finish.
var ErrUtteranceTooLong = errors.New("the utterance reached voice.max_utterance")

// Write adds captured PCM.
func (l *Listening) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full {
		return 0, ErrUtteranceTooLong
	}
	frame := 2 * l.f.Channels
	limit := int(l.max.Seconds()*float64(l.f.SampleRate)) * frame
	take := p
	if len(l.pcm)+len(p) > limit {
		take = p[:max(0, limit-len(l.pcm))]
		l.full = true
	}
	if _, err := l.stream.Write(take); err != nil {
		return 0, err
	}
	l.pcm = append(l.pcm, take...)
	if l.full {
		return len(take), ErrUtteranceTooLong
	}
	return len(p), nil
}

// Partials are the transcripts so far while the person speaks.
func (l *Listening) Partials() <-chan voice.Transcript { return l.stream.Partials() }

// Duration is how much audio was written.
func (l *Listening) Duration() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Duration(len(l.pcm))
}

// Finish ends the utterance and returns what was heard, with the audio as
// a WAV recording. ErrNothingHeard comes with the Heard when there were no
// words.
func (l *Listening) Finish(ctx context.Context) (*Heard, error) {
	start := time.Now()
	t, err := l.stream.Finish(ctx)
	if err != nil {
		return nil, fmt.Errorf("listening for agent %q: %w", l.agent, err)
	}
	l.mu.Lock()
	pcm := l.pcm
	l.mu.Unlock()
	length := l.f.Duration(len(pcm))
	l.s.log.InfoContext(ctx, "voice heard", "agent", l.agent, "engine", l.engine, "audio_ms", length.Milliseconds(),
		"final_ms", time.Since(start).Milliseconds(), "chars", len(t.Text))
	rec := UserFile{Name: "speech.wav", MimeType: "audio/wav", Data: voice.EncodeWAV(l.f, pcm)}
	rec.Size = int64(len(rec.Data))
	return l.s.heard(l.agent, l.engine, strings.TrimSpace(t.Text), length, rec, true)
}

// Close drops the utterance.
func (l *Listening) Close() error { return l.stream.Close() }

// SubmitSpoken submits in as the spoken message h heard (see Heard.Apply):
// Submit's path, so the access gate, the binding and the dedupe are the
// typed message's.
func (s *Service) SubmitSpoken(ctx context.Context, in *Inbound, h *Heard) (*SubmitResult, error) {
	if h == nil || strings.TrimSpace(h.Text) == "" {
		return nil, invalid("a spoken message needs its transcript")
	}
	c := *in
	h.Apply(&c)
	return s.Submit(ctx, &c)
}

// PostSpoken posts the spoken message h heard into a conversation, as
// PostMessageWith posts a typed one (the console's and the API's path),
// and records the transcription's usage.
func (s *Service) PostSpoken(ctx context.Context, conv uuid.UUID, userID string, h *Heard, o MessageOptions) (int64, error) {
	if h == nil || strings.TrimSpace(h.Text) == "" {
		return 0, invalid("a spoken message needs its transcript")
	}
	sp := h.Spoken
	o.spoken, o.files = &sp, []UserFile{h.Recording}
	seq, err := s.PostMessageWith(ctx, conv, userID, h.Text, o)
	if err != nil {
		return 0, err
	}
	s.recordHeard(ctx, sp.Agent, conv, &sp)
	return seq, nil
}

// recordHeard records a transcription's usage. A failure is logged, not
// returned: the message is in, and usage is an account of it.
func (s *Service) recordHeard(ctx context.Context, agent string, conv uuid.UUID, sp *Spoken) {
	if sp.Agent != "" {
		agent = sp.Agent
	}
	s.recordVoiceUsage(ctx, agent, conv, store.UsageTranscription, sp.Engine, "pocketsphinx", time.Duration(sp.AudioMs)*time.Millisecond, 0)
}

func (s *Service) recordVoiceUsage(ctx context.Context, agent string, conv uuid.UUID, kind, engine, offlineModel string, audio time.Duration, chars int) {
	provider, name := engineName(engine, offlineModel)
	u := &store.Usage{
		ConversationID: conv, AgentID: s.agentID(agent), Kind: kind, Provider: provider, Model: name,
		AudioMs: audio.Milliseconds(), SpeechChars: int64(chars), CreatedAt: s.now(),
	}
	if p, ok := s.voicePrice(provider, name); ok {
		u.CostMicroUSD = p.CostMicroUSD(audio, chars)
	}
	if err := s.recordUsage(context.WithoutCancel(ctx), agent, u); err != nil {
		s.log.WarnContext(ctx, "recording voice usage", "agent", agent, "conversation_id", conv, "kind", kind, "error", err)
	}
}
