package app_test

// End-to-end tests of native Discord surfaces (issue 34, part 3): cards
// under the agent's identity through its webhook, and forum post tags.

import (
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
