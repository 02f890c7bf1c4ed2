package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/voice"
)

// VoiceOptions say how agents' voice engines are built (Options.Voice):
// the offline engines' programs, the decoder of recordings, the HTTP client
// of openai: voice models. Keys and base URLs come from Credentials, as
// the agents' models' do.
type VoiceOptions struct {
	// Offline configures pocketsphinx and espeak-ng (voice_name, when an
	// agent sets one, is espeak-ng's voice).
	Offline voice.OfflineOptions
	// Decoder reads recordings (ffmpeg for all but 16-bit WAV).
	Decoder voice.Decoder
	// HTTPClient makes the openai: voice models' requests (default: a
	// client with a 2 minute timeout).
	HTTPClient *http.Client
	// Engines builds an agent's engines; default NewVoiceEngines with the
	// fields above and Options.Credentials. Tests put fakes here.
	Engines func(a *config.Agent) (*VoiceEngines, error)
}

// VoiceEngines are what an agent hears and speaks with; a nil one is off.
type VoiceEngines struct {
	Transcriber voice.Transcriber
	Speaker     voice.Speaker
	// Hears and Speaks name the engines as entries and usage rows record
	// them: "offline" or "openai:MODEL".
	Hears, Speaks string
}

// ErrVoiceOff is returned when an agent is asked to hear or speak and its
// voice block turns that off.
var ErrVoiceOff = errors.New("voice is off for this agent")

// NewVoiceEngines builds an agent's engines from its voice block. openai:
// models take their endpoint and key from creds, asked as for an openai:
// model of the agent: the voice block's base_url and api_key_env, else the
// agent's when its own model is openai:, else OPENAI_BASE_URL and
// OPENAI_API_KEY (see internal/app's credentials).
func NewVoiceEngines(a *config.Agent, o VoiceOptions, creds CredentialsFunc, log *slog.Logger) (*VoiceEngines, error) {
	v := a.Voice
	hears, hearModel := config.VoiceEngine(v.Transcribe)
	speaks, speakModel := config.VoiceEngine(v.Speak)
	e := &VoiceEngines{}
	if hears == config.VoiceOffline || speaks == config.VoiceOffline {
		off := o.Offline
		off.Decoder = o.Decoder
		if v.VoiceName != "" {
			off.SynthesizerVoice = v.VoiceName
		}
		if off.Logger == nil {
			off.Logger = log
		}
		offline, err := voice.NewOffline(off)
		if err != nil {
			return nil, fmt.Errorf("agent %q: voice: %w", a.Name, err)
		}
		if err := offline.Check(); err != nil {
			return nil, fmt.Errorf("agent %q: voice: %w", a.Name, err)
		}
		if hears == config.VoiceOffline {
			e.Transcriber, e.Hears = offline, voice.ProviderOffline
		}
		if speaks == config.VoiceOffline {
			e.Speaker, e.Speaks = offline, voice.ProviderOffline
		}
	}
	if hears == voice.ProviderOpenAI || speaks == voice.ProviderOpenAI {
		probe := *a
		probe.Model = "openai:" + cmp.Or(hearModel, speakModel)
		probe.APIKeyEnv, probe.BaseURL = v.APIKeyEnv, v.BaseURL
		if p, _, _ := strings.Cut(a.Model, ":"); p == voice.ProviderOpenAI {
			if probe.APIKeyEnv == "" {
				probe.APIKeyEnv = a.APIKeyEnv
			}
			if probe.BaseURL == "" {
				probe.BaseURL = a.BaseURL
			}
		}
		c := model.Credentials{BaseURL: probe.BaseURL}
		if creds != nil {
			var err error
			if c, err = creds(&probe); err != nil {
				return nil, fmt.Errorf("agent %q: voice: %w", a.Name, err)
			}
		}
		opts := voice.OpenAIOptions{
			BaseURL: c.BaseURL, APIKey: c.APIKey, Language: v.Language, SpeakVoice: v.VoiceName,
			HTTPClient: o.HTTPClient, Decoder: o.Decoder, Logger: log,
		}
		if hears == voice.ProviderOpenAI {
			opts.TranscribeModel = hearModel
		}
		if speaks == voice.ProviderOpenAI {
			opts.SpeakModel = speakModel
			if v.VoiceName == "" {
				opts.SpeakVoice = ""
			}
		}
		oa, err := voice.NewOpenAI(opts)
		if err != nil {
			return nil, fmt.Errorf("agent %q: voice: %w", a.Name, err)
		}
		if hears == voice.ProviderOpenAI {
			e.Transcriber, e.Hears = oa, v.Transcribe
		}
		if speaks == voice.ProviderOpenAI {
			e.Speaker, e.Speaks = oa, v.Speak
		}
	}
	return e, nil
}

// voices is the service's voice state: each agent's engines, built on
// first use and rebuilt when its voice block changes, and the per-person
// rate of utterances.
type voices struct {
	mu      sync.Mutex
	engines map[string]voiceEntry
	heard   map[string][]time.Time // agent + person → when their utterances began, the last minute's
}

type voiceEntry struct {
	cfg     config.Voice
	engines *VoiceEngines
}

// VoiceFor returns the agent's voice engines. An agent whose voice block
// turns both off gets ErrVoiceOff.
func (s *Service) VoiceFor(agent string) (*VoiceEngines, *config.Agent, error) {
	a, ok := s.agents().Find(agent)
	if !ok {
		return nil, nil, invalid("no agent named %q", agent)
	}
	if !a.Voice.Hears() && !a.Voice.Speaks() {
		return nil, a, fmt.Errorf("agent %q: %w", agent, ErrVoiceOff)
	}
	v := &s.voices
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.engines[agent]; ok && voiceSame(e.cfg, a.Voice) {
		return e.engines, a, nil
	}
	build := s.opts.Voice.Engines
	if build == nil {
		o, creds, log := s.opts.Voice, s.opts.Credentials, s.log
		build = func(a *config.Agent) (*VoiceEngines, error) { return NewVoiceEngines(a, o, creds, log) }
	}
	e, err := build(a)
	if err != nil {
		return nil, a, err
	}
	if v.engines == nil {
		v.engines = map[string]voiceEntry{}
	}
	v.engines[agent] = voiceEntry{cfg: a.Voice, engines: e}
	return e, a, nil
}

func voiceSame(a, b config.Voice) bool { return a == b }

// VoiceLimited is a refusal to hear someone: an utterance too long, or too
// many of them this minute. Reason is the sentence to tell them.
type VoiceLimited struct{ Reason string }

func (e *VoiceLimited) Error() string { return "voice limit: " + e.Reason }

// allowUtterance counts an utterance of person to agent against its
// voice.utterances_per_minute.
func (s *Service) allowUtterance(a *config.Agent, person string) error {
	limit := a.Voice.PerMinute
	if limit <= 0 {
		limit = config.DefaultVoicePerMinute
	}
	now := s.now()
	key := a.Name + "\x00" + person
	v := &s.voices
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.heard == nil {
		v.heard = map[string][]time.Time{}
	}
	kept := v.heard[key][:0]
	for _, at := range v.heard[key] {
		if now.Sub(at) < time.Minute {
			kept = append(kept, at)
		}
	}
	if len(kept) >= limit {
		v.heard[key] = kept
		return &VoiceLimited{Reason: fmt.Sprintf("you have sent %s %d voice messages in the last minute, its limit (voice.utterances_per_minute); try again in a moment", a.Name, limit)}
	}
	v.heard[key] = append(kept, now)
	// Forget the people who have gone quiet, so the map does not grow.
	if len(v.heard) > 1024 {
		for k, ts := range v.heard {
			if len(ts) == 0 || now.Sub(ts[len(ts)-1]) >= time.Minute {
				delete(v.heard, k)
			}
		}
	}
	return nil
}

func maxUtterance(a *config.Agent) time.Duration {
	if a.Voice.MaxUtterance > 0 {
		return a.Voice.MaxUtterance
	}
	return config.DefaultMaxUtterance
}

// voicePrice is a voice model's price: switchboard.yaml's prices: entry,
// else the list price.
func (s *Service) voicePrice(provider, name string) (voice.Price, bool) {
	if p, ok := s.agents().Prices[provider+":"+name]; ok && (p.AudioMinute != nil || p.MillionChars != nil) {
		var out voice.Price
		if p.AudioMinute != nil {
			out.AudioMinute = *p.AudioMinute
		}
		if p.MillionChars != nil {
			out.MillionChars = *p.MillionChars
		}
		return out, true
	}
	return voice.PriceFor(provider, name)
}

// engineName splits "offline" or "openai:MODEL" into a usage row's
// provider and model.
func engineName(engine string, offlineModel string) (provider, name string) {
	p, m, _ := strings.Cut(engine, ":")
	if p == voice.ProviderOffline {
		return p, offlineModel
	}
	return p, m
}

// startVoices builds the voice engines of every agent whose voice block
// turns them on, so a missing program or key stops the start with an error
// naming the agent and what to install or set, as a model's missing key
// does. A missing ffmpeg is only a warning: WAV needs no decoding.
func (s *Service) startVoices(ctx context.Context) error {
	on := false
	for _, a := range s.agents().Agents {
		if !a.Voice.Hears() && !a.Voice.Speaks() {
			continue
		}
		on = true
		if _, _, err := s.VoiceFor(a.Name); err != nil {
			return err
		}
	}
	if on && s.opts.Voice.Engines == nil {
		ffmpeg := cmp.Or(s.opts.Voice.Decoder.FFmpeg, "ffmpeg")
		if _, err := exec.LookPath(ffmpeg); err != nil {
			s.log.WarnContext(ctx, "voice notes other than WAV cannot be decoded: install ffmpeg (Debian: apt-get install ffmpeg)", "ffmpeg", ffmpeg, "error", err)
		}
	}
	return nil
}
