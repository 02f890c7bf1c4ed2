package tool_test

import (
	"github.com/stretchr/testify/require"
	"testing"

	"github.com/switchboardhq/switchboard/core/tool"
)

func TestPolicyDecide(t *testing.T) {
	strict := tool.Policy{
		Default: map[tool.Risk]tool.Decision{tool.RiskMedium: tool.DecisionConfirm},
		Tools: map[string]tool.Decision{
			"send_email": tool.DecisionConfirm,
			"web_search": tool.DecisionAuto,
			"deploy":     tool.DecisionAuto,
		},
		Deny: []string{"drop_database", "scheduler:send_email", "api:*"},
	}
	tests := []struct {
		name   string
		policy tool.Policy
		tool   string
		risk   tool.Risk
		ctx    tool.ContextName
		want   tool.Decision
	}{
		{"zero policy low", tool.Policy{}, "x", tool.RiskLow, tool.ContextSlack, tool.DecisionAuto},
		{"zero policy medium", tool.Policy{}, "x", tool.RiskMedium, tool.ContextSlack, tool.DecisionNotify},
		{"zero policy high", tool.Policy{}, "x", tool.RiskHigh, tool.ContextSlack, tool.DecisionConfirm},
		{"zero policy unknown risk", tool.Policy{}, "x", "", tool.ContextSlack, tool.DecisionConfirm},
		{"zero policy misspelt risk", tool.Policy{}, "x", "hgih", tool.ContextSlack, tool.DecisionConfirm},
		{"default override", strict, "x", tool.RiskMedium, tool.ContextSlack, tool.DecisionConfirm},
		{"default falls back to built-in", strict, "x", tool.RiskLow, tool.ContextSlack, tool.DecisionAuto},
		{"per-tool stricter", strict, "send_email", tool.RiskLow, tool.ContextSlack, tool.DecisionConfirm},
		{"per-tool looser than risk", strict, "deploy", tool.RiskHigh, tool.ContextSlack, tool.DecisionAuto},
		{"deny everywhere", strict, "drop_database", tool.RiskLow, tool.ContextTerminal, tool.DecisionDeny},
		{"deny beats per-tool", strict, "send_email", tool.RiskHigh, tool.ContextScheduler, tool.DecisionDeny},
		{"deny scoped to another context", strict, "send_email", tool.RiskHigh, tool.ContextDiscord, tool.DecisionConfirm},
		{"context wildcard", strict, "web_search", tool.RiskLow, tool.ContextAPI, tool.DecisionDeny},
		{"deny name is exact", strict, "drop_database_backup", tool.RiskLow, tool.ContextSlack, tool.DecisionAuto},
		{"bad decision fails closed", tool.Policy{Tools: map[string]tool.Decision{"x": "yolo"}}, "x", tool.RiskLow, tool.ContextWeb, tool.DecisionConfirm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Decide(tt.tool, tt.risk, tt.ctx)
			require.Equal(t, tt.want, got, "Decide(%q, %q, %q)", tt.tool, tt.risk, tt.ctx)
		})
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name   string
		policy tool.Policy
		want   []string // substrings; empty means valid
	}{
		{"zero", tool.Policy{}, nil},
		{"full", tool.Policy{
			Default: map[tool.Risk]tool.Decision{tool.RiskLow: tool.DecisionNotify},
			Tools:   map[string]tool.Decision{"a": tool.DecisionDeny},
			Deny:    []string{"b", "slack:c", "scheduler:*"},
		}, nil},
		{"bad risk", tool.Policy{Default: map[tool.Risk]tool.Decision{"severe": tool.DecisionAuto}}, []string{`Policy.Default: risk "severe"`}},
		{"bad default decision", tool.Policy{Default: map[tool.Risk]tool.Decision{tool.RiskHigh: "ask"}}, []string{`Policy.Default[high]: decision "ask"`}},
		{"bad tool name", tool.Policy{Tools: map[string]tool.Decision{"a b": tool.DecisionAuto}}, []string{`Policy.Tools: tool name "a b"`}},
		{"bad tool decision", tool.Policy{Tools: map[string]tool.Decision{"a": "maybe"}}, []string{`Policy.Tools[a]: decision "maybe"`}},
		{"bad deny", tool.Policy{Deny: []string{"ok", "*"}}, []string{`Policy.Deny[1]`}},
		{"deny empty context", tool.Policy{Deny: []string{":x"}}, []string{`Policy.Deny[0]: ":x" has an empty context`}},
		{"deny bad tool", tool.Policy{Deny: []string{"slack:a b"}}, []string{`Policy.Deny[0]`}},
		{"all errors reported", tool.Policy{
			Default: map[tool.Risk]tool.Decision{tool.RiskHigh: "ask"},
			Deny:    []string{""},
		}, []string{"Policy.Default[high]", "Policy.Deny[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Validate()
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}
