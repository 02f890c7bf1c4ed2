package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
