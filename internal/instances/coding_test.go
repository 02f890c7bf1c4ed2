package instances_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/internal/clitest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestCodingRunTakeover runs two coding runs on one repository at once
// over two `switchboard serve` processes that share a data folder, each
// step's fake Claude Code CLI editing its own worktree. The first CLI call
// writes half a file and hangs; the instance running it is killed with
// SIGKILL. The other takes the step over when the lease runs out: the
// worktree is reset (the half-written file gone), the CLI runs again, and
// each run ends done with one branch of one commit in the repository, one
// result message in its thread, and no worktree left.
func TestCodingRunTakeover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two service processes")
	}
	repo := testenv.GitRepo(t, map[string]string{"README.md": "# app\n"})
	data := t.TempDir()
	fake := clitest.Build(t)
	t.Cleanup(func() { killHungChild(fake.State) })
	w := newWorld(t, false)

	dir := t.TempDir()
	script := filepath.Join(dir, "lead.yaml")
	var turns strings.Builder
	for _, what := range []string{"first", "second"} {
		fmt.Fprintf(&turns, `  - when_last_user_contains: "the %[1]s change"
    tool_calls:
      - name: plan_run
        input:
          goal: "Make the %[1]s change"
          check: {command: "test -s CHANGES.md"}
          steps:
            - {id: fix, title: "Make the %[1]s change", agent: coder, inputs: {repo: %[2]q}}
`, what, repo)
	}
	if err := os.WriteFile(script, []byte("turns:\n  - after_tool: plan_run\n    text: \"Run started.\"\n"+turns.String()+"fallback:\n  text: \"lead here.\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(config, []byte(`access:
  dm_policy: open
agents:
  - name: lead
    model: scripted:`+script+`
    answers: {default: true}
  - name: coder
    model: claude-code:sonnet
runs:
  repositories: [`+fmt.Sprintf("%q", filepath.Dir(repo)+"/")+`]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(w.env, "SWITCHBOARD_CONFIG="+config, "SWITCHBOARD_DATA_DIR="+data,
		"SWITCHBOARD_CLAUDE_CODE_PATH="+fake.Claude, "SWITCHBOARD_CLI_ENV=FAKECLI_SCENARIO,FAKECLI_STATE,FAKECLI_LOG")
	env = append(env, fake.Env("edit_hang_once")[:3]...)
	instances := map[string]*instance{"instance-a": start(t, "instance-a", env), "instance-b": start(t, "instance-b", env)}
	w.openStore()
	ctx := context.Background()

	chs := []string{w.mention(instances["instance-a"].addr, "make the first change"), w.mention(instances["instance-b"].addr, "make the second change")}

	// Wait for the hung step: its worktree holds the half-written file.
	var hung *store.RunStep
	if !poll(waitLong, func() bool {
		runs, err := w.st.RunList(ctx, &store.RunListParams{})
		if err != nil {
			return false
		}
		for _, r := range runs {
			steps, err := w.st.RunStepList(ctx, r.ID)
			if err != nil || len(steps) != 1 || steps[0].ConversationID == nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(data, "worktrees", "run-"+run.ShortOf(r.ID)+"-fix", "PARTIAL")); err == nil {
				hung = steps[0]
				return true
			}
		}
		return false
	}) {
		t.Fatal("no coding step wrote its half file")
	}
	items, err := w.st.WorkList(ctx, &store.WorkListParams{ConversationID: hung.ConversationID, Kind: "turn", States: []store.WorkState{store.WorkRunning}})
	if err != nil || len(items) != 1 {
		t.Fatalf("the hung step's running turns: %v, %v", items, err)
	}
	victim := items[0].ClaimedBy
	instances[victim].kill()
	t.Logf("killed %s, which ran the hung step of run %s", victim, hung.RunID)

	var runs []*store.Run
	if !poll(waitLong, func() bool {
		runs, err = w.st.RunList(ctx, &store.RunListParams{})
		if err != nil || len(runs) != 2 {
			return false
		}
		for _, r := range runs {
			if r.Status == store.RunStatusRunning {
				return false
			}
		}
		return true
	}) {
		dumpRuns(t, w.st)
		t.Fatalf("the runs did not end within %s", waitLong)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpRuns(t, w.st)
		}
	})
	w.waitIdle()
	for _, r := range runs {
		if r.Status != store.RunStatusDone {
			t.Errorf("run %s ended %s: %s", r.ID, r.Status, r.Result)
			continue
		}
		branch := "switchboard/run-" + run.ShortID(r) + "-fix"
		if log := testenv.Git(t, repo, "log", "--format=%an %s", "main.."+branch); strings.Count(log, "\n") != 0 || !strings.HasPrefix(log, "coder Make the") {
			t.Errorf("%s holds %q, want one commit by coder", branch, log)
		}
		if files := testenv.Git(t, repo, "ls-tree", "--name-only", branch); strings.Contains(files, "PARTIAL") || !strings.Contains(files, "CHANGES.md") {
			t.Errorf("%s has files %q: want CHANGES.md and not the killed call's PARTIAL", branch, files)
		}
		if r.ID == hung.RunID {
			evs, _ := w.st.RunEventList(ctx, &store.RunEventListParams{RunID: r.ID, Limit: 1000})
			var wt []string
			for _, ev := range evs {
				if ev.Kind == core.RunEventWorktree {
					wt = append(wt, ev.Detail)
				}
			}
			if len(wt) != 2 || !strings.HasPrefix(wt[0], "new") || !strings.HasPrefix(wt[1], "resumed") {
				t.Errorf("the taken-over step's worktree events are %q, want new then resumed", wt)
			}
		}
	}
	if got := strings.Fields(testenv.Git(t, repo, "for-each-ref", "--format=%(refname)", "refs/heads/switchboard/")); len(got) != 2 {
		t.Errorf("the repository's switchboard branches are %v, want one per run", got)
	}
	for _, ch := range chs {
		var results int
		for _, m := range w.replies(ch) {
			if strings.Contains(m, "(still streaming)") {
				t.Errorf("%s: a message was left streaming: %q", ch, m)
			}
			if strings.HasPrefix(m, "Run ") && strings.Contains(m, ": done") && strings.Contains(m, "Total cost") && !strings.Contains(m, "⏳") {
				results++
			}
		}
		if results != 1 {
			t.Errorf("%s: %d result messages, want 1: %q", ch, results, w.replies(ch))
		}
	}
	if !poll(waitLong, func() bool {
		left, _ := os.ReadDir(filepath.Join(data, "worktrees"))
		return len(left) == 0
	}) {
		left, _ := os.ReadDir(filepath.Join(data, "worktrees"))
		t.Errorf("worktrees left: %v", left)
	}
	mirrors, _ := filepath.Glob(filepath.Join(data, "repos", "*.git"))
	for _, m := range mirrors {
		if list := testenv.Git(t, m, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
			t.Errorf("the mirror %s still lists worktrees:\n%s", m, list)
		}
	}
}

// killHungChild kills the child the hung fake CLI started (the CLI itself
// died with its service).
func killHungChild(state string) {
	b, err := os.ReadFile(filepath.Join(state, "child.pid"))
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// dumpRuns logs every run with its steps and events.
func dumpRuns(t *testing.T, st store.Store) {
	ctx := context.Background()
	runs, _ := st.RunList(ctx, &store.RunListParams{})
	for _, r := range runs {
		t.Logf("run %s %s: %s", r.ID, r.Status, r.Result)
		evs, _ := st.RunEventList(ctx, &store.RunEventListParams{RunID: r.ID, Limit: 1000})
		for _, ev := range evs {
			t.Logf("  %s %s %s %s %s", ev.CreatedAt.Format("15:04:05.000"), ev.StepKey, ev.Kind, ev.Status, ev.Detail)
		}
		steps, _ := st.RunStepList(ctx, r.ID)
		for _, s := range steps {
			if s.ConversationID == nil {
				continue
			}
			items, _ := st.WorkList(ctx, &store.WorkListParams{ConversationID: s.ConversationID, Limit: 50})
			for _, it := range items {
				t.Logf("  work %s %s attempts=%d by=%s", it.Kind, it.State, it.Attempts, it.ClaimedBy)
			}
		}
	}
}
