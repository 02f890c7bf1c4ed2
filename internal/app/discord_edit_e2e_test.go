package app_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// TestDiscordEditForksAndDeleteMarks: alice edits the message the agent
// answered in a channel (MESSAGE_UPDATE); the conversation forks there and
// the agent answers the new text. Deleting it (MESSAGE_DELETE) marks it in
// the fork's log.
func TestDiscordEditForksAndDeleteMarks(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartWith(t, db, 0, openAccess)
		const channel = "3700000000000000001"
		q := e.mention(channel, discordAlice, "what is two plus two")
		e.waitBotMessage(channel, "You said: [alice] what is two plus two")
		before := e.settle(channel)

		e.fake.UserEdit(q.ID, "<@"+e.fake.Bot.ID+"> what is three plus three")
		e.waitBotMessage(channel, "You said: [alice] what is three plus three")
		fork := e.settle(channel)
		c, err := e.store.ConversationGet(t.Context(), fork)
		if err != nil {
			t.Fatal(err)
		}
		if fork == before || c.ParentID == nil || *c.ParentID != before {
			t.Fatalf("the channel's conversation after the edit is %s (parent %v), want a fork of %s", fork, c.ParentID, before)
		}

		e.fake.UserDelete(q.ID)
		var marks []*store.Entry
		discordPoll(t, "the deletion marked", func() (bool, string) {
			marks = e.entries(fork, store.EntryDeleted)
			return len(marks) == 1, fmt.Sprint(len(marks))
		})
		if d := decode[core.DeletedContent](t, marks[0]); d.MessageID != q.ID {
			t.Fatalf("deleted mark %+v, want message %s", d, q.ID)
		}
		users := e.entries(fork, store.EntryUser)
		if len(users) != 1 || !strings.Contains(decode[core.UserContent](t, users[0]).Text, "three plus three") {
			t.Fatalf("the fork's user entries %d, want the edited message, kept after the delete", len(users))
		}
	})
}
