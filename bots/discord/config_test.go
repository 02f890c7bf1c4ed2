package discord

import (
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig([]byte(`
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
`))
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

	all, err := ParseConfig([]byte("discord:\n  thread_on_mention: true\n"))
	if err != nil || !all.ThreadOnEveryMention {
		t.Errorf("thread_on_mention: true = %+v, %v; want every channel", all, err)
	}
	none, err := ParseConfig([]byte("agents: []\n"))
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
func TestParseConfigErrorsNameTheField(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, want string }{
		{"discord:\n  alow_bots: true\n", "discord.alow_bots: unknown field"},
		{"discord:\n  allow_bots: yes please\n", "discord.allow_bots: must be true or false"},
		{"discord:\n  thread_on_mention: [general]\n", "discord.thread_on_mention[0]: must be a Discord id"},
		{"discord:\n  command_guild_id: my-guild\n", "discord.command_guild_id: must be a Discord id"},
		{"discord:\n  streaming:\n    edit_interval: 200ms\n", "discord.streaming.edit_interval: \"200ms\" must be a duration of at least 1s"},
		{"discord:\n  streaming:\n    interval: 2s\n", "discord.streaming.interval: unknown field"},
		{"discord:\n  cards: fancy\n", "discord.cards: \"fancy\" must be components_v2 or embeds"},
		{"discord:\n  channels:\n    answer: [1]\n", "discord.channels.answer: unknown field"},
		{"discord:\n  mentions:\n    replies: 3\n", "discord.mentions.replies: must be true or false"},
		{"discord: [1]\n", "discord: must be a mapping"},
	}
	for _, tc := range tests {
		_, err := ParseConfig([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want one containing %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "discord.Config") {
			t.Errorf("%q: error %v names a Go type", tc.yaml, err)
		}
	}
}
