package app_test

// End-to-end tests of the Discord-native features (issue 17, items 6 to
// 8) through the real service and discordgo against the fake Discord:
// cards in Components V2 and their embed fallback, agents posting through
// channel webhooks, forum posts, /ask autocomplete, user install, and the
// discord: block of switchboard.yaml.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"gopkg.in/yaml.v3"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

const (
	nativeSmallCard = "two hotels please"
	nativeLargeCard = "ten hotels please"
	nativeCardNote  = "Here are the hotels."
	nativeReply     = "Native reply: one two three four five six seven eight."
)

// nativeHotels is a post_result input of n hotels, each with a picture.
func nativeHotels(n int) map[string]any {
	var items []map[string]any
	for i := range n {
		items = append(items, map[string]any{
			"title": fmt.Sprintf("Hotel %c", 'A'+i), "subtitle": "By the river",
			"image": "https://example.com/hotel.png",
			"price": map[string]any{"amount": 100 + i, "currency": "EUR", "unit": "night"},
		})
	}
	return map[string]any{"kind": "lodging", "template": "hotel", "title": "Hotels in Lisbon", "items": items}
}

// nativeScript writes the model's script: the card keywords call
// post_result, everything else gets nativeReply, streamed a word at a time.
func nativeScript(tb testing.TB) string {
	tb.Helper()
	script := map[string]any{
		"name": "discord-native", "chunk_delay": "20ms",
		"turns": []map[string]any{
			{"after_tool": "post_result", "text": nativeCardNote},
			{"when_last_user_contains": nativeSmallCard, "tool_calls": []map[string]any{{"name": "post_result", "input": nativeHotels(2)}}},
			{"when_last_user_contains": nativeLargeCard, "tool_calls": []map[string]any{{"name": "post_result", "input": nativeHotels(10)}}},
		},
		"fallback": map[string]any{"text": nativeReply},
	}
	data, err := yaml.Marshal(script)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "native.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// waitMessage waits for a message in channel (any author) that match
// accepts, and returns it.
func (e *discordEnv) waitMessage(channel, what string, match func(*discordtest.Message) bool) *discordtest.Message {
	e.tb.Helper()
	var found *discordtest.Message
	e.fake.Wait(e.tb, what+" in channel "+channel, func() bool {
		for _, m := range e.fake.Messages(channel, "") {
			if match(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// TestDiscordCardComponentsV2: a card that fits goes out in Components V2
// (flag 1<<15, a container, no content or embeds); one too big for V2's 40
// components goes out as embeds. The fake refuses either form over its
// limits, so both arriving proves both fit.
func TestDiscordCardComponentsV2(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, nativeScript(t), openAccess, nil)
		const channel = "3100000000000000001"
		e.mention(channel, discordAlice, nativeSmallCard)
		v2 := e.waitMessage(channel, "a Components V2 card", func(m *discordtest.Message) bool { return m.ComponentsV2() })
		text := strings.Join(v2.TextDisplays(), "\n")
		if v2.Content != "" || len(v2.Embeds) != 0 || !strings.Contains(text, "Hotel A") || !strings.Contains(text, "Hotel B") {
			t.Errorf("V2 card: content %q, embeds %s, text displays %q; want both hotels in text displays and nothing else", v2.Content, v2.Embeds, text)
		}
		if !strings.Contains(string(v2.Components), `"type":17`) {
			t.Errorf("V2 card components = %s; want a container (type 17)", v2.Components)
		}
		e.settle(channel)

		e.mention(channel, discordAlice, nativeLargeCard)
		embeds := e.waitMessage(channel, "the large card as embeds", func(m *discordtest.Message) bool {
			return strings.Contains(string(m.Embeds), "Hotel J")
		})
		if embeds.ComponentsV2() {
			t.Errorf("the large card carries the V2 flag; want embeds (10 hotels with pictures need more than 40 components)")
		}
		e.settle(channel)
		for _, c := range e.fake.Calls() {
			if c.Status == 400 {
				t.Errorf("the fake refused %s %s: %s", c.Method, c.Path, c.Body)
			}
		}
	})
}

const nativeTwoAgents = `access:
  dm_policy: open
discord:
  allow_bots: true
agents:
  - name: atlas
    display_name: Atlas
    icon_url: https://example.com/atlas.png
    answers: {default: true}
  - name: scout
`

// TestDiscordAgentWebhook: with two agents, a reply goes out through the
// channel's webhook under the agent's name and avatar, streamed by webhook
// message edits; the webhook's own message (which Discord sends back on
// the gateway) is not taken as input even with allow_bots; another bot's
// mention goes through the normal path and is answered; a channel where the
// bot lacks Manage Webhooks gets the reply from the bot itself.
func TestDiscordAgentWebhook(t *testing.T) {
	t.Parallel()
	const channel, denied = "3200000000000000001", "3200000000000000002"
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, nativeScript(t), nativeTwoAgents, func(f *discordtest.Server) {
			f.AddChannel(discordgo.Channel{ID: channel, GuildID: discordGuild, Type: discordgo.ChannelTypeGuildText})
			f.AddChannel(discordgo.Channel{ID: denied, GuildID: discordGuild, Type: discordgo.ChannelTypeGuildText})
			f.DenyWebhooks(denied)
		})
		e.mention(channel, discordAlice, "hello atlas")
		reply := e.waitMessage(channel, "the webhook reply", func(m *discordtest.Message) bool {
			return m.WebhookID != "" && m.Content == nativeReply
		})
		if reply.Author.Username != "Atlas" || reply.AvatarURL != "https://example.com/atlas.png" {
			t.Errorf("webhook reply from %q with avatar %q; want Atlas with the agent's icon", reply.Author.Username, reply.AvatarURL)
		}
		if hooks := e.fake.Webhooks(channel); len(hooks) != 1 || hooks[0].ID != reply.WebhookID {
			t.Errorf("webhooks in the channel = %+v; want the one the reply came from", hooks)
		}
		conv := e.settle(channel)
		e.checkOneExchange(conv, "hello atlas", nativeReply)
		if n := len(e.fake.CallsTo("PATCH /webhooks/{app}/{token}/messages/{message}")); n == 0 {
			t.Errorf("no webhook message edits; want the stream shown by editing the webhook's message")
		}
		if n := len(e.fake.BotMessages(channel)); n != 0 {
			t.Errorf("%d messages from the bot itself; want the reply only through the webhook", n)
		}

		// Another bot is let in by allow_bots and answered like anyone.
		other := discordgo.User{ID: "2000000000000000077", Username: "helperbot", Bot: true}
		e.fake.UserMessage(channel, other, "<@"+e.fake.Bot.ID+"> hello from a bot")
		e.fake.Wait(t, "the answer to the other bot", func() bool {
			n := 0
			for _, m := range e.fake.Messages(channel, "") {
				if m.WebhookID != "" && m.Content == nativeReply {
					n++
				}
			}
			return n == 2
		})
		e.settle(channel)
		users := e.entries(conv, "user")
		if len(users) != 2 {
			t.Errorf("%d user entries; want 2 (alice and the other bot), the agent's own posts never taken as input", len(users))
		}

		e.mention(denied, discordAlice, "hello there")
		e.waitBotMessage(denied, nativeReply)
		e.settle(denied)
	})
}

// TestDiscordForumPost: a new post in a forum channel is a conversation:
// its first message is answered in the post's thread without a mention.
func TestDiscordForumPost(t *testing.T) {
	t.Parallel()
	const forum = "3300000000000000001"
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, nativeScript(t), openAccess, func(f *discordtest.Server) {
			f.AddChannel(discordgo.Channel{ID: forum, GuildID: discordGuild, Type: discordgo.ChannelTypeGuildForum, Name: "help"})
		})
		th, _ := e.fake.ForumPost(forum, discordAlice, "Printer on fire", "How do I put out the printer?")
		e.waitBotMessage(th.ID, nativeReply)
		if n := len(e.fake.BotMessages(forum)); n != 0 {
			t.Errorf("%d bot messages in the forum itself; want the answer in the post", n)
		}
		discordPoll(t, "the post's conversation to settle", func() (bool, string) {
			return len(e.fake.BotMessages(th.ID)) == 1, fmt.Sprintf("%d bot messages in the post", len(e.fake.BotMessages(th.ID)))
		})
	})
}

// TestDiscordAskAutocomplete: /ask's agent option completes agent names
// (a type 8 answer), and the commands are registered for guild and user
// installs in every context.
func TestDiscordAskAutocomplete(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, nativeScript(t), nativeTwoAgents, nil)
		cases := []struct {
			typed string
			want  []string
		}{{"", []string{"atlas", "scout"}}, {"sc", []string{"scout"}}, {"T", []string{"atlas", "scout"}}, {"zz", nil}}
		for _, tc := range cases {
			in := e.fake.Autocomplete("3400000000000000001", "ask", map[string]string{"prompt": "hi", "agent": tc.typed}, "agent", discordAlice)
			var got []string
			e.fake.Wait(t, "the autocomplete answer", func() bool {
				i := e.fake.Interaction(in.ID)
				if i.ResponseType != discordgo.InteractionApplicationCommandAutocompleteResult {
					return false
				}
				got = nil
				for _, c := range i.Choices {
					got = append(got, c.Name)
				}
				return true
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("typing %q offers %v; want %v", tc.typed, got, tc.want)
			}
		}
		for _, c := range e.fake.Commands("") {
			if c.IntegrationTypes == nil || len(*c.IntegrationTypes) != 2 || c.Contexts == nil || len(*c.Contexts) != 3 {
				t.Errorf("/%s registered with integration types %v and contexts %v; want guild and user install, all three contexts", c.Name, c.IntegrationTypes, c.Contexts)
			}
		}
	})
}

// TestDiscordUserInstall: /ask used in a group DM, where only the person
// installed the app and the bot cannot post, is answered through the
// interaction: the echo, then the answer as a follow-up.
func TestDiscordUserInstall(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, nativeScript(t), openAccess, nil)
		in := e.fake.UserInstallCommand("3500000000000000001", "", "ask", map[string]string{"prompt": "hello from a group dm"}, discordAlice)
		var answer *discordtest.Message
		e.fake.Wait(t, "the answer as a follow-up of the interaction", func() bool {
			for _, id := range e.fake.Interaction(in.ID).Followups {
				if m := e.fake.Message(id); m != nil && m.Content == nativeReply {
					answer = m
					return true
				}
			}
			return false
		})
		if answer.ChannelID != "3500000000000000001" {
			t.Errorf("follow-up in channel %s; want the group DM", answer.ChannelID)
		}
		if orig := e.fake.Message(e.fake.Interaction(in.ID).OriginalID); orig == nil || !strings.Contains(orig.Content, "hello from a group dm") {
			t.Errorf("the interaction's response = %+v; want the echoed question", orig)
		}
	})
}

// TestDiscordSettings: the discord: block is applied: slash commands in
// the configured guild, a thread on every mention, the acknowledgement
// reaction, an ignored channel; a mistake in it stops the start naming the
// field.
func TestDiscordSettings(t *testing.T) {
	t.Parallel()
	const (
		guild   = "3600000000000000009"
		channel = "3600000000000000001"
		ignored = "3600000000000000002"
	)
	config := `access:
  dm_policy: open
discord:
  command_guild_id: "` + guild + `"
  thread_on_mention: true
  ack_reaction: "👀"
  streaming:
    edit_interval: 2s
  channels:
    ignore: [` + ignored + `]
`
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, nativeScript(t), config, nil)
		if cmds := e.fake.Commands(guild); len(cmds) == 0 || len(e.fake.Commands("")) != 0 {
			t.Errorf("commands: %d in guild %s, %d global; want them in the guild only", len(cmds), guild, len(e.fake.Commands("")))
		}
		q := e.mention(channel, discordAlice, "a question")
		// The thread started on the question has the question's id.
		e.waitBotMessage(q.ID, nativeReply)
		if th := e.fake.Channel(q.ID); th == nil || th.ParentID != channel {
			t.Errorf("thread = %+v; want one on the question under %s", th, channel)
		}
		// 👀 while it works, ✅ in its place once the reply is in.
		e.fake.Wait(t, "✅ in place of 👀 on the question", func() bool {
			return slices.Equal(e.fake.Message(q.ID).Reactions, []string{"✅"})
		})
		if n := len(e.fake.CallsTo(discordRouteReaction)); n != 2 {
			t.Errorf("%d reactions added for the question, want 👀 then ✅", n)
		}
		e.mention(ignored, discordAlice, "anyone?")
		e.mention(channel, discordAlice, "a second question")
		e.fake.Wait(t, "the second answer", func() bool { return len(e.fake.CallsTo(discordRouteReaction)) >= 3 })
		if b := e.binding(ignored); b != nil {
			t.Errorf("the ignored channel has a conversation; want its messages never read")
		}
	})

	t.Run("a mistake names the field", func(t *testing.T) {
		t.Parallel()
		fake := discordtest.NewServer(t)
		cfg := app.Config{
			Addr: "127.0.0.1:0", DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "sb.db"),
			DiscordBotToken: fake.Token, DiscordAPIURL: fake.URL,
			ConfigPath: writeConfig(t, "discord:\n  streaming:\n    edit_interval: fast\n"),
			Env:        func(string) string { return "" }, Logger: testenv.Logger(t),
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a, err := app.Open(ctx, cfg)
		if err == nil {
			_ = a.Stop(ctx)
			t.Fatal("the service opened with a broken discord: block")
		}
		if !strings.Contains(err.Error(), "discord.streaming.edit_interval") {
			t.Errorf("error %q; want it to name discord.streaming.edit_interval", err)
		}
	})
}

const discordRouteReaction = "PUT /channels/{channel}/messages/{message}/reactions/{emoji}/@me"
