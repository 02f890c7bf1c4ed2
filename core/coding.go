package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/core/run/coding"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Coding steps: a run step whose inputs name a repo works in a git
// worktree of it (package coding), on its own branch. Its life:
//
//	turn starts ──► the mirror is fetched, the worktree made or reset
//	               (a "worktree" event), the CLI runs there
//	turn ends   ──► run_step_end: everything changed is committed on the
//	               branch, the diff against the base is recorded with the
//	               step (run_steps.changes) and as a versioned artifact in
//	               the run's conversation ("diff" event), then the gates:
//	               the lead's check command runs in the worktree, its judge
//	               reads the diff ("gate" events)
//	gate fails  ──► the first time, the step goes back to its agent with
//	               the failure ("step_sent_back"); the second, it fails
//	gates pass  ──► the branch is pushed; for a GitHub repository a pull
//	               request is opened ("delivered"); the step is done
//	run ends    ──► done: worktrees removed; failed: kept for
//	               Options.KeepFailedWorktrees, then swept
//
// The step's worktree lives in the data folder of the instance that ran
// its turn: instances that take each other's coding steps share it
// (SWITCHBOARD_DATA_DIR on one volume).

// Run event kinds of coding steps.
const (
	RunEventWorktree  = "worktree"
	RunEventActivity  = "step_activity"
	RunEventDiff      = "diff"
	RunEventGate      = "gate"
	RunEventSentBack  = "step_sent_back"
	RunEventDelivered = "delivered"
)

// DefaultKeepFailedWorktrees is how long a failed run's worktrees stay for
// inspection.
const DefaultKeepFailedWorktrees = 24 * time.Hour

// CodeHost reaches repositories named owner/name through the account of
// the person or workspace a run acts for (the GitHub connection).
type CodeHost interface {
	// Repo says where to fetch the repository and with what token.
	Repo(ctx context.Context, req *tool.Request, fullName string) (*HostedRepo, error)
	// OpenPullRequest opens a pull request of head into base.
	OpenPullRequest(ctx context.Context, req *tool.Request, fullName string, pr PullRequestSpec) (*PullRequest, error)
}

// HostedRepo is a repository as its host describes it.
type HostedRepo struct {
	CloneURL      string
	DefaultBranch string
	Token         string
}

// PullRequestSpec is a pull request to open.
type PullRequestSpec struct {
	Head, Base, Title, Body string
}

// PullRequest is an opened pull request.
type PullRequest struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
}

// StepChanges is a coding step's record (run_steps.changes): where it
// works, what it changed, how its gates went and where it was delivered.
type StepChanges struct {
	Repo       string `json:"repo"`
	Base       string `json:"base"`
	BaseCommit string `json:"base_commit,omitempty"`
	Branch     string `json:"branch"`
	Commit     string `json:"commit,omitempty"`
	// Stat is git's one-line summary of the diff.
	Stat string `json:"stat,omitempty"`
	coding.Diff
	// ArtifactID is the diff as a versioned artifact of the run's
	// conversation (each round of the step a version).
	ArtifactID *uuid.UUID `json:"artifact_id,omitempty"`
	// DiffURL is the artifact's page ("" without a public address).
	DiffURL string       `json:"diff_url,omitempty"`
	Gates   []GateResult `json:"gates,omitempty"`
	// Attempt is the step's attempt these gates and send-backs are of;
	// SentBack counts the times a failed gate sent it back.
	Attempt     int          `json:"attempt,omitempty"`
	SentBack    int          `json:"sent_back,omitempty"`
	Pushed      bool         `json:"pushed,omitempty"`
	PullRequest *PullRequest `json:"pull_request,omitempty"`
}

// GateResult is one gate's verdict on a step's change.
type GateResult struct {
	Kind   string    `json:"kind"` // check or review
	Passed bool      `json:"passed"`
	Output string    `json:"output"`
	At     time.Time `json:"at"`
}

// StepChangesOf decodes a step's change; nil when it has none.
func StepChangesOf(st *store.RunStep) *StepChanges {
	if len(st.Changes) == 0 {
		return nil
	}
	var c StepChanges
	if json.Unmarshal(st.Changes, &c) != nil {
		return nil
	}
	return &c
}

// place is where a step's worktree lives.
func place(r *store.Run, st *store.RunStep) coding.Place {
	return coding.Place{Run: run.ShortID(r), Step: st.Key}
}

// stepSource finds where a step's repository is fetched from; req is who
// the run acts for (runRequest), nil to find it when it is needed.
func (s *Service) stepSource(ctx context.Context, r *store.Run, st *store.RunStep, req *tool.Request) (coding.Source, string, error) {
	name := st.Inputs["repo"]
	kind, val, err := coding.ParseRepo(name)
	if err != nil {
		return coding.Source{}, "", err
	}
	if kind != coding.KindGitHub {
		if !s.agents().Runs.RepositoryAllowed(val) {
			return coding.Source{}, "", fmt.Errorf("inputs.repo %q is not among the repositories coding steps may use (runs.repositories in switchboard.yaml)", name)
		}
		return coding.Source{Name: name, URL: val}, "", nil
	}
	if s.opts.CodeHost == nil {
		return coding.Source{}, "", fmt.Errorf("inputs.repo %q names a GitHub repository, and GitHub is not set up on this server (SWITCHBOARD_GITHUB_CLIENT_ID)", name)
	}
	if req == nil {
		req = s.runRequest(ctx, r)
	}
	hr, err := s.opts.CodeHost.Repo(ctx, req, val)
	if err != nil {
		return coding.Source{}, "", fmt.Errorf("inputs.repo %q: %w", name, err)
	}
	return coding.Source{Name: name, URL: hr.CloneURL, Token: hr.Token}, hr.DefaultBranch, nil
}

// runRequest is who a run acts for with outside accounts: the person who
// last spoke in its conversation, and its workspace.
func (s *Service) runRequest(ctx context.Context, r *store.Run) *tool.Request {
	req := &tool.Request{ConversationID: r.ConversationID, WorkspaceID: r.WorkspaceID, Agent: r.LeadAgent}
	c, err := s.st.ConversationGet(ctx, r.ConversationID)
	if err != nil {
		return req
	}
	entries, err := s.st.EntryList(ctx, &store.EntryListParams{ConversationID: r.ConversationID, AfterSeq: max(0, c.LastSeq-50)})
	if err == nil {
		req.Speaker = s.speakerIn(ctx, entries)
	}
	return req
}

// stepWorktree gives the coding step conv runs its worktree, and returns
// its folder.
func (s *Service) stepWorktree(ctx context.Context, conv uuid.UUID) (string, error) {
	if s.opts.Coding == nil {
		return "", errors.New("coding steps are not set up on this server (no data folder)")
	}
	st, err := s.st.RunStepByConversation(ctx, conv)
	if err != nil {
		return "", fmt.Errorf("finding the run step of %s: %w", conv, err)
	}
	r, err := s.st.RunGet(ctx, st.RunID)
	if err != nil {
		return "", err
	}
	src, hostBase, err := s.stepSource(ctx, r, st, nil)
	if err != nil {
		return "", err
	}
	base := cmp.Or(st.Inputs["base"], hostBase)
	w, err := s.opts.Coding.Prepare(ctx, src, base, place(r, st))
	if err != nil {
		return "", err
	}
	ch := cmp.Or(StepChangesOf(st), &StepChanges{})
	ch.Repo, ch.Base, ch.Branch = st.Inputs["repo"], w.Base, w.Branch
	if ch.BaseCommit == "" {
		ch.BaseCommit = w.BaseCommit
	}
	how := "new"
	if w.Resumed {
		how = "resumed"
	}
	err = s.st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.RunStepChangesSet(ctx, &store.RunStepChangesSetParams{ID: st.ID, Changes: mustJSON(ch), Now: s.now()}); err != nil {
			return err
		}
		return s.runEvent(ctx, q, r.ID, st.Key, RunEventWorktree, "",
			fmt.Sprintf("%s worktree on %s from %s (%s)", how, w.Branch, w.Base, short(w.BaseCommit)))
	})
	if err != nil {
		return "", err
	}
	return w.Dir, nil
}

func short(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}

// stepActivity records what a coding step's CLI does as it does it: each
// tool it calls, with the file or command when the input names one.
func (s *Service) stepActivity(ctx context.Context, sc *RunScope, name string, input json.RawMessage) {
	detail := name
	var in map[string]any
	if json.Unmarshal(input, &in) == nil {
		for _, k := range []string{"file_path", "path", "command", "cmd", "pattern"} {
			if v, ok := in[k].(string); ok && v != "" {
				detail += " " + firstLineOf(v, 200)
				break
			}
		}
	}
	if err := s.runEvent(ctx, s.st, sc.RunID, sc.Step, RunEventActivity, "", detail); err != nil {
		s.log.WarnContext(ctx, "recording a coding step's activity", "run_id", sc.RunID, "step", sc.Step, "error", err)
	}
}

func firstLineOf(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// codingStepEnd ends a coding step's round after its turn: commit, diff,
// gates, then delivery, a send-back or a failure. It reports whether it
// ended the step (false: sent back, the step still works).
func (s *Service) codingStepEnd(ctx context.Context, st *store.RunStep, args RunStepEndArgs) (status store.StepStatus, output, failure string, err error) {
	r, err := s.st.RunGet(ctx, st.RunID)
	if err != nil {
		return "", "", "", err
	}
	fail := func(why string) (store.StepStatus, string, string, error) {
		return store.StepFailed, args.Output, why, nil
	}
	if s.opts.Coding == nil {
		return fail("coding steps are not set up on this server (no data folder)")
	}
	var req *tool.Request
	if kind, _, _ := coding.ParseRepo(st.Inputs["repo"]); kind == coding.KindGitHub {
		req = s.runRequest(ctx, r) // for the repository and for its pull request
	}
	src, hostBase, err := s.stepSource(ctx, r, st, req)
	if err != nil {
		return fail(err.Error())
	}
	ch := cmp.Or(StepChangesOf(st), &StepChanges{Repo: st.Inputs["repo"]})
	if ch.Attempt != st.Attempts {
		// A retried step's gates start again; its branch carries on.
		ch.Attempt, ch.SentBack, ch.Gates, ch.Pushed, ch.PullRequest = st.Attempts, 0, nil, false, nil
	}
	base := cmp.Or(st.Inputs["base"], ch.Base, hostBase)
	w, err := s.opts.Coding.Open(ctx, src, base, place(r, st))
	if errors.Is(err, coding.ErrNoWorktree) {
		return fail("the step's worktree is not on this instance: instances that run coding steps must share SWITCHBOARD_DATA_DIR")
	}
	if err != nil {
		return fail(err.Error())
	}
	if ch.BaseCommit != "" {
		w.BaseCommit = ch.BaseCommit
	}
	msg := strings.TrimSpace(st.Title + "\n\n" + firstLines(args.Output, 40))
	commit, _, err := s.opts.Coding.Commit(ctx, w, st.Agent, st.Agent+"@agents.switchboard.invalid", msg)
	if err != nil {
		return fail("committing the step's changes: " + err.Error())
	}
	diff, err := s.opts.Coding.Diff(ctx, w)
	if err != nil {
		return fail("reading the step's diff: " + err.Error())
	}
	ch.Base, ch.BaseCommit, ch.Branch, ch.Commit, ch.Diff, ch.Stat = w.Base, w.BaseCommit, w.Branch, commit, *diff, diff.Stat()
	if err := s.recordDiff(ctx, r, st, ch); err != nil {
		return "", "", "", err
	}
	if len(diff.Files) == 0 {
		return fail("the step changed no file in " + ch.Repo)
	}

	// Gates: the lead's check in the worktree, then its judge on the diff.
	var spec RunCheckSpec
	_ = json.Unmarshal(r.Check, &spec)
	var failed *GateResult
	if spec.Command != "" {
		g := s.checkGate(ctx, spec, w.Dir)
		ch.Gates = append(ch.Gates, g)
		if err := s.gateEvent(ctx, r, st, ch, g); err != nil {
			return "", "", "", err
		}
		if !g.Passed {
			failed = &g
		}
	}
	if failed == nil && spec.Judge != "" {
		g := s.reviewGate(ctx, spec, r, st, ch)
		ch.Gates = append(ch.Gates, g)
		if err := s.gateEvent(ctx, r, st, ch, g); err != nil {
			return "", "", "", err
		}
		if !g.Passed {
			failed = &g
		}
	}
	if failed != nil {
		if ch.SentBack == 0 && st.ConversationID != nil {
			ch.SentBack++
			return "", "", "", s.sendBack(ctx, r, st, ch, *failed)
		}
		return fail(fmt.Sprintf("the %s failed: %s", failed.Kind, failed.Output))
	}

	// Delivery.
	if err := s.opts.Coding.Push(ctx, w, src); err != nil {
		return fail(err.Error())
	}
	ch.Pushed = true
	delivered := fmt.Sprintf("Branch %s pushed to %s (%s).", w.Branch, ch.Repo, ch.Stat)
	if kind, full, _ := coding.ParseRepo(ch.Repo); kind == coding.KindGitHub && s.opts.CodeHost != nil {
		pr, err := s.opts.CodeHost.OpenPullRequest(ctx, req, full, PullRequestSpec{
			Head: w.Branch, Base: w.Base, Title: st.Title, Body: pullRequestBody(r, st, ch, args.Output),
		})
		if err != nil {
			return fail(fmt.Sprintf("the branch %s was pushed, and opening its pull request failed: %v", w.Branch, err))
		}
		ch.PullRequest = pr
		delivered = fmt.Sprintf("Pull request #%d opened: %s (branch %s, %s).", pr.Number, pr.URL, w.Branch, ch.Stat)
	}
	err = s.st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.RunStepChangesSet(ctx, &store.RunStepChangesSetParams{ID: st.ID, Changes: mustJSON(ch), Now: s.now()}); err != nil {
			return err
		}
		return s.runEvent(ctx, q, r.ID, st.Key, RunEventDelivered, "", delivered)
	})
	if err != nil {
		return "", "", "", err
	}
	return store.StepDone, strings.TrimSpace(args.Output + "\n\n" + delivered), "", nil
}

// recordDiff keeps the step's change with the step and as a version of
// its diff artifact in the run's conversation.
func (s *Service) recordDiff(ctx context.Context, r *store.Run, st *store.RunStep, ch *StepChanges) error {
	return s.st.InTx(ctx, func(q store.Queries) error {
		text := ch.Text
		if text == "" {
			text = "(no changes)\n"
		}
		title := fmt.Sprintf("Run %s, step %s: %s", run.ShortID(r), st.Key, ch.Branch)
		author := store.AgentAuthor(st.Agent)
		if ch.ArtifactID == nil {
			a, err := q.ArtifactCreate(ctx, &store.ArtifactCreateParams{
				ConversationID: r.ConversationID, Kind: store.ArtifactCode, Title: title, Language: "diff", Content: text, Author: author, Now: s.now(),
			})
			if err != nil {
				return err
			}
			ch.ArtifactID = &a.ID
			if s.opts.ArtifactLink != nil {
				ch.DiffURL = s.opts.ArtifactLink(a.ID)
			}
		} else if _, err := q.ArtifactUpdate(ctx, &store.ArtifactUpdateParams{ID: *ch.ArtifactID, Content: text, Author: author, Now: s.now()}); err != nil {
			return err
		}
		if _, err := q.RunStepChangesSet(ctx, &store.RunStepChangesSetParams{ID: st.ID, Changes: mustJSON(ch), Now: s.now()}); err != nil {
			return err
		}
		return s.runEvent(ctx, q, r.ID, st.Key, RunEventDiff, "", fmt.Sprintf("%s on %s at %s", ch.Stat, ch.Branch, short(ch.Commit)))
	})
}

func (s *Service) gateEvent(ctx context.Context, r *store.Run, st *store.RunStep, ch *StepChanges, g GateResult) error {
	return s.st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.RunStepChangesSet(ctx, &store.RunStepChangesSetParams{ID: st.ID, Changes: mustJSON(ch), Now: s.now()}); err != nil {
			return err
		}
		return s.runEvent(ctx, q, r.ID, st.Key, RunEventGate, map[bool]string{true: "passed", false: "failed"}[g.Passed], g.Kind+": "+g.Output)
	})
}

// checkGate runs the check command in the worktree.
func (s *Service) checkGate(ctx context.Context, spec RunCheckSpec, dir string) GateResult {
	timeout := cmp.Or(spec.Timeout, 10*time.Minute)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := runShell(cctx, spec.Command, dir)
	tail := redact.String(lastLines(out, 20))
	g := GateResult{Kind: "check", Passed: err == nil, At: s.now()}
	if err != nil {
		if cctx.Err() != nil {
			err = fmt.Errorf("timed out after %s", timeout)
		}
		g.Output = fmt.Sprintf("`%s` failed (%v)%s", spec.Command, err, prefixedBlock(tail))
	} else {
		g.Output = fmt.Sprintf("`%s` exited 0%s", spec.Command, prefixedBlock(tail))
	}
	return g
}

func prefixedBlock(s string) string {
	if s == "" {
		return ""
	}
	return ":\n" + s
}

// reviewGate asks the judge agent to review the diff: PASS or FAIL on the
// first line, then why.
func (s *Service) reviewGate(ctx context.Context, spec RunCheckSpec, r *store.Run, st *store.RunStep, ch *StepChanges) GateResult {
	cctx, cancel := context.WithTimeout(ctx, cmp.Or(spec.Timeout, 10*time.Minute))
	defer cancel()
	prompt := fmt.Sprintf("Review this change. Answer PASS or FAIL on the first line, then the reasons.\n\nGoal of the run: %s\nStep: %s\nBranch %s against %s: %s\n\n```diff\n%s```\n",
		r.Goal, st.Title, ch.Branch, ch.Base, ch.Stat, ch.Text)
	pass, why := s.verdict(cctx, "reviewer", spec.Judge, prompt, st.ConversationID)
	return GateResult{Kind: "review", Passed: pass, Output: why, At: s.now()}
}

// sendBack gives the step back to its agent once, with the failed gate's
// output, in the step's conversation; its next reply ends the round again.
func (s *Service) sendBack(ctx context.Context, r *store.Run, st *store.RunStep, ch *StepChanges, g GateResult) error {
	text := s.addressed(st.Agent, fmt.Sprintf("The %s of your change failed:\n\n%s\n\nFix it in the same folder and answer again.", g.Kind, g.Output))
	return s.st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.RunStepChangesSet(ctx, &store.RunStepChangesSetParams{ID: st.ID, Changes: mustJSON(ch), Now: s.now()}); err != nil {
			return err
		}
		if _, err := s.admit(ctx, q, &speech{conv: *st.ConversationID, author: store.AgentAuthor(r.LeadAgent), content: agentContent(r.LeadAgent, text)}); err != nil {
			return err
		}
		if err := s.runEvent(ctx, q, r.ID, st.Key, RunEventSentBack, string(store.StepWorking), g.Kind+" failed; sent back to "+st.Agent+" once"); err != nil {
			return err
		}
		return s.runProgress(ctx, q, r.ID)
	})
}

func pullRequestBody(r *store.Run, st *store.RunStep, ch *StepChanges, output string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Opened by Switchboard for run `%s`, step `%s` (%s).\n\n", run.ShortID(r), st.Key, st.Agent)
	if r.Goal != "" {
		fmt.Fprintf(&b, "**Goal:** %s\n\n", r.Goal)
	}
	if out := strings.TrimSpace(output); out != "" {
		fmt.Fprintf(&b, "**Summary:**\n\n%s\n\n", firstLines(out, 40))
	}
	fmt.Fprintf(&b, "**Changes:** %s\n\n", ch.Stat)
	for _, f := range ch.Files {
		fmt.Fprintf(&b, "- `%s` +%d −%d\n", f.Path, f.Insertions, f.Deletions)
	}
	if len(ch.Gates) > 0 {
		b.WriteString("\n**Gates:**\n\n")
		for _, g := range ch.Gates {
			fmt.Fprintf(&b, "- %s: %s — %s\n", g.Kind, map[bool]string{true: "passed", false: "failed"}[g.Passed], firstLineOf(g.Output, 200))
		}
	}
	return b.String()
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// codingRun reports whether a run has coding steps.
func codingRun(steps []*store.RunStep) bool {
	for _, st := range steps {
		if st.Inputs["repo"] != "" {
			return true
		}
	}
	return false
}

// cleanWorktrees takes away the worktrees of a run that ended: at once
// when it is done or cancelled, after KeepFailedWorktrees when it failed
// (sweepWorktrees).
func (s *Service) cleanWorktrees(ctx context.Context, r *store.Run, status store.RunStatus, steps []*store.RunStep) {
	if s.opts.Coding == nil || status == store.RunStatusFailed {
		return
	}
	for _, st := range steps {
		if st.Inputs["repo"] == "" {
			continue
		}
		if err := s.opts.Coding.RemoveDir(ctx, strings.TrimPrefix(place(r, st).Branch(), "switchboard/")); err != nil {
			s.log.WarnContext(ctx, "removing a worktree", "run_id", r.ID, "step", st.Key, "error", err)
		}
	}
}

// sweepWorktrees removes worktrees whose run is over: failed runs' after
// KeepFailedWorktrees, any other's at once (a crash between the end and
// the removal).
func (s *Service) sweepWorktrees(ctx context.Context) (int, error) {
	if s.opts.Coding == nil {
		return 0, nil
	}
	dirs, err := s.opts.Coding.Worktrees()
	if err != nil || len(dirs) == 0 {
		return 0, err
	}
	runs, err := s.st.RunList(ctx, &store.RunListParams{Limit: 1000})
	if err != nil {
		return 0, err
	}
	removed := 0
	byShort := map[string]*store.Run{}
	for _, r := range runs {
		byShort[run.ShortID(r)] = r
	}
	keep := cmp.Or(s.agents().Runs.KeepFailedWorktrees, s.opts.KeepFailedWorktrees, DefaultKeepFailedWorktrees)
	for name, changed := range dirs {
		rest, ok := strings.CutPrefix(name, "run-")
		if !ok || len(rest) < 9 {
			continue
		}
		r := byShort[rest[:8]]
		switch {
		case r == nil && s.now().Sub(changed) < keep:
			continue // a run this list did not reach, or one being made
		case r != nil && r.Status == store.RunStatusRunning:
			continue
		case r != nil && r.Status == store.RunStatusFailed && r.FinishedAt != nil && s.now().Sub(*r.FinishedAt) < keep:
			continue
		}
		if err := s.opts.Coding.RemoveDir(ctx, name); err != nil {
			return removed, err
		}
		removed++
		s.log.InfoContext(ctx, "worktree swept", "worktree", name)
	}
	return removed, nil
}
