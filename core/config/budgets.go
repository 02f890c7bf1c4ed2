package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Budget bounds what calls may spend (budgets: in switchboard.yaml). It
// names exactly one of agent, workspace, channel or person, and at least
// one limit; days and months are UTC.
//
//	budgets:
//	  - {agent: atlas, daily_usd: 5}
//	  - {workspace: T0TEAM, monthly_usd: 200}
//	  - {channel: C0OPS, daily_usd: 2}
//	  - {person: U0ALICE, daily_usd: 1, owner: U0BOB}
//
// Every priced call of a turn counts against every budget that applies to
// it: before the call the turn reserves its worst case (the prompt's size
// and max_tokens at the model's price) and the real cost is charged after.
// A call that would pass a limit is refused, and the person sees one line
// naming the budget and when it resets.
type Budget struct {
	// Agent is an agent's name.
	Agent string `yaml:"agent,omitempty" json:"agent,omitempty"`
	// Workspace is a Slack team or Discord guild id, or a Switchboard
	// workspace id.
	Workspace string `yaml:"workspace,omitempty" json:"workspace,omitempty"`
	// Channel is a Slack or Discord channel id.
	Channel string `yaml:"channel,omitempty" json:"channel,omitempty"`
	// Person is a platform user id (Slack U…, a Discord snowflake): what
	// turns answering their messages spend.
	Person string `yaml:"person,omitempty" json:"person,omitempty"`
	// DailyUSD bounds the cost per UTC day, in US dollars.
	DailyUSD float64 `yaml:"daily_usd,omitempty" json:"daily_usd,omitempty"`
	// MonthlyUSD bounds the cost per UTC month, in US dollars.
	MonthlyUSD float64 `yaml:"monthly_usd,omitempty" json:"monthly_usd,omitempty"`
	// DailyTokens bounds the tokens (prompt and output) per UTC day.
	DailyTokens int64 `yaml:"daily_tokens,omitempty" json:"daily_tokens,omitempty"`
	// MonthlyTokens bounds the tokens (prompt and output) per UTC month.
	MonthlyTokens int64 `yaml:"monthly_tokens,omitempty" json:"monthly_tokens,omitempty"`
	// Owner is the platform user told, once a period, when the budget
	// passes 80 %; default: the first of access.admins, else of
	// approvals.admins.
	Owner string `yaml:"owner,omitempty" json:"owner,omitempty"`
}

// Key names the budget in the store, the API and /metrics:
// "agent:atlas", "workspace:T0TEAM", "channel:C0OPS", "person:U0ALICE".
func (b Budget) Key() string {
	switch {
	case b.Agent != "":
		return "agent:" + b.Agent
	case b.Workspace != "":
		return "workspace:" + b.Workspace
	case b.Channel != "":
		return "channel:" + b.Channel
	default:
		return "person:" + b.Person
	}
}

// Limits are the budget's dollar and token limits per UTC day (daily) or
// month; both zero when it bounds no such period.
func (b Budget) Limits(daily bool) (usd float64, tokens int64) {
	if daily {
		return b.DailyUSD, b.DailyTokens
	}
	return b.MonthlyUSD, b.MonthlyTokens
}

// Describe is the budget as people read it: "agent atlas".
func (b Budget) Describe() string {
	kind, id, _ := strings.Cut(b.Key(), ":")
	return kind + " " + id
}

func (b Budget) validate(where string, agents map[string]bool) error {
	n := 0
	for _, s := range []string{b.Agent, b.Workspace, b.Channel, b.Person} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%s: name exactly one of agent, workspace, channel or person (it names %d)", where, n)
	}
	if b.Agent != "" && !agents[b.Agent] {
		return fmt.Errorf("%s.agent: %q is not a declared agent", where, b.Agent)
	}
	for field, v := range map[string]float64{"daily_usd": b.DailyUSD, "monthly_usd": b.MonthlyUSD} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s.%s: %v must be a positive amount", where, field, v)
		}
	}
	if b.DailyTokens < 0 || b.MonthlyTokens < 0 {
		return fmt.Errorf("%s: daily_tokens and monthly_tokens must not be negative", where)
	}
	if b.DailyUSD == 0 && b.MonthlyUSD == 0 && b.DailyTokens == 0 && b.MonthlyTokens == 0 {
		return fmt.Errorf("%s: set at least one of daily_usd, monthly_usd, daily_tokens or monthly_tokens", where)
	}
	return nil
}

// Price is a model's price in USD per million tokens (prices: in
// switchboard.yaml), over the built-in list prices:
//
//	prices:
//	  "openai:gpt-4.1-mini": {input: 0.4, output: 1.6}
type Price struct {
	// Input is the price of uncached prompt tokens.
	Input float64 `yaml:"input" json:"input"`
	// Output is the price of output tokens (reasoning included).
	Output float64 `yaml:"output" json:"output"`
	// CacheRead is the price of prompt tokens read from the cache
	// (default: Input).
	CacheRead *float64 `yaml:"cache_read,omitempty" json:"cache_read,omitempty"`
	// CacheWrite is the price of prompt tokens written to the cache
	// (default: Input).
	CacheWrite *float64 `yaml:"cache_write,omitempty" json:"cache_write,omitempty"`
	// AudioMinute is a voice model's price per minute of audio heard (a
	// transcription model) or spoken (a speech model priced by time).
	AudioMinute *float64 `yaml:"audio_minute,omitempty" json:"audio_minute,omitempty"`
	// MillionChars is a speech model's price per million characters
	// spoken.
	MillionChars *float64 `yaml:"million_chars,omitempty" json:"million_chars,omitempty"`
}

func (c *Config) validateBudgets() error {
	agents := map[string]bool{}
	for _, a := range c.Agents {
		agents[a.Name] = true
	}
	seen := map[string]int{}
	for i, b := range c.Budgets {
		where := fmt.Sprintf("budgets[%d]", i)
		if err := b.validate(where, agents); err != nil {
			return err
		}
		if j, dup := seen[b.Key()]; dup {
			return fmt.Errorf("%s: %s already has a budget (budgets[%d]); put its limits in one entry", where, b.Describe(), j)
		}
		seen[b.Key()] = i
	}
	for spec, p := range c.Prices {
		provider, model, ok := strings.Cut(spec, ":")
		if !ok || provider == "" || model == "" {
			return fmt.Errorf("prices: %q must be provider:model, as in \"openai:gpt-4.1-mini\"", spec)
		}
		for field, v := range map[string]*float64{"input": &p.Input, "output": &p.Output, "cache_read": p.CacheRead, "cache_write": p.CacheWrite,
			"audio_minute": p.AudioMinute, "million_chars": p.MillionChars} {
			if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
				return fmt.Errorf("prices[%q].%s: %v must not be negative", spec, field, *v)
			}
		}
	}
	return nil
}

// ErrNoBudget is returned for a budget key no entry of budgets: declares.
var ErrNoBudget = errors.New("no such budget")

// BudgetByKey finds the budget named key ("agent:atlas").
func (c *Config) BudgetByKey(key string) (Budget, error) {
	for _, b := range c.Budgets {
		if b.Key() == key {
			return b, nil
		}
	}
	return Budget{}, fmt.Errorf("%w: %q (budgets: declares %d)", ErrNoBudget, key, len(c.Budgets))
}
