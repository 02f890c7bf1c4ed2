package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// ---- people, identities and link codes ----

func (s suite) peopleTests() []namedTest {
	return []namedTest{
		{"CreateFind", s.testPersonCreateFind},
		{"Profile", s.testPersonProfile},
		{"Merge", s.testPersonMerge},
		{"LinkCodes", s.testPersonLinkCodes},
		{"LinkCodeSweep", s.testPersonLinkCodeSweep},
	}
}

var (
	slackAna   = store.Identity{Platform: "slack", Workspace: "T1", UserID: "U1"}
	discordAna = store.Identity{Platform: "discord", UserID: "111"}
)

func (s suite) testPersonCreateFind(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()

	p, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: slackAna, DisplayName: "Ana", Now: clk.Now()})
	noErr(t, err, "creating a person")
	isTrue(t, p.ID != uuid.Nil, "a new person has an id")
	eq(t, p.DisplayName, "Ana", "display name")
	eq(t, len(p.Identities), 1, "identities of a new person")
	eq(t, p.Identities[0].Identity, slackAna, "the identity linked")
	isTrue(t, p.Identities[0].RefreshedAt == nil, "a new identity was never refreshed")
	timeEq(t, p.CreatedAt, clk.Now(), "created at")

	got, err := st.PersonFind(ctx, &store.PersonFindParams{Identity: slackAna})
	noErr(t, err, "finding the person by identity")
	eq(t, got.ID, p.ID, "the person found")

	_, err = st.PersonCreate(ctx, &store.PersonCreateParams{Identity: slackAna, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "creating a second person for a linked identity")

	other := slackAna
	other.Workspace = "T2"
	_, err = st.PersonFind(ctx, &store.PersonFindParams{Identity: other})
	errIs(t, err, store.ErrNotFound, "the same user id in another Slack team is another identity")
	_, err = st.PersonGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "getting an unknown person")
	_, err = st.PersonCreate(ctx, &store.PersonCreateParams{Identity: store.Identity{Platform: "slack"}})
	errIs(t, err, store.ErrInvalid, "an identity without a user id")
	_, err = st.PersonCreate(ctx, &store.PersonCreateParams{Identity: discordAna, TimeZone: "Mars/Olympus"})
	errIs(t, err, store.ErrInvalid, "an unknown time zone")
}

func (s suite) testPersonProfile(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	p, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: slackAna, DisplayName: "U1", Now: clk.Now()})
	noErr(t, err, "creating a person")

	at := clk.Advance(time.Minute)
	got, err := st.PersonSetProfile(ctx, &store.PersonProfileParams{ID: p.ID, Identity: slackAna, DisplayName: "Ana Lima", TimeZone: "America/New_York", Now: at})
	noErr(t, err, "recording a profile")
	eq(t, got.DisplayName, "Ana Lima", "display name after the refresh")
	eq(t, got.TimeZone, "America/New_York", "time zone after the refresh")
	timePtrEq(t, got.Identities[0].RefreshedAt, at, "the identity's refresh time")

	got, err = st.PersonSetProfile(ctx, &store.PersonProfileParams{ID: p.ID, Identity: slackAna, TimeZone: "Nowhere/Land", Now: clk.Advance(time.Minute)})
	noErr(t, err, "recording a profile with nothing new")
	eq(t, got.DisplayName, "Ana Lima", "an empty name keeps the stored one")
	eq(t, got.TimeZone, "America/New_York", "an unknown zone keeps the stored one")

	_, err = st.PersonSetProfile(ctx, &store.PersonProfileParams{ID: p.ID, Identity: discordAna, DisplayName: "x"})
	errIs(t, err, store.ErrNotFound, "a profile for an identity not linked to the person")
}

func (s suite) testPersonMerge(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	older, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: slackAna, DisplayName: "Ana", Now: clk.Now()})
	noErr(t, err, "creating the older person")
	newer, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: discordAna, DisplayName: "ana#1", TimeZone: "Europe/Lisbon", Now: clk.Advance(time.Hour)})
	noErr(t, err, "creating the newer person")

	kept, err := st.PersonMerge(ctx, &store.PersonMergeParams{Keep: older.ID, Drop: newer.ID, Now: clk.Advance(time.Minute)})
	noErr(t, err, "merging")
	eq(t, kept.ID, older.ID, "the record kept")
	eq(t, kept.DisplayName, "Ana", "the kept record's name wins")
	eq(t, kept.TimeZone, "Europe/Lisbon", "an empty zone takes the dropped record's")
	eq(t, len(kept.Identities), 2, "identities after the merge")

	found, err := st.PersonFind(ctx, &store.PersonFindParams{Identity: discordAna})
	noErr(t, err, "finding the moved identity")
	eq(t, found.ID, older.ID, "the moved identity's person")
	dropped, err := st.PersonGet(ctx, newer.ID)
	noErr(t, err, "the dropped record stays")
	uuidPtrEq(t, dropped.MergedInto, older.ID, "the dropped record points at the kept one")
	eq(t, len(dropped.Identities), 0, "identities left on the dropped record")

	_, err = st.PersonMerge(ctx, &store.PersonMergeParams{Keep: older.ID, Drop: newer.ID})
	errIs(t, err, store.ErrConflict, "merging a merged record again")
	_, err = st.PersonMerge(ctx, &store.PersonMergeParams{Keep: older.ID, Drop: older.ID})
	errIs(t, err, store.ErrInvalid, "merging a person into itself")
	_, err = st.PersonMerge(ctx, &store.PersonMergeParams{Keep: older.ID, Drop: uuid.New()})
	errIs(t, err, store.ErrNotFound, "merging an unknown person")
}

func (s suite) testPersonLinkCodes(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	p, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: slackAna, Now: clk.Now()})
	noErr(t, err, "creating a person")
	mk := func(hash string) {
		t.Helper()
		c, err := st.PersonLinkCodeCreate(ctx, &store.PersonLinkCodeCreateParams{
			PersonID: p.ID, CodeHash: hash, Platform: "slack", ExpiresAt: clk.Now().Add(10 * time.Minute), Now: clk.Now(),
		})
		noErr(t, err, "creating code %s", hash)
		eq(t, c.PersonID, p.ID, "the code's person")
	}
	mk("h1")
	mk("h2")
	_, err = st.PersonLinkCodeUse(ctx, &store.PersonLinkCodeUseParams{CodeHash: "h1", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "a code replaced by a newer one")
	c, err := st.PersonLinkCodeUse(ctx, &store.PersonLinkCodeUseParams{CodeHash: "h2", Now: clk.Advance(time.Minute)})
	noErr(t, err, "using a fresh code")
	eq(t, c.Platform, "slack", "where the code was issued")
	timePtrEq(t, c.UsedAt, clk.Now(), "when it was used")
	_, err = st.PersonLinkCodeUse(ctx, &store.PersonLinkCodeUseParams{CodeHash: "h2", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "a code used twice")

	mk("h3")
	_, err = st.PersonLinkCodeUse(ctx, &store.PersonLinkCodeUseParams{CodeHash: "h3", Now: clk.Advance(10 * time.Minute)})
	errIs(t, err, store.ErrNotFound, "a code at its expiry")
	_, err = st.PersonLinkCodeUse(ctx, &store.PersonLinkCodeUseParams{CodeHash: "nope", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "an unknown code")
}

// testPersonLinkCodeSweep: Sweep deletes link codes past their expiry,
// used or not, and leaves a live one working.
func (s suite) testPersonLinkCodeSweep(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	mk := func(id store.Identity, hash string, ttl time.Duration) {
		t.Helper()
		p, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: id, Now: clk.Now()})
		noErr(t, err, "creating a person for %s", hash)
		_, err = st.PersonLinkCodeCreate(ctx, &store.PersonLinkCodeCreateParams{
			PersonID: p.ID, CodeHash: hash, Platform: id.Platform, ExpiresAt: clk.Now().Add(ttl), Now: clk.Now(),
		})
		noErr(t, err, "creating code %s", hash)
	}
	mk(slackAna, "used", 5*time.Minute)
	mk(discordAna, "expired", 5*time.Minute)
	mk(store.Identity{Platform: "slack", Workspace: "T1", UserID: "U2"}, "live", time.Hour)
	_, err := st.PersonLinkCodeUse(ctx, &store.PersonLinkCodeUseParams{CodeHash: "used", Now: clk.Now()})
	noErr(t, err, "using a code")

	res, err := st.Sweep(ctx, &store.SweepParams{Now: clk.Now()})
	noErr(t, err, "sweeping before any code expired")
	eq(t, res.LinkCodes, 0, "link codes swept before their expiry")

	res, err = st.Sweep(ctx, &store.SweepParams{Now: clk.Advance(10 * time.Minute)})
	noErr(t, err, "sweeping")
	eq(t, res.LinkCodes, 2, "link codes swept (the used and the unused one past their expiry)")
	again, err := st.Sweep(ctx, &store.SweepParams{Now: clk.Now()})
	noErr(t, err, "sweeping again")
	eq(t, again.LinkCodes, 0, "link codes swept by a second sweep")

	_, err = st.PersonLinkCodeUse(ctx, &store.PersonLinkCodeUseParams{CodeHash: "live", Now: clk.Now()})
	noErr(t, err, "using the code the sweep left")
	_, err = st.PersonLinkCodePrune(ctx, &store.PruneParams{})
	errIs(t, err, store.ErrInvalid, "pruning link codes with no cutoff")
}
