package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
)

// discordConfig reads the discord: section of a whole switchboard.yaml as
// the app does: config.Parse decodes the file, ConfigFrom checks the
// section.
func discordConfig(raw string) (*Config, error) {
	file, err := config.Parse("switchboard.yaml", []byte(raw), nil)
	if err != nil {
		return nil, err
	}
	return ConfigFrom(&file.Discord)
}

func TestConfigFrom(t *testing.T) {
	t.Parallel()
	c, err := discordConfig(`
agents: []
discord:
  allow_bots: true
  thread_on_mention: [111, "222"]
  command_guild_id: 333
  streaming:
    edit_interval: 1500ms
  ack_reaction: "👀"
  agent_webhooks: false
  cards: embeds
  forum_posts: false
  channels:
    answer_all: [444]
    ignore: [555]
  mentions:
    replies: false
`)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Channels: []string{"444", "666"}, ReplyIsMention: true, ForumPosts: true, AgentWebhooks: true}
	c.Apply(&o)
	switch {
	case !o.AllowBots, strings.Join(o.ThreadOnMention, ",") != "111,222", o.CommandGuildID != "333",
		o.StreamUpdateInterval != 1500*time.Millisecond, o.AckReaction != "👀", o.AgentWebhooks, !o.CardsAsEmbeds,
		o.ForumPosts, strings.Join(o.Channels, ",") != "444,666", strings.Join(o.IgnoreChannels, ",") != "555", o.ReplyIsMention:
		t.Errorf("options after Apply = %+v; want every setting of the block", o)
	}

	all, err := discordConfig("discord:\n  thread_on_mention: true\n")
	if err != nil || !all.ThreadOnEveryMention {
		t.Errorf("thread_on_mention: true = %+v, %v; want every channel", all, err)
	}
	none, err := discordConfig("agents: []\n")
	if err != nil {
		t.Fatal(err)
	}
	o = Options{AgentWebhooks: true}
	none.Apply(&o)
	if !o.AgentWebhooks || o.AllowBots {
		t.Errorf("no block changed the options: %+v", o)
	}
}

// Errors name the field as written in the file, never a Go type.
func TestConfigFromErrorsNameTheField(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, want string }{
		{"discord:\n  alow_bots: true\n", `switchboard.yaml line 2: unknown field "alow_bots" in discord`},
		{"discord:\n  allow_bots: yes please\n", `line 2: discord.allow_bots: "yes please" must be true or false`},
		{"discord:\n  thread_on_mention: [general]\n", "discord.thread_on_mention[0]: must be a Discord id"},
		{"discord:\n  command_guild_id: my-guild\n", "discord.command_guild_id: must be a Discord id"},
		{"discord:\n  streaming:\n    edit_interval: 200ms\n", "discord.streaming.edit_interval: \"200ms\" must be a duration of at least 1s"},
		{"discord:\n  streaming:\n    interval: 2s\n", `line 3: unknown field "interval" in discord.streaming`},
		{"discord:\n  streaming:\n    edit_interval: fast\n", `line 3: discord.streaming.edit_interval: "fast" must be a duration`},
		{"discord:\n  thread_on_mention: general\n", `line 2: discord.thread_on_mention: "general" must be a list`},
		{"discord:\n  channels:\n    ignore: [1, x]\n", "discord.channels.ignore[1]: must be a Discord id"},
		{"discord:\n  ack_reaction: \" 👀\"\n", "discord.ack_reaction: \" 👀\" must be one emoji"},
		{"discord:\n  cards: fancy\n", "discord.cards: \"fancy\" must be components_v2 or embeds"},
		{"discord:\n  channels:\n    answer: [1]\n", `unknown field "answer" in discord.channels`},
		{"discord:\n  mentions:\n    replies: 3\n", `discord.mentions.replies: "3" must be true or false`},
		{"discord: [1]\n", "discord: a list must be a mapping"},
	}
	for _, tc := range tests {
		_, err := discordConfig(tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want one containing %q", tc.yaml, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "discord.Config") || strings.Contains(err.Error(), "config.")) {
			t.Errorf("%q: error %v names a Go type", tc.yaml, err)
		}
	}
}
