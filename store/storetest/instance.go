package storetest

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) instanceLeaseTests() []namedTest {
	return []namedTest{
		{"OneHolderAtATime", s.testInstanceLeaseOneHolder},
		{"TakeOverProvenDead", s.testInstanceLeaseTakeOver},
		{"ReleaseAndPrune", s.testInstanceLeaseReleasePrune},
	}
}

func instanceParams(id, holder string, pid int, ttl time.Duration, now time.Time) *store.InstanceLeaseAcquireParams {
	return &store.InstanceLeaseAcquireParams{
		InstanceID: id, Holder: holder, Host: "host-" + holder, PID: pid, Process: "proc-" + holder,
		StartedAt: now.Add(-time.Minute), TTL: ttl, Now: now,
	}
}

// testInstanceLeaseOneHolder: a live lease keeps every other holder out,
// says who holds it, and passes on once it expired; the old holder's
// heartbeat then fails with ErrLeaseLost.
func (s suite) testInstanceLeaseOneHolder(t *testing.T) {
	st, clk, ctx := s.newStore(t), newClock(), ctxFor(t)
	const ttl = 15 * time.Second
	t0 := clk.Now()

	a, err := st.InstanceLeaseAcquire(ctx, instanceParams("inst-1", "a", 101, ttl, t0))
	noErr(t, err, "acquiring a free instance id")
	eq(t, a.Holder, "a", "holder of a fresh lease")
	eq(t, a.PID, 101, "pid of a fresh lease")
	eq(t, a.Host, "host-a", "host of a fresh lease")
	eq(t, a.Process, "proc-a", "process of a fresh lease")
	isTrue(t, a.StartedAt.Equal(t0.Add(-time.Minute)), "started_at %s, want %s", a.StartedAt, t0.Add(-time.Minute))
	isTrue(t, a.ExpiresAt.Equal(t0.Add(ttl)), "expires_at %s, want now+TTL %s", a.ExpiresAt, t0.Add(ttl))

	_, err = st.InstanceLeaseAcquire(ctx, instanceParams("inst-1", "b", 202, ttl, t0.Add(5*time.Second)))
	errIs(t, err, store.ErrConflict, "a second holder acquiring a live instance id")
	_, err = st.InstanceLeaseAcquire(ctx, instanceParams("inst-2", "b", 202, ttl, t0.Add(5*time.Second)))
	noErr(t, err, "another instance id is independent")

	got, err := st.InstanceLeaseGet(ctx, "inst-1")
	noErr(t, err, "reading the held lease")
	eq(t, got.Holder, "a", "holder after a refused acquire")
	eq(t, got.PID, 101, "pid after a refused acquire")

	hb, err := st.InstanceLeaseHeartbeat(ctx, &store.InstanceLeaseParams{InstanceID: "inst-1", Holder: "a", TTL: ttl, Now: t0.Add(10 * time.Second)})
	noErr(t, err, "the holder's heartbeat")
	isTrue(t, hb.HeartbeatAt.Equal(t0.Add(10*time.Second)), "heartbeat_at %s, want %s", hb.HeartbeatAt, t0.Add(10*time.Second))
	isTrue(t, hb.ExpiresAt.Equal(t0.Add(25*time.Second)), "expires_at after a heartbeat %s, want %s", hb.ExpiresAt, t0.Add(25*time.Second))
	_, err = st.InstanceLeaseHeartbeat(ctx, &store.InstanceLeaseParams{InstanceID: "inst-1", Holder: "b", TTL: ttl, Now: t0.Add(10 * time.Second)})
	errIs(t, err, store.ErrLeaseLost, "a heartbeat by a process that does not hold the id")

	_, err = st.InstanceLeaseAcquire(ctx, instanceParams("inst-1", "b", 202, ttl, t0.Add(20*time.Second)))
	errIs(t, err, store.ErrConflict, "acquiring within the TTL renewed by the heartbeat")

	b, err := st.InstanceLeaseAcquire(ctx, instanceParams("inst-1", "b", 202, ttl, t0.Add(25*time.Second)))
	noErr(t, err, "acquiring once the holder's lease expired")
	eq(t, b.Holder, "b", "holder after the lease expired")
	_, err = st.InstanceLeaseHeartbeat(ctx, &store.InstanceLeaseParams{InstanceID: "inst-1", Holder: "a", TTL: ttl, Now: t0.Add(26 * time.Second)})
	errIs(t, err, store.ErrLeaseLost, "the old holder's heartbeat after another took the id")
	noErr(t, st.InstanceLeaseRelease(ctx, &store.InstanceLeaseParams{InstanceID: "inst-1", Holder: "a"}), "a release by the old holder")
	got, err = st.InstanceLeaseGet(ctx, "inst-1")
	noErr(t, err, "reading the lease after the old holder's release")
	eq(t, got.Holder, "b", "holder after the old holder's release (a no-op)")

	// A holder whose lease lapsed with no one taking it renews it.
	_, err = st.InstanceLeaseHeartbeat(ctx, &store.InstanceLeaseParams{InstanceID: "inst-1", Holder: "b", TTL: ttl, Now: t0.Add(time.Minute)})
	noErr(t, err, "a heartbeat after the holder's own lease lapsed, untaken")
	_, err = st.InstanceLeaseAcquire(ctx, instanceParams("inst-1", "b", 202, ttl, t0.Add(time.Minute+time.Second)))
	noErr(t, err, "the holder acquiring again (a renewal)")
}

// testInstanceLeaseTakeOver: a holder proven dead is replaced at once,
// live lease or not; a TakeOver naming anyone but the current holder
// changes nothing.
func (s suite) testInstanceLeaseTakeOver(t *testing.T) {
	st, clk, ctx := s.newStore(t), newClock(), ctxFor(t)
	const ttl = 15 * time.Second
	t0 := clk.Now()
	_, err := st.InstanceLeaseAcquire(ctx, instanceParams("inst", "dead", 1, ttl, t0))
	noErr(t, err, "acquiring a free instance id")

	p := instanceParams("inst", "next", 2, ttl, t0.Add(time.Second))
	p.TakeOver = "someone-else"
	_, err = st.InstanceLeaseAcquire(ctx, p)
	errIs(t, err, store.ErrConflict, "taking over from a holder that is not the current one")

	p.TakeOver = "dead"
	got, err := st.InstanceLeaseAcquire(ctx, p)
	noErr(t, err, "taking over a live lease from a holder proven dead")
	eq(t, got.Holder, "next", "holder after the take-over")
	eq(t, got.PID, 2, "pid after the take-over")
	eq(t, got.Process, "proc-next", "process after the take-over")
	isTrue(t, got.ExpiresAt.Equal(t0.Add(time.Second+ttl)), "expires_at after the take-over %s, want %s", got.ExpiresAt, t0.Add(time.Second+ttl))

	again := instanceParams("inst", "third", 3, ttl, t0.Add(2*time.Second))
	again.TakeOver = "dead"
	_, err = st.InstanceLeaseAcquire(ctx, again)
	errIs(t, err, store.ErrConflict, "a second take-over naming the holder already replaced")
	_, err = st.InstanceLeaseHeartbeat(ctx, &store.InstanceLeaseParams{InstanceID: "inst", Holder: "dead", TTL: ttl, Now: t0.Add(3 * time.Second)})
	errIs(t, err, store.ErrLeaseLost, "the replaced holder's heartbeat")
}

// testInstanceLeaseReleasePrune: a graceful stop frees the id at once; a
// sweep deletes leases long expired and keeps live ones.
func (s suite) testInstanceLeaseReleasePrune(t *testing.T) {
	st, clk, ctx := s.newStore(t), newClock(), ctxFor(t)
	const ttl = 15 * time.Second
	t0 := clk.Now()
	_, err := st.InstanceLeaseAcquire(ctx, instanceParams("inst", "a", 1, ttl, t0))
	noErr(t, err, "acquiring a free instance id")
	noErr(t, st.InstanceLeaseRelease(ctx, &store.InstanceLeaseParams{InstanceID: "inst", Holder: "a"}), "the holder's release")
	_, err = st.InstanceLeaseGet(ctx, "inst")
	errIs(t, err, store.ErrNotFound, "reading a released instance id")
	_, err = st.InstanceLeaseAcquire(ctx, instanceParams("inst", "b", 2, ttl, t0.Add(time.Second)))
	noErr(t, err, "acquiring a released id within the old TTL")

	_, err = st.InstanceLeaseAcquire(ctx, instanceParams("old", "c", 3, ttl, t0.Add(-2*time.Hour)))
	noErr(t, err, "acquiring an id long ago")
	res, err := st.Sweep(ctx, &store.SweepParams{Now: t0.Add(2 * time.Second)})
	noErr(t, err, "sweeping")
	isTrue(t, res.Leases >= 1, "sweep counted %d leases, want the long-expired instance lease", res.Leases)
	_, err = st.InstanceLeaseGet(ctx, "old")
	errIs(t, err, store.ErrNotFound, "reading an instance lease expired for longer than LeaseRetention after a sweep")
	_, err = st.InstanceLeaseGet(ctx, "inst")
	noErr(t, err, "reading a live instance lease after a sweep")
}
