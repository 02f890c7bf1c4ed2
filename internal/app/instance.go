package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// One live process per instance id.
//
// Every lease this process takes on work, conversations and the scheduler
// is under its instance id, and its worker takes back at start whatever
// the id still holds, as left by a previous run. That is right only when
// the previous run is gone, so the id itself is held, as a row in the
// store (store.InstanceLease), from Open until Stop:
//
//	Open ──► acquire ──┬─ free, expired, or released on a graceful stop ──► held
//	                   ├─ holder proven dead (same host: its pid is gone,
//	                   │  or runs another program) ───────────────────────► held (taken over)
//	                   ├─ holder alive (same host, pid and start time match)
//	                   │     serve: refuse to start (ErrInstanceHeld)
//	                   │     chat:  run under an id of its own (ID-chat-XXXXXX)
//	                   └─ cannot tell (another host, another pid namespace):
//	                         chat:  an id of its own at once
//	                         serve: wait, at most until the lease expires
//	                                (SWITCHBOARD_LEASE_TTL): a heartbeat seen
//	                                meanwhile means the holder lives (refuse);
//	                                none means it died (take the id)
//	held ──► heartbeat every TTL/3 (and on /readyz) ──► Stop: released
//
// Only after that does the worker start, so "take back what a previous run
// left" only ever takes from a process that is gone. A kill -9 leaves the
// row behind: a restart on the same host proves the old pid gone and goes
// on at once; elsewhere it waits out the TTL. A heartbeat that fails makes
// /readyz fail (the store cannot write); one that finds the id taken by
// another process (this one was presumed dead) closes Lost, and serve
// stops.

// ErrInstanceHeld: another live process holds the instance id.
var ErrInstanceHeld = errors.New("instance id held by another process")

// instanceHold is this process's hold on its instance id.
type instanceHold struct {
	st  store.Store
	log *slog.Logger
	now func() time.Time
	ttl time.Duration
	p   store.InstanceLeaseAcquireParams // this process, as written in the row

	mu       sync.Mutex
	beatAt   time.Time // the last heartbeat attempt
	beatErr  error     // its outcome
	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// instanceOptions are what acquireInstance needs.
type instanceOptions struct {
	Store store.Store
	ID    string
	// Fallback: when the id is held by a live process (or one that cannot
	// be proven dead), take an id of its own instead of refusing.
	Fallback bool
	TTL      time.Duration
	Logger   *slog.Logger
	Now      func() time.Time
	// Verdict tells whether the holder of a lease still runs; nil:
	// processVerdict (this host's /proc).
	Verdict func(*store.InstanceLease) verdict
}

// processStart is when this process started, for the lease row.
var processStart = time.Now()

// acquireInstance takes the instance id for this process (see the top of
// this file) and starts its heartbeat. The hold's id may differ from
// opts.ID when Fallback took one of its own.
func acquireInstance(ctx context.Context, opts instanceOptions) (*instanceHold, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	if opts.Verdict == nil {
		opts.Verdict = processVerdict
	}
	h := &instanceHold{
		st: opts.Store, log: opts.Logger, now: opts.Now, ttl: opts.TTL,
		p: store.InstanceLeaseAcquireParams{
			InstanceID: opts.ID, Holder: uuid.NewString(), Host: host, PID: os.Getpid(),
			Process: processIdentity(), StartedAt: processStart, TTL: opts.TTL,
		},
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if err := h.acquire(ctx, opts); err != nil {
		return nil, err
	}
	h.beatAt = h.now()
	go h.heartbeats()
	return h, nil
}

func (h *instanceHold) acquire(ctx context.Context, opts instanceOptions) error {
	// waitUntil is set once a holder that cannot be proven dead is seen:
	// serve then waits for its lease to lapse, watching for a heartbeat.
	var (
		seen      *store.InstanceLease
		waitUntil time.Time
	)
	poll := min(max(h.ttl/10, 50*time.Millisecond), time.Second)
	pause := func() error {
		t := time.NewTimer(poll)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for instance id %q (SWITCHBOARD_INSTANCE_ID) to be free: %w", h.p.InstanceID, ctx.Err())
		case <-t.C:
			return nil
		}
	}
	for {
		l, err := h.try(ctx, "")
		if err == nil {
			h.log.InfoContext(ctx, "holding the instance id", "instance_id", l.InstanceID, "lease_ttl", h.ttl.String())
			return nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("taking instance id %q (SWITCHBOARD_INSTANCE_ID): %w", h.p.InstanceID, err)
		}
		holder, err := h.st.InstanceLeaseGet(ctx, h.p.InstanceID)
		if errors.Is(err, store.ErrNotFound) {
			continue // released meanwhile
		}
		if err != nil {
			return fmt.Errorf("reading who holds instance id %q: %w", h.p.InstanceID, err)
		}
		v := opts.Verdict(holder)
		if seen != nil && (holder.Holder != seen.Holder || holder.HeartbeatAt.After(seen.HeartbeatAt)) {
			v = alive // it heartbeat while we watched (or another took it)
		}
		switch {
		case v == dead:
			if _, err := h.try(ctx, holder.Holder); err == nil {
				h.log.WarnContext(ctx, "took over the instance id from a process that is gone",
					"instance_id", h.p.InstanceID, "previous_pid", holder.PID, "previous_host", holder.Host,
					"previous_started_at", holder.StartedAt.Format(time.RFC3339))
				return nil
			} else if !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("taking instance id %q (SWITCHBOARD_INSTANCE_ID): %w", h.p.InstanceID, err)
			}
			// Another process took it first: look again.
			if err := pause(); err != nil {
				return err
			}
			continue
		case opts.Fallback:
			own := h.p.InstanceID + "-chat-" + randomSuffix()
			h.log.InfoContext(ctx, "the instance id is held by another process; running under an id of its own, so this process never takes over its turns",
				"instance_id", h.p.InstanceID, "own_id", own, "holder_pid", holder.PID, "holder_host", holder.Host)
			h.p.InstanceID = own
			opts.Fallback = false
			seen, waitUntil = nil, time.Time{}
			continue
		case v == alive:
			return heldError(h.p.InstanceID, holder, h.now())
		}
		// Unknown: wait for the lease to lapse or for a heartbeat.
		if seen == nil {
			seen = holder
			waitUntil = holder.ExpiresAt.Add(poll)
			h.log.WarnContext(ctx, "the instance id is held by a process this one cannot see; waiting for its lease to lapse in case it died (a heartbeat means it runs, and the start is refused)",
				"instance_id", h.p.InstanceID, "holder_pid", holder.PID, "holder_host", holder.Host,
				"up_to", waitUntil.Sub(h.now()).Round(time.Millisecond).String())
		}
		if h.now().After(waitUntil.Add(h.ttl)) {
			// The lease was renewed without a visible heartbeat (a clock
			// far off): treat it as alive rather than wait for ever.
			return heldError(h.p.InstanceID, holder, h.now())
		}
		if err := pause(); err != nil {
			return err
		}
	}
}

// try acquires the id, taking it over from takeOver when set.
func (h *instanceHold) try(ctx context.Context, takeOver string) (*store.InstanceLease, error) {
	p := h.p
	p.TakeOver, p.Now = takeOver, h.now()
	return h.st.InstanceLeaseAcquire(ctx, &p)
}

func heldError(id string, l *store.InstanceLease, now time.Time) error {
	return &instanceHeldError{msg: fmt.Sprintf("instance id %q (SWITCHBOARD_INSTANCE_ID) is held by another process: pid %d on host %s, started %s, last heartbeat %s ago; stop that process, or give this one its own SWITCHBOARD_INSTANCE_ID",
		id, l.PID, l.Host, l.StartedAt.Local().Format(time.RFC3339), now.Sub(l.HeartbeatAt).Round(time.Millisecond))}
}

// instanceHeldError is ErrInstanceHeld with the holder described.
type instanceHeldError struct{ msg string }

func (e *instanceHeldError) Error() string { return e.msg }
func (e *instanceHeldError) Unwrap() error { return ErrInstanceHeld }

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ID is the instance id held.
func (h *instanceHold) ID() string { return h.p.InstanceID }

// Lost is closed when another process took the id (this one was presumed
// dead: its heartbeats failed for longer than the TTL).
func (h *instanceHold) Lost() <-chan struct{} { return h.lost }

func (h *instanceHold) heartbeats() {
	defer close(h.done)
	t := time.NewTicker(max(h.ttl/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), h.ttl)
		_ = h.beat(ctx)
		cancel()
	}
}

// beat renews the lease; its outcome is what /readyz reports.
func (h *instanceHold) beat(ctx context.Context) error {
	_, err := h.st.InstanceLeaseHeartbeat(ctx, &store.InstanceLeaseParams{InstanceID: h.p.InstanceID, Holder: h.p.Holder, TTL: h.ttl, Now: h.now()})
	h.mu.Lock()
	prev := h.beatErr
	h.beatAt, h.beatErr = h.now(), err
	h.mu.Unlock()
	switch {
	case errors.Is(err, store.ErrLeaseLost):
		h.lostOnce.Do(func() {
			h.log.ErrorContext(ctx, "another process took this instance id (this one was presumed dead): stopping", "instance_id", h.p.InstanceID)
			close(h.lost)
		})
	case err != nil && prev == nil:
		h.log.ErrorContext(ctx, "the store cannot write: the instance lease heartbeat failed", "instance_id", h.p.InstanceID, "error", err)
	case err == nil && prev != nil:
		h.log.InfoContext(ctx, "the store writes again: the instance lease heartbeat succeeded", "instance_id", h.p.InstanceID)
	}
	return err
}

// writable reports whether the store took the last heartbeat, writing one
// now when the last is older than fresh: the cheap write /readyz needs.
func (h *instanceHold) writable(ctx context.Context, fresh time.Duration) error {
	h.mu.Lock()
	at, err := h.beatAt, h.beatErr
	h.mu.Unlock()
	if h.now().Sub(at) < fresh {
		return err
	}
	return h.beat(ctx)
}

// release stops the heartbeat and gives the id back, so a restart takes it
// (and what it held) at once.
func (h *instanceHold) release(ctx context.Context) error {
	select {
	case <-h.stop:
		return nil
	default:
	}
	close(h.stop)
	<-h.done
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := h.st.InstanceLeaseRelease(ctx, &store.InstanceLeaseParams{InstanceID: h.p.InstanceID, Holder: h.p.Holder}); err != nil {
		return fmt.Errorf("releasing instance id %q: %w", h.p.InstanceID, err)
	}
	return nil
}

// verdict is what can be told of a lease holder's process.
type verdict int

const (
	unknown verdict = iota
	alive
	dead
)

// processIdentity names this process beyond its pid: on Linux, the boot id,
// the pid namespace and the process's start time in clock ticks since
// boot; "" elsewhere.
func processIdentity() string {
	boot, ns := bootAndNamespace()
	start, _, err := procStat(os.Getpid())
	if boot == "" || ns == "" || err != nil {
		return ""
	}
	return strings.Join([]string{"linux", boot, ns, start}, "/")
}

func bootAndNamespace() (boot, ns string) {
	raw, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", ""
	}
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", ""
	}
	return strings.TrimSpace(string(raw)), link
}

// procStat reads a process's start time (field 22 of /proc/PID/stat) and
// state (field 3).
func procStat(pid int) (start, state string, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return "", "", errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 20 {
		return "", "", errors.New("unreadable /proc stat")
	}
	return f[19], f[0], nil
}

// processVerdict tells whether the holder of l runs, when it ran on this
// host, in this pid namespace, since the last boot: its pid is gone, a
// zombie, or another process (another start time) means dead.
func processVerdict(l *store.InstanceLease) verdict {
	host, err := os.Hostname()
	if err != nil || l.Host != host {
		return unknown
	}
	parts := strings.Split(l.Process, "/")
	if len(parts) != 4 || parts[0] != "linux" {
		return unknown
	}
	boot, ns := bootAndNamespace()
	switch {
	case boot == "" || ns == "":
		return unknown
	case parts[1] != boot:
		return dead // the host rebooted since
	case parts[2] != ns:
		return unknown
	}
	start, state, err := procStat(l.PID)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return dead
	case err != nil:
		return unknown
	case start != parts[3] || state == "Z" || state == "X":
		return dead
	}
	return alive
}
