package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) budgetTests() []namedTest {
	return []namedTest{
		{"ReserveChargeWarn", s.testBudgetReserveChargeWarn},
		{"ConcurrentReservations", s.testBudgetConcurrent},
		{"ReservationExpires", s.testBudgetReservationExpires},
		{"Invalid", s.testBudgetInvalid},
	}
}

// testBudgetReserveChargeWarn: a reservation counts until it is charged;
// one that would pass any line's limit is refused whole, naming the line;
// passing 80 % warns once per period; an extension makes room.
func (s suite) testBudgetReserveChargeWarn(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	agent := store.BudgetLine{Key: "agent:atlas", Period: "day:2026-12-07", LimitMicroUSD: 1000}
	person := store.BudgetLine{Key: "person:U1", Period: "day:2026-12-07", LimitMicroUSD: 500, LimitTokens: 10_000}
	lines := []store.BudgetLine{person, agent}

	first := uuid.New()
	res, err := st.BudgetReserve(ctx, &store.BudgetReserveParams{ID: first, Lines: lines, MicroUSD: 300, Tokens: 100, Holder: "i1", Now: clk.Now(), TTL: time.Minute})
	noErr(t, err, "reserving 300")
	eq(t, res.OK, true, "the first reservation is taken")
	got, err := st.BudgetGet(ctx, &store.BudgetGetParams{Key: person.Key, Period: person.Period, Now: clk.Now()})
	noErr(t, err, "reading the person's budget")
	eq(t, got.ReservedMicroUSD, int64(300), "reserved against the person")

	res, err = st.BudgetReserve(ctx, &store.BudgetReserveParams{ID: uuid.New(), Lines: lines, MicroUSD: 300, Tokens: 100, Holder: "i2", Now: clk.Now(), TTL: time.Minute})
	noErr(t, err, "reserving 300 more")
	eq(t, res.OK, false, "300 more would pass the person's 500")
	eq(t, res.Line.Key, person.Key, "the refused line")
	eq(t, res.Refused.ReservedMicroUSD, int64(300), "what was reserved when refused")
	got, err = st.BudgetGet(ctx, &store.BudgetGetParams{Key: agent.Key, Period: agent.Period, Now: clk.Now()})
	noErr(t, err, "reading the agent's budget")
	eq(t, got.ReservedMicroUSD, int64(300), "a refused reservation holds nothing on any line")

	warn, err := st.BudgetCharge(ctx, &store.BudgetChargeParams{Reservation: &first, Lines: lines, MicroUSD: 420, Tokens: 90, WarnAt: 0.8, Now: clk.Now()})
	noErr(t, err, "charging 420")
	deepEq(t, warn, []store.BudgetLine{person}, "420 of 500 passes 80 %% of the person's budget only")
	got, err = st.BudgetGet(ctx, &store.BudgetGetParams{Key: person.Key, Period: person.Period, Now: clk.Now()})
	noErr(t, err, "reading the person's budget")
	eq(t, got.SpentMicroUSD, int64(420), "spent")
	eq(t, got.SpentTokens, int64(90), "tokens spent")
	eq(t, got.ReservedMicroUSD, int64(0), "the charge deleted the reservation")
	if got.WarnedAt == nil {
		t.Fatal("the person's budget is not marked warned")
	}
	warn, err = st.BudgetCharge(ctx, &store.BudgetChargeParams{Lines: lines, MicroUSD: 10, WarnAt: 0.8, Now: clk.Now()})
	noErr(t, err, "charging 10 more")
	eq(t, len(warn), 0, "a budget warns once per period")

	res, err = st.BudgetReserve(ctx, &store.BudgetReserveParams{ID: uuid.New(), Lines: lines, MicroUSD: 100, Holder: "i1", Now: clk.Now(), TTL: time.Minute})
	noErr(t, err, "reserving 100 over 430 spent")
	eq(t, res.OK, false, "430 + 100 passes 500")
	ext, err := st.BudgetExtend(ctx, &store.BudgetExtendParams{Key: person.Key, Period: person.Period, MicroUSD: 200, Now: clk.Now()})
	noErr(t, err, "extending the person's budget")
	eq(t, ext.ExtraMicroUSD, int64(200), "the extension")
	res, err = st.BudgetReserve(ctx, &store.BudgetReserveParams{ID: uuid.New(), Lines: lines, MicroUSD: 100, Holder: "i1", Now: clk.Now(), TTL: time.Minute})
	noErr(t, err, "reserving 100 after the extension")
	eq(t, res.OK, true, "the extension makes room")

	next := person
	next.Period = "day:2026-12-08"
	warn, err = st.BudgetCharge(ctx, &store.BudgetChargeParams{Lines: []store.BudgetLine{next}, MicroUSD: 450, WarnAt: 0.8, Now: clk.Now()})
	noErr(t, err, "charging the next day")
	deepEq(t, warn, []store.BudgetLine{next}, "a new period warns again")
}

// testBudgetConcurrent: many reservations at once against one budget never
// hold more than it allows, whoever wins.
func (s suite) testBudgetConcurrent(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	line := store.BudgetLine{Key: "agent:atlas", Period: "day:2026-12-07", LimitMicroUSD: 500_000}
	const calls, each = 40, 60_000
	var mu sync.Mutex
	taken := 0
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			res, err := st.BudgetReserve(ctx, &store.BudgetReserveParams{ID: uuid.New(), Lines: []store.BudgetLine{line}, MicroUSD: each, Holder: "w", Now: clk.Now(), TTL: time.Minute})
			if err != nil {
				t.Error(err)
				return
			}
			if res.OK {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	eq(t, taken, 500_000/each, "reservations taken: as many as fit, no more")
	got, err := st.BudgetGet(ctx, &store.BudgetGetParams{Key: line.Key, Period: line.Period, Now: clk.Now()})
	noErr(t, err, "reading the budget")
	eq(t, got.ReservedMicroUSD, int64(taken*each), "reserved")
}

// testBudgetReservationExpires: a reservation its holder stopped renewing
// (the instance died) stops counting at its expiry; a renewed one does not.
func (s suite) testBudgetReservationExpires(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	line := store.BudgetLine{Key: "channel:C1", Period: "month:2026-12", LimitMicroUSD: 100}
	dead, live := uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{dead, live} {
		res, err := st.BudgetReserve(ctx, &store.BudgetReserveParams{ID: id, Lines: []store.BudgetLine{line}, MicroUSD: 50, Holder: "i", Now: clk.Now(), TTL: 15 * time.Second})
		noErr(t, err, "reserving")
		eq(t, res.OK, true, "reserved")
	}
	clk.Advance(10 * time.Second)
	ok, err := st.BudgetRenew(ctx, live, clk.Now().Add(15*time.Second))
	noErr(t, err, "renewing")
	eq(t, ok, true, "the live reservation renews")
	clk.Advance(10 * time.Second)
	got, err := st.BudgetGet(ctx, &store.BudgetGetParams{Key: line.Key, Period: line.Period, Now: clk.Now()})
	noErr(t, err, "reading the budget")
	eq(t, got.ReservedMicroUSD, int64(50), "the dead holder's reservation no longer counts")
	res, err := st.BudgetReserve(ctx, &store.BudgetReserveParams{ID: uuid.New(), Lines: []store.BudgetLine{line}, MicroUSD: 50, Holder: "i", Now: clk.Now(), TTL: time.Minute})
	noErr(t, err, "reserving after the expiry")
	eq(t, res.OK, true, "the expired reservation's room is free again")
	ok, err = st.BudgetRenew(ctx, dead, clk.Now().Add(time.Minute))
	noErr(t, err, "renewing the expired reservation")
	eq(t, ok, false, "an expired, cleared reservation cannot be renewed")
	noErr(t, st.BudgetRelease(ctx, live), "releasing")
	got, err = st.BudgetGet(ctx, &store.BudgetGetParams{Key: line.Key, Period: line.Period, Now: clk.Now()})
	noErr(t, err, "reading the budget")
	eq(t, got.ReservedMicroUSD, int64(50), "released")
}

func (s suite) testBudgetInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	line := []store.BudgetLine{{Key: "agent:a", Period: "day:2026-12-07", LimitMicroUSD: 1}}
	for name, err := range map[string]error{
		"no id": func() error {
			_, err := st.BudgetReserve(ctx, &store.BudgetReserveParams{Lines: line, TTL: time.Second})
			return err
		}(),
		"no ttl": func() error {
			_, err := st.BudgetReserve(ctx, &store.BudgetReserveParams{ID: uuid.New(), Lines: line})
			return err
		}(),
		"negative": func() error {
			_, err := st.BudgetCharge(ctx, &store.BudgetChargeParams{Lines: line, MicroUSD: -1})
			return err
		}(),
		"empty key": func() error {
			_, err := st.BudgetCharge(ctx, &store.BudgetChargeParams{Lines: []store.BudgetLine{{Period: "x"}}})
			return err
		}(),
		"zero extension": func() error {
			_, err := st.BudgetExtend(ctx, &store.BudgetExtendParams{Key: "a", Period: "b"})
			return err
		}(),
	} {
		errIs(t, err, store.ErrInvalid, "%s", name)
	}
}
