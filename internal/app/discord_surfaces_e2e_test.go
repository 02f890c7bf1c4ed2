package app_test

// End-to-end tests of native Discord surfaces (issue 34, part 3): cards
// under the agent's identity through its webhook, and forum post tags.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/internal/discordtest"
)

// TestDiscordAgentWebhookCard: a card keeps the agent's identity. With two
// agents, the card an agent posts goes out through the channel's webhook
// under the agent's name and avatar, like its text reply, with its
// components kept (the webhook is executed with with_components=true,
// without which Discord ignores them); nothing is posted as the bot.
func TestDiscordAgentWebhookCard(t *testing.T) {
	t.Parallel()
	const channel = "3200000000000000011"
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, nativeScript(t), nativeTwoAgents, func(f *discordtest.Server) {
			f.AddChannel(discordgo.Channel{ID: channel, GuildID: discordGuild, Type: discordgo.ChannelTypeGuildText})
		})
		e.mention(channel, discordAlice, nativeSmallCard)
		card := e.waitMessage(channel, "the card", func(m *discordtest.Message) bool {
			return m.Flags&discordtest.FlagComponentsV2 != 0
		})
		note := e.waitMessage(channel, "the note after the card", func(m *discordtest.Message) bool {
			return m.Content == nativeCardNote
		})
		e.settle(channel)
		for _, m := range []*discordtest.Message{card, note} {
			if m.WebhookID == "" || m.Author.Username != "Atlas" || m.AvatarURL != "https://example.com/atlas.png" {
				t.Errorf("message %s (%q) from %q via webhook %q with avatar %q; want Atlas's webhook and icon",
					m.ID, m.Content, m.Author.Username, m.WebhookID, m.AvatarURL)
			}
		}
		if len(card.Components) == 0 || string(card.Components) == "[]" {
			t.Fatalf("the card lost its components through the webhook: %s", card.Components)
		}
		for _, c := range e.fake.CallsTo("POST /webhooks/{app}/{token}") {
			if c.Query.Get("with_components") != "true" {
				t.Errorf("webhook executed without with_components=true: %v", c.Query)
			}
		}
		if n := len(e.fake.BotMessages(channel)); n != 0 {
			t.Errorf("%d messages from the bot itself; want the card and the reply through the agent's webhook", n)
		}
	})
}

// TestDiscordForumPostTags: the agent answering a new forum post gives it
// the forum's tags chosen for it: the one named in discord.forum_tags and
// the one named like the agent (Atlas, its display name); the tags nobody
// chose (another agent's, a topic's) are not applied. Set once, through
// Modify Channel's applied_tags.
func TestDiscordForumPostTags(t *testing.T) {
	t.Parallel()
	const forum = "3300000000000000011"
	config := strings.Replace(nativeTwoAgents, "discord:\n", "discord:\n  forum_tags: [answered]\n", 1)
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, nativeScript(t), config, func(f *discordtest.Server) {
			f.AddChannel(discordgo.Channel{ID: forum, GuildID: discordGuild, Type: discordgo.ChannelTypeGuildForum, Name: "help",
				AvailableTags: []discordgo.ForumTag{
					{ID: "3300000000000000101", Name: "Answered"}, {ID: "3300000000000000102", Name: "atlas"},
					{ID: "3300000000000000103", Name: "scout"}, {ID: "3300000000000000104", Name: "printers"},
				}})
		})
		th, _ := e.fake.ForumPost(forum, discordAlice, "Printer on fire", "How do I put out the printer?")
		e.waitMessage(th.ID, "the answer in the post", func(m *discordtest.Message) bool { return m.Content == nativeReply })
		var got []string
		discordPoll(t, "the post's tags", func() (bool, string) {
			got = slices.Sorted(slices.Values(e.fake.Channel(th.ID).AppliedTags))
			return len(got) > 0, fmt.Sprint(got)
		})
		if want := []string{"3300000000000000101", "3300000000000000102"}; !slices.Equal(got, want) {
			t.Fatalf("the post's tags = %v; want %v (forum_tags' \"answered\" and the agent's \"atlas\")", got, want)
		}
		if n := len(e.fake.CallsTo("PATCH /channels/{channel}")); n != 1 {
			t.Errorf("the post was tagged with %d calls; want 1", n)
		}
	})
}
