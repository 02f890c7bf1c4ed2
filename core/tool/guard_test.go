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
		{"bad risk", tool.Policy{Default: map[tool.Risk]tool.Decision{"severe": tool.DecisionAuto}}, []string{`policy.default: risk "severe"`}},
		{"bad default decision", tool.Policy{Default: map[tool.Risk]tool.Decision{tool.RiskHigh: "ask"}}, []string{`policy.default[high]: decision "ask"`}},
		{"bad tool name", tool.Policy{Tools: map[string]tool.Decision{"a b": tool.DecisionAuto}}, []string{`policy.tools: tool name "a b"`}},
		{"bad tool decision", tool.Policy{Tools: map[string]tool.Decision{"a": "maybe"}}, []string{`policy.tools[a]: decision "maybe"`}},
		{"bad deny", tool.Policy{Deny: []string{"ok", "*"}}, []string{`policy.deny[1]`}},
		{"deny empty context", tool.Policy{Deny: []string{":x"}}, []string{`policy.deny[0]: ":x" has an empty context`}},
		{"deny bad tool", tool.Policy{Deny: []string{"slack:a b"}}, []string{`policy.deny[0]`}},
		{"deny unknown context", tool.Policy{Deny: []string{"email:send"}}, []string{`policy.deny[0]: "email:send" names the unknown context "email"`}},
		{"all errors reported", tool.Policy{
			Default: map[tool.Risk]tool.Decision{tool.RiskHigh: "ask"},
			Deny:    []string{""},
		}, []string{"policy.default[high]", "policy.deny[0]"}},
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

// TestPoliciesPrecedence: the platform, workspace and agent levels layered,
// the most specific level winning per risk and per tool, denies adding up.
func TestPoliciesPrecedence(t *testing.T) {
	ps := tool.Policies{
		Platform: tool.Policy{
			Default: map[tool.Risk]tool.Decision{tool.RiskMedium: tool.DecisionAuto, tool.RiskHigh: tool.DecisionConfirm},
			Tools:   map[string]tool.Decision{"deploy": tool.DecisionConfirm, "search": tool.DecisionNotify},
			Deny:    []string{"drop_database"},
		},
		Workspaces: map[string]tool.Policy{
			"T1": {
				Default: map[tool.Risk]tool.Decision{tool.RiskMedium: tool.DecisionConfirm},
				Tools:   map[string]tool.Decision{"deploy": tool.DecisionDeny, "search": tool.DecisionAuto},
				Deny:    []string{"slack:wipe"},
			},
		},
		Agents: map[string]tool.Policy{
			"atlas": {
				Default: map[tool.Risk]tool.Decision{tool.RiskMedium: tool.DecisionNotify},
				Tools:   map[string]tool.Decision{"deploy": tool.DecisionAuto, "drop_database": tool.DecisionAuto},
			},
		},
	}
	tests := []struct {
		name             string
		agent, workspace string
		tool             string
		risk             tool.Risk
		want             tool.Decision
	}{
		{"platform default", "scout", "T9", "x", tool.RiskMedium, tool.DecisionAuto},
		{"workspace default beats platform", "scout", "T1", "x", tool.RiskMedium, tool.DecisionConfirm},
		{"agent default beats workspace", "atlas", "T1", "x", tool.RiskMedium, tool.DecisionNotify},
		{"unset risk falls through to platform", "atlas", "T1", "x", tool.RiskHigh, tool.DecisionConfirm},
		{"unset everywhere: built-in", "atlas", "T1", "x", tool.RiskLow, tool.DecisionAuto},
		{"platform per-tool", "scout", "T9", "deploy", tool.RiskLow, tool.DecisionConfirm},
		{"workspace per-tool beats platform", "scout", "T1", "deploy", tool.RiskLow, tool.DecisionDeny},
		{"agent per-tool beats workspace", "atlas", "T1", "deploy", tool.RiskLow, tool.DecisionAuto},
		{"per-tool at a lower level beats a risk default at a higher one", "atlas", "T1", "search", tool.RiskMedium, tool.DecisionAuto},
		{"platform deny holds against the agent's per-tool", "atlas", "T1", "drop_database", tool.RiskLow, tool.DecisionDeny},
		{"workspace deny applies in its workspace", "atlas", "T1", "wipe", tool.RiskLow, tool.DecisionDeny},
		{"workspace deny not elsewhere", "atlas", "T2", "wipe", tool.RiskLow, tool.DecisionAuto},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ps.For(tt.agent, tt.workspace).Decide(tt.tool, tt.risk, tool.ContextSlack)
			require.Equal(t, tt.want, got, "For(%q, %q).Decide(%q, %q)", tt.agent, tt.workspace, tt.tool, tt.risk)
		})
	}
	require.NoError(t, ps.Validate())
	bad := tool.Policies{Workspaces: map[string]tool.Policy{"T1": {Deny: []string{"mail:*"}}}}
	require.ErrorContains(t, bad.Validate(), "workspaces.T1.policy.deny[0]")
}
