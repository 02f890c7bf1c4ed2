package storetest

import (
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
