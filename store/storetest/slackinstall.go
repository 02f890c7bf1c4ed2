package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// ---- slack installations ----

func (s suite) slackInstallationTests() []namedTest {
	return []namedTest{
		{"SaveGetList", s.testSlackInstallationSaveGetList},
		{"ClearTextRefused", s.testSlackInstallationClearText},
		{"DeleteAndReseal", s.testSlackInstallationDeleteReseal},
		{"EnterpriseFind", s.testSlackInstallationEnterpriseFind},
		{"RefreshClaimedOnce", s.testSlackInstallationRefreshClaimedOnce},
		{"RefreshFailed", s.testSlackInstallationRefreshFailed},
	}
}

func (s suite) testSlackInstallationSaveGetList(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	_, err := st.SlackInstallationGet(ctx, "T1")
	errIs(t, err, store.ErrNotFound, "reading an installation never saved")

	first := clk.Now()
	got, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
		TeamID: "T1", TeamName: "One", BotUserID: "U1BOT", AppID: "A1", Scope: "chat:write",
		BotToken: "v1:k1:AAAA", InstalledBy: "U1ADMIN", Now: first,
	})
	noErr(t, err, "installing in T1")
	want := store.SlackInstallation{
		TeamID: "T1", TeamName: "One", BotUserID: "U1BOT", AppID: "A1", Scope: "chat:write",
		BotToken: "v1:k1:AAAA", InstalledBy: "U1ADMIN", CreatedAt: first, UpdatedAt: first,
	}
	deepEq(t, *got, want, "the saved installation")
	read, err := st.SlackInstallationGet(ctx, "T1")
	noErr(t, err, "reading T1")
	deepEq(t, *read, want, "the installation read back")

	// A reinstall replaces the token and keeps the first install's time.
	later := clk.Advance(time.Hour)
	got, err = st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
		TeamID: "T1", TeamName: "One renamed", BotUserID: "U1BOT", BotToken: "v1:k1:BBBB", Now: later,
	})
	noErr(t, err, "reinstalling in T1")
	eq(t, got.BotToken, "v1:k1:BBBB", "token after a reinstall")
	eq(t, got.TeamName, "One renamed", "team name after a reinstall")
	timeEq(t, got.CreatedAt, first, "CreatedAt after a reinstall")
	timeEq(t, got.UpdatedAt, later, "UpdatedAt after a reinstall")

	for _, team := range []string{"T3", "T2"} {
		_, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{TeamID: team, BotUserID: "U" + team, BotToken: "v1:k1:" + team, Now: later})
		noErr(t, err, "installing in %s", team)
	}
	page, err := st.SlackInstallationList(ctx, &store.SlackInstallationListParams{Limit: 2})
	noErr(t, err, "listing the first page")
	isTrue(t, len(page) == 2 && page[0].TeamID == "T1" && page[1].TeamID == "T2", "first page of 2: want T1, T2 in team order, got %d rows", len(page))
	page, err = st.SlackInstallationList(ctx, &store.SlackInstallationListParams{AfterTeamID: "T2"})
	noErr(t, err, "listing after T2")
	isTrue(t, len(page) == 1 && page[0].TeamID == "T3", "after T2: want only T3, got %d rows", len(page))
}

func (s suite) testSlackInstallationClearText(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	for _, token := range []string{"xoxb-123-456-clear", "", "v1:", "v1::x", "v1:k1:"} {
		_, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{TeamID: "T1", BotUserID: "U1", BotToken: token})
		errIs(t, err, store.ErrInvalid, "saving the token %q, which is not sealed", token)
	}
	_, err := st.SlackInstallationGet(ctx, "T1")
	errIs(t, err, store.ErrNotFound, "reading T1 after every save was refused")
}

func (s suite) testSlackInstallationDeleteReseal(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	for _, team := range []string{"TA", "TB"} {
		_, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{TeamID: team, BotUserID: "U" + team, BotToken: "v1:old:" + team, Now: clk.Now()})
		noErr(t, err, "installing in %s", team)
	}

	later := clk.Advance(time.Minute)
	got, err := st.SlackInstallationReseal(ctx, &store.SlackInstallationResealParams{TeamID: "TA", Expect: "v1:old:TA", BotToken: "v1:new:TA", Now: later})
	noErr(t, err, "resealing TA")
	eq(t, got.BotToken, "v1:new:TA", "TA's token after the reseal")
	timeEq(t, got.UpdatedAt, later, "TA's UpdatedAt after the reseal")
	_, err = st.SlackInstallationReseal(ctx, &store.SlackInstallationResealParams{TeamID: "TA", Expect: "v1:old:TA", BotToken: "v1:new:other"})
	errIs(t, err, store.ErrConflict, "resealing TA expecting a token it no longer holds")
	read, err := st.SlackInstallationGet(ctx, "TA")
	noErr(t, err, "reading TA")
	eq(t, read.BotToken, "v1:new:TA", "TA's token after a refused reseal")

	noErr(t, st.SlackInstallationDelete(ctx, "TA"), "uninstalling from TA")
	_, err = st.SlackInstallationGet(ctx, "TA")
	errIs(t, err, store.ErrNotFound, "reading TA after the uninstall")
	errIs(t, st.SlackInstallationDelete(ctx, "TA"), store.ErrNotFound, "uninstalling from TA twice")
	_, err = st.SlackInstallationReseal(ctx, &store.SlackInstallationResealParams{TeamID: "TA", Expect: "v1:new:TA", BotToken: "v1:x:TA"})
	errIs(t, err, store.ErrNotFound, "resealing an uninstalled team")
	b, err := st.SlackInstallationGet(ctx, "TB")
	noErr(t, err, "reading TB after TA was removed")
	eq(t, b.BotToken, "v1:old:TB", "TB's token, untouched by TA's removal")
}

// An organisation-wide install is found for a team by the team's
// enterprise, then by the team alone once an event noted it; a team's own
// install wins; removing the install removes what it served.
func (s suite) testSlackInstallationEnterpriseFind(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	_, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
		TeamID: "E1", EnterpriseID: "E1", EnterpriseName: "Org", EnterpriseInstall: true, BotUserID: "UORG", BotToken: "v1:k:org", Now: clk.Now(),
	})
	noErr(t, err, "installing organisation-wide in E1")
	_, err = st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{TeamID: "T2", BotUserID: "U2", BotToken: "v1:k:t2", Now: clk.Now()})
	noErr(t, err, "installing in T2")
	_, err = st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{TeamID: "T9", EnterpriseID: "E2", EnterpriseInstall: true, BotUserID: "U", BotToken: "v1:k:x"})
	errIs(t, err, store.ErrInvalid, "an organisation-wide install not keyed by its enterprise")

	got, err := st.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: "T1", EnterpriseID: "E1"})
	noErr(t, err, "finding T1 of E1")
	isTrue(t, got.TeamID == "E1" && got.EnterpriseInstall && got.EnterpriseName == "Org", "T1 of E1 is served by the org install, got %+v", got)
	_, err = st.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: "T1"})
	errIs(t, err, store.ErrNotFound, "finding T1 by team alone before an event noted it")
	got, err = st.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: "T2", EnterpriseID: "E1"})
	noErr(t, err, "finding T2 of E1")
	eq(t, got.TeamID, "T2", "a team's own install wins over its enterprise's")
	_, err = st.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: "T3", EnterpriseID: "E9"})
	errIs(t, err, store.ErrNotFound, "a team of an enterprise with no install")

	at := clk.Advance(time.Minute)
	noErr(t, st.SlackInstallationTouch(ctx, &store.SlackInstallationTouchParams{Installation: "E1", TeamID: "T1", Now: at}), "an event of T1 under E1")
	got, err = st.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: "T1"})
	noErr(t, err, "finding T1 by team alone after its event")
	eq(t, got.TeamID, "E1", "T1's install after its event")
	isTrue(t, got.LastEventAt != nil, "LastEventAt is set by the event")
	timeEq(t, *got.LastEventAt, at, "LastEventAt")
	// An older event does not move it back.
	noErr(t, st.SlackInstallationTouch(ctx, &store.SlackInstallationTouchParams{Installation: "E1", TeamID: "T1", Now: at.Add(-time.Second)}), "a late event")
	got, _ = st.SlackInstallationGet(ctx, "E1")
	timeEq(t, *got.LastEventAt, at, "LastEventAt after an older event")

	noErr(t, st.SlackInstallationDelete(ctx, "E1"), "uninstalling the org install")
	_, err = st.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: "T1"})
	errIs(t, err, store.ErrNotFound, "T1 after its org install was removed")
	// Reinstalled, it is found by the enterprise again; the team it served
	// before must be seen again to be found alone.
	_, err = st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{TeamID: "E1", EnterpriseID: "E1", EnterpriseInstall: true, BotUserID: "UORG", BotToken: "v1:k:org2"})
	noErr(t, err, "reinstalling in E1")
	_, err = st.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: "T1"})
	errIs(t, err, store.ErrNotFound, "T1 by team alone after the reinstall")
}

// Two holders claim one renewal at once: exactly one gets it; the renewed
// pair replaces the old one only where the spent refresh token still is.
func (s suite) testSlackInstallationRefreshClaimedOnce(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	exp := clk.Now().Add(10 * time.Minute)
	_, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
		TeamID: "T1", BotUserID: "U1", BotToken: "v1:k:bot1", RefreshToken: "v1:k:ref1", TokenExpiresAt: &exp, Now: clk.Now(),
	})
	noErr(t, err, "installing with a rotating token")
	_, err = st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{TeamID: "T2", BotUserID: "U2", BotToken: "v1:k:bot2", RefreshToken: "v1:k:ref2"})
	errIs(t, err, store.ErrInvalid, "a refresh token without an expiry")
	_, err = st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{TeamID: "T2", BotUserID: "U2", BotToken: "v1:k:bot2", Now: clk.Now()})
	noErr(t, err, "installing T2 without rotation")

	due, err := st.SlackInstallationExpiring(ctx, &store.SlackInstallationExpiringParams{Before: clk.Now().Add(5 * time.Minute), Now: clk.Now()})
	noErr(t, err, "listing tokens expiring within 5 minutes")
	eq(t, len(due), 0, "tokens due 10 minutes before expiry with a 5-minute margin")
	due, err = st.SlackInstallationExpiring(ctx, &store.SlackInstallationExpiringParams{Before: clk.Now().Add(15 * time.Minute), Now: clk.Now()})
	noErr(t, err, "listing tokens expiring within 15 minutes")
	isTrue(t, len(due) == 1 && due[0].TeamID == "T1", "want T1 due (T2 does not rotate), got %d rows", len(due))

	now := clk.Now()
	var wg sync.WaitGroup
	won := make([]bool, 8)
	errs := make([]error, 8)
	for i := range won {
		wg.Go(func() {
			_, err := st.SlackInstallationClaimRefresh(ctx, &store.SlackInstallationClaimRefreshParams{
				TeamID: "T1", Expect: "v1:k:ref1", Holder: string(rune('a' + i)), Until: now.Add(time.Minute), Now: now,
			})
			won[i], errs[i] = err == nil, err
		})
	}
	wg.Wait()
	n := 0
	holder := ""
	for i, w := range won {
		if w {
			n++
			holder = string(rune('a' + i))
		} else {
			errIs(t, errs[i], store.ErrConflict, "a losing claim")
		}
	}
	eq(t, n, 1, "claims won of 8 at once")
	due, err = st.SlackInstallationExpiring(ctx, &store.SlackInstallationExpiringParams{Before: now.Add(15 * time.Minute), Now: now})
	noErr(t, err, "listing while claimed")
	eq(t, len(due), 0, "tokens due while a renewal is claimed")
	_, err = st.SlackInstallationClaimRefresh(ctx, &store.SlackInstallationClaimRefreshParams{
		TeamID: "T1", Expect: "v1:k:ref1", Holder: holder, Until: now.Add(time.Minute), Now: now,
	})
	noErr(t, err, "the winner claiming again (a repeat after a lost answer)")

	later := clk.Advance(time.Second)
	exp2 := later.Add(12 * time.Hour)
	got, err := st.SlackInstallationRefreshed(ctx, &store.SlackInstallationRefreshedParams{
		TeamID: "T1", Expect: "v1:k:ref1", BotToken: "v1:k:bot2", RefreshToken: "v1:k:ref2", TokenExpiresAt: exp2, Now: later,
	})
	noErr(t, err, "storing the renewed pair")
	isTrue(t, got.BotToken == "v1:k:bot2" && got.RefreshToken == "v1:k:ref2" && got.RefreshHolder == "" && got.RefreshUntil == nil, "renewed row %+v", got)
	timeEq(t, *got.TokenExpiresAt, exp2, "the new expiry")
	_, err = st.SlackInstallationRefreshed(ctx, &store.SlackInstallationRefreshedParams{
		TeamID: "T1", Expect: "v1:k:ref1", BotToken: "v1:k:bot3", RefreshToken: "v1:k:ref3", TokenExpiresAt: exp2, Now: later,
	})
	errIs(t, err, store.ErrConflict, "storing a pair bought with a spent refresh token")
	_, err = st.SlackInstallationClaimRefresh(ctx, &store.SlackInstallationClaimRefreshParams{TeamID: "T1", Expect: "v1:k:ref1", Holder: holder, Until: later.Add(time.Minute), Now: later})
	errIs(t, err, store.ErrConflict, "claiming with the spent refresh token")
	_, err = st.SlackInstallationClaimRefresh(ctx, &store.SlackInstallationClaimRefreshParams{TeamID: "T0", Expect: "v1:k:ref1", Holder: holder, Until: later.Add(time.Minute), Now: later})
	errIs(t, err, store.ErrNotFound, "claiming the renewal of a team with no install")

	// Resealing keeps the refresh token unless given one.
	got, err = st.SlackInstallationReseal(ctx, &store.SlackInstallationResealParams{TeamID: "T1", Expect: "v1:k:bot2", BotToken: "v1:n:bot2", Now: later})
	noErr(t, err, "resealing the bot token alone")
	eq(t, got.RefreshToken, "v1:k:ref2", "the refresh token after resealing the bot token alone")
	got, err = st.SlackInstallationReseal(ctx, &store.SlackInstallationResealParams{TeamID: "T1", Expect: "v1:n:bot2", BotToken: "v1:m:bot2", RefreshToken: "v1:m:ref2", Now: later})
	noErr(t, err, "resealing both")
	eq(t, got.RefreshToken, "v1:m:ref2", "the refresh token resealed")
}

// A transient failure waits until RetryAt; a permanent one stops renewal
// until a reinstall, and is listed.
func (s suite) testSlackInstallationRefreshFailed(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	exp := clk.Now().Add(time.Minute)
	save := func() {
		_, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
			TeamID: "T1", BotUserID: "U1", BotToken: "v1:k:bot", RefreshToken: "v1:k:ref", TokenExpiresAt: &exp, Now: clk.Now(),
		})
		noErr(t, err, "installing T1")
	}
	save()
	claim := func(holder string) error {
		_, err := st.SlackInstallationClaimRefresh(ctx, &store.SlackInstallationClaimRefreshParams{TeamID: "T1", Expect: "v1:k:ref", Holder: holder, Until: clk.Now().Add(time.Minute), Now: clk.Now()})
		return err
	}
	noErr(t, claim("a"), "claiming as a")
	_, err := st.SlackInstallationRefreshFailed(ctx, &store.SlackInstallationRefreshFailedParams{TeamID: "T1", Holder: "b", Error: "x", Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "b recording a failure of a's renewal")
	retry := clk.Now().Add(30 * time.Second)
	got, err := st.SlackInstallationRefreshFailed(ctx, &store.SlackInstallationRefreshFailedParams{TeamID: "T1", Holder: "a", Error: "slack unreachable", RetryAt: &retry, Now: clk.Now()})
	noErr(t, err, "a recording a transient failure")
	isTrue(t, got.RefreshError == "slack unreachable" && !got.RefreshStopped && got.RefreshHolder == "", "after a transient failure: %+v", got)
	errIs(t, claim("b"), store.ErrConflict, "claiming before RetryAt")
	clk.Advance(31 * time.Second)
	noErr(t, claim("b"), "claiming after RetryAt")
	_, err = st.SlackInstallationRefreshFailed(ctx, &store.SlackInstallationRefreshFailedParams{TeamID: "T1", Holder: "b", Error: "invalid_refresh_token", Stop: true, Now: clk.Now()})
	noErr(t, err, "b recording a permanent failure")
	stopped, err := st.SlackInstallationRefreshStopped(ctx, 0)
	noErr(t, err, "listing stopped renewals")
	isTrue(t, len(stopped) == 1 && stopped[0].TeamID == "T1" && stopped[0].RefreshError == "invalid_refresh_token", "stopped renewals: %d", len(stopped))
	clk.Advance(time.Hour)
	errIs(t, claim("c"), store.ErrConflict, "claiming a stopped renewal")
	due, err := st.SlackInstallationExpiring(ctx, &store.SlackInstallationExpiringParams{Before: clk.Now().Add(time.Hour), Now: clk.Now()})
	noErr(t, err, "listing due tokens")
	eq(t, len(due), 0, "a stopped renewal is not due")
	// A reinstall starts afresh.
	save()
	stopped, _ = st.SlackInstallationRefreshStopped(ctx, 0)
	eq(t, len(stopped), 0, "stopped renewals after a reinstall")
	noErr(t, claim("c"), "claiming after a reinstall")
}
