package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/store"
)

// WorkerOptions configures a Worker.
type WorkerOptions struct {
	Store    store.Store
	WorkerID string
	// Handlers by work kind (see AddHandler). The worker claims only these
	// kinds.
	Handlers *Handlers
	// Concurrency is how many items run at once (default 8).
	Concurrency int
	// LeaseTTL is the lease on each item; heartbeats renew it every third of
	// it (default 15s). Another instance takes over a dead one's items after
	// it, and up to a quarter of it more (see expiredEvery); the same
	// instance restarting takes them back at once.
	LeaseTTL time.Duration
	// PollInterval bounds the wait when a wake-up is lost (default 1s).
	PollInterval time.Duration
	// Lanes give kinds slots of their own, so that items of one kind never
	// wait behind another's: a delivery or a new conversation's turn does
	// not queue behind fifty long ones. Each lane claims only its kinds;
	// the kinds in no lane share Concurrency's slots.
	Lanes []Lane
	// CompleteWindow is how long a finished item waits for others to be
	// completed with it in one commit (default 2ms; negative: none, though
	// completions that arrive during a flush still share the next).
	CompleteWindow time.Duration
	// ClaimCooldown is how long the claim loop waits, after an item freed
	// its slot, for others to free theirs before it claims for them all
	// (default 2ms; negative: none). A wake-up or the poll claims at once.
	ClaimCooldown time.Duration
	Logger        *slog.Logger
	Now           func() time.Time
	// Observer is told of lease takeovers and losses; nil observes nothing.
	Observer Observer
}

// Lane is a set of work kinds with their own concurrency.
type Lane struct {
	Kinds       []string
	Concurrency int
}

// completeBatch bounds one WorkCompleteMany.
const completeBatch = 500

// expiredEvery is how often, during a burst, a claim loop's claim also
// takes over running items whose lease expired (and fails those on their
// last attempt): a quarter of the lease, within [250ms, 5s]. The burst's
// claims between are store.WorkClaimParams.AvailableOnly, which read no
// running item: at 100 slots the whole claim read every running item of
// its kinds twice, as many rows as it hands out. A claim after a wake-up
// or the poll is always whole (see loop).
func expiredEvery(leaseTTL time.Duration) time.Duration {
	return min(max(leaseTTL/4, 250*time.Millisecond), 5*time.Second)
}

func (o *WorkerOptions) validate() error {
	seen := map[string]bool{}
	for i, l := range o.Lanes {
		if l.Concurrency < 1 {
			return fmt.Errorf("worker: WorkerOptions.Lanes[%d].Concurrency %d must be at least 1", i, l.Concurrency)
		}
		if len(l.Kinds) == 0 {
			return fmt.Errorf("worker: WorkerOptions.Lanes[%d].Kinds is empty", i)
		}
		for _, k := range l.Kinds {
			if seen[k] {
				return fmt.Errorf("worker: WorkerOptions.Lanes[%d]: kind %q is in two lanes", i, k)
			}
			seen[k] = true
		}
	}
	switch {
	case o.Store == nil:
		return errors.New("worker: WorkerOptions.Store is required")
	case o.WorkerID == "":
		return errors.New("worker: WorkerOptions.WorkerID is required")
	case o.Handlers == nil || len(o.Handlers.byKind) == 0:
		return errors.New("worker: WorkerOptions.Handlers is empty")
	case o.Concurrency < 1:
		return fmt.Errorf("worker: WorkerOptions.Concurrency %d must be at least 1", o.Concurrency)
	case o.LeaseTTL < time.Second:
		return fmt.Errorf("worker: WorkerOptions.LeaseTTL %s must be at least 1s", o.LeaseTTL)
	}
	return nil
}

// DefaultPollInterval is how often an idle worker claims when no wake-up
// comes (WorkerOptions.PollInterval), plus up to a quarter of it in jitter.
const DefaultPollInterval = time.Second

// Worker claims work items and runs their handlers. Any number of workers,
// in any number of processes, may share one store: a claim hands each item
// to exactly one of them, and a conversation runs one item at a time.
//
// WorkerID is the instance's stable name in leases: a worker that starts
// under an id first takes back whatever a previous run under that id still
// holds (it crashed), so a restarted instance does not wait out its own
// leases. Two live processes must never share an id: internal/app holds
// the id (a store instance lease) before it starts the worker, so the take
// back only ever takes from a process that is gone.
type Worker struct {
	opts      WorkerOptions
	log       *slog.Logger
	lanes     []*lane
	completer *completer

	stopClaiming context.CancelFunc      // ends the claim loop
	cancelWork   context.CancelCauseFunc // cuts off running handlers
	done         chan struct{}           // closed once the loops and every handler returned

	// mu guards what runs here. A lease that expired while its handler
	// still runs (a database outage longer than the TTL) makes the item, and
	// its conversation's other items, claimable again, by this instance too:
	// a claim must never start a second handler beside a live one.
	mu    sync.Mutex
	items map[uuid.UUID]bool
	convs map[uuid.UUID]int
	// freed is closed when the last handler of a conversation leaves, for
	// an item of it claimed meanwhile (see enter).
	freed map[uuid.UUID]chan struct{}
	// interrupts cut off the running turns of a conversation (Interrupt).
	interrupts map[uuid.UUID]map[uuid.UUID]context.CancelCauseFunc // conversation -> item -> cancel
	// claimFault is the error of the latest claim when it failed, nil once
	// a claim succeeds again (ClaimHealth).
	claimFault atomic.Pointer[claimFault]
}

type claimFault struct {
	err   error
	since time.Time
}

// ClaimHealth reports whether this worker can claim work: nil when its
// latest claim succeeded (or none ran yet), else the error of the latest
// claim and since when claims have been failing. A store that answers
// pings but refuses claims (a pooler rejecting the session, a permission
// missing) leaves the instance unable to work: readiness says so.
func (w *Worker) ClaimHealth() (since time.Time, err error) {
	if f := w.claimFault.Load(); f != nil {
		return f.since, f.err
	}
	return time.Time{}, nil
}

func (w *Worker) noteClaim(err error) {
	if err == nil {
		if w.claimFault.Load() != nil {
			w.claimFault.Store(nil)
		}
		return
	}
	since := w.opts.Now()
	if prev := w.claimFault.Load(); prev != nil {
		since = prev.since
	}
	w.claimFault.Store(&claimFault{err: err, since: since})
}

// ErrInterrupted is the cause of a turn's context ending because whoever
// asked for it cancelled the request (an MCP client's call): the item is
// completed, not failed, so it is not retried.
var ErrInterrupted = errors.New("turn interrupted by its requester")

// Interrupt cuts off the turns of conversation conv running on this
// instance, keeping what they committed. It returns how many it cut off: 0
// when none runs here (not claimed yet, finished, or on another instance).
func (w *Worker) Interrupt(conv uuid.UUID) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, cancel := range w.interrupts[conv] {
		cancel(ErrInterrupted)
		n++
	}
	return n
}

func (w *Worker) interruptible(it *store.WorkItem, cancel context.CancelCauseFunc) func() {
	if it.ConversationID == nil || it.Kind != WorkTurn {
		return func() {}
	}
	conv := *it.ConversationID
	w.mu.Lock()
	if w.interrupts == nil {
		w.interrupts = map[uuid.UUID]map[uuid.UUID]context.CancelCauseFunc{}
	}
	if w.interrupts[conv] == nil {
		w.interrupts[conv] = map[uuid.UUID]context.CancelCauseFunc{}
	}
	w.interrupts[conv][it.ID] = cancel
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.interrupts[conv], it.ID)
		if len(w.interrupts[conv]) == 0 {
			delete(w.interrupts, conv)
		}
	}
}

// errStopping is the cause of a handler's context ending because the worker
// stops: its item is released, not failed.
var errStopping = errors.New("worker stopping")

// NewWorker validates opts.
func NewWorker(opts WorkerOptions) (*Worker, error) {
	if opts.Concurrency == 0 {
		opts.Concurrency = 8
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = 15 * time.Second
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.CompleteWindow == 0 {
		opts.CompleteWindow = 2 * time.Millisecond
	}
	if opts.ClaimCooldown == 0 {
		opts.ClaimCooldown = 2 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Observer == nil {
		opts.Observer = NopObserver{}
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Worker{
		opts: opts, log: opts.Logger.With("worker_id", opts.WorkerID), lanes: buildLanes(&opts),
	}, nil
}

// lane is one claim loop: its kinds, its slots, its wake-ups.
type lane struct {
	kinds       []string
	concurrency int
	wake        chan struct{}
}

// buildLanes splits the handled kinds into the configured lanes and the
// default one (kinds in no lane, Concurrency slots). A lane whose kinds have
// no handler here claims nothing and is left out.
func buildLanes(opts *WorkerOptions) []*lane {
	handled := opts.Handlers.Kinds()
	inLane := map[string]bool{}
	var out []*lane
	for _, l := range opts.Lanes {
		var kinds []string
		for _, k := range l.Kinds {
			inLane[k] = true
			if slices.Contains(handled, k) {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) > 0 {
			out = append(out, &lane{kinds: kinds, concurrency: l.Concurrency, wake: make(chan struct{}, 1)})
		}
	}
	var rest []string
	for _, k := range handled {
		if !inLane[k] {
			rest = append(rest, k)
		}
	}
	if len(rest) > 0 {
		out = append(out, &lane{kinds: rest, concurrency: opts.Concurrency, wake: make(chan struct{}, 1)})
	}
	return out
}

// Start takes back the items a previous run under this WorkerID left
// running, then runs the claim loop until Stop. Cancelling ctx is a hard
// stop: running handlers are cut off at once and their items released.
func (w *Worker) Start(ctx context.Context) error {
	reclaimed, err := w.opts.Store.WorkReclaim(ctx, &store.WorkReclaimParams{Worker: w.opts.WorkerID, Now: w.opts.Now()})
	if err != nil {
		return fmt.Errorf("reclaiming the work of this instance's previous run: %w", err)
	}
	if len(reclaimed) > 0 {
		w.log.InfoContext(ctx, "took back work a previous run of this instance left running", "items", len(reclaimed))
		w.observeTakeovers(ctx, reclaimed, true)
	}
	workCtx, cancelWork := context.WithCancelCause(ctx)
	loopCtx, stopClaiming := context.WithCancel(workCtx)
	notes, err := w.opts.Store.Subscribe(loopCtx, store.TopicWork)
	if err != nil {
		stopClaiming()
		cancelWork(nil)
		return fmt.Errorf("subscribing to work wake-ups: %w", err)
	}
	// Entry wake-ups carry stop requests to whichever instance runs the
	// turn (Service.Stop).
	entryNotes, err := w.opts.Store.Subscribe(loopCtx, store.TopicEntries)
	if err != nil {
		stopClaiming()
		cancelWork(nil)
		return fmt.Errorf("subscribing to entry wake-ups: %w", err)
	}
	w.stopClaiming, w.cancelWork, w.done = stopClaiming, cancelWork, make(chan struct{})
	w.completer = newCompleter(w.opts.Store, w.opts.WorkerID, w.opts.CompleteWindow, completeBatch, w.opts.Now)
	go func() {
		for n := range notes {
			w.wakeKind(n.Payload)
		}
	}()
	go w.watchStops(workCtx, entryNotes)
	var loops sync.WaitGroup
	for _, l := range w.lanes {
		loops.Go(func() { w.loop(loopCtx, workCtx, l) })
	}
	go func() {
		loops.Wait()
		w.completer.close()
		close(w.done)
	}()
	return nil
}

// Stop is the graceful stop, in this order:
//
//  1. It stops claiming at once: no new item starts here.
//  2. Running handlers go on until ctx ends; a step in progress is not
//     waited for past that.
//  3. When ctx ends, every handler still running has its context cancelled
//     (the cause: the worker stopping), and Stop waits for each to return.
//  4. A cancelled handler that returns an error has its item released with
//     store WorkRelease (available again, the attempt not counted, its
//     conversation's lease freed), keeping what it committed, so another
//     worker or the next start resumes it without waiting out the lease.
//     One that returns nil all the same is completed.
//
// Stop returns once every handler has returned and its item was completed,
// failed or released: nil when none was cancelled, an error wrapping ctx's
// cause when some were.
func (w *Worker) Stop(ctx context.Context) error {
	if w.done == nil {
		return nil
	}
	w.stopClaiming()
	select {
	case <-w.done:
		w.cancelWork(nil)
		return nil
	case <-ctx.Done():
	}
	w.cancelWork(errStopping)
	<-w.done
	return fmt.Errorf("stopping worker %s: running items cut off and released: %w", w.opts.WorkerID, context.Cause(ctx))
}

// Wake makes every lane claim now rather than at the next poll.
func (w *Worker) Wake() { w.wakeKind("") }

// wakeKind wakes the lane that claims kind; every lane for "" or a kind
// none claims (a wake-up sent after a reconnect has no payload).
func (w *Worker) wakeKind(kind string) {
	var target []*lane
	for _, l := range w.lanes {
		if kind != "" && slices.Contains(l.kinds, kind) {
			target = []*lane{l}
			break
		}
	}
	if target == nil {
		target = w.lanes
	}
	for _, l := range target {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// loop claims l's kinds while ctx lives; handlers run under workCtx, which
// outlives ctx during a graceful stop.
func (w *Worker) loop(ctx, workCtx context.Context, l *lane) {
	var running sync.WaitGroup
	defer running.Wait()
	slots := make(chan struct{}, l.concurrency)
	// completing holds the items whose handler returned and whose slot was
	// handed on while their completion commits (see run). It is bounded, so
	// a slow store cannot pile up finished items, but by a full batch of the
	// completer rather than by the slots: with few slots, a bound of one set
	// of them made every claim after the first wait for the previous set's
	// commit (2,500 items/s at 8 slots; River's completer takes up to 10,000
	// before it holds its executors back).
	completing := make(chan struct{}, max(l.concurrency, completeBatch))
	finished := make(chan struct{}, l.concurrency)
	every := expiredEvery(w.opts.LeaseTTL)
	var lastWhole time.Time // of the latest whole claim that succeeded
	// hot: this claim follows a full batch or a freed slot, in a burst. Only
	// such claims leave out the running items (see expiredEvery); one after
	// a wake-up or the poll is whole, as it also takes back this worker's
	// own items whose lease ran out while they ran.
	hot := false
	for {
		free := cap(slots) - len(slots)
		claimed := 0
		if free > 0 {
			now := w.opts.Now()
			whole := !hot || now.Sub(lastWhole) >= every
			items, err := w.opts.Store.WorkClaim(ctx, &store.WorkClaimParams{
				Worker: w.opts.WorkerID, Kinds: l.kinds, Limit: free, LeaseTTL: w.opts.LeaseTTL, Now: now,
				AvailableOnly: !whole,
			})
			if err == nil && whole {
				lastWhole = now
			}
			if err != nil && ctx.Err() == nil {
				w.log.ErrorContext(ctx, "claiming work", "error", redact.String(err.Error()))
			}
			if ctx.Err() == nil {
				w.noteClaim(err)
			}
			claimed = len(items)
			w.observeTakeovers(ctx, items, false)
			for _, it := range items {
				ok, wait := w.enter(ctx, it)
				if !ok && wait == nil {
					continue
				}
				slots <- struct{}{}
				running.Add(1)
				go func() {
					defer running.Done()
					free := sync.OnceFunc(func() {
						<-slots
						select {
						case finished <- struct{}{}:
						default:
						}
					})
					defer free()
					if wait != nil && !w.await(ctx, it, wait) {
						return
					}
					defer w.leave(it)
					w.run(workCtx, it, func() (done func()) {
						select {
						case completing <- struct{}{}:
							free()
							return func() { <-completing }
						default:
							return func() {}
						}
					})
				}()
			}
		}
		// A full batch suggests more is waiting: claim again as soon as
		// slots free up, for as many as the cooldown gathers.
		if claimed > 0 && claimed == free {
			w.cooldown(ctx, slots, finished)
			hot = true
			continue
		}
		hot = false
		jitter := time.Duration(rand.Int64N(int64(w.opts.PollInterval) / 4))
		timer := time.NewTimer(w.opts.PollInterval + jitter)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-l.wake:
		case <-finished:
			w.cooldown(ctx, slots, finished)
			hot = true
		case <-timer.C:
		}
		timer.Stop()
	}
}

// cooldown waits up to ClaimCooldown after a slot was freed for the other
// running items to free theirs, so that one claim fills them all: a claim
// is a round trip and a commit, and claiming a slot at a time makes the
// claims, done one after the other, the limit of a busy worker (River's
// FetchCooldown). It returns at once when every slot is free.
func (w *Worker) cooldown(ctx context.Context, slots chan struct{}, finished chan struct{}) {
	if w.opts.ClaimCooldown <= 0 {
		return
	}
	timer := time.NewTimer(w.opts.ClaimCooldown)
	defer timer.Stop()
	for len(slots) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-finished:
		case <-timer.C:
			return
		}
	}
}

// enter marks an item as running here, or reports why it must not start
// yet. If the item itself still runs here (its expired lease was claimed
// again, by us; the running handler keeps it and heartbeats it), it never
// starts: ok is false and wait nil. If another item of its conversation
// still runs here, wait is closed when that handler leaves (see await). The
// store hands out such an item only in the moment between the other item's
// completion and its handler's return, since a live running item keeps the
// rest of its conversation from being claimed. Items of an ordering key
// without a conversation need nothing here: the store hands out a key's
// next item only once the previous one is completed, and run completes an
// item after its handler returned.
func (w *Worker) enter(ctx context.Context, it *store.WorkItem) (ok bool, wait <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.items == nil {
		w.items, w.convs, w.freed = map[uuid.UUID]bool{}, map[uuid.UUID]int{}, map[uuid.UUID]chan struct{}{}
	}
	if w.items[it.ID] {
		w.log.WarnContext(ctx, "claimed an item whose handler still runs here; leaving it to that handler", "work_id", it.ID, "attempt", it.Attempts)
		return false, nil
	}
	if it.ConversationID != nil && w.convs[*it.ConversationID] > 0 {
		ch := w.freed[*it.ConversationID]
		if ch == nil {
			ch = make(chan struct{})
			w.freed[*it.ConversationID] = ch
		}
		return false, ch
	}
	w.items[it.ID] = true
	if it.ConversationID != nil {
		w.convs[*it.ConversationID]++
	}
	return true, nil
}

// await holds a claimed item until the other handler of its conversation
// running here has left, then marks it as running. It gives up after a
// third of the lease or when the worker stops: the claim is then left to
// expire (giving it back would also free the conversation lease a running
// handler holds under the same owner), and the item runs later at the cost
// of a counted attempt.
func (w *Worker) await(ctx context.Context, it *store.WorkItem, wait <-chan struct{}) bool {
	deadline := time.NewTimer(w.opts.LeaseTTL / 3)
	defer deadline.Stop()
	for {
		select {
		case <-wait:
		case <-ctx.Done():
			return false
		case <-deadline.C:
			w.log.WarnContext(ctx, "claimed an item of a conversation whose other item still runs here; it runs after its lease", "work_id", it.ID, "attempt", it.Attempts)
			return false
		}
		var ok bool
		if ok, wait = w.enter(ctx, it); ok {
			return true
		}
		if wait == nil {
			return false
		}
	}
}

func (w *Worker) leave(it *store.WorkItem) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.items, it.ID)
	if it.ConversationID != nil {
		if w.convs[*it.ConversationID]--; w.convs[*it.ConversationID] <= 0 {
			delete(w.convs, *it.ConversationID)
			if ch := w.freed[*it.ConversationID]; ch != nil {
				close(ch)
				delete(w.freed, *it.ConversationID)
			}
		}
	}
}

// run executes one item under its lease, heartbeating until it returns.
//
// handOn is called once the handler returned nil, before its completion is
// sent to the completer: it may give the item's slot to the next item while
// the completion commits (River's executor does the same), so a worker with
// few slots keeps them busy instead of idle for a commit per batch. It
// returns the func to call once the completion was answered. The item stays
// running here, its conversation held (leave runs after run), until then.
func (w *Worker) run(ctx context.Context, item *store.WorkItem, handOn func() (done func())) {
	log := w.log.With("work_id", item.ID, "kind", item.Kind, "attempt", item.Attempts)
	itemCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer w.interruptible(item, cancel)()
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		t := time.NewTicker(w.opts.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-itemCtx.Done():
				return
			case <-t.C:
				_, err := w.opts.Store.WorkHeartbeat(itemCtx, &store.WorkLeaseParams{
					ID: item.ID, Worker: w.opts.WorkerID, LeaseTTL: w.opts.LeaseTTL, Now: w.opts.Now(),
				})
				if errors.Is(err, store.ErrLeaseLost) {
					log.WarnContext(ctx, "lease lost; stopping the item")
					cancel(err)
					return
				}
				if err != nil && itemCtx.Err() == nil {
					log.ErrorContext(ctx, "heartbeat", "error", redact.String(err.Error()))
				}
				if item.Kind == WorkTurn && item.ConversationID != nil {
					// A stop whose wake-up was lost is found here.
					w.checkStops(itemCtx, *item.ConversationID)
				}
			}
		}
	}()
	err := w.opts.Handlers.Run(itemCtx, item)
	cancel(nil)
	<-hbDone
	if errors.Is(context.Cause(itemCtx), store.ErrLeaseLost) || errors.Is(err, store.ErrLeaseLost) {
		// The new holder goes on; nothing more is ours to write.
		w.opts.Observer.WorkLeaseLost(ctx, item.Kind)
		return
	}
	if ctx.Err() != nil && err != nil {
		// Cut off by a stop: what the handler committed stays, and the item
		// goes back at once without counting as an attempt.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer rcancel()
		if _, rerr := w.opts.Store.WorkRelease(rctx, &store.WorkLeaseParams{ID: item.ID, Worker: w.opts.WorkerID, Now: w.opts.Now()}); rerr != nil {
			log.ErrorContext(ctx, "releasing work cut off by the stop; it is taken over after its lease", "error", redact.String(rerr.Error()))
			return
		}
		log.InfoContext(ctx, "released work cut off by the stop")
		return
	}
	// The outcome is written even if the handler's context ended, with a
	// short context of its own.
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer fcancel()
	if errors.Is(context.Cause(itemCtx), ErrInterrupted) {
		// Its requester gave up on it: done, never retried.
		log.InfoContext(ctx, "turn interrupted by its requester")
		err = nil
	}
	if err == nil {
		// Batched with the other items finishing now; answered after its commit.
		defer handOn()()
		if err := w.completer.complete(fctx, item.ID); err != nil {
			log.ErrorContext(ctx, "completing work", "error", redact.String(err.Error()))
		}
		return
	}
	msg := redact.String(err.Error())
	log.WarnContext(ctx, "work failed", "error", msg)
	if _, ferr := w.opts.Store.WorkFail(fctx, &store.WorkFailParams{
		ID: item.ID, Worker: w.opts.WorkerID, Error: msg, RetryAt: w.opts.Now().Add(Backoff(item.Attempts)), Now: w.opts.Now(),
	}); ferr != nil {
		log.ErrorContext(ctx, "failing work", "error", redact.String(ferr.Error()))
	}
}

// observeTakeovers reports the items taken over from a dead attempt:
// everything reclaimed at Start, and claimed items on a later attempt whose
// earlier one recorded no failure (so its lease expired while it ran; a
// failed attempt sets LastError, and a release does not count the attempt).
func (w *Worker) observeTakeovers(ctx context.Context, items []*store.WorkItem, reclaimed bool) {
	n := map[string]int{}
	for _, it := range items {
		if reclaimed || (it.Attempts > 1 && it.LastError == "") {
			n[it.Kind]++
		}
	}
	for kind, c := range n {
		w.opts.Observer.WorkTakenOver(ctx, kind, c)
	}
}

// Backoff is the wait before retry attempt n+1: exponential from 1s, capped
// at 5 minutes, with jitter.
func Backoff(attempt int) time.Duration {
	d := time.Second << min(attempt, 9)
	d = min(d, 5*time.Minute)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}
