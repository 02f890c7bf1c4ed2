package config

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// SlackSection is the slack: section of switchboard.yaml: the Slack
// adapter's settings an operator chooses. Every field is optional; one
// left out keeps the adapter's default. Load checks the shape; the Slack
// adapter checks the values (bots/slack.ConfigFrom).
//
//	slack:
//	  ack_reaction: eyes
//	  streaming: {update_interval: 1s, max_age: 4m}
type SlackSection struct {
	// Ack is what Slack's acknowledgement waits for: deferred stores the
	// event alone and the rest runs right after; inline stores the whole
	// message first.
	Ack string `yaml:"ack,omitempty" default:"deferred"`
	// AllowBots lets other bots' messages reach the agents; the loop
	// guard still applies.
	AllowBots *bool `yaml:"allow_bots,omitempty" default:"false"`
	// AgentView sets the agent session's status while a turn runs, which
	// shows Slack's stop button (the app's features.agent_view).
	AgentView *bool `yaml:"agent_view,omitempty" default:"true"`
	// TaskUpdates shows the turn's tool calls as tasks in the streamed
	// reply.
	TaskUpdates *bool `yaml:"task_updates,omitempty" default:"true"`
	// FeedbackButtons puts 👍/👎 under each agent reply, recorded in the
	// log.
	FeedbackButtons *bool `yaml:"feedback_buttons,omitempty" default:"true"`
	// HomeTab publishes the App Home tab: the person's agents, schedules
	// and pending approvals.
	HomeTab *bool `yaml:"home_tab,omitempty" default:"true"`
	// AckReaction is an emoji name (eyes, with or without colons) added to
	// each message taken up; "" for none.
	AckReaction *string `yaml:"ack_reaction,omitempty"`
	// DoneReaction replaces the ack reaction once the reply is delivered;
	// "" only removes it.
	DoneReaction *string `yaml:"done_reaction,omitempty" default:"white_check_mark"`
	// Files bounds the files people share that are read for the model.
	Files SlackFiles `yaml:"files,omitempty"`
	// Streaming paces streamed replies.
	Streaming SlackStreaming `yaml:"streaming,omitempty"`
}

// SlackFiles bounds the shared files read for the model.
type SlackFiles struct {
	// MaxBytes is the size of the largest shared file read, in bytes.
	MaxBytes *int64 `yaml:"max_bytes,omitempty" default:"5242880"`
	// MaxCount is how many files of one message are read; 0 reads none.
	MaxCount *int `yaml:"max_count,omitempty" default:"5"`
}

// SlackStreaming paces a reply streamed into Slack.
type SlackStreaming struct {
	// UpdateInterval is the least time between two updates of a streamed
	// reply, from 1s to 1m: deltas that come sooner go together.
	UpdateInterval time.Duration `yaml:"update_interval,omitempty" default:"1s"`
	// MaxAge is how long one message streams, from 30s to 4m50s: a reply
	// streamed longer goes on in a new message before Slack ends the
	// stream.
	MaxAge time.Duration `yaml:"max_age,omitempty" default:"4m"`
}

// DiscordSection is the discord: section of switchboard.yaml: the Discord
// adapter's settings an operator chooses. Every field is optional; one
// left out keeps the adapter's default. Load checks the shape; the
// Discord adapter checks the values (bots/discord.ConfigFrom). Discord
// ids may be quoted or not.
//
//	discord:
//	  thread_on_mention: [123]
//	  channels: {answer_all: [789], ignore: [790]}
type DiscordSection struct {
	// AllowBots lets other bots' messages reach the agents; the loop
	// guard still applies.
	AllowBots *bool `yaml:"allow_bots,omitempty" default:"false"`
	// ThreadOnMention lists the channel ids where a question to the bot
	// starts a thread; true: every channel.
	ThreadOnMention ThreadOnMention `yaml:"thread_on_mention,omitempty"`
	// CommandGuildID registers the slash commands in that one guild (they
	// show at once) instead of globally; DISCORD_COMMAND_GUILD_ID wins.
	CommandGuildID string `yaml:"command_guild_id,omitempty"`
	// Streaming paces streamed replies.
	Streaming DiscordStreaming `yaml:"streaming,omitempty"`
	// AckReaction is an emoji (unicode, or name:id for a custom one)
	// added to each message taken up; "" for none.
	AckReaction *string `yaml:"ack_reaction,omitempty"`
	// DoneReaction replaces the ack reaction once the reply is delivered;
	// "" only removes it.
	DoneReaction *string `yaml:"done_reaction,omitempty" default:"✅"`
	// AgentWebhooks posts each agent's replies under its own name and
	// avatar; by default on with several agents or one with a
	// display_name or icon_url.
	AgentWebhooks *bool `yaml:"agent_webhooks,omitempty"`
	// Cards is how cards are drawn: components_v2 or embeds.
	Cards string `yaml:"cards,omitempty" default:"components_v2"`
	// ForumPosts makes a new post in a forum channel a conversation.
	ForumPosts *bool `yaml:"forum_posts,omitempty" default:"true"`
	// ForumTags are names of forum tags given to each forum post an agent
	// answers in, where the forum has them; a tag named like the agent
	// (its display name, else its name) is given too.
	ForumTags []string `yaml:"forum_tags,omitempty"`
	// Channels lists channels read in a particular way.
	Channels DiscordChannels `yaml:"channels,omitempty"`
	// Mentions says what else counts as mentioning the bot.
	Mentions DiscordMentions `yaml:"mentions,omitempty"`
}

// DiscordStreaming paces a reply streamed into Discord.
type DiscordStreaming struct {
	// EditInterval is the least time between two edits of a streamed
	// reply, at least 1s.
	EditInterval time.Duration `yaml:"edit_interval,omitempty" default:"1s"`
}

// DiscordChannels lists channels by id.
type DiscordChannels struct {
	// AnswerAll are channels where every message is addressed to the bot,
	// mention or not.
	AnswerAll []string `yaml:"answer_all,omitempty"`
	// Ignore are channels never read, their threads neither.
	Ignore []string `yaml:"ignore,omitempty"`
}

// DiscordMentions says what counts as a mention.
type DiscordMentions struct {
	// Replies makes a reply to the bot's or an agent's message count as a
	// mention.
	Replies *bool `yaml:"replies,omitempty" default:"true"`
}

// ThreadOnMention is thread_on_mention: a list of channel ids, or true for
// every channel.
type ThreadOnMention struct {
	// All is thread_on_mention: true.
	All bool
	// Channels are the ids listed.
	Channels []string
}

// UnmarshalYAML reads true, false or a list of ids.
func (t *ThreadOnMention) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		return n.Decode(&t.All)
	}
	return n.Decode(&t.Channels)
}

// YAMLType is the field's type in the reference.
func (ThreadOnMention) YAMLType() string { return "list of ids, or true" }

// ShortDuration writes d as an operator would: 4m, 1h30m, 200ms (not
// 4m0s), for messages that quote a setting back.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
