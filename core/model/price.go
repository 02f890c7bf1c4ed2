package model

import (
	"math"
	"regexp"
	"strings"
)

// Price is a model's list price in USD per million tokens.
type Price struct {
	InputPerMTok       float64
	OutputPerMTok      float64
	CachedInputPerMTok float64 // reading from the prompt cache
	CacheWritePerMTok  float64 // writing to the prompt cache (Anthropic's 5-minute cache)
}

// CostMicroUSD is the cost of u at price p in millionths of a dollar,
// rounded to the nearest. Tokens times USD per million tokens is exactly
// micro-dollars, so no scaling is needed.
func (u Usage) CostMicroUSD(p Price) int64 {
	c := float64(u.InputTokens)*p.InputPerMTok +
		float64(u.OutputTokens)*p.OutputPerMTok +
		float64(u.CachedTokens)*p.CachedInputPerMTok +
		float64(u.CacheWriteTokens)*p.CacheWritePerMTok
	return int64(math.Round(c))
}

// anthropicPrice builds an Anthropic price from its input and output rates:
// cache reads cost a tenth of input, 5-minute cache writes a quarter more.
func anthropicPrice(in, out float64) Price {
	return Price{InputPerMTok: in, OutputPerMTok: out, CachedInputPerMTok: in / 10, CacheWritePerMTok: in * 1.25}
}

// openaiPrice builds an OpenAI price. OpenAI does not charge extra for
// writing its automatic cache.
func openaiPrice(in, cached, out float64) Price {
	return Price{InputPerMTok: in, OutputPerMTok: out, CachedInputPerMTok: cached, CacheWritePerMTok: in}
}

// prices are the published list prices (standard tier, prompts under any
// long-context threshold) as of early 2026. They are a display and budget
// aid, not an invoice: check the provider's pricing page when they matter.
// Keys are model names without a date suffix.
var prices = map[string]map[string]Price{
	ProviderAnthropic: {
		"claude-opus-4-6":   anthropicPrice(5, 25),
		"claude-opus-4-5":   anthropicPrice(5, 25),
		"claude-opus-4-1":   anthropicPrice(15, 75),
		"claude-opus-4-0":   anthropicPrice(15, 75),
		"claude-opus-4":     anthropicPrice(15, 75),
		"claude-sonnet-4-6": anthropicPrice(3, 15),
		"claude-sonnet-4-5": anthropicPrice(3, 15),
		"claude-sonnet-4-0": anthropicPrice(3, 15),
		"claude-sonnet-4":   anthropicPrice(3, 15),
		"claude-3-7-sonnet": anthropicPrice(3, 15),
		"claude-haiku-4-5":  anthropicPrice(1, 5),
		"claude-3-5-haiku":  anthropicPrice(0.8, 4),
		"claude-3-haiku":    {InputPerMTok: 0.25, OutputPerMTok: 1.25, CachedInputPerMTok: 0.03, CacheWritePerMTok: 0.30},
	},
	ProviderOpenAI: {
		"gpt-5.1":      openaiPrice(1.25, 0.125, 10),
		"gpt-5":        openaiPrice(1.25, 0.125, 10),
		"gpt-5-mini":   openaiPrice(0.25, 0.025, 2),
		"gpt-5-nano":   openaiPrice(0.05, 0.005, 0.40),
		"gpt-4.1":      openaiPrice(2, 0.50, 8),
		"gpt-4.1-mini": openaiPrice(0.40, 0.10, 1.60),
		"gpt-4.1-nano": openaiPrice(0.10, 0.025, 0.40),
		"gpt-4o":       openaiPrice(2.50, 1.25, 10),
		"gpt-4o-mini":  openaiPrice(0.15, 0.075, 0.60),
		"o3":           openaiPrice(2, 0.50, 8),
		"o3-mini":      openaiPrice(1.10, 0.55, 4.40),
		"o4-mini":      openaiPrice(1.10, 0.275, 4.40),
		"o1":           openaiPrice(15, 7.50, 60),
	},
	// Scripted models cost nothing, and saying so keeps budgets working in
	// the demo.
	ProviderScripted: {},
}

// dateSuffix matches the snapshot suffixes providers put on model names:
// -20250929, -2025-04-14, -latest.
var dateSuffix = regexp.MustCompile(`-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// PriceFor looks up the list price of a model. Dated snapshots
// ("claude-sonnet-4-5-20250929", "gpt-4.1-mini-2025-04-14") price as their
// family. Any scripted model is free. Unknown models, including whatever a
// local OpenAI-compatible server serves, report false.
func PriceFor(provider, model string) (Price, bool) {
	// The CLIs run the providers' models; their cost, when the CLI does
	// not report it, is the list price of the model.
	switch provider {
	case ProviderClaudeCode:
		provider = ProviderAnthropic
	case ProviderCodex:
		provider = ProviderOpenAI
	}
	table, ok := prices[provider]
	if !ok {
		return Price{}, false
	}
	if provider == ProviderScripted {
		return Price{}, true
	}
	name := strings.ToLower(strings.TrimSpace(model))
	if p, ok := table[name]; ok {
		return p, true
	}
	if p, ok := table[dateSuffix.ReplaceAllString(name, "")]; ok {
		return p, true
	}
	return Price{}, false
}
