package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// A goal loop works on a goal in iterations. Each iteration is one turn of
// the agent in a conversation nobody sees, ending with report_progress:
// continue, complete, or blocked with what it needs. The report is only
// input: the server decides (decideLoop) whether there is another
// iteration, and stops the loop on any guardrail. The loop's next_run_at
// is set by that decision alone, never by the clock.

// Loop defaults.
const (
	DefaultLoopMaxIterations = 10
	DefaultLoopTokenBudget   = 200_000
	DefaultLoopNoProgress    = 2
)

// LoopConfig is a goal loop's Config.
type LoopConfig struct {
	// Interval between iterations; 0 is continuous (the next iteration
	// starts as soon as the server decides to go on).
	Interval Duration `json:"interval,omitempty" yaml:"interval,omitempty"`
	// MaxIterations stops the loop after that many iterations.
	MaxIterations int `json:"max_iterations,omitempty" yaml:"max_iterations,omitempty"`
	// TokenBudget stops the loop once its conversations used that many
	// tokens (input, cache reads and writes, and output, summed from store
	// usage).
	TokenBudget int64 `json:"token_budget,omitempty" yaml:"token_budget,omitempty"`
	// Deadline stops the loop at that instant.
	Deadline *time.Time `json:"deadline,omitempty" yaml:"deadline,omitempty"`
	// NoProgress stops the loop after that many iterations in a row that
	// reported no new work and the same summary.
	NoProgress int `json:"no_progress,omitempty" yaml:"no_progress,omitempty"`
}

func (c *LoopConfig) defaults() {
	if c.MaxIterations == 0 {
		c.MaxIterations = DefaultLoopMaxIterations
	}
	if c.TokenBudget == 0 {
		c.TokenBudget = DefaultLoopTokenBudget
	}
	if c.NoProgress == 0 {
		c.NoProgress = DefaultLoopNoProgress
	}
}

func (c *LoopConfig) validate() error {
	switch {
	case c.MaxIterations < 1 || c.MaxIterations > 1000:
		return fmt.Errorf("max_iterations %d must be between 1 and 1000", c.MaxIterations)
	case c.TokenBudget < 1:
		return fmt.Errorf("token_budget %d must be positive", c.TokenBudget)
	case c.NoProgress < 1:
		return fmt.Errorf("no_progress %d must be at least 1", c.NoProgress)
	case c.Interval < 0:
		return fmt.Errorf("interval %s must not be negative", time.Duration(c.Interval))
	}
	return nil
}

// Duration is a time.Duration written as "30m", "4h" or "1d" in JSON and YAML.
type Duration time.Duration

// MarshalText writes the duration as Go prints it.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads "30m", "4h", "1d".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Progress statuses of report_progress.
const (
	ProgressContinue = "continue"
	ProgressComplete = "complete"
	ProgressBlocked  = "blocked"
)

// ProgressReport is what an iteration ends with (report_progress).
type ProgressReport struct {
	Status  string   `json:"status" jsonschema:"continue (more to do), complete (the goal is met) or blocked (you need something from your owner)"`
	Summary string   `json:"summary" jsonschema:"where the goal stands now, in a few sentences"`
	NewWork []string `json:"new_work,omitempty" jsonschema:"what you did in this iteration that was not done before; empty if nothing"`
	Needs   string   `json:"needs,omitempty" jsonschema:"when blocked: exactly what you need from your owner"`
}

// loopAction is the server's decision after an iteration.
type loopAction string

const (
	loopContinue loopAction = "continue"
	loopComplete loopAction = "complete"
	loopBlocked  loopAction = "blocked"
	loopStopped  loopAction = "stopped"
)

// loopDecision is what happens next and why.
type loopDecision struct {
	Action loopAction
	Reason string
	NextAt time.Time // for continue
}

// decideLoop is the server's decision after an iteration. reports are the
// iterations' reports, oldest first, the last one being the iteration just
// finished (nil where an iteration did not report). It is pure so that the
// guardrails can be tested one by one.
func decideLoop(cfg LoopConfig, reports []*ProgressReport, tokens int64, now time.Time) loopDecision {
	cfg.defaults()
	last := reports[len(reports)-1]
	switch {
	case last != nil && last.Status == ProgressComplete:
		return loopDecision{Action: loopComplete, Reason: last.Summary}
	case last != nil && last.Status == ProgressBlocked:
		return loopDecision{Action: loopBlocked, Reason: last.Needs}
	case len(reports) >= cfg.MaxIterations:
		return loopDecision{Action: loopStopped, Reason: fmt.Sprintf("it reached its limit of %d iterations", cfg.MaxIterations)}
	case tokens >= cfg.TokenBudget:
		return loopDecision{Action: loopStopped, Reason: fmt.Sprintf("it used %d tokens, its budget is %d", tokens, cfg.TokenBudget)}
	case cfg.Deadline != nil && !now.Before(*cfg.Deadline):
		return loopDecision{Action: loopStopped, Reason: "its deadline " + cfg.Deadline.UTC().Format(time.RFC3339) + " passed"}
	case stalled(reports, cfg.NoProgress):
		return loopDecision{Action: loopStopped, Reason: fmt.Sprintf("%d iterations in a row made no progress", cfg.NoProgress)}
	}
	return loopDecision{Action: loopContinue, NextAt: now.Add(time.Duration(cfg.Interval))}
}

// stalled reports whether the last n iterations each reported no new work
// and the same summary (an iteration without a report counts as one that
// said nothing new).
func stalled(reports []*ProgressReport, n int) bool {
	if len(reports) < n {
		return false
	}
	var summary string
	for i, r := range reports[len(reports)-n:] {
		s := ""
		if r != nil {
			if len(r.NewWork) > 0 {
				return false
			}
			s = strings.Join(strings.Fields(strings.ToLower(r.Summary)), " ")
		}
		if i > 0 && s != summary {
			return false
		}
		summary = s
	}
	return true
}

func (s *Scheduler) loopConfig(sc *store.Schedule) (LoopConfig, error) {
	var cfg LoopConfig
	if err := json.Unmarshal(sc.Config, &cfg); err != nil {
		return cfg, fmt.Errorf("decoding loop %s config: %w", sc.ID, err)
	}
	cfg.defaults()
	return cfg, nil
}

// startIteration starts a loop's next iteration, unless a guardrail that
// needs no report (budget, deadline) already stops it.
func (s *Scheduler) startIteration(ctx context.Context, sc *store.Schedule, p fireArgs, key string) error {
	cfg, err := s.loopConfig(sc)
	if err != nil {
		return err
	}
	now := s.now()
	if run, err := s.runAt(ctx, sc.ID, p.Due, p.Iteration); err != nil || run == nil || run.ConversationID == nil {
		if err != nil {
			return err
		}
		usage, err := s.st.ScheduleUsageTotal(ctx, sc.ID)
		if err != nil {
			return err
		}
		var reason string
		switch {
		case usage.Tokens() >= cfg.TokenBudget:
			reason = fmt.Sprintf("it used %d tokens, its budget is %d", usage.Tokens(), cfg.TokenBudget)
		case cfg.Deadline != nil && !now.Before(*cfg.Deadline):
			reason = "its deadline " + cfg.Deadline.UTC().Format(time.RFC3339) + " passed"
		}
		if reason != "" {
			return s.finishLoop(ctx, sc, nil, loopDecision{Action: loopStopped, Reason: reason})
		}
	}
	iteration := p.Iteration
	run, err := s.startRun(ctx, sc, p, key, core.StartConversationParams{
		Agent: sc.Agent, Context: tool.ContextScheduler,
		Place:   store.Place{Platform: silentPlatform, Workspace: sc.Place.Workspace, Channel: "loop:" + sc.ID.String()},
		Starter: sc.Owner, Text: s.iterationText(ctx, sc, cfg, iteration),
	}, "")
	if err != nil {
		return err
	}
	return s.st.InTx(ctx, func(q store.Queries) error { return enqueueAfterRun(ctx, q, run, 0, now, now) })
}

func (s *Scheduler) iterationText(ctx context.Context, sc *store.Schedule, cfg LoopConfig, iteration int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Goal loop %q, iteration %d of at most %d. Nobody sees this conversation; your owner hears from "+
		"the server when the loop ends.\n\nGoal: %s\n", sc.Name, iteration, cfg.MaxIterations, sc.Instruction)
	if runs, err := s.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 1}); err == nil && len(runs) > 0 && runs[0].Report != nil {
		var last ProgressReport
		if json.Unmarshal(runs[0].Report, &last) == nil {
			fmt.Fprintf(&b, "\nWhere the last iteration left it: %s\n", last.Summary)
		}
	}
	if cfg.Deadline != nil {
		fmt.Fprintf(&b, "Deadline: %s.\n", cfg.Deadline.UTC().Format(time.RFC3339))
	}
	b.WriteString("\nDo one useful step towards the goal, then call report_progress exactly once: continue, complete, " +
		"or blocked with what you need. List under new_work only what this iteration added. The server decides " +
		"whether there is another iteration.")
	return b.String()
}

// afterIteration applies the server's decision once an iteration's turn is
// over.
func (s *Scheduler) afterIteration(ctx context.Context, sc *store.Schedule, run *store.ScheduleRun, failed bool) error {
	if sc.State != store.ScheduleActive {
		return nil // stopped or paused meanwhile
	}
	cfg, err := s.loopConfig(sc)
	if err != nil {
		return err
	}
	runs, err := s.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0})
	if err != nil {
		return err
	}
	reports := make([]*ProgressReport, 0, len(runs))
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Seq > run.Seq {
			continue
		}
		var r *ProgressReport
		if runs[i].Report != nil {
			r = &ProgressReport{}
			if err := json.Unmarshal(runs[i].Report, r); err != nil {
				r = nil
			}
		}
		reports = append(reports, r)
	}
	usage, err := s.st.ScheduleUsageTotal(ctx, sc.ID)
	if err != nil {
		return err
	}
	now := s.now()
	d := decideLoop(cfg, reports, usage.Tokens(), now)
	if failed && d.Action == loopContinue && reports[len(reports)-1] == nil {
		d = loopDecision{Action: loopStopped, Reason: fmt.Sprintf("iteration %d failed; see its conversation", run.Seq)}
	}
	s.log.InfoContext(ctx, "loop decision", "schedule_id", sc.ID, "iteration", run.Seq, "action", d.Action, "reason", d.Reason)
	if d.Action == loopContinue {
		next := d.NextAt
		status := run.Status
		if status == store.RunStarted {
			status = store.RunFinished
		}
		return s.st.InTx(ctx, func(q store.Queries) error {
			if _, err := q.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Status: &status, Now: now}); err != nil {
				return err
			}
			active := store.ScheduleActive
			_, err := q.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, NextRunAt: &next, ExpectState: &active, Now: now})
			return err
		})
	}
	return s.finishLoop(ctx, sc, run, d)
}

// finishLoop ends (or blocks) a loop and tells its owner why, in one
// transaction.
func (s *Scheduler) finishLoop(ctx context.Context, sc *store.Schedule, run *store.ScheduleRun, d loopDecision) error {
	now := s.now()
	state := store.ScheduleDone
	var text string
	switch d.Action {
	case loopComplete:
		text = fmt.Sprintf("✅ Goal %q is complete. %s", sc.Name, d.Reason)
	case loopBlocked:
		state = store.ScheduleBlocked
		text = fmt.Sprintf("⏸️ Goal %q is blocked and needs you: %s\nResume it with `loop resume %s` once it has what it needs.", sc.Name, d.Reason, sc.Name)
	default:
		text = fmt.Sprintf("⏹️ Goal %q stopped: %s.", sc.Name, d.Reason)
	}
	reason := string(d.Action)
	if d.Reason != "" {
		reason += ": " + d.Reason
	}
	err := s.st.InTx(ctx, func(q store.Queries) error {
		if run != nil && run.Status == store.RunStarted {
			status := store.RunFinished
			if _, err := q.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Status: &status, Now: now}); err != nil {
				return err
			}
		}
		active := store.ScheduleActive
		if _, err := q.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{
			ID: sc.ID, State: &state, StateReason: &reason, ClearNextRun: true, ExpectState: &active, Now: now,
		}); err != nil {
			return err
		}
		return s.notifyOwner(ctx, q, sc, fmt.Sprintf("loop-%s-%d-%s", sc.ID, sc.Runs, d.Action), text, now)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil // stopped or paused by someone meanwhile
	}
	return err
}

// ProgressResult is what report_progress answers.
type ProgressResult struct {
	Recorded bool   `json:"recorded"`
	Note     string `json:"note"`
}

// reportProgress is the report_progress tool handler: it records the
// report; the decision comes after the turn.
func (s *Scheduler) reportProgress(ctx context.Context, req *tool.Request, in ProgressReport) (ProgressResult, error) {
	switch in.Status {
	case ProgressContinue, ProgressComplete:
	case ProgressBlocked:
		if strings.TrimSpace(in.Needs) == "" {
			return ProgressResult{}, errors.New("status blocked needs needs: say exactly what you need")
		}
	default:
		return ProgressResult{}, fmt.Errorf("status %q must be continue, complete or blocked", in.Status)
	}
	_, run, err := s.runOfCall(ctx, req, store.ScheduleLoop, "report_progress")
	if err != nil {
		return ProgressResult{}, err
	}
	status := store.RunReported
	if _, err := s.st.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Status: &status, Report: mustJSON(in), Now: s.now()}); err != nil {
		return ProgressResult{}, fmt.Errorf("recording progress: %w", err)
	}
	return ProgressResult{Recorded: true, Note: "Recorded. The server decides whether there is another iteration; end your turn now."}, nil
}
