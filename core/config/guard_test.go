package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/tool"
)

func loadYAML(t *testing.T, text string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path, envOf(nil))
}

func TestLoadGuard(t *testing.T) {
	cfg, err := loadYAML(t, `
policy:
  default: {medium: auto}
  tools: {deploy: confirm}
  deny: [drop_database]
workspaces:
  T0123:
    policy:
      tools: {deploy: deny}
approvals:
  deciders: admins
  admins: [U0ADMIN]
  expiry: 90m
agents:
  - name: atlas
    policy:
      tools: {deploy: auto}
  - name: scout
`)
	if err != nil {
		t.Fatal(err)
	}
	ps := cfg.Policies()
	for _, c := range []struct {
		agent, ws string
		want      tool.Decision
	}{
		{"scout", "T9", tool.DecisionConfirm},
		{"scout", "T0123", tool.DecisionDeny},
		{"atlas", "T0123", tool.DecisionAuto},
	} {
		if got := ps.For(c.agent, c.ws).Decide("deploy", tool.RiskLow, tool.ContextSlack); got != c.want {
			t.Errorf("deploy by %s in %s = %s, want %s", c.agent, c.ws, got, c.want)
		}
	}
	if got := cfg.Approvals.ExpiryDuration(); got != 90*time.Minute {
		t.Errorf("approval expiry = %s, want 90m", got)
	}
	if !cfg.Approvals.ByAdmins() || !cfg.Approvals.IsAdmin("T0123", "U0ADMIN") || cfg.Approvals.IsAdmin("T0123", "U0OTHER") {
		t.Errorf("approvals = %+v, want admins deciding with U0ADMIN the only admin", cfg.Approvals)
	}
	def, err := loadYAML(t, "agents:\n- name: a\n")
	if err != nil {
		t.Fatal(err)
	}
	if def.Approvals.ByAdmins() || def.Approvals.ExpiryDuration() != 24*time.Hour {
		t.Errorf("default approvals = %+v, want the starter deciding within 24h", def.Approvals)
	}
}

func TestLoadGuardErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"platform decision", "policy: {default: {high: ask}}\n", `policy.default[high]: decision "ask"`},
		{"unknown context", "policy: {deny: ['email:*']}\n", `policy.deny[0]: "email:*" names the unknown context "email"`},
		{"workspace", "workspaces: {T1: {policy: {tools: {x: maybe}}}}\n", `workspaces.T1.policy.tools[x]`},
		{"agent", "agents:\n- name: a\n  policy: {deny: ['slack:a b']}\n", `agents[0].policy.deny[0]`},
		{"deciders", "approvals: {deciders: anyone}\n", `approvals.deciders: "anyone"`},
		{"empty admin", "approvals: {deciders: admins, admins: [\"\"]}\n", `approvals.admins[0]: empty user id`},
		{"expiry", "approvals: {expiry: soon}\n", `approvals.expiry: "soon"`},
		{"unknown field", "approvals: {expire: 1h}\n", "expire"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, tt.yaml)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load error = %v, want one naming %q", err, tt.want)
			}
		})
	}
}
