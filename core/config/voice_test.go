package config

import (
	"strings"
	"testing"
	"time"
)

func TestVoiceBlock(t *testing.T) {
	cfg, err := Parse("", []byte(`agents:
- name: atlas
  voice:
    transcribe: offline
    speak: openai:tts-1
    reply_with_voice: true
    max_utterance: 30s
- name: scout
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	atlas, _ := cfg.Find("atlas")
	v := atlas.Voice
	if !v.Hears() || !v.Speaks() || !v.ReplyWithVoice || v.MaxUtterance != 30*time.Second || v.PerMinute != DefaultVoicePerMinute {
		t.Fatalf("atlas's voice %+v", v)
	}
	if e, m := VoiceEngine(v.Speak); e != "openai" || m != "tts-1" {
		t.Fatalf("speak engine %q model %q", e, m)
	}
	scout, _ := cfg.Find("scout")
	if scout.Voice.Hears() || scout.Voice.Speaks() || scout.Voice.Transcribe != VoiceOff || scout.Voice.MaxUtterance != DefaultMaxUtterance {
		t.Fatalf("an agent without a voice block: %+v, want it off", scout.Voice)
	}
}

func TestVoiceBlockErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"transcribe: whisper", `voice.transcribe: "whisper" must be offline, openai:MODEL or off`},
		{"transcribe: 'openai:'", `voice.transcribe: "openai:" must name the model, as in openai:whisper-1`},
		{"speak: offline:en", `voice.speak: "offline:en": offline takes no model`},
		{"reply_with_voice: true", `voice.reply_with_voice: needs voice.speak`},
		{"max_utterance: 20m", `voice.max_utterance: 20m0s must be from 1s to 10m0s`},
		{"utterances_per_minute: 1000", `voice.utterances_per_minute: 1000 must be from 1 to 600`},
		{"language: English", `voice.language: "English"`},
		{"base_url: 127.0.0.1:8000", `voice.base_url: "127.0.0.1:8000" must be an http(s) URL`},
		{"transcibe: offline", "transcibe"},
	} {
		_, err := Parse("", []byte("agents:\n- name: atlas\n  voice:\n    "+c.yaml+"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.yaml, err, c.want)
		}
	}
	_, err := Parse("", []byte("prices:\n  \"openai:whisper-1\": {audio_minute: -1}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), `prices["openai:whisper-1"].audio_minute`) {
		t.Fatalf("a negative audio price: %v", err)
	}
}
