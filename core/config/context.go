package config

import (
	"fmt"
	"strings"
)

// Defaults of ContextSettings.
const (
	// DefaultSummarizeAt is the context size, in estimated tokens, past
	// which a conversation is summarised: well inside every supported
	// model's window, and where a turn's input starts to cost more than a
	// summary saves.
	DefaultSummarizeAt = 40000
	// MinSummarizeAt keeps the setting from summarising after every turn.
	MinSummarizeAt = 1000
)

// ContextSettings bound what a conversation sends its model. When the
// context (the latest summary plus the entries after it, in estimated
// tokens) passes SummarizeAt, a summary is written; from then on the model
// gets that summary and the newest KeepRecent tokens of the log verbatim.
// The log itself is never cut.
//
//	context: {summarize_at: 40000, keep_recent: 10000, summary_model: anthropic:claude-haiku-4-5}
//
// At the top of switchboard.yaml it is every agent's default; an agent's
// own context block overrides it field by field.
type ContextSettings struct {
	// SummarizeAt is the budget in estimated tokens, at least 1000; 0
	// means the default, -1 never summarises.
	SummarizeAt int `yaml:"summarize_at,omitempty" json:"summarize_at,omitempty" default:"40000"`
	// KeepRecent is how many estimated tokens of the newest entries stay
	// verbatim after a summary, under half of SummarizeAt; 0 means a
	// quarter of it.
	KeepRecent int `yaml:"keep_recent,omitempty" json:"keep_recent,omitempty"`
	// SummaryModel ("provider:model") writes the summaries; "" means the
	// agent's own model. A cheaper model of the same provider is the usual
	// choice; its key is the provider's default variable.
	SummaryModel string `yaml:"summary_model,omitempty" json:"summary_model,omitempty"`
}

// Over returns s with every unset field taken from def (the file's
// top-level context block).
func (s ContextSettings) Over(def ContextSettings) ContextSettings {
	if s.SummarizeAt == 0 {
		s.SummarizeAt = def.SummarizeAt
	}
	if s.KeepRecent == 0 {
		s.KeepRecent = def.KeepRecent
	}
	if s.SummaryModel == "" {
		s.SummaryModel = def.SummaryModel
	}
	return s
}

// Budget is the summarising budget and the verbatim tail, defaults filled
// in; ok is false when summarising is off.
func (s ContextSettings) Budget() (summarizeAt, keepRecent int, ok bool) {
	summarizeAt = s.SummarizeAt
	switch {
	case summarizeAt < 0:
		return 0, 0, false
	case summarizeAt == 0:
		summarizeAt = DefaultSummarizeAt
	}
	keepRecent = s.KeepRecent
	if keepRecent == 0 {
		keepRecent = summarizeAt / 4
	}
	return summarizeAt, keepRecent, true
}

func (s ContextSettings) validate() error {
	switch {
	case s.SummarizeAt < -1:
		return fmt.Errorf("context.summarize_at %d must be a number of tokens, 0 for the default (%d) or -1 for never", s.SummarizeAt, DefaultSummarizeAt)
	case s.SummarizeAt > 0 && s.SummarizeAt < MinSummarizeAt:
		return fmt.Errorf("context.summarize_at %d must be at least %d tokens", s.SummarizeAt, MinSummarizeAt)
	case s.KeepRecent < 0:
		return fmt.Errorf("context.keep_recent %d must not be negative", s.KeepRecent)
	}
	if at, keep, ok := s.Budget(); ok && keep >= at/2 {
		return fmt.Errorf("context.keep_recent %d must be under half of context.summarize_at (%d), or every turn would summarise again", keep, at)
	}
	if s.SummaryModel != "" {
		provider, model, ok := strings.Cut(s.SummaryModel, ":")
		if !ok || model == "" || (provider != "anthropic" && provider != "openai" && provider != "scripted") {
			return fmt.Errorf("context.summary_model %q must be provider:model with provider anthropic, openai or scripted", s.SummaryModel)
		}
	}
	return nil
}
