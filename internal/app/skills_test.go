package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestSkillsDir: SWITCHBOARD_SKILLS_DIR is read from the environment, its
// skills join the shipped ones in the platform layer at start (its own
// version of a shipped skill wins), and a folder with a bad skill stops the
// start with an error naming the variable and the file.
func TestSkillsDir(t *testing.T) {
	t.Parallel()
	cfg, err := FromEnv(func(k string) string { return map[string]string{"SWITCHBOARD_SKILLS_DIR": "/srv/skills"}[k] })
	if err != nil || cfg.SkillsDir != "/srv/skills" {
		t.Fatalf("FromEnv: SkillsDir %q, %v; want /srv/skills", cfg.SkillsDir, err)
	}
	dir := t.TempDir()
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
	write("skills/triage/SKILL.md", "---\nname: triage\ndescription: Sort incoming bugs.\n---\nLabel each bug.\n")
	write("skills/meeting-notes/SKILL.md", "---\nname: meeting-notes\ndescription: Our own meeting notes.\n---\nOurs.\n")
	cfg = Config{Addr: "-", DatabaseURL: "sqlite:" + filepath.Join(dir, "sb.db"), SkillsDir: filepath.Join(dir, "skills"),
		Env: func(string) string { return "" }, Logger: testenv.Logger(t)}
	a, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open with a skills folder: %v", err)
	}
	rows, err := a.Skills.List(context.Background())
	_ = a.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.Layer+":"+r.Name] = r.Description
	}
	if got["platform:triage"] != "Sort incoming bugs." || got["platform:meeting-notes"] != "Our own meeting notes." || len(got) != 2 {
		t.Errorf("platform skills %v; want triage and the folder's meeting-notes over the shipped one", got)
	}

	write("skills/broken/SKILL.md", "---\nname: broken\n---\nx\n")
	if a, err := Open(context.Background(), cfg); err == nil {
		_ = a.Stop(context.Background())
		t.Fatal("Open succeeded with a broken skill in the folder")
	} else if !strings.Contains(err.Error(), "SWITCHBOARD_SKILLS_DIR") || !strings.Contains(err.Error(), "broken/SKILL.md: description: missing") {
		t.Errorf("Open error = %q; want it to name the variable, the file and the field", err)
	}
}
