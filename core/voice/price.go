package voice

import (
	"math"
	"strings"
	"time"
)

// Price is what a voice model costs: per minute of audio (transcription,
// and speech models priced by time) and per million characters (speech
// models priced by text).
type Price struct {
	AudioMinute  float64 // USD per minute of audio heard or spoken
	MillionChars float64 // USD per million characters spoken
}

// CostMicroUSD is the cost of audio heard or spoken and chars spoken, in
// millionths of a dollar, rounded to the nearest.
func (p Price) CostMicroUSD(audio time.Duration, chars int) int64 {
	return int64(math.Round(audio.Minutes()*p.AudioMinute*1e6 + float64(chars)*p.MillionChars))
}

// Engines as usage rows name them (store.Usage Provider).
const (
	ProviderOffline = "offline"
	ProviderOpenAI  = "openai"
)

// prices are published list prices as of 2026; like the model prices, a
// display and budget aid, not an invoice. The openai: models of other
// servers reached through a base URL (Groq's whisper-large-v3, say) are
// priced by name; a local server's are unknown (free unless prices: in
// switchboard.yaml says otherwise).
var prices = map[string]Price{
	// OpenAI.
	"whisper-1":              {AudioMinute: 0.006},
	"gpt-4o-transcribe":      {AudioMinute: 0.006},
	"gpt-4o-mini-transcribe": {AudioMinute: 0.003},
	"tts-1":                  {MillionChars: 15},
	"tts-1-hd":               {MillionChars: 30},
	"gpt-4o-mini-tts":        {AudioMinute: 0.015}, // OpenAI's estimate per minute of speech
	// Groq.
	"whisper-large-v3":       {AudioMinute: 0.111 / 60},
	"whisper-large-v3-turbo": {AudioMinute: 0.04 / 60},
}

// PriceFor is a voice model's list price. The offline engines are free.
func PriceFor(provider, model string) (Price, bool) {
	switch provider {
	case ProviderOffline:
		return Price{}, true
	case ProviderOpenAI:
		p, ok := prices[strings.ToLower(strings.TrimSpace(model))]
		return p, ok
	}
	return Price{}, false
}
