package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Work kinds the scheduler runs in core's worker (see AddHandlers).
const (
	// WorkFire is one fire of a schedule. Its unique key is the schedule and
	// the scheduled time, so an occurrence is enqueued at most once.
	WorkFire = "schedule_fire"
	// WorkAfterRun runs once a pulse's or a loop iteration's turn is over:
	// it is queued on the run's conversation, so the worker hands it out
	// only after the turn released the conversation.
	WorkAfterRun = "schedule_after_run"
)

// LeaseName is the named lease whose holder fires schedules.
const LeaseName = "switchboard.scheduler"

// DefaultMaxRoutines is how many routines an agent may have.
const DefaultMaxRoutines = 10

// MinInterval is the shortest interval a routine or pulse may have.
const MinInterval = time.Minute

// Conversations is what the scheduler needs of core: the declared agents,
// a conversation started for each fire, and the instance's name for the
// leadership lease. *core.Service implements it; the scheduler posts only
// through it, never through a platform.
type Conversations interface {
	Agents() *config.Config
	StartConversation(ctx context.Context, p core.StartConversationParams) (*store.Conversation, error)
	WorkerID() string
	// Sweep is the spine's housekeeping, which the leader runs with its own
	// every SweepInterval.
	Sweep(ctx context.Context) (*core.SweepResult, error)
}

var _ Conversations = (*core.Service)(nil)

// Options configures a Scheduler.
type Options struct {
	Store store.Store
	// Service starts the conversations of routines, pulses and loops.
	Service Conversations
	// Registry, when set, is checked at New for the post_result tool that
	// briefing routines need.
	Registry *tool.Registry
	Logger   *slog.Logger
	// Clock drives gocron and every time the scheduler writes; default the
	// real clock. Tests pass clockwork's fake clock.
	Clock clockwork.Clock
	// InstanceID names this process in the leadership lease; default the
	// service's worker id.
	InstanceID string
	// Config holds the schedules declared in switchboard.yaml; they are
	// created or updated at Start.
	Config *Config
	// Inputs are the pulse checklist sources by name, added to the
	// built-in ones (see InputFunc).
	Inputs map[string]InputFunc
	// MaxRoutinesPerAgent defaults to DefaultMaxRoutines.
	MaxRoutinesPerAgent int
	// TickInterval is how often the leader looks for due schedules
	// (default 1s): a reminder fires at most this late.
	TickInterval time.Duration
	// LeaseTTL is the leadership lease (default 15s), renewed every third of
	// it. A dead leader is replaced within about LeaseTTL.
	LeaseTTL time.Duration
	// MissedGrace is how late a fire may be and still count as on time
	// (default 1m). Later fires are "missed": the schedule's policy decides.
	MissedGrace time.Duration
	// SweepInterval is how often the sweeps run (default 1m).
	SweepInterval time.Duration
	// RecheckInterval is how long a finished-run check waits when the run's
	// conversation is still busy (a question for a person; default 1m).
	RecheckInterval time.Duration
	// ReminderRetention is how long a fired reminder is kept (default 30
	// days). The spine's own rows follow the store's retention (see
	// store.Store.Sweep).
	ReminderRetention time.Duration
	// Jobs are other parts' periodic work (memory upkeep), run on the
	// leader beside the dispatch and the sweep.
	Jobs []Job
}

// Job is periodic work another part hands the scheduler: Run is called on
// the leader every Every, the first time one Every after start (it is
// upkeep, not due work: a restart does not run it early). It should only enqueue
// durable work, keyed so that a period's item is enqueued once, since a
// leadership change may run it twice.
type Job struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.InstanceID == "" && o.Service != nil {
		o.InstanceID = o.Service.WorkerID()
	}
	if o.InstanceID == "" {
		host, _ := os.Hostname()
		o.InstanceID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	if o.MaxRoutinesPerAgent == 0 {
		o.MaxRoutinesPerAgent = DefaultMaxRoutines
	}
	if o.TickInterval == 0 {
		o.TickInterval = time.Second
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.MissedGrace == 0 {
		o.MissedGrace = time.Minute
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = time.Minute
	}
	if o.RecheckInterval == 0 {
		o.RecheckInterval = time.Minute
	}
	if o.ReminderRetention == 0 {
		o.ReminderRetention = 30 * 24 * time.Hour
	}
}

func (o *Options) validate() error {
	switch {
	case o.Store == nil:
		return errors.New("scheduler: Options.Store is required")
	case o.Service == nil:
		return errors.New("scheduler: Options.Service is required")
	case o.MaxRoutinesPerAgent < 1:
		return fmt.Errorf("scheduler: Options.MaxRoutinesPerAgent %d must be at least 1", o.MaxRoutinesPerAgent)
	case o.TickInterval < 10*time.Millisecond:
		return fmt.Errorf("scheduler: Options.TickInterval %s must be at least 10ms", o.TickInterval)
	case o.LeaseTTL < 3*o.TickInterval:
		return fmt.Errorf("scheduler: Options.LeaseTTL %s must be at least three ticks (%s)", o.LeaseTTL, 3*o.TickInterval)
	case o.MissedGrace < o.TickInterval:
		return fmt.Errorf("scheduler: Options.MissedGrace %s must be at least one tick (%s)", o.MissedGrace, o.TickInterval)
	case o.SweepInterval < time.Second:
		return fmt.Errorf("scheduler: Options.SweepInterval %s must be at least 1s", o.SweepInterval)
	case o.RecheckInterval < time.Second:
		return fmt.Errorf("scheduler: Options.RecheckInterval %s must be at least 1s", o.RecheckInterval)
	}
	if o.Registry != nil && o.Config != nil && needsBriefings(o.Config) {
		if _, ok := o.Registry.Get(cards.PostResultName); !ok {
			return fmt.Errorf("scheduler: Options.Config declares briefing routines but Options.Registry has no %s tool", cards.PostResultName)
		}
	}
	if o.Config != nil {
		if err := ValidateConfig(o.Config); err != nil {
			return fmt.Errorf("scheduler: Options.Config: %w", err)
		}
	}
	for name, f := range o.Inputs {
		if f == nil {
			return fmt.Errorf("scheduler: Options.Inputs[%q] is nil", name)
		}
	}
	for i, j := range o.Jobs {
		switch {
		case j.Name == "" || j.Run == nil:
			return fmt.Errorf("scheduler: Options.Jobs[%d] needs a Name and a Run", i)
		case j.Every < time.Second:
			return fmt.Errorf("scheduler: Options.Jobs[%d] (%s): Every %s must be at least 1s", i, j.Name, j.Every)
		}
	}
	return nil
}

// Scheduler fires routines, reminders, pulses and goal loops, and runs the
// sweeps. See the package documentation for the life of a fire.
type Scheduler struct {
	opts   Options
	st     store.Store
	svc    Conversations
	log    *slog.Logger
	clock  clockwork.Clock
	inputs map[string]InputFunc

	elector *leaseElector

	mu      sync.Mutex
	cron    gocron.Scheduler
	cancel  context.CancelFunc
	started bool
}

// New validates opts and returns a Scheduler. Nothing runs until Start; the
// work handlers (Handlers) and the tools (RegisterTools) work without Start.
func New(opts Options) (*Scheduler, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := &Scheduler{
		opts:   opts,
		st:     opts.Store,
		svc:    opts.Service,
		log:    opts.Logger.With("instance_id", opts.InstanceID),
		clock:  opts.Clock,
		inputs: builtinInputs(),
	}
	s.inputs["approvals"] = s.approvalsInput
	s.inputs["channel"] = s.channelInput
	for name, f := range opts.Inputs {
		s.inputs[name] = f
	}
	s.elector = &leaseElector{st: opts.Store, owner: opts.InstanceID, ttl: opts.LeaseTTL, clock: opts.Clock, log: s.log}
	return s, nil
}

func (s *Scheduler) now() time.Time { return s.clock.Now().UTC() }

// Start applies the declared schedules and starts gocron: a dispatch job
// every TickInterval and a sweep job every SweepInterval, both run only on
// the instance holding the leadership lease. The first dispatch runs at
// once, so fires missed while no instance ran are handled at start.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("scheduler: already started")
	}
	if s.opts.Config != nil {
		if err := s.ApplyConfig(ctx, s.opts.Config); err != nil {
			return err
		}
	}
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cron, err := gocron.NewScheduler(
		gocron.WithClock(s.clock),
		gocron.WithLocation(time.UTC),
		gocron.WithDistributedElector(s.elector),
		gocron.WithStopTimeout(30*time.Second),
	)
	if err != nil {
		cancel()
		return fmt.Errorf("scheduler: creating gocron scheduler: %w", err)
	}
	jobs := []struct {
		name  string
		every time.Duration
		run   func(ctx context.Context)
		later bool // first run one interval after start
	}{
		{"dispatch", s.opts.TickInterval, func(ctx context.Context) {
			if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "dispatching due schedules", "error", err)
			}
		}, false},
		{"sweep", s.opts.SweepInterval, func(ctx context.Context) {
			if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "sweeping", "error", err)
			}
		}, false},
	}
	for _, j := range s.opts.Jobs {
		jobs = append(jobs, struct {
			name  string
			every time.Duration
			run   func(ctx context.Context)
			later bool
		}{j.Name, j.Every, func(ctx context.Context) {
			if err := j.Run(ctx); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "running a periodic job", "job", j.Name, "error", err)
			}
		}, true})
	}
	for _, j := range jobs {
		opts := []gocron.JobOption{
			gocron.WithName(j.name),
			gocron.WithContext(jobCtx),
			gocron.WithSingletonMode(gocron.LimitModeReschedule),
		}
		if !j.later {
			opts = append(opts, gocron.WithStartAt(gocron.WithStartImmediately()))
		}
		if _, err := cron.NewJob(gocron.DurationJob(j.every), gocron.NewTask(j.run), opts...); err != nil {
			cancel()
			_ = cron.Shutdown()
			return fmt.Errorf("scheduler: adding the %s job: %w", j.name, err)
		}
	}
	cron.Start()
	s.cron, s.cancel, s.started = cron, cancel, true
	s.log.InfoContext(ctx, "scheduler started", "tick", s.opts.TickInterval)
	return nil
}

// Stop stops gocron, waits for running jobs and gives up the leadership so
// another instance takes over at once.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return
	}
	s.cancel()
	if err := s.cron.Shutdown(); err != nil {
		s.log.Warn("stopping gocron", "error", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.elector.release(ctx)
	s.started = false
}

// IsLeader reports whether this instance holds (or can take) the
// leadership lease now.
func (s *Scheduler) IsLeader(ctx context.Context) bool { return s.elector.IsLeader(ctx) == nil }

// AddHandlers adds the handlers of the work the scheduler runs (fireArgs,
// afterRunArgs) to hs, for core's worker.
func (s *Scheduler) AddHandlers(hs *core.Handlers) {
	core.AddHandler(hs, s.handleFire)
	core.AddHandler(hs, s.handleAfterRun)
}

// fireArgs are the args of a WorkFire item.
type fireArgs struct {
	ScheduleID uuid.UUID `json:"schedule_id"`
	// Due is the scheduled time of the occurrence (the latest one, when
	// several were missed).
	Due time.Time `json:"due"`
	// Late is set when the occurrence fell due while no instance ran.
	Late bool `json:"late,omitempty"`
	// Iteration numbers a loop's fires: a continuous loop may fire twice
	// for one instant, never twice for one iteration.
	Iteration int64 `json:"iteration,omitempty"`
}

// Kind is WorkFire.
func (fireArgs) Kind() string { return WorkFire }

// runKey names one occurrence in run threads: the schedule, the scheduled
// time and, for loops, the iteration.
func (p fireArgs) runKey() string {
	k := fmt.Sprintf("%s-%d", p.ScheduleID, p.Due.UTC().UnixMicro())
	if p.Iteration > 0 {
		k += fmt.Sprintf("-%d", p.Iteration)
	}
	return k
}

// fireKey is the unique key of an occurrence.
func fireKey(id uuid.UUID, due time.Time) string {
	return fmt.Sprintf("schedule:%s:%d", id, due.UTC().UnixMicro())
}

// loopFireKey is the unique key of a loop's iteration: a loop fires each
// iteration once, whatever instant it falls on.
func loopFireKey(id uuid.UUID, iteration int64) string {
	return fmt.Sprintf("schedule:%s:iteration:%d", id, iteration)
}

// maxDuePerTick bounds one dispatch pass; the next tick takes the rest.
const maxDuePerTick = 200

// Tick fires every due schedule once and returns how many fires it
// enqueued. gocron calls it on the leader every TickInterval; calling it on
// several instances at once is safe (each occurrence is claimed by a
// compare-and-set on the schedule and a unique work key), which is what
// keeps a fire single when two instances briefly both think they lead.
func (s *Scheduler) Tick(ctx context.Context) (int, error) {
	now := s.now()
	due, err := s.st.ScheduleDue(ctx, &store.ScheduleDueParams{Now: now, Limit: maxDuePerTick})
	if err != nil {
		return 0, fmt.Errorf("listing due schedules: %w", err)
	}
	fired := 0
	var errs []error
	for _, sc := range due {
		ok, err := s.fire(ctx, sc, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			fired++
		}
	}
	return fired, errors.Join(errs...)
}

// fire advances one due schedule past its occurrence and enqueues the fire,
// in one transaction.
func (s *Scheduler) fire(ctx context.Context, sc *store.Schedule, now time.Time) (bool, error) {
	log := s.log.With("schedule_id", sc.ID, "kind", sc.Kind, "agent", sc.Agent, "name", sc.Name)
	spec, err := ParseSpec(sc.Spec, sc.TimeZone)
	if err != nil {
		// A spec that no longer parses (time zone data gone) would be due
		// every tick: park it and say why.
		log.ErrorContext(ctx, "schedule has a bad spec; pausing it", "error", err)
		paused, reason := store.SchedulePaused, "bad schedule: "+err.Error()
		_, uerr := s.st.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, State: &paused, StateReason: &reason, Now: now})
		return false, uerr
	}
	spec.SetAnchor(anchorOf(sc))
	due := *sc.NextRunAt
	latest, next := spec.Latest(due, now)
	late := now.Sub(due) > s.opts.MissedGrace
	run := !late || sc.Missed != store.MissedSkip
	adv := &store.ScheduleAdvanceParams{ID: sc.ID, ExpectNextRunAt: due, Now: now}
	if run {
		adv.LastRunAt = latest
	}
	switch {
	case sc.Kind == store.ScheduleLoop:
		// A loop's next iteration is the server's decision after this one
		// reports (handleAfterRun), never the clock's.
	case !next.IsZero():
		adv.NextRunAt = &next
	default:
		adv.Done = true
	}
	if sc.Kind == store.ScheduleLoop && !run {
		// A skipped loop iteration would leave the loop with nothing
		// scheduled: run it late instead.
		run, adv.LastRunAt = true, latest
	}
	enqueued := false
	err = s.st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.ScheduleAdvance(ctx, adv); err != nil {
			return err
		}
		if !run {
			return nil
		}
		p := fireArgs{ScheduleID: sc.ID, Due: latest, Late: late}
		key := fireKey(sc.ID, latest)
		if sc.Kind == store.ScheduleLoop {
			p.Iteration = sc.Runs + 1
			key = loopFireKey(sc.ID, p.Iteration)
		}
		res, err := core.Enqueue(ctx, q, p, &core.EnqueueOpts{
			RunAt:     now,
			Priority:  1,
			UniqueKey: &key,
			Now:       now,
		})
		if err != nil {
			return fmt.Errorf("enqueueing fire %s: %w", key, err)
		}
		enqueued = res.Inserted
		return nil
	})
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		// Another instance fired it first, or it was changed or deleted
		// since it was read: nothing to do.
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("firing %s %s/%s: %w", sc.Kind, sc.Agent, sc.Name, err)
	}
	switch {
	case !run:
		log.InfoContext(ctx, "missed fire skipped by policy", "due", due, "now", now)
	case late:
		log.InfoContext(ctx, "missed fire runs once now", "due", due, "latest", latest, "now", now)
	default:
		log.DebugContext(ctx, "fired", "due", latest)
	}
	return enqueued, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("scheduler: marshalling %T: %v", v, err))
	}
	return b
}
