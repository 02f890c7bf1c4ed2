package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots/discord"
	"github.com/switchboardhq/switchboard/store"
)

var discordBob = discordgo.User{ID: "2000000000000000003", Username: "bob"}

// TestDiscordMessageCommandAnswersInThread: "Ask about this message" on a
// message nobody addressed to the bot echoes what was asked about, starts
// a thread on that message, and the agent answers the message there, once.
func TestDiscordMessageCommandAnswersInThread(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		const channel = "3000000000000000701"
		target := e.fake.UserMessage(channel, discordBob, "Is the staging database back up after the migration?")
		in := e.fake.MessageCommand(target.ID, discord.CommandAskMessage, discordAlice)

		// The thread is started on the message itself, and takes its id.
		answer := e.waitBotMessage(target.ID, "Is the staging database back up after the migration?")
		if !strings.Contains(answer.Content, "asked you about a message") {
			t.Errorf("the answer %q does not show the question named the message command", answer.Content)
		}
		if th := e.fake.Channel(target.ID); th == nil || th.ParentID != channel {
			t.Fatalf("thread %+v; want one started on message %s in %s", th, target.ID, channel)
		}
		got := e.fake.Interaction(in.ID)
		echo := e.fake.Message(got.OriginalID)
		if echo == nil || !strings.Contains(echo.Content, "asked about [this message]") || !strings.Contains(echo.Content, target.ID) {
			t.Fatalf("the command's response is %+v; want it to link the message asked about", echo)
		}
		e.waitQueueEmpty()
		if n := len(e.fake.BotMessages(target.ID)); n != 1 {
			t.Fatalf("the thread has %d bot messages, want the one answer", n)
		}
	})
}

// TestDiscordUserCommandAnswersByDM: "Ask about this person" is answered
// in the asker's DM with the bot, with the person's profile as the
// question; the command's own response, private, says so.
func TestDiscordUserCommandAnswersByDM(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		in := e.fake.UserCommand("3000000000000000702", discord.CommandAskPerson, discordBob, discordAlice)
		dm := e.fake.DMChannel(discordAlice)
		answer := e.waitBotMessage(dm, "username: bob")
		if !strings.Contains(answer.Content, "asked you about") {
			t.Errorf("the DM answer %q does not show the question", answer.Content)
		}
		got := e.fake.Interaction(in.ID)
		if got.ResponseType != discordgo.InteractionResponseDeferredChannelMessageWithSource {
			t.Errorf("the command was answered with %v, want a deferred (private) response", got.ResponseType)
		}
		e.fake.Wait(t, "the private note that the answer is in the DM", func() bool {
			m := e.fake.Message(e.fake.Interaction(in.ID).OriginalID)
			return m != nil && m.Ephemeral() && strings.Contains(m.Content, "in our DM")
		})
	})
}

// waitQueueEmpty waits until no work is queued or running.
func (e *discordEnv) waitQueueEmpty() {
	e.tb.Helper()
	discordPoll(e.tb, "the work queue to drain", func() (bool, string) {
		items, err := e.store.WorkList(context.Background(), &store.WorkListParams{
			States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 1,
		})
		if err != nil {
			return false, err.Error()
		}
		if len(items) > 0 {
			return false, describeItem(items[0])
		}
		return true, ""
	})
}
