package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillsImportListRemove: `switchboard skills import` takes a folder for
// one agent (flags after the path too) and refuses a folder with a bad
// file, naming it; `skills list` shows the skills of every layer;
// `skills remove` removes. On both stores.
func TestSkillsImportListRemove(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, db string) {
		dir := t.TempDir()
		config := filepath.Join(dir, "switchboard.yaml")
		write := func(p, body string) {
			t.Helper()
			p = filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("switchboard.yaml", "agents:\n  - name: scout\n    model: scripted:x.yaml\n")
		write("skills/triage/SKILL.md", "---\nname: triage\ndescription: Sort incoming bugs.\nallowed-tools: [remind]\n---\nLabel each bug.\n")
		write("skills/triage/labels.md", "bug, feature")
		write("broken/SKILL.md", "---\nname: Broken_Name\n---\nx\n")
		vars := map[string]string{"DATABASE_URL": db, "SWITCHBOARD_CONFIG": config}
		skills := func(args ...string) (string, error) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"skills"}, args...), env(vars), nil, &out, &errOut)
			return out.String(), err
		}
		out, err := skills("import", filepath.Join(dir, "skills"), "--agent", "scout")
		if err != nil || !strings.Contains(out, "imported triage for agent scout; it grants remind") {
			t.Fatalf("skills import: %v %q", err, out)
		}
		_, err = skills("import", filepath.Join(dir, "broken"))
		if err == nil || !strings.Contains(err.Error(), "SKILL.md: name:") || !strings.Contains(err.Error(), "SKILL.md: description: missing") {
			t.Errorf("importing a broken skill: %v, want the file and both fields named", err)
		}
		if _, err := skills("import", filepath.Join(dir, "skills"), "--agent", "nobody"); err == nil || !strings.Contains(err.Error(), `no agent "nobody"`) {
			t.Errorf("importing for an unknown agent: %v", err)
		}
		out, err = skills("list")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "triage") || !strings.Contains(out, "scout") {
			t.Errorf("skills list lacks scout's triage:\n%s", out)
		}
		if _, err := skills("remove", "triage"); err == nil {
			t.Error("removing triage from every agent should fail: it is scout's")
		}
		if out, err := skills("remove", "triage", "--agent", "scout"); err != nil || !strings.Contains(out, "removed triage") {
			t.Errorf("skills remove: %v %q", err, out)
		}
		if out, _ := skills("list"); strings.Contains(out, "triage") {
			t.Errorf("triage still listed after removal:\n%s", out)
		}
	})
}
