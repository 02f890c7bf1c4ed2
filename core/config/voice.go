package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Voice is how an agent hears and speaks, chosen like its model:
//
//	voice:
//	  transcribe: offline            # or openai:whisper-1, openai:gpt-4o-transcribe, off
//	  speak: offline                 # or openai:tts-1, off
//	  reply_with_voice: false        # also answer a voice note with a voice message
//
// openai: models are reached at the voice block's base_url, else the
// agent's base_url, else OPENAI_BASE_URL, else OpenAI; so Groq or a local
// whisper.cpp, speaches or Piper server serve them too. The key is the
// voice block's api_key_env, else the agent's key.
type Voice struct {
	// Transcribe is what hears the agent's voice messages and live speech:
	// offline (pocketsphinx), openai:MODEL, or off (the default).
	Transcribe string `yaml:"transcribe,omitempty" json:"transcribe,omitempty" default:"off"`
	// Speak is what speaks its answers: offline (espeak-ng),
	// openai:MODEL, or off (the default).
	Speak string `yaml:"speak,omitempty" json:"speak,omitempty" default:"off"`
	// ReplyWithVoice also answers a voice note with a voice message (the
	// text answer is always posted too); it needs speak.
	ReplyWithVoice bool `yaml:"reply_with_voice,omitempty" json:"reply_with_voice,omitempty"`
	// VoiceName is the speaker's voice: an OpenAI voice (alloy, nova…;
	// default alloy) or an espeak-ng voice (en, en-us, de…; default its
	// own).
	VoiceName string `yaml:"voice_name,omitempty" json:"voice_name,omitempty"`
	// Language is the ISO-639-1 language of the speech heard (a hint to
	// openai: transcription models).
	Language string `yaml:"language,omitempty" json:"language,omitempty"`
	// BaseURL is the OpenAI-compatible server of the openai: voice models,
	// when it is not the agent's (e.g. a local whisper.cpp beside a hosted
	// model).
	BaseURL string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding that server's key;
	// default the agent's.
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// MaxUtterance is the longest speech heard at once: a longer voice
	// note is refused with a message saying so, and live speech is cut
	// there and answered. From 1s to 10m.
	MaxUtterance time.Duration `yaml:"max_utterance,omitempty" json:"max_utterance,omitempty" default:"2m"`
	// PerMinute is how many utterances one person may have transcribed a
	// minute (voice notes and live speech together); more are refused
	// with a message. From 1 to 600.
	PerMinute int `yaml:"utterances_per_minute,omitempty" json:"utterances_per_minute,omitempty" default:"12"`
}

// Defaults of Voice.
const (
	VoiceOff                 = "off"
	VoiceOffline             = "offline"
	DefaultMaxUtterance      = 2 * time.Minute
	DefaultVoicePerMinute    = 12
	voiceMaxUtteranceCeiling = 10 * time.Minute
)

func (v *Voice) defaults() {
	if v.Transcribe == "" {
		v.Transcribe = VoiceOff
	}
	if v.Speak == "" {
		v.Speak = VoiceOff
	}
	if v.MaxUtterance == 0 {
		v.MaxUtterance = DefaultMaxUtterance
	}
	if v.PerMinute == 0 {
		v.PerMinute = DefaultVoicePerMinute
	}
}

var (
	voiceModelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:-]{0,127}$`)
	languageRE   = regexp.MustCompile(`^[a-z]{2,3}$`)
)

// VoiceEngine splits a transcribe or speak setting: ("off", ""),
// ("offline", "") or ("openai", MODEL).
func VoiceEngine(setting string) (engine, model string) {
	if setting == "" {
		return VoiceOff, ""
	}
	engine, model, _ = strings.Cut(setting, ":")
	return engine, model
}

func checkVoiceEngine(field, setting string) error {
	engine, model := VoiceEngine(setting)
	switch engine {
	case VoiceOff, VoiceOffline:
		if model != "" {
			return fmt.Errorf("voice.%s: %q: %s takes no model", field, setting, engine)
		}
	case "openai":
		if !voiceModelRE.MatchString(model) {
			return fmt.Errorf("voice.%s: %q must name the model, as in openai:%s", field, setting, map[string]string{"transcribe": "whisper-1", "speak": "tts-1"}[field])
		}
	default:
		return fmt.Errorf("voice.%s: %q must be offline, openai:MODEL or off", field, setting)
	}
	return nil
}

func (v *Voice) validate() error {
	if err := checkVoiceEngine("transcribe", v.Transcribe); err != nil {
		return err
	}
	if err := checkVoiceEngine("speak", v.Speak); err != nil {
		return err
	}
	if speak, _ := VoiceEngine(v.Speak); v.ReplyWithVoice && speak == VoiceOff {
		return fmt.Errorf("voice.reply_with_voice: needs voice.speak (offline or openai:MODEL)")
	}
	if v.Language != "" && !languageRE.MatchString(v.Language) {
		return fmt.Errorf("voice.language: %q must be an ISO-639-1 code such as en", v.Language)
	}
	if v.BaseURL != "" && !strings.HasPrefix(v.BaseURL, "http://") && !strings.HasPrefix(v.BaseURL, "https://") {
		return fmt.Errorf("voice.base_url: %q must be an http(s) URL", v.BaseURL)
	}
	if v.MaxUtterance < time.Second || v.MaxUtterance > voiceMaxUtteranceCeiling {
		return fmt.Errorf("voice.max_utterance: %s must be from 1s to %s", v.MaxUtterance, voiceMaxUtteranceCeiling)
	}
	if v.PerMinute < 1 || v.PerMinute > 600 {
		return fmt.Errorf("voice.utterances_per_minute: %d must be from 1 to 600", v.PerMinute)
	}
	return nil
}

// Hears reports whether the agent transcribes speech.
func (v *Voice) Hears() bool {
	e, _ := VoiceEngine(v.Transcribe)
	return e != VoiceOff
}

// Speaks reports whether the agent speaks its answers.
func (v *Voice) Speaks() bool {
	e, _ := VoiceEngine(v.Speak)
	return e != VoiceOff
}
