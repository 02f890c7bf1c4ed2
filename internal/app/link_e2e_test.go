package app_test

import (
	"context"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// slackAndDiscord starts one service on Slack and Discord at once, on a
// clock the test moves with the returned func.
func slackAndDiscord(t *testing.T, db string) (*slackEnv, *discordEnv, func(time.Duration)) {
	t.Helper()
	fake := discordtest.NewServer(t)
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	se := startSlack(t, db, envOptions{discord: fake, now: now})
	de := &discordEnv{tb: t, app: se.app, fake: fake, store: se.store, base: se.base, http: se.http}
	return se, de, func(d time.Duration) { skew.Add(int64(d)) }
}

var linkCodeRE = regexp.MustCompile("`([A-Z2-9]{8})`")

func linkCode(tb testing.TB, reply string) string {
	tb.Helper()
	m := linkCodeRE.FindStringSubmatch(reply)
	if m == nil {
		tb.Fatalf("no link code in %q", reply)
	}
	return m[1]
}

// TestLinkSlackAndDiscord: "!link" in a Slack DM gives a code; typed in a
// Discord DM it makes both accounts one person, who keeps the older
// (Slack) record's id, name and time zone. A wrong, reused or expired
// code, or one typed on the platform that issued it, is refused with a
// reply that says so; the log never holds a code typed.
func TestLinkSlackAndDiscord(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		se, de, advance := slackAndDiscord(t, db(t))
		ctx := context.Background()
		se.slack.SetUser(slacktest.User{ID: alice, Name: "alice", RealName: "Alice Liddell", DisplayName: "Ali", TZ: "Europe/Paris", TZOffset: 3600})
		ana := discordgo.User{ID: "5001", Username: "ana", GlobalName: "Ana D"}
		eve := discordgo.User{ID: "5002", Username: "eve", GlobalName: "Eve"}
		de.fake.SetUser(ana)
		de.fake.SetUser(eve)
		anaDM, eveDM := de.fake.DMChannel(ana), de.fake.DMChannel(eve)

		se.mustPost(newEvent("EvLink1", directMessage("D0ALICE", "1700001000.000001", alice, "!link")))
		code := linkCode(t, shown(se.waitReply("D0ALICE", "Your link code is")))
		slackPerson, err := se.store.PersonFind(ctx, &store.PersonFindParams{Identity: core.IdentityOf("slack", e2eTeam, alice)})
		if err != nil {
			t.Fatalf("finding the person behind %s: %v", alice, err)
		}

		de.fake.UserMessage(anaDM, ana, "!link ZZZZZZZZ")
		de.waitBotMessage(anaDM, "that code is unknown, used or expired")

		se.mustPost(newEvent("EvLink2", directMessage("D0ALICE", "1700001000.000002", alice, "!link "+code)))
		se.waitReply("D0ALICE", "type it in a DM on the other platform")

		de.fake.UserMessage(anaDM, ana, "!link "+code)
		linked := de.waitBotMessage(anaDM, "Linked")
		if !strings.Contains(linked.Content, "slack and discord") || !strings.Contains(linked.Content, "Ali") {
			t.Errorf("the link reply %q does not name both platforms and the kept name Ali", linked.Content)
		}
		fromDiscord, err := se.store.PersonFind(ctx, &store.PersonFindParams{Identity: core.IdentityOf("discord", "", ana.ID)})
		if err != nil {
			t.Fatalf("finding the person behind discord user %s: %v", ana.ID, err)
		}
		if fromDiscord.ID != slackPerson.ID {
			t.Fatalf("discord user %s is person %s; want the older Slack person %s", ana.ID, fromDiscord.ID, slackPerson.ID)
		}
		if fromDiscord.DisplayName != "Ali" || fromDiscord.TimeZone != "Europe/Paris" {
			t.Fatalf("the merged person is %q in %q; want the older record's Ali in Europe/Paris", fromDiscord.DisplayName, fromDiscord.TimeZone)
		}
		if len(fromDiscord.Identities) != 2 {
			t.Fatalf("the merged person has %d identities; want the Slack and the Discord one", len(fromDiscord.Identities))
		}

		de.fake.UserMessage(eveDM, eve, "!link "+code)
		de.waitBotMessage(eveDM, "that code is unknown, used or expired")

		se.mustPost(newEvent("EvLink3", directMessage("D0ALICE", "1700001000.000003", alice, "!link")))
		var second string
		poll(t, "a second link code", func() (bool, string) {
			for _, m := range se.botMessages("D0ALICE") {
				if c := linkCodeRE.FindStringSubmatch(shown(m)); c != nil && c[1] != code {
					second = c[1]
					return true, ""
				}
			}
			return false, "only the first code"
		})
		advance(core.LinkCodeTTL + time.Minute)
		de.fake.UserMessage(eveDM, eve, "!link "+second)
		poll(t, "a second refusal for eve", func() (bool, string) {
			n := 0
			for _, m := range de.fake.BotMessages(eveDM) {
				if strings.Contains(m.Content, "unknown, used or expired") {
					n++
				}
			}
			return n == 2, "refusals so far"
		})
		if p, err := se.store.PersonFind(ctx, &store.PersonFindParams{Identity: core.IdentityOf("discord", "", eve.ID)}); err != nil || p.ID == slackPerson.ID {
			t.Fatalf("eve's person after an expired code: %v (err %v); want her own", p, err)
		}

		// No code typed is in the log: not in the entries of either DM, not
		// in a conversation's title.
		for _, place := range []store.Place{
			store.PlaceFromColumns("discord", "", anaDM, ""),
			store.PlaceFromColumns("discord", "", eveDM, ""),
			store.PlaceFromColumns("slack", e2eTeam, "D0ALICE", ""),
		} {
			b, err := se.store.BindingFind(ctx, &store.BindingFindParams{Place: place})
			if err != nil {
				t.Fatalf("finding the conversation of %v: %v", place, err)
			}
			conv, err := se.store.ConversationGet(ctx, b.ConversationID)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(conv.Title, code) || strings.Contains(conv.Title, second) {
				t.Errorf("the title of %v holds a link code: %q", place, conv.Title)
			}
			users := logEntries(t, se.store, b.ConversationID, store.EntryUser)
			if len(users) == 0 {
				t.Fatalf("no user entries in %v", place)
			}
			hidden := 0
			for _, e := range users {
				text := decode[core.UserContent](t, e).Text
				if text == "!link ••••••••" {
					hidden++
				}
				if strings.Contains(text, code) || strings.Contains(text, second) || strings.Contains(text, "ZZZZZZZZ") {
					t.Errorf("the log of %v keeps a typed code: %q", place, text)
				}
			}
			if hidden == 0 {
				t.Errorf("the log of %v has no \"!link ••••••••\" entry where a code was typed", place)
			}
		}
	})
}
