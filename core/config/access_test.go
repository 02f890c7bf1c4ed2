package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAccessDefaultsAndPrecedence(t *testing.T) {
	none := &Access{}
	if r := none.Resolve("T1", "D1"); r.DMPolicy != DMPairing || !r.RequireMention || len(r.AnswerIn) != 0 {
		t.Fatalf("with no access block the rule is %+v; want pairing, mention required, every channel", r)
	}
	no := false
	a := &Access{
		AccessRule: AccessRule{DMPolicy: DMAllowlist, Allowlist: []string{"U1"}, AnswerIn: []string{"C1"}},
		Workspaces: map[string]AccessRule{"T2": {DMPolicy: DMOpen, AnswerIn: []string{"C2"}}},
		Channels:   map[string]AccessRule{"C2": {RequireMention: &no}, "D9": {DMPolicy: DMDisabled}},
	}
	tests := []struct {
		workspace, channel string
		want               ResolvedAccess
	}{
		{"T1", "C1", ResolvedAccess{DMPolicy: DMAllowlist, Allowlist: []string{"U1"}, AnswerIn: []string{"C1"}, RequireMention: true}},
		{"T2", "C1", ResolvedAccess{DMPolicy: DMOpen, Allowlist: []string{"U1"}, AnswerIn: []string{"C2"}, RequireMention: true}},
		{"T2", "C2", ResolvedAccess{DMPolicy: DMOpen, Allowlist: []string{"U1"}, AnswerIn: []string{"C2"}, RequireMention: false}},
		{"T2", "D9", ResolvedAccess{DMPolicy: DMDisabled, Allowlist: []string{"U1"}, AnswerIn: []string{"C2"}, RequireMention: true}},
	}
	for _, tt := range tests {
		got := a.Resolve(tt.workspace, tt.channel)
		if got.DMPolicy != tt.want.DMPolicy || got.RequireMention != tt.want.RequireMention ||
			strings.Join(got.AnswerIn, ",") != strings.Join(tt.want.AnswerIn, ",") || strings.Join(got.Allowlist, ",") != strings.Join(tt.want.Allowlist, ",") {
			t.Errorf("Resolve(%s, %s) = %+v, want %+v", tt.workspace, tt.channel, got, tt.want)
		}
	}
}

func TestAccessErrorsNameTheField(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"access:\n  dm_policy: everyone\n", "access.dm_policy"},
		{"access:\n  workspaces:\n    T1: {dm_policy: maybe}\n", "access.workspaces.T1.dm_policy"},
		{"access:\n  channels:\n    C1: {answer_in: [C2]}\n", "access.channels.C1.answer_in"},
		{"access:\n  allowlist: [\"\"]\n", "access.allowlist[0]"},
		{"access:\n  admins: [\"\"]\n", "access.admins[0]"},
		{"access:\n  dm_policies: open\n", "dm_policies"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "switchboard.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%q) = %v; want an error naming %s", tt.yaml, err, tt.want)
		}
	}
}
