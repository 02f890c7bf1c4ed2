package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) accessTests() []namedTest {
	return []namedTest{
		{"PairingCodeReused", s.testPairingCodeReused},
		{"PairingApprove", s.testPairingApprove},
		{"PairingExpiredCode", s.testPairingExpiredCode},
		{"PairingList", s.testPairingList},
		{"PairingCodeClash", s.testPairingCodeClash},
		{"RefusalNoticeOncePerDay", s.testRefusalNoticeOncePerDay},
	}
}

func requestPairing(t testing.TB, st store.Queries, clk *clock, platform, user string) *store.PairingRequestResult {
	t.Helper()
	res, err := st.PairingRequest(ctxFor(t), &store.PairingRequestParams{
		Platform: platform, UserID: user, Workspace: "T1", UserName: "Stranger " + user, Now: clk.Now(),
	})
	noErr(t, err, "requesting pairing for %s/%s", platform, user)
	return res
}

func (s suite) testPairingCodeReused(t *testing.T) {
	st, clk := s.newStore(t), newClock()
	first := requestPairing(t, st, clk, "slack", "U1")
	isTrue(t, first.Created, "a stranger's first request hands out a code")
	eq(t, first.Pairing.Status, store.PairingPending, "status")
	eq(t, len(first.Pairing.Code), store.PairingCodeLen, "code length of %q", first.Pairing.Code)
	timeEq(t, first.Pairing.ExpiresAt, clk.Now().Add(store.PairingCodeTTL), "expiry")
	eq(t, first.Pairing.UserName, "Stranger U1", "user name")

	clk.Advance(time.Hour)
	again := requestPairing(t, st, clk, "slack", "U1")
	isTrue(t, !again.Created, "a second request while the code is valid hands out nothing new")
	eq(t, again.Pairing.Code, first.Pairing.Code, "code on the second request")

	other := requestPairing(t, st, clk, "discord", "U1")
	isTrue(t, other.Created, "the same user id on another platform is another identity")
	isTrue(t, other.Pairing.Code != first.Pairing.Code, "two identities got the same code %s", other.Pairing.Code)
}

func (s suite) testPairingApprove(t *testing.T) {
	st, clk := s.newStore(t), newClock()
	ctx := ctxFor(t)
	req := requestPairing(t, st, clk, "slack", "U1")
	_, err := st.PairingFind(ctx, &store.PairingFindParams{Platform: "slack", UserID: "U2"})
	errIs(t, err, store.ErrNotFound, "finding a pairing nobody asked for")

	// People type codes in lower case and with a dash in the middle.
	typed := strings.ToLower(req.Pairing.Code[:4] + "-" + req.Pairing.Code[4:])
	clk.Advance(time.Minute)
	got, err := st.PairingApprove(ctx, &store.PairingApproveParams{Code: typed, By: "operator", Now: clk.Now()})
	noErr(t, err, "approving %q", typed)
	eq(t, got.Status, store.PairingApproved, "status after approval")
	eq(t, got.ApprovedBy, "operator", "approved by")
	timePtrEq(t, got.ApprovedAt, clk.Now(), "approved at")

	found, err := st.PairingFind(ctx, &store.PairingFindParams{Platform: "slack", UserID: "U1"})
	noErr(t, err, "finding the approved pairing")
	isTrue(t, found.Approved(), "the pairing is approved when read back")

	_, err = st.PairingApprove(ctx, &store.PairingApproveParams{Code: req.Pairing.Code, By: "operator", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "approving a code a second time")
	_, err = st.PairingApprove(ctx, &store.PairingApproveParams{Code: "NOPE2345", By: "operator", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "approving an unknown code")
	_, err = st.PairingApprove(ctx, &store.PairingApproveParams{Code: " ", By: "operator"})
	errIs(t, err, store.ErrInvalid, "approving an empty code")

	// Approval is for good: a later request, long after the code's expiry,
	// finds the approval and hands out nothing.
	clk.Advance(10 * store.PairingCodeTTL)
	later := requestPairing(t, st, clk, "slack", "U1")
	isTrue(t, !later.Created && later.Pairing.Approved(), "a request by an approved identity returns the approval")
}

func (s suite) testPairingExpiredCode(t *testing.T) {
	st, clk := s.newStore(t), newClock()
	ctx := ctxFor(t)
	old := requestPairing(t, st, clk, "discord", "D1")
	clk.Advance(store.PairingCodeTTL)
	_, err := st.PairingApprove(ctx, &store.PairingApproveParams{Code: old.Pairing.Code, By: "operator", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "approving a code at its expiry")

	renewed := requestPairing(t, st, clk, "discord", "D1")
	isTrue(t, renewed.Created, "a request after the code expired hands out a new one")
	isTrue(t, renewed.Pairing.Code != old.Pairing.Code, "the new code differs from the expired %s", old.Pairing.Code)
	_, err = st.PairingApprove(ctx, &store.PairingApproveParams{Code: old.Pairing.Code, By: "operator", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "approving the replaced code")
	_, err = st.PairingApprove(ctx, &store.PairingApproveParams{Code: renewed.Pairing.Code, By: "U0ADMIN", Now: clk.Now()})
	noErr(t, err, "approving the new code")
}

func (s suite) testPairingList(t *testing.T) {
	st, clk := s.newStore(t), newClock()
	ctx := ctxFor(t)
	expired := requestPairing(t, st, clk, "slack", "U1")
	clk.Advance(store.PairingCodeTTL)
	pending := requestPairing(t, st, clk, "slack", "U2")
	clk.Advance(time.Second)
	approved := requestPairing(t, st, clk, "slack", "U3")
	_, err := st.PairingApprove(ctx, &store.PairingApproveParams{Code: approved.Pairing.Code, By: "api", Now: clk.Now()})
	noErr(t, err, "approving U3")
	_ = expired

	codes := func(ps []*store.Pairing) []string {
		out := []string{}
		for _, p := range ps {
			out = append(out, p.UserID)
		}
		return out
	}
	got, err := st.PairingList(ctx, &store.PairingListParams{Status: store.PairingPending, Now: clk.Now()})
	noErr(t, err, "listing pending pairings")
	deepEq(t, codes(got), []string{"U2"}, "pending pairings (the expired one left out)")
	eq(t, got[0].Code, pending.Pairing.Code, "pending code")
	got, err = st.PairingList(ctx, &store.PairingListParams{Status: store.PairingApproved, Now: clk.Now()})
	noErr(t, err, "listing approved pairings")
	deepEq(t, codes(got), []string{"U3"}, "approved pairings")
	got, err = st.PairingList(ctx, &store.PairingListParams{Now: clk.Now()})
	noErr(t, err, "listing all pairings")
	deepEq(t, codes(got), []string{"U3", "U2"}, "all live pairings, newest first")
	_, err = st.PairingList(ctx, &store.PairingListParams{Status: "maybe"})
	errIs(t, err, store.ErrInvalid, "listing an unknown status")
}

func (s suite) testPairingCodeClash(t *testing.T) {
	st, clk := s.newStore(t), newClock()
	ctx := ctxFor(t)
	_, err := st.PairingRequest(ctx, &store.PairingRequestParams{Platform: "slack", UserID: "U1", Code: "SAME2345", Now: clk.Now()})
	noErr(t, err, "requesting with a chosen code")
	_, err = st.PairingRequest(ctx, &store.PairingRequestParams{Platform: "slack", UserID: "U2", Code: "same-2345", Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "requesting a code another identity holds")
	_, err = st.PairingRequest(ctx, &store.PairingRequestParams{Platform: "slack"})
	errIs(t, err, store.ErrInvalid, "requesting without a user")
}

func (s suite) testRefusalNoticeOncePerDay(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	day := time.Date(2026, 3, 9, 0, 30, 0, 0, time.UTC)
	record := func(platform, user string, at time.Time) bool {
		t.Helper()
		fresh, err := st.RefusalNoticeRecord(ctx, &store.RefusalNoticeParams{Platform: platform, UserID: user, Now: at})
		noErr(t, err, "recording a refusal notice to %s at %s", user, at)
		return fresh
	}
	isTrue(t, record("slack", "U1", day), "the first refusal of the day is told")
	isTrue(t, !record("slack", "U1", day.Add(23*time.Hour)), "a second refusal the same UTC day is not")
	isTrue(t, record("discord", "U1", day.Add(time.Hour)), "another platform's identity is told on its own")
	isTrue(t, record("slack", "U2", day.Add(time.Hour)), "another person is told on their own")
	isTrue(t, record("slack", "U1", day.Add(24*time.Hour)), "the next day is told again")
	_, err := st.RefusalNoticeRecord(ctx, &store.RefusalNoticeParams{Platform: "slack", UserID: "U1", Day: "9 March"})
	errIs(t, err, store.ErrInvalid, "recording with a malformed day")
}
