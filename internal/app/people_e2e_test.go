package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// TestRemindInPersonZone: "!remind tomorrow 9am" from a Slack user whose
// profile says America/New_York fires at 9:00 in New York (14:00 UTC in
// winter, 13:00 in summer), not 9:00 UTC; the person is kept with the
// name and zone users.info gave.
func TestRemindInPersonZone(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		e.slack.SetUser(slacktest.User{ID: alice, Name: "alice", RealName: "Alice Liddell", DisplayName: "Ali", TZ: "America/New_York", TZOffset: -18000})
		e.mustPost(newEvent("EvRemindTZ", directMessage("D0ALICE", "1700000700.000001", alice, "!remind tomorrow 9am -- standup notes")))
		reply := shown(e.waitReply("D0ALICE", remindConfirmation))

		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		d := time.Now().In(ny).AddDate(0, 0, 1)
		want := time.Date(d.Year(), d.Month(), d.Day(), 9, 0, 0, 0, ny).UTC()
		list, err := e.app.Scheduler.List(context.Background(), e.app.Service.Agents().Default().Name, store.ScheduleReminder)
		if err != nil || len(list) != 1 {
			t.Fatalf("reminders = %v (err %v); want one", list, err)
		}
		if got := list[0].NextRunAt; got == nil || !got.Equal(want) {
			t.Fatalf("the reminder fires at %v; want %v (9:00 in New York), reply %q", got, want, reply)
		}
		if !strings.Contains(reply, "09:00 E") {
			t.Errorf("the reply %q does not show 09:00 in the person's zone", reply)
		}
		p, err := e.store.PersonFind(context.Background(), &store.PersonFindParams{Identity: core.IdentityOf("slack", e2eTeam, alice)})
		if err != nil {
			t.Fatalf("finding the person behind %s: %v", alice, err)
		}
		if p.DisplayName != "Ali" || p.TimeZone != "America/New_York" {
			t.Fatalf("person = %q in %q; want Ali in America/New_York (from users.info)", p.DisplayName, p.TimeZone)
		}
		// The person came with exactly one personal workspace, theirs.
		ms, err := e.store.WorkspaceListByPerson(context.Background(), p.ID)
		if err != nil {
			t.Fatalf("listing %s's workspaces: %v", alice, err)
		}
		personal := 0
		for _, m := range ms {
			if m.Workspace.Kind == store.WorkspacePersonal && m.Workspace.OwnerPersonID == p.ID && m.Role == store.RoleOwner {
				personal++
			}
		}
		if personal != 1 {
			t.Fatalf("%s's workspaces = %d personal ones owned by them (of %d); want exactly one", alice, personal, len(ms))
		}
	})
}

// TestProfileCachedForTTL: with a profile TTL of 1h, users.info is
// asked once for two messages within the hour; a message after it reads
// the profile again (a changed name reaches the model); a failed read
// keeps the stored name and zone and is logged.
func TestProfileCachedForTTL(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		var skew atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		logs := &logBuffer{tb: t}
		e := startSlack(t, db(t), envOptions{
			now: now, profileTTL: time.Hour, // SWITCHBOARD_PROFILE_TTL=1h
			logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		})
		ctx := context.Background()
		e.slack.SetUser(slacktest.User{ID: alice, Name: "alice", DisplayName: "Ali", TZ: "Europe/Paris", TZOffset: 3600})
		ts := 0
		say := func(text string) {
			t.Helper()
			ts++
			ev := newEvent(fmt.Sprintf("EvTTL%d", ts), directMessage("D0ALICE", fmt.Sprintf("1700002000.%06d", ts), alice, text))
			ev.signedAt = now() // the service checks the signature's age on its own clock
			e.mustPost(ev)
		}
		infos := func() int { return len(e.slack.Calls("users.info")) }
		person := func() *store.Person {
			t.Helper()
			p, err := e.store.PersonFind(ctx, &store.PersonFindParams{Identity: core.IdentityOf("slack", e2eTeam, alice)})
			if err != nil {
				t.Fatalf("finding the person behind %s: %v", alice, err)
			}
			return p
		}

		say("first")
		e.waitReply("D0ALICE", "[Ali] first")
		say("second")
		e.waitReply("D0ALICE", "[Ali] second")
		e.waitIdle()
		if n := infos(); n != 1 {
			t.Fatalf("users.info was called %d times for two messages within the TTL; want 1", n)
		}

		skew.Add(int64(61 * time.Minute))
		e.slack.SetUser(slacktest.User{ID: alice, Name: "alice", DisplayName: "Alicia", TZ: "America/New_York", TZOffset: -18000})
		say("third")
		e.waitReply("D0ALICE", "[Alicia] third")
		e.waitIdle()
		if n := infos(); n != 2 {
			t.Fatalf("users.info was called %d times after the TTL passed; want 2", n)
		}
		if p := person(); p.DisplayName != "Alicia" || p.TimeZone != "America/New_York" {
			t.Fatalf("after a refresh the person is %q in %q; want Alicia in America/New_York", p.DisplayName, p.TimeZone)
		}

		skew.Add(int64(61 * time.Minute))
		e.slack.Fail("users.info", slacktest.Fault{Error: "user_not_visible"})
		say("fourth")
		e.waitReply("D0ALICE", "[Alicia] fourth")
		e.waitIdle()
		if n := infos(); n != 3 {
			t.Fatalf("users.info was called %d times after the TTL passed again; want 3", n)
		}
		if p := person(); p.DisplayName != "Alicia" || p.TimeZone != "America/New_York" {
			t.Fatalf("after a failed refresh the person is %q in %q; want the stored Alicia in America/New_York", p.DisplayName, p.TimeZone)
		}
		if !strings.Contains(logs.String(), "reading a profile failed; keeping the stored one") || !strings.Contains(logs.String(), "user_not_visible") {
			t.Fatalf("the failed refresh was not logged with its error")
		}
	})
}

// TestDiscordMemberNames: on Discord the model sees a member's guild
// nickname over their global name, read from the guild member through the
// real client; a user who writes only in a DM (no guild) is named from
// their user: the global name, else the username.
func TestDiscordMemberNames(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		nicky := discordgo.User{ID: "3000000000000000001", Username: "nick_user", GlobalName: "Nick Global"}
		dmOnly := discordgo.User{ID: "3000000000000000002", Username: "dm_user", GlobalName: "Dee Global"}
		plain := discordgo.User{ID: "3000000000000000003", Username: "plain_user"}
		e.fake.SetMember(discordGuild, discordgo.Member{User: &nicky, Nick: "Nicky"})
		e.fake.SetUser(dmOnly)
		e.fake.SetUser(plain)

		e.mention("4000000000000000001", nicky, "hi from the guild")
		discordPoll(t, "a reply in the guild channel", func() (bool, string) {
			var seen []string
			for _, m := range e.fake.BotMessages("4000000000000000001") {
				if strings.Contains(m.Content, "You said: [Nicky] hi from the guild") {
					return true, ""
				}
				seen = append(seen, m.Content)
			}
			return false, fmt.Sprint(seen)
		})
		if calls := e.fake.CallsTo("GET /guilds/{guild}/members/{user}"); len(calls) == 0 {
			t.Errorf("the guild member was never read")
		}

		dm := e.fake.DMChannel(dmOnly)
		e.fake.UserMessage(dm, dmOnly, "hi from a DM")
		e.waitBotMessage(dm, "You said: [Dee Global] hi from a DM")

		plainDM := e.fake.DMChannel(plain)
		e.fake.UserMessage(plainDM, plain, "no global name")
		e.waitBotMessage(plainDM, "You said: [plain_user] no global name")

		for _, u := range []discordgo.User{dmOnly, plain} {
			for _, c := range e.fake.CallsTo("GET /guilds/{guild}/members/{user}") {
				if strings.HasSuffix(c.Path, "/"+u.ID) {
					t.Errorf("a DM-only user %s was looked up as a guild member: %s", u.Username, c.Path)
				}
			}
		}
		p, err := e.store.PersonFind(context.Background(), &store.PersonFindParams{Identity: core.IdentityOf("discord", discordGuild, nicky.ID)})
		if err != nil || p.DisplayName != "Nicky" {
			t.Fatalf("the person behind %s: %+v (err %v); want Nicky", nicky.Username, p, err)
		}
	})
}
