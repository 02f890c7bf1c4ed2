package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// handleFire runs one WorkFire item: what the schedule's kind does when it
// fires. Every branch is idempotent, because the worker retries an item
// whose handler died: a run's conversation is bound to a place named after
// the occurrence, and a retry that finds it goes no further.
func (s *Scheduler) handleFire(ctx context.Context, item *store.WorkItem, p fireArgs) error {
	sc, err := s.st.ScheduleGet(ctx, p.ScheduleID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since it fired
	}
	if err != nil {
		return fmt.Errorf("loading schedule of fire %s: %w", item.ID, err)
	}
	// A fire made just before the schedule was paused or stopped does not
	// run. A reminder is done by its own fire, so done is fine for it.
	if sc.State != store.ScheduleActive && (sc.Kind != store.ScheduleReminder || sc.State != store.ScheduleDone) {
		s.log.InfoContext(ctx, "fire of an inactive schedule dropped", "schedule_id", sc.ID, "state", sc.State)
		return nil
	}
	key := p.runKey()
	switch sc.Kind {
	case store.ScheduleRoutine:
		return s.runRoutine(ctx, sc, p, key)
	case store.ScheduleReminder:
		return s.deliverReminder(ctx, sc, p, key)
	case store.SchedulePulse:
		return s.runPulse(ctx, sc, p, key)
	case store.ScheduleLoop:
		return s.startIteration(ctx, sc, p, key)
	}
	return fmt.Errorf("schedule %s has unknown kind %q", sc.ID, sc.Kind)
}

// startRun records one run and starts its conversation. The run is
// recorded first, so a tool the turn calls (pulse_report, report_progress)
// always finds it; a retry finds the run and its binding and starts nothing
// twice.
func (s *Scheduler) startRun(ctx context.Context, sc *store.Schedule, p fireArgs, key string, start core.StartConversationParams, hash string) (*store.ScheduleRun, error) {
	start.Place.Run = key
	run, err := s.runAt(ctx, sc.ID, p.Due, p.Iteration)
	if err != nil {
		return nil, err
	}
	if run == nil {
		run, err = s.st.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{
			ScheduleID: sc.ID, DueAt: p.Due, Status: store.RunStarted, InputHash: hash, Now: s.now(),
		})
		if err != nil {
			return nil, fmt.Errorf("recording the run of %s: %w", key, err)
		}
	}
	if run.ConversationID != nil {
		return run, nil
	}
	var conv uuid.UUID
	var b *store.Binding
	err = store.ErrNotFound // an unbound run has no place to be found by
	if start.Place.Platform != "" {
		b, err = s.st.BindingFind(ctx, &store.BindingFindParams{Place: start.Place})
	}
	switch {
	case err == nil:
		conv = b.ConversationID // started by an attempt that died before recording it
	case errors.Is(err, store.ErrNotFound):
		c, err := s.svc.StartConversation(ctx, start)
		if err != nil {
			return nil, fmt.Errorf("starting %s %s/%s: %w", sc.Kind, sc.Agent, sc.Name, err)
		}
		conv = c.ID
	default:
		return nil, fmt.Errorf("finding the run of %s: %w", key, err)
	}
	run, err = s.st.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, ConversationID: &conv, Now: s.now()})
	if err != nil {
		return nil, fmt.Errorf("recording the conversation of %s: %w", key, err)
	}
	return run, nil
}

// runAt finds the run of a schedule's occurrence (its due time, and for a
// loop its iteration), nil when there is none.
func (s *Scheduler) runAt(ctx context.Context, scheduleID uuid.UUID, due time.Time, iteration int64) (*store.ScheduleRun, error) {
	runs, err := s.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: scheduleID, Limit: 20})
	if err != nil {
		return nil, fmt.Errorf("listing runs of %s: %w", scheduleID, err)
	}
	for _, r := range runs {
		if r.DueAt.Equal(due) && (iteration == 0 || r.Seq == iteration) {
			return r, nil
		}
	}
	return nil, nil
}

// parseRunKey reads the occurrence out of a run's place (its Run, made by
// fireArgs.runKey).
func parseRunKey(key string) (fireArgs, bool) {
	if len(key) < 38 || key[36] != '-' {
		return fireArgs{}, false
	}
	id, err := uuid.Parse(key[:36])
	if err != nil {
		return fireArgs{}, false
	}
	p := fireArgs{ScheduleID: id}
	due, iter, _ := strings.Cut(key[37:], "-")
	us, err := strconv.ParseInt(due, 10, 64)
	if err != nil {
		return fireArgs{}, false
	}
	p.Due = time.UnixMicro(us).UTC()
	if iter != "" {
		if p.Iteration, err = strconv.ParseInt(iter, 10, 64); err != nil {
			return fireArgs{}, false
		}
	}
	return p, true
}

// routineConfig is a routine's Config.
type routineConfig struct {
	// Template, when set, asks for the output as a post_result card of that
	// template: "briefing" makes the routine a briefing.
	Template string `json:"template,omitempty"`
}

func (s *Scheduler) runRoutine(ctx context.Context, sc *store.Schedule, p fireArgs, key string) error {
	var cfg routineConfig
	if err := json.Unmarshal(sc.Config, &cfg); err != nil {
		return fmt.Errorf("decoding routine %s config: %w", sc.ID, err)
	}
	run, err := s.startRun(ctx, sc, p, key, core.StartConversationParams{
		Agent: sc.Agent, Context: tool.ContextScheduler,
		Place: sc.Place, Starter: sc.Owner, Text: routineText(sc, cfg, p),
		// A briefing posts only its card, whether the model answered with
		// post_result or in prose (afterCardRoutine fills the card then).
		CardOnly: cfg.Template == "briefing",
	}, "")
	if err != nil || cfg.Template == "" {
		return err
	}
	// A routine with a template posts a card: the check after its turn
	// makes one from a prose reply, or fails the run saying why.
	now := s.now()
	return s.st.InTx(ctx, func(q store.Queries) error { return enqueueAfterRun(ctx, q, run, 0, now, now) })
}

// routineText is the instruction a routine's turn starts from.
func routineText(sc *store.Schedule, cfg routineConfig, p fireArgs) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scheduled routine %q, run for %s.", sc.Name, localTime(p.Due, sc.TimeZone))
	if p.Late {
		b.WriteString(" It runs late: the service was not running when it fell due.")
	}
	b.WriteString(" Your reply is posted where the routine delivers; do the task now, without asking questions.\n\n")
	b.WriteString(sc.Instruction)
	if cfg.Template != "" {
		fmt.Fprintf(&b, "\n\nPost the result with the post_result tool using template %q, then stop.", cfg.Template)
	}
	return b.String()
}

func localTime(t time.Time, tz string) string {
	loc, err := loadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Mon 2 Jan 2006 15:04 MST")
}

func (s *Scheduler) deliverReminder(ctx context.Context, sc *store.Schedule, p fireArgs, key string) error {
	now := s.now()
	text := "⏰ Reminder: " + sc.Instruction
	if p.Late {
		text += fmt.Sprintf(" (due %s; delivered late because the service was not running)", localTime(p.Due, sc.TimeZone))
	}
	// The firing's run is recorded first: its id is what the Snooze and
	// Done buttons name (snooze.go). Nothing is kept when the message was
	// posted already (a retried fire).
	err := s.st.InTx(ctx, func(q store.Queries) error {
		run, err := q.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{
			ScheduleID: sc.ID, DueAt: p.Due, Status: store.RunFinished, Note: runDelivered, Now: now,
		})
		if err != nil {
			return err
		}
		posted, err := s.post(ctx, q, postParams{
			Agent: sc.Agent, Starter: sc.Owner, Place: store.DM(sc.Place.Platform, sc.Place.Workspace, sc.Owner),
			Key: "reminder-" + key, Text: text, Buttons: reminderButtons(run.ID), Now: now,
		})
		if err == nil && !posted {
			err = errAlreadyPosted
		}
		return err
	})
	if errors.Is(err, errAlreadyPosted) {
		return nil
	}
	return err
}

// errAlreadyPosted rolls back a retried reminder fire's second run.
var errAlreadyPosted = errors.New("reminder already posted")

// afterRunArgs are the args of a WorkAfterRun item.
type afterRunArgs struct {
	ScheduleID uuid.UUID `json:"schedule_id"`
	RunID      uuid.UUID `json:"run_id"`
	Check      int       `json:"check"`
}

// Kind is WorkAfterRun.
func (afterRunArgs) Kind() string { return WorkAfterRun }

// enqueueAfterRun queues the check that runs once the run's turn is over.
// It sits on the run's conversation at a priority below the turn's, so the
// worker hands it out only when no turn of that conversation is running or
// waiting.
func enqueueAfterRun(ctx context.Context, q store.Queries, run *store.ScheduleRun, check int, at, now time.Time) error {
	key := fmt.Sprintf("after-run:%s:%d", run.ID, check)
	_, err := core.Enqueue(ctx, q, afterRunArgs{ScheduleID: run.ScheduleID, RunID: run.ID, Check: check}, &core.EnqueueOpts{
		ConversationID: run.ConversationID,
		RunAt:          at,
		Priority:       -1,
		UniqueKey:      &key,
		Now:            now,
	})
	if err != nil {
		return fmt.Errorf("queueing the check after run %s: %w", run.ID, err)
	}
	return nil
}

// handleAfterRun settles a pulse or loop run whose turn is over.
func (s *Scheduler) handleAfterRun(ctx context.Context, _ *store.WorkItem, p afterRunArgs) error {
	sc, err := s.st.ScheduleGet(ctx, p.ScheduleID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("loading schedule %s: %w", p.ScheduleID, err)
	}
	run, err := s.st.ScheduleRunGet(ctx, p.RunID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("loading run %s: %w", p.RunID, err)
	}
	if run.ConversationID == nil {
		return nil
	}
	busy, failed, err := s.turnState(ctx, *run.ConversationID)
	if err != nil {
		return err
	}
	if busy {
		// Waiting for a person (an approval, a question) or for a turn that
		// is queued or running: look again later. On Postgres the check can
		// be claimed while the run's own turn still runs (the instance holds
		// the conversation's lease for both), so the first looks come soon
		// (1s, 2s, 4s...) and later ones every RecheckInterval.
		now := s.now()
		wait := min(s.opts.RecheckInterval, time.Second<<min(p.Check, 16))
		return s.st.InTx(ctx, func(q store.Queries) error {
			return enqueueAfterRun(ctx, q, run, p.Check+1, now.Add(wait), now)
		})
	}
	switch sc.Kind {
	case store.SchedulePulse:
		return s.afterPulse(ctx, sc, run, failed)
	case store.ScheduleLoop:
		return s.afterIteration(ctx, sc, run, failed)
	case store.ScheduleRoutine:
		return s.afterCardRoutine(ctx, sc, run, failed)
	}
	return nil
}

// afterCardRoutine makes sure a routine with a template posted a card. A
// run whose turn posted one is finished. A briefing whose model answered
// in prose gets the briefing template filled from that reply and posted;
// otherwise the run fails with the reason in its note.
func (s *Scheduler) afterCardRoutine(ctx context.Context, sc *store.Schedule, run *store.ScheduleRun, failed bool) error {
	var cfg routineConfig
	if err := json.Unmarshal(sc.Config, &cfg); err != nil {
		return fmt.Errorf("decoding routine %s config: %w", sc.ID, err)
	}
	if cfg.Template == "" || run.Status != store.RunStarted {
		return nil
	}
	conv := *run.ConversationID
	entries, err := s.st.EntryList(ctx, &store.EntryListParams{ConversationID: conv})
	if err != nil {
		return fmt.Errorf("reading run %s: %w", run.ID, err)
	}
	var prose string
	for _, e := range entries {
		switch e.Kind {
		case store.EntryCard:
			return s.settleRun(ctx, run, store.RunFinished, "posted its card")
		case store.EntryAssistant:
			if c, err := core.Decode[core.AssistantContent](e); err == nil && strings.TrimSpace(c.Text) != "" {
				prose = c.Text
			}
		}
	}
	switch {
	case failed:
		return s.settleRun(ctx, run, store.RunFailed, "the turn failed before posting a card")
	case cfg.Template != "briefing":
		return s.settleRun(ctx, run, store.RunFailed, fmt.Sprintf("the model answered without post_result, so no %s card was posted", cfg.Template))
	}
	r, err := cards.BriefingFromProse(sc.Name, prose)
	var card *cards.Stamped
	if err == nil {
		card, err = cards.Stamp(r, nil)
	}
	if err != nil {
		s.log.WarnContext(ctx, "a briefing answered in prose that fills no card", "schedule_id", sc.ID, "run_id", run.ID, "error", err)
		return s.settleRun(ctx, run, store.RunFailed, "the model answered without post_result and its reply fills no briefing card: "+err.Error())
	}
	now := s.now()
	return s.st.InTx(ctx, func(q store.Queries) error {
		if err := core.PostCard(ctx, q, &core.PostCardParams{ConversationID: conv, Agent: sc.Agent, Card: card, Now: now}); err != nil {
			return err
		}
		status, note := store.RunFinished, "the model answered in prose; the briefing card was filled from its reply"
		_, err := q.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Status: &status, Note: &note, Now: now})
		return err
	})
}

// settleRun records how a run ended.
func (s *Scheduler) settleRun(ctx context.Context, run *store.ScheduleRun, status store.ScheduleRunStatus, note string) error {
	if _, err := s.st.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Status: &status, Note: &note, Now: s.now()}); err != nil {
		return fmt.Errorf("settling run %s: %w", run.ID, err)
	}
	return nil
}

// turnState reports whether a conversation still has a turn under way or
// pending (paused for a person, or a turn item not finished), and whether
// its last turn ended in an error.
func (s *Scheduler) turnState(ctx context.Context, conv uuid.UUID) (busy, failed bool, err error) {
	c, err := s.st.ConversationGet(ctx, conv)
	if err != nil {
		return false, false, fmt.Errorf("reading conversation %s: %w", conv, err)
	}
	if c.Status == store.ConversationPaused {
		return true, false, nil
	}
	items, err := s.st.WorkList(ctx, &store.WorkListParams{
		ConversationID: &conv, Kind: core.WorkTurn, States: []store.WorkState{store.WorkAvailable, store.WorkRunning},
	})
	if err != nil {
		return false, false, fmt.Errorf("listing turns of %s: %w", conv, err)
	}
	if len(items) > 0 {
		return true, false, nil
	}
	entries, err := s.st.EntryList(ctx, &store.EntryListParams{ConversationID: conv, AfterSeq: max(c.LastSeq-1, 0), WithErrors: true})
	if err != nil {
		return false, false, fmt.Errorf("reading the end of %s: %w", conv, err)
	}
	if n := len(entries); n > 0 && entries[n-1].Kind == store.EntryError {
		var ec core.ErrorContent
		if json.Unmarshal(entries[n-1].Content, &ec) == nil && !ec.Interim {
			failed = true
		}
	}
	return false, failed, nil
}
