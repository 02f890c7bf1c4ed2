package core

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/core/run/plan"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Runs: a lead agent's plan becomes a durable run (the plan_run tool, or a
// plan in the answer of an agent with plans: true). Each step is handed to
// its agent as the first message of a conversation of that agent's own,
// like a delegated task, so it is a turn in the queue like any other;
// its reply is the step's output and feeds the steps that depend on it.
// Every transition appends a run event in the same transaction.
//
// Three work kinds move a run:
//
//	run_advance   (no conversation) starts the ready steps that get a slot,
//	              and ends the run once nothing more can happen: the
//	              completion check, then the result back to the origin
//	run_step_end  (under the step's conversation, so after its turn) ends a
//	              step as done or failed with its tokens and cost, then
//	              advances its run and the runs waiting for a slot
//	run_plan      (under the lead's conversation) reads a plan out of the
//	              lead's answer, asking the model once more when it is
//	              invalid, and starts the run
//
// Cancel stops the working steps' turns (their model calls end through
// ctx) and cancels the pending ones; retry puts failed and cancelled steps
// back to pending. See package run for the state machine.

// PlanRunToolName is the tool a lead agent starts a run with.
const PlanRunToolName = "plan_run"

// Work kinds of runs.
const (
	WorkRunAdvance = "run_advance"
	WorkRunStepEnd = "run_step_end"
	WorkRunPlan    = "run_plan"
)

// Run event kinds.
const (
	RunEventCreated   = "created"
	RunEventStarted   = "step_started"
	RunEventWaiting   = "step_waiting"
	RunEventDone      = "step_done"
	RunEventFailed    = "step_failed"
	RunEventCancelled = "step_cancelled"
	RunEventRetry     = "step_retry"
	RunEventCheck     = "check"
	RunEventFinished  = "run_finished"
	RunEventReopened  = "run_reopened"
)

// RunAdvanceArgs advance a run.
type RunAdvanceArgs struct {
	RunID uuid.UUID `json:"run_id"`
}

// Kind is WorkRunAdvance.
func (RunAdvanceArgs) Kind() string { return WorkRunAdvance }

// RunStepEndArgs end a step's attempt.
type RunStepEndArgs struct {
	StepID  uuid.UUID `json:"step_id"`
	Attempt int       `json:"attempt"`
	Failed  bool      `json:"failed,omitempty"`
	Output  string    `json:"output,omitempty"`
	Error   string    `json:"error,omitempty"`
	// Round counts a coding step's rounds after a failed gate sent it
	// back (0 for the first): each round's end is a work item of its own.
	Round int `json:"round,omitempty"`
}

// Kind is WorkRunStepEnd.
func (RunStepEndArgs) Kind() string { return WorkRunStepEnd }

// RunPlanArgs read a plan out of a lead's answer.
type RunPlanArgs struct {
	Agent string `json:"agent"`
	Seq   int64  `json:"seq"`
	Text  string `json:"text"`
}

// Kind is WorkRunPlan.
func (RunPlanArgs) Kind() string { return WorkRunPlan }

// AddRunHandlers adds the handlers of the run work kinds.
func (s *Service) AddRunHandlers(hs *Handlers) {
	AddHandler(hs, s.RunAdvance)
	AddHandler(hs, s.RunStepEnd)
	AddHandler(hs, s.RunPlan)
	AddHandler(hs, s.RunShowProgress)
}

// RunCheckSpec is a run's completion check as stored on the run.
type RunCheckSpec struct {
	Command string        `json:"command,omitempty"`
	Dir     string        `json:"dir,omitempty"`
	Judge   string        `json:"judge,omitempty"`
	Timeout time.Duration `json:"timeout,omitempty"`
}

// roster is who may do a lead's steps: every other agent, by name and by
// role and domain.
func (s *Service) roster(lead string) plan.Roster {
	r := plan.Roster{Lead: lead, Roles: map[string][]string{}}
	for _, a := range s.agents().Agents {
		if a.Name == lead {
			continue
		}
		r.Agents = append(r.Agents, a.Name)
		role := a.Role
		if role == "" {
			role = "generalist"
		}
		r.Roles[role] = append(r.Roles[role], a.Name)
		for _, d := range a.Domains {
			r.Roles[strings.ToLower(d.Name)] = append(r.Roles[strings.ToLower(d.Name)], a.Name)
		}
	}
	return r
}

// StartRun turns a valid plan of lead's, written in conv, into a run and
// queues its first steps.
func (s *Service) StartRun(ctx context.Context, conv uuid.UUID, lead string, p *plan.Plan) (*store.Run, error) {
	var r *store.Run
	err := s.st.InTx(ctx, func(q store.Queries) error {
		var err error
		r, err = s.startRun(ctx, q, conv, lead, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("starting a run in %s: %w", conv, err)
	}
	s.log.InfoContext(ctx, "run started", "run_id", r.ID, "conversation_id", conv, "lead", lead, "steps", len(p.Steps))
	return r, nil
}

func (s *Service) startRun(ctx context.Context, q store.Queries, conv uuid.UUID, lead string, p *plan.Plan) (*store.Run, error) {
	roster := s.roster(lead)
	if errs := plan.Validate(p, roster); errs != nil {
		return nil, invalid("%s", errs.Error())
	}
	la, ok := s.agents().Find(lead)
	if !ok {
		return nil, invalid("no agent named %q", lead)
	}
	var specs []store.RunStepSpec
	for _, st := range p.Steps {
		name := roster.Resolve(st)
		a, _ := s.agents().Find(name)
		specs = append(specs, store.RunStepSpec{
			Key: st.ID, Title: st.Title, Agent: name, Class: a.RunClass(), Inputs: st.Inputs, DependsOn: st.DependsOn,
		})
	}
	ws, err := q.ConversationWorkspace(ctx, conv)
	if err != nil {
		return nil, err
	}
	check := json.RawMessage(`{}`)
	if !la.RunCheck.Empty() {
		check = mustJSON(RunCheckSpec(la.RunCheck))
	}
	if c := p.Check; c != nil {
		timeout, _ := time.ParseDuration(c.Timeout) // validated above
		check = mustJSON(RunCheckSpec{Command: c.Command, Judge: strings.TrimPrefix(c.Judge, "@"), Timeout: timeout})
	}
	r, err := q.RunCreate(ctx, &store.RunCreateParams{
		ConversationID: conv, WorkspaceID: ws, LeadAgent: lead, Goal: p.Goal, Check: check, Steps: specs, Now: s.now(),
	})
	if err != nil {
		return nil, err
	}
	if err := s.runEvent(ctx, q, r.ID, "", RunEventCreated, string(store.RunStatusRunning),
		fmt.Sprintf("%d steps planned by %s", len(specs), lead)); err != nil {
		return nil, err
	}
	if err := s.queueAdvance(ctx, q, r.ID); err != nil {
		return nil, err
	}
	return r, s.runProgress(ctx, q, r.ID)
}

func (s *Service) runEvent(ctx context.Context, q store.Queries, runID uuid.UUID, step, kind, status, detail string) error {
	_, err := q.RunEventAppend(ctx, &store.RunEventAppendParams{RunID: runID, StepKey: step, Kind: kind, Status: status, Detail: detail, Now: s.now()})
	return err
}

func (s *Service) queueAdvance(ctx context.Context, q store.Queries, runID uuid.UUID) error {
	if _, err := Enqueue(ctx, q, RunAdvanceArgs{RunID: runID}, &EnqueueOpts{Now: s.now()}); err != nil {
		return fmt.Errorf("queueing the advance of run %s: %w", runID, err)
	}
	return nil
}

// RunAdvance is the handler of RunAdvanceArgs: it starts each ready step
// whose class has a free slot, each in a transaction of its own, and ends
// the run when nothing more can happen.
func (s *Service) RunAdvance(ctx context.Context, _ *store.WorkItem, args RunAdvanceArgs) error {
	r, err := s.st.RunGet(ctx, args.RunID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.Status != store.RunStatusRunning {
		return nil
	}
	steps, err := s.st.RunStepList(ctx, r.ID)
	if err != nil {
		return err
	}
	for _, st := range run.Ready(steps) {
		if err := s.startStep(ctx, r, st, steps); err != nil {
			return fmt.Errorf("starting step %s of run %s: %w", st.Key, r.ID, err)
		}
	}
	if steps, err = s.st.RunStepList(ctx, r.ID); err != nil {
		return err
	}
	over, status := run.Outcome(steps)
	if !over {
		return nil
	}
	result := s.runResult(steps, status)
	if status == store.RunStatusDone && !codingRun(steps) { // coding steps passed their gates one by one
		pass, reason := s.checkRun(ctx, r, steps)
		if reason != "" {
			if err := s.runEvent(ctx, s.st, r.ID, "", RunEventCheck, map[bool]string{true: "passed", false: "failed"}[pass], reason); err != nil {
				return err
			}
			result += "\nCompletion check " + map[bool]string{true: "passed", false: "failed"}[pass] + ": " + reason
		}
		if !pass {
			status = store.RunStatusFailed
		}
	}
	return s.finishRun(ctx, r, status, result)
}

// finishRun ends a running run and brings its result to where it came
// from as the lead's message. A run finished meanwhile is left alone.
func (s *Service) finishRun(ctx context.Context, r *store.Run, status store.RunStatus, result string) error {
	var ended []*store.RunStep
	err := s.st.InTx(ctx, func(q store.Queries) error {
		done, err := q.RunFinish(ctx, &store.RunFinishParams{ID: r.ID, Status: status, Result: result, Now: s.now()})
		if err != nil {
			return err
		}
		if err := s.runEvent(ctx, q, r.ID, "", RunEventFinished, string(status), result); err != nil {
			return err
		}
		steps, err := q.RunStepList(ctx, r.ID)
		if err != nil {
			return err
		}
		summary := run.Summary(done, steps)
		if err := Say(ctx, q, &SayParams{
			ConversationID: r.ConversationID, Agent: r.LeadAgent, AgentID: s.agentID(r.LeadAgent),
			Text: summary, Now: s.now(),
		}); err != nil {
			return err
		}
		// A goal delegated to the lead: the run's result is the task's.
		if err := s.delegationResult(ctx, q, r.ConversationID, r.LeadAgent, summary); err != nil {
			return err
		}
		ended = steps
		return s.runProgress(ctx, q, r.ID)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finishing run %s: %w", r.ID, err)
	}
	s.log.InfoContext(ctx, "run finished", "run_id", r.ID, "status", status)
	s.cleanWorktrees(ctx, r, status, ended)
	if _, err := s.sweepWorktrees(ctx); err != nil {
		s.log.WarnContext(ctx, "sweeping the worktrees of runs over", "error", err)
	}
	return nil
}

func (s *Service) runResult(steps []*store.RunStep, status store.RunStatus) string {
	if status != store.RunStatusDone {
		for _, st := range steps {
			if st.Status == store.StepFailed || st.Status == store.StepCancelled {
				return fmt.Sprintf("Step %s (%s) %s: %s", st.Key, st.Agent, st.Status, strings.TrimSpace(st.Error))
			}
		}
		return "The run did not finish."
	}
	// The result is the output of the steps nothing depends on.
	needed := map[string]bool{}
	for _, st := range steps {
		for _, d := range st.DependsOn {
			needed[d] = true
		}
	}
	var parts []string
	for _, st := range steps {
		if !needed[st.Key] {
			parts = append(parts, strings.TrimSpace(st.Output))
		}
	}
	return strings.Join(parts, "\n\n")
}

// startStep opens the step's conversation and starts it, if its class has
// a free slot; otherwise it notes once that the step waits.
func (s *Service) startStep(ctx context.Context, r *store.Run, st *store.RunStep, steps []*store.RunStep) error {
	a, ok := s.agents().Find(st.Agent)
	if !ok {
		return s.failUnstartable(ctx, r, st, fmt.Sprintf("no agent named %q any more", st.Agent))
	}
	lead, _ := s.agents().Find(r.LeadAgent)
	origin, err := s.st.ConversationGet(ctx, r.ConversationID)
	if err != nil {
		return err
	}
	limit := s.agents().Runs.SlotLimit(st.Class)
	errNoSlot := errors.New("no slot")
	err = s.st.InTx(ctx, func(q store.Queries) error {
		meta := ConversationMeta{Context: metaOf(origin).Context, DM: metaOf(origin).DM, Run: &RunScope{RunID: r.ID, Step: st.Key, Repo: st.Inputs["repo"]}}
		if lead != nil {
			meta.Run.Tools = run.Narrow(lead.Tools, a.Tools)
			meta.Run.Narrowed = len(lead.Tools) > 0 || len(a.Tools) > 0
			meta.Run.StepBudget = run.Budget(lead.StepBudget, a.StepBudget)
		}
		text := s.addressed(st.Agent, run.StepMessage(r, st, steps))
		child, err := s.openTalk(ctx, q, AgentTalk{From: r.LeadAgent, To: st.Agent, Text: text}, st.Agent, meta)
		if err != nil {
			return err
		}
		if r.WorkspaceID != nil {
			if err := q.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: child, WorkspaceID: *r.WorkspaceID}); err != nil {
				return err
			}
		}
		res, err := q.RunStepStart(ctx, &store.RunStepStartParams{ID: st.ID, ConversationID: child, Model: a.Model, SlotLimit: limit, Now: s.now()})
		if err != nil {
			return err
		}
		if !res.Started {
			return errNoSlot // the conversation opened above is rolled back
		}
		if err := s.runEvent(ctx, q, r.ID, st.Key, RunEventStarted, string(store.StepWorking),
			fmt.Sprintf("%s on %s, attempt %d, conversation %s", st.Agent, a.Model, res.Step.Attempts, child)); err != nil {
			return err
		}
		return s.runProgress(ctx, q, r.ID)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil // started by another advance
	}
	if errors.Is(err, errNoSlot) {
		return s.noteWaiting(ctx, r, st, limit)
	}
	return err
}

// noteWaiting records, once per wait, that a step waits for a slot.
func (s *Service) noteWaiting(ctx context.Context, r *store.Run, st *store.RunStep, limit int) error {
	evs, err := s.st.RunEventList(ctx, &store.RunEventListParams{RunID: r.ID, Limit: 1000})
	if err != nil {
		return err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].StepKey != st.Key {
			continue
		}
		if evs[i].Kind == RunEventWaiting {
			return nil
		}
		break
	}
	return s.st.InTx(ctx, func(q store.Queries) error {
		if err := s.runEvent(ctx, q, r.ID, st.Key, RunEventWaiting, string(store.StepPending),
			fmt.Sprintf("waiting for a %s slot (%d in use)", st.Class, limit)); err != nil {
			return err
		}
		return s.runProgress(ctx, q, r.ID)
	})
}

func (s *Service) failUnstartable(ctx context.Context, r *store.Run, st *store.RunStep, why string) error {
	return s.st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.RunStepFinish(ctx, &store.RunStepFinishParams{ID: st.ID, Status: store.StepCancelled, Error: why, Now: s.now()}); err != nil {
			return err
		}
		return s.runEvent(ctx, q, r.ID, st.Key, RunEventCancelled, string(store.StepCancelled), why)
	})
}

// runStepReply, in the transaction of a reply in conv, queues the end of
// the run step conv runs when the reply is the step agent's.
func (s *Service) runStepReply(ctx context.Context, q store.Queries, conv uuid.UUID, from, text string) error {
	st, err := q.RunStepByConversation(ctx, conv)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Status != store.StepWorking || st.Agent != from || text == "" {
		return nil
	}
	args := RunStepEndArgs{StepID: st.ID, Attempt: st.Attempts, Output: text}
	if ch := StepChangesOf(st); ch != nil && ch.Attempt == st.Attempts {
		args.Round = ch.SentBack
	}
	return s.queueStepEnd(ctx, q, conv, args)
}

// runStepFailure, in the transaction of a turn's failure in conv, queues
// the failure of the run step conv runs.
func (s *Service) runStepFailure(ctx context.Context, q store.Queries, conv uuid.UUID, msg string) error {
	st, err := q.RunStepByConversation(ctx, conv)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || st.Status != store.StepWorking {
		return err
	}
	return s.queueStepEnd(ctx, q, conv, RunStepEndArgs{StepID: st.ID, Attempt: st.Attempts, Failed: true, Error: msg})
}

func (s *Service) queueStepEnd(ctx context.Context, q store.Queries, conv uuid.UUID, args RunStepEndArgs) error {
	key := fmt.Sprintf("run-step-end:%s:%d", args.StepID, args.Attempt)
	if args.Round > 0 {
		key += fmt.Sprintf(":%d", args.Round)
	}
	if _, err := Enqueue(ctx, q, args, &EnqueueOpts{ConversationID: &conv, UniqueKey: &key, Now: s.now()}); err != nil {
		return fmt.Errorf("queueing the end of run step %s: %w", args.StepID, err)
	}
	return nil
}

// RunStepEnd is the handler of RunStepEndArgs. It runs under the step
// conversation's lease, after the turn, so the usage of every model call
// of the step is recorded; a second run finds the step ended and does
// nothing.
func (s *Service) RunStepEnd(ctx context.Context, item *store.WorkItem, args RunStepEndArgs) error {
	st, err := s.st.RunStepGet(ctx, args.StepID)
	if err != nil {
		return err
	}
	if st.Status != store.StepWorking || st.Attempts != args.Attempt {
		return nil
	}
	var in, out, cost int64
	if st.ConversationID != nil {
		us, err := s.st.UsageList(ctx, *st.ConversationID)
		if err != nil {
			return err
		}
		for _, u := range us {
			in += u.InputTokens + u.CachedTokens + u.CacheWriteTokens
			out += u.OutputTokens
			cost += u.CostMicroUSD
		}
	}
	status, kind, detail := store.StepDone, RunEventDone, ""
	if args.Failed {
		status, kind, detail = store.StepFailed, RunEventFailed, args.Error
	} else if st.Inputs["repo"] != "" {
		// A coding step: commit, diff, gates, delivery (coding.go).
		var failure string
		status, args.Output, failure, err = s.codingStepEnd(ctx, st, args)
		if err != nil {
			return err
		}
		if status == "" {
			return nil // sent back: the step works on
		}
		if status == store.StepFailed {
			kind, detail, args.Failed, args.Error = RunEventFailed, failure, true, failure
		}
	}
	detail = strings.TrimSpace(fmt.Sprintf("%d in / %d out tokens, %s. %s", in, out, run.Cost(cost), detail))
	err = s.st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.RunStepFinish(ctx, &store.RunStepFinishParams{
			ID: st.ID, Status: status, Output: args.Output, Error: args.Error,
			InputTokens: in, OutputTokens: out, CostMicroUSD: cost, Now: s.now(),
		}); err != nil {
			return err
		}
		if err := s.runEvent(ctx, q, st.RunID, st.Key, kind, string(status), detail); err != nil {
			return err
		}
		if err := s.queueAdvance(ctx, q, st.RunID); err != nil {
			return err
		}
		if err := s.wakeWaiting(ctx, q, st.RunID); err != nil {
			return err
		}
		return s.runProgress(ctx, q, st.RunID)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil // cancelled meanwhile
	}
	return err
}

// CancelRun cancels a running run: pending steps are cancelled, working
// ones too, and their turns are asked to stop (the model call ends through
// its context, a CLI backend's process with it).
func (s *Service) CancelRun(ctx context.Context, id uuid.UUID, by string) (*store.Run, error) {
	var r *store.Run
	var working []uuid.UUID
	err := s.st.InTx(ctx, func(q store.Queries) error {
		working = working[:0]
		steps, err := q.RunStepList(ctx, id)
		if err != nil {
			return err
		}
		why := "cancelled by " + cmp.Or(by, "someone")
		for _, st := range steps {
			if st.Status != store.StepPending && st.Status != store.StepWorking {
				continue
			}
			if _, err := q.RunStepFinish(ctx, &store.RunStepFinishParams{ID: st.ID, Status: store.StepCancelled, Error: why, Now: s.now()}); err != nil {
				return err
			}
			if err := s.runEvent(ctx, q, id, st.Key, RunEventCancelled, string(store.StepCancelled), why); err != nil {
				return err
			}
			if st.Status == store.StepWorking && st.ConversationID != nil {
				working = append(working, *st.ConversationID)
			}
		}
		if r, err = q.RunFinish(ctx, &store.RunFinishParams{ID: id, Status: store.RunStatusCancelled, Result: why, Now: s.now()}); err != nil {
			return err
		}
		if err := s.runEvent(ctx, q, id, "", RunEventFinished, string(store.RunStatusCancelled), why); err != nil {
			return err
		}
		if len(working) > 0 {
			if err := s.wakeWaiting(ctx, q, id); err != nil {
				return err
			}
		}
		return s.runProgress(ctx, q, id)
	})
	if err != nil {
		return nil, fmt.Errorf("cancelling run %s: %w", id, err)
	}
	// Stopped after the commit: a turn claimed before it is running now
	// and is named; one claimed after it finds its step cancelled and does
	// not start (runStepGone).
	for _, conv := range working {
		if err := s.st.InTx(ctx, func(q store.Queries) error { return s.stopTurns(ctx, q, conv, by) }); err != nil {
			return nil, fmt.Errorf("stopping the turns of run %s: %w", id, err)
		}
	}
	s.log.InfoContext(ctx, "run cancelled", "run_id", id, "by", by)
	return r, nil
}

// stopTurns asks the running turns of conv to stop, as a stop button does
// (see Service.Stop): the worker holding one cuts it off.
func (s *Service) stopTurns(ctx context.Context, q store.Queries, conv uuid.UUID, by string) error {
	items, err := q.WorkList(ctx, &store.WorkListParams{ConversationID: &conv, Kind: WorkTurn, States: []store.WorkState{store.WorkRunning}, Limit: 10})
	if err != nil {
		return err
	}
	for _, it := range items {
		id := it.ID
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: conv, Kind: store.EntrySystem, Author: store.SystemAuthor,
			Content: mustJSON(SystemContent{Text: "The run was cancelled by " + cmp.Or(by, "someone") + ".", Stop: &id}), Now: s.now(),
		}); err != nil {
			return err
		}
	}
	return nil
}

// RetryRun puts a run's failed and cancelled steps back to pending and the
// run back to running, and queues its advance.
func (s *Service) RetryRun(ctx context.Context, id uuid.UUID, by string) (*store.Run, error) {
	var r *store.Run
	err := s.st.InTx(ctx, func(q store.Queries) error {
		var err error
		if r, err = q.RunReopen(ctx, &store.RunReopenParams{ID: id, Now: s.now()}); err != nil {
			return err
		}
		if err := s.runEvent(ctx, q, id, "", RunEventReopened, string(store.RunStatusRunning), "retried by "+cmp.Or(by, "someone")); err != nil {
			return err
		}
		steps, err := q.RunStepList(ctx, id)
		if err != nil {
			return err
		}
		for _, st := range steps {
			if st.Status != store.StepFailed && st.Status != store.StepCancelled {
				continue
			}
			if _, err := q.RunStepReset(ctx, &store.RunStepResetParams{ID: st.ID, Now: s.now()}); err != nil {
				return err
			}
			if err := s.runEvent(ctx, q, id, st.Key, RunEventRetry, string(store.StepPending), "was "+string(st.Status)); err != nil {
				return err
			}
		}
		if err := s.queueAdvance(ctx, q, id); err != nil {
			return err
		}
		return s.runProgress(ctx, q, id)
	})
	if err != nil {
		return nil, fmt.Errorf("retrying run %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "run retried", "run_id", id, "by", by)
	return r, nil
}

// FindRun reads a run by its id, its short id (run.ShortID: the last
// characters) or the first characters of it (at least six), as people
// type it.
func (s *Service) FindRun(ctx context.Context, ref string) (*store.Run, error) {
	ref = strings.TrimSpace(ref)
	if id, err := uuid.Parse(ref); err == nil {
		return s.st.RunGet(ctx, id)
	}
	if len(ref) < 6 {
		return nil, invalid("run id %q is too short: give at least its first 6 characters", ref)
	}
	rs, err := s.st.RunList(ctx, &store.RunListParams{Limit: 1000})
	if err != nil {
		return nil, err
	}
	var found *store.Run
	for _, r := range rs {
		if id := r.ID.String(); strings.HasPrefix(id, strings.ToLower(ref)) || strings.HasSuffix(id, strings.ToLower(ref)) {
			if found != nil {
				return nil, invalid("run id %q matches several runs: give more of it", ref)
			}
			found = r
		}
	}
	if found == nil {
		return nil, fmt.Errorf("run %s: %w", ref, store.ErrNotFound)
	}
	return found, nil
}

// checkRun runs a run's completion check: a command (its exit status
// decides), then a judge agent (PASS or FAIL, and why). No check: pass,
// no reason.
func (s *Service) checkRun(ctx context.Context, r *store.Run, steps []*store.RunStep) (bool, string) {
	var c RunCheckSpec
	if err := json.Unmarshal(r.Check, &c); err != nil {
		return false, "the check does not decode: " + err.Error()
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var reasons []string
	if c.Command != "" {
		out, err := runShell(cctx, c.Command, c.Dir)
		tail := lastLines(out, 5)
		if err != nil {
			return false, fmt.Sprintf("`%s` failed (%v)%s", c.Command, err, prefixed(tail))
		}
		reasons = append(reasons, fmt.Sprintf("`%s` exited 0%s", c.Command, prefixed(tail)))
	}
	if c.Judge != "" {
		pass, why := s.judge(cctx, c.Judge, r, steps)
		if !pass {
			return false, why
		}
		reasons = append(reasons, why)
	}
	return true, strings.Join(reasons, "; ")
}

// judge asks a judge agent's model whether the run met its goal.
func (s *Service) judge(ctx context.Context, name string, r *store.Run, steps []*store.RunStep) (bool, string) {
	var prompt strings.Builder
	fmt.Fprintf(&prompt, "Judge whether this run met its goal. Answer PASS or FAIL on the first line, then one line saying why.\n\nGoal: %s\n", r.Goal)
	for _, st := range steps {
		fmt.Fprintf(&prompt, "\nStep %s (%s): %s\nOutput: %s\n", st.Key, st.Agent, st.Title, st.Output)
	}
	return s.verdict(ctx, "judge", name, prompt.String(), nil)
}

// verdict asks agent name (a run's judge, a coding step's reviewer: role)
// for PASS or FAIL on the first line of its answer, and why after it. The
// call's usage is recorded in conv when it is set.
func (s *Service) verdict(ctx context.Context, role, name, prompt string, conv *uuid.UUID) (bool, string) {
	a, ok := s.agents().Find(name)
	if !ok {
		return false, fmt.Sprintf("no %s agent named %q", role, name)
	}
	b, err := s.backendFor(a)
	if err != nil {
		return false, "the " + role + " cannot run: " + err.Error()
	}
	resp, err := b.Generate(ctx, &model.Request{
		System:    []model.SystemBlock{{Text: a.Persona}},
		Messages:  []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Kind: model.PartText, Text: prompt}}}},
		MaxTokens: a.MaxTokens,
	}, nil)
	if err != nil {
		s.log.WarnContext(ctx, "asking for a verdict", role, name, "error", redact.String(err.Error()))
		return false, "the " + role + " failed: " + failureText(err)
	}
	if spec, err := model.ParseSpec(a.Model); err == nil && conv != nil {
		if err := s.recordUsage(ctx, a.Name, &store.Usage{
			ConversationID: *conv, AgentID: s.agentID(a.Name), Provider: b.Provider(), Model: spec.Model,
			InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens, CreatedAt: s.now(),
		}); err != nil {
			s.log.WarnContext(ctx, "recording a verdict's usage", role, name, "error", redact.String(err.Error()))
		}
	}
	text := strings.TrimSpace(responseText(resp))
	verdict, why, _ := strings.Cut(text, "\n")
	pass := strings.HasPrefix(strings.ToUpper(strings.TrimSpace(verdict)), "PASS")
	return pass, fmt.Sprintf("%s: %s", name, strings.TrimSpace(cmp.Or(strings.TrimSpace(why), verdict)))
}

// runShell runs a check's command (sh -c) in dir and returns what it
// printed, stdout and stderr together; a child holding the output open
// past the command's end is waited for 2 seconds at most.
func runShell(ctx context.Context, command, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func responseText(r *model.Response) string {
	var b strings.Builder
	for _, p := range r.Parts {
		if p.Kind == model.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func prefixed(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// RunScope is what a run step's conversation carries: its run and step,
// and what the step may use of its lead's tools and budget.
type RunScope struct {
	RunID uuid.UUID `json:"run_id"`
	Step  string    `json:"step"`
	// Tools, when Narrowed, are the only tools the step may use.
	Tools      []string `json:"tools,omitempty"`
	Narrowed   bool     `json:"narrowed,omitempty"`
	StepBudget int      `json:"step_budget,omitempty"`
	// Repo is set for a coding step: the step's inputs name a repository
	// and its turns work in a worktree of it (see coding.go).
	Repo string `json:"repo,omitempty"`
}

// allows reports whether a step may use the tool named name.
func (r *RunScope) allows(name string) bool {
	return r == nil || !r.Narrowed || slices.Contains(r.Tools, name)
}

// planRunInput is the plan_run tool's input: a plan.
type planRunInput plan.Plan

type planRunOutput struct {
	RunID string `json:"run_id"`
	Steps int    `json:"steps"`
	Note  string `json:"note"`
}

// RegisterRunTools registers plan_run. Call it after New, before the
// worker starts.
func (s *Service) RegisterRunTools(r *tool.Registry) error {
	return tool.Register(r, tool.Def{
		Name: PlanRunToolName,
		Description: "Carry out a goal as a run of steps handed to other agents. Each step names an agent (or a role or " +
			"domain), a title saying what to do, optional inputs, and the ids of the steps whose output it needs " +
			"(depends_on). Steps run as soon as what they depend on is done; the run's result comes back here.",
		Risk: tool.RiskLow,
		Tier: tool.TierServer,
	}, s.planRun)
}

func (s *Service) planRun(ctx context.Context, req *tool.Request, in planRunInput) (planRunOutput, error) {
	p := plan.Plan(in)
	if errs := plan.Validate(&p, s.roster(req.Agent)); errs != nil {
		return planRunOutput{}, errs
	}
	r, err := s.StartRun(ctx, req.ConversationID, req.Agent, &p)
	if err != nil {
		return planRunOutput{}, err
	}
	return planRunOutput{
		RunID: r.ID.String(), Steps: len(p.Steps),
		Note: "The run has started. Its progress shows here and its result comes back to this conversation; do not do the steps yourself.",
	}, nil
}

// isPlan reports whether a reply is a lead's plan that will become a run:
// an agent with plans: true, outside a run step's conversation, answering
// with what looks like a plan.
func (s *Service) isPlan(meta ConversationMeta, a *config.Agent, text string) bool {
	return meta.Run == nil && a != nil && a.Plans && plan.Looks(text)
}

// runPlanReply, in the transaction of a lead's reply, queues reading a
// plan out of it when the lead plans (plans: true) and the reply looks
// like it holds one.
func (s *Service) runPlanReply(ctx context.Context, q store.Queries, conv uuid.UUID, a *config.Agent, text string) error {
	if !s.isPlan(ConversationMeta{}, a, text) { // the caller asks outside step conversations only
		return nil
	}
	c, err := q.ConversationGet(ctx, conv)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("run-plan:%s:%d", conv, c.LastSeq)
	_, err = Enqueue(ctx, q, RunPlanArgs{Agent: a.Name, Seq: c.LastSeq, Text: text}, &EnqueueOpts{ConversationID: &conv, UniqueKey: &key, Now: s.now()})
	return err
}

// RunPlan is the handler of RunPlanArgs: the plan in a lead's answer is
// scanned and validated; an invalid one goes back to the lead's model
// once with the errors; a valid one starts a run, and a plan that fails
// twice is reported in the conversation.
func (s *Service) RunPlan(ctx context.Context, item *store.WorkItem, args RunPlanArgs) error {
	conv := *item.ConversationID
	a, ok := s.agents().Find(args.Agent)
	if !ok {
		return nil
	}
	revise := func(ctx context.Context, problems string) (string, error) {
		b, err := s.backendFor(a)
		if err != nil {
			return "", err
		}
		resp, err := b.Generate(ctx, &model.Request{
			System: []model.SystemBlock{{Text: a.Persona}},
			Messages: []model.Message{
				{Role: model.RoleUser, Parts: []model.Part{{Kind: model.PartText, Text: "Write the plan."}}},
				{Role: model.RoleAssistant, Parts: []model.Part{{Kind: model.PartText, Text: args.Text}}},
				{Role: model.RoleUser, Parts: []model.Part{{Kind: model.PartText, Text: problems}}},
			},
			MaxTokens: a.MaxTokens,
		}, nil)
		if err != nil {
			return "", err
		}
		spec, _ := model.ParseSpec(a.Model)
		if err := s.recordUsage(ctx, a.Name, &store.Usage{
			ConversationID: conv, AgentID: s.agentID(a.Name), Provider: b.Provider(), Model: spec.Model,
			InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens, CreatedAt: s.now(),
		}); err != nil {
			s.log.WarnContext(ctx, "recording a plan revision's usage", "agent", a.Name, "error", redact.String(err.Error()))
		}
		return responseText(resp), nil
	}
	p, _, err := plan.Extract(ctx, args.Text, s.roster(a.Name), revise)
	var errs plan.Errors
	if errors.As(err, &errs) {
		return s.st.InTx(ctx, func(q store.Queries) error {
			return Say(ctx, q, &SayParams{ConversationID: conv, Agent: a.Name, AgentID: s.agentID(a.Name),
				Text: "I could not turn my plan into a run: " + errs.Error(), Now: s.now()})
		})
	}
	if err != nil {
		return err
	}
	_, err = s.StartRun(ctx, conv, a.Name, p)
	return err
}

// runProgress queues the run's progress view for the origin's platforms
// (a RunProgress hook, when one is set; see Options.RunProgress).
func (s *Service) runProgress(ctx context.Context, q store.Queries, runID uuid.UUID) error {
	if s.opts.RunProgress == nil {
		return nil
	}
	key := "run-progress:" + runID.String() + ":" + s.now().Format(time.RFC3339Nano)
	r, err := q.RunGet(ctx, runID)
	if err != nil {
		return err
	}
	_, err = Enqueue(ctx, q, RunProgressArgs{RunID: runID}, &EnqueueOpts{ConversationID: &r.ConversationID, UniqueKey: &key, Now: s.now()})
	return err
}

// RunProgressArgs show a run's progress where it came from.
type RunProgressArgs struct {
	RunID uuid.UUID `json:"run_id"`
}

// WorkRunProgress is the kind of RunProgressArgs.
const WorkRunProgress = "run_progress"

// Kind is WorkRunProgress.
func (RunProgressArgs) Kind() string { return WorkRunProgress }

// RunView is a run with its steps, as progress views and the API show it.
type RunView struct {
	Run   *store.Run
	Steps []*store.RunStep
}

// RunProgress is a platform's view of runs: it shows (posts, then edits)
// one progress message per run in the run's conversation.
type RunProgress interface {
	ShowRun(ctx context.Context, v *RunView) error
}

// RunShowProgress is the handler of RunProgressArgs.
func (s *Service) RunShowProgress(ctx context.Context, _ *store.WorkItem, args RunProgressArgs) error {
	if s.opts.RunProgress == nil {
		return nil
	}
	v, err := s.RunView(ctx, args.RunID)
	if err != nil {
		return err
	}
	return s.opts.RunProgress.ShowRun(ctx, v)
}

// RunView reads a run and its steps.
func (s *Service) RunView(ctx context.Context, id uuid.UUID) (*RunView, error) {
	r, err := s.st.RunGet(ctx, id)
	if err != nil {
		return nil, err
	}
	steps, err := s.st.RunStepList(ctx, id)
	if err != nil {
		return nil, err
	}
	return &RunView{Run: r, Steps: steps}, nil
}

// RunFor finds the run ref names (its id or first characters) for a
// command typed in conv: only a run of conv's workspace (or, for a
// conversation of none, a run of none) is found.
func (s *Service) RunFor(ctx context.Context, conv uuid.UUID, ref string) (*RunView, error) {
	r, err := s.FindRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	ws, err := s.st.ConversationWorkspace(ctx, conv)
	if err != nil {
		return nil, err
	}
	if (ws == nil) != (r.WorkspaceID == nil) || (ws != nil && *ws != *r.WorkspaceID) {
		return nil, fmt.Errorf("run %s: %w", ref, store.ErrNotFound)
	}
	return s.RunView(ctx, r.ID)
}

// RunsOf lists the runs started from a conversation, newest first.
func (s *Service) RunsOf(ctx context.Context, conv uuid.UUID) ([]*store.Run, error) {
	return s.st.RunList(ctx, &store.RunListParams{ConversationID: &conv, Limit: 20})
}

// runStepGone reports whether conv is a run step's conversation whose step
// is no longer working (cancelled, or ended), so a turn queued there
// before the cancel does not run.
func (s *Service) runStepGone(ctx context.Context, conv *store.Conversation) (bool, error) {
	if metaOf(conv).Run == nil {
		return false, nil
	}
	st, err := s.st.RunStepByConversation(ctx, conv.ID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the run step of %s: %w", conv.ID, err)
	}
	if st.Status == store.StepCancelled {
		s.log.InfoContext(ctx, "turn of a cancelled run step skipped", "conversation_id", conv.ID, "run_id", st.RunID, "step", st.Key)
		return true, nil
	}
	return false, nil
}

// wakeWaiting queues the advance of the running runs but one: a slot was
// freed, and their waiting steps may take it.
func (s *Service) wakeWaiting(ctx context.Context, q store.Queries, except uuid.UUID) error {
	running, err := q.RunList(ctx, &store.RunListParams{Status: store.RunStatusRunning, Limit: 200})
	if err != nil {
		return err
	}
	for _, r := range running {
		if r.ID != except {
			if err := s.queueAdvance(ctx, q, r.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// Run reads run id. Who may see it is who may use its conversation: the
// caller checks that (its conversation's workspace, or an agent's own).
func (s *Service) Run(ctx context.Context, id uuid.UUID) (*Run, error) { return s.st.RunGet(ctx, id) }

// RunFilter selects runs, newest first.
type RunFilter struct {
	Status       RunStatus  // empty: any
	Conversation *uuid.UUID // nil: any
	Limit        int
}

// Runs lists the runs f selects, of every conversation: the caller keeps
// those of the conversations it may use.
func (s *Service) Runs(ctx context.Context, f RunFilter) ([]*Run, error) {
	return s.st.RunList(ctx, &store.RunListParams{Status: f.Status, ConversationID: f.Conversation, Limit: f.Limit})
}

// RunSteps lists the steps of run id.
func (s *Service) RunSteps(ctx context.Context, id uuid.UUID) ([]*RunStep, error) {
	return s.st.RunStepList(ctx, id)
}

// RunStepOf is the run step a conversation works for (ErrNotFound: none).
func (s *Service) RunStepOf(ctx context.Context, conv uuid.UUID) (*RunStep, error) {
	return s.st.RunStepByConversation(ctx, conv)
}

// RunEvents lists the events of run id after the event after, oldest
// first, at most limit.
func (s *Service) RunEvents(ctx context.Context, id uuid.UUID, after int64, limit int) ([]*RunEvent, error) {
	return s.st.RunEventList(ctx, &store.RunEventListParams{RunID: id, AfterID: after, Limit: limit})
}
