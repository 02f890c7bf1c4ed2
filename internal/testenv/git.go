package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitRepo makes a bare repository (app.git in a temporary folder) whose
// main branch holds one commit of files, as a team's repository would be,
// and returns its path. It needs git on PATH.
func GitRepo(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	bare, seed := filepath.Join(dir, "app.git"), filepath.Join(dir, "seed")
	Git(tb, dir, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	Git(tb, dir, "init", "--quiet", "--initial-branch=main", seed)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(seed, name), []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	Git(tb, seed, "add", "--all")
	Git(tb, seed, "commit", "--quiet", "-m", "first")
	Git(tb, seed, "push", "--quiet", bare, "main")
	return bare
}

// Git runs git in dir with no system or user configuration and a fixed
// author, and returns its output, trimmed; a failure fails the test.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@localhost")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
