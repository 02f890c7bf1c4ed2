package discord

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
)

// Config is the discord: block of switchboard.yaml (config.DiscordSection)
// checked by ConfigFrom: the adapter's settings an operator chooses. Every
// field is optional; Apply copies the ones set onto Options.
type Config struct {
	AllowBots       *bool
	ThreadOnMention []string
	// ThreadOnEveryMention is thread_on_mention: true.
	ThreadOnEveryMention bool
	CommandGuildID       string
	StreamEditInterval   time.Duration
	AckReaction          *string
	DoneReaction         *string
	AgentWebhooks        *bool
	CardsAsEmbeds        *bool
	ForumPosts           *bool
	ForumTags            []string
	AnswerAll            []string
	Ignore               []string
	ReplyIsMention       *bool
}

// Card styles of the cards: field.
const (
	CardsComponentsV2 = "components_v2"
	CardsEmbeds       = "embeds"
)

// ConfigFrom checks the discord: section of switchboard.yaml, as
// config.Load decoded it, and returns the settings to apply. Errors name
// the field as it is written in the file (discord.streaming.edit_interval),
// never a Go type; every wrong field is reported.
func ConfigFrom(sec *config.DiscordSection) (*Config, error) {
	c := &Config{
		AllowBots: sec.AllowBots, ThreadOnEveryMention: sec.ThreadOnMention.All,
		AgentWebhooks: sec.AgentWebhooks, ForumPosts: sec.ForumPosts, ReplyIsMention: sec.Mentions.Replies,
	}
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	check(ids("discord.thread_on_mention", sec.ThreadOnMention.Channels, &c.ThreadOnMention))
	if id := sec.CommandGuildID; id != "" {
		check(idField("discord.command_guild_id", id))
		c.CommandGuildID = id
	}
	if d := sec.Streaming.EditInterval; d != 0 && d < minStreamInterval {
		check(fmt.Errorf("discord.streaming.edit_interval: %q must be a duration of at least %s, such as 1s or 1500ms", config.ShortDuration(d), minStreamInterval))
	}
	c.StreamEditInterval = sec.Streaming.EditInterval
	for _, r := range []struct {
		where string
		v     *string
		into  **string
	}{{"discord.ack_reaction", sec.AckReaction, &c.AckReaction}, {"discord.done_reaction", sec.DoneReaction, &c.DoneReaction}} {
		if r.v != nil && (*r.v != strings.TrimSpace(*r.v) || len(*r.v) > 64) {
			check(fmt.Errorf("%s: %q must be one emoji (unicode, or name:id for a custom one)", r.where, *r.v))
		}
		*r.into = r.v
	}
	switch sec.Cards {
	case "":
	case CardsComponentsV2, CardsEmbeds:
		embeds := sec.Cards == CardsEmbeds
		c.CardsAsEmbeds = &embeds
	default:
		check(fmt.Errorf("discord.cards: %q must be %s or %s", sec.Cards, CardsComponentsV2, CardsEmbeds))
	}
	for i, n := range sec.ForumTags {
		if n = strings.TrimSpace(n); n == "" || len([]rune(n)) > 20 {
			check(fmt.Errorf("discord.forum_tags[%d]: %q must be a tag name of 1 to 20 characters", i, sec.ForumTags[i]))
		}
	}
	c.ForumTags = sec.ForumTags
	check(ids("discord.channels.answer_all", sec.Channels.AnswerAll, &c.AnswerAll))
	check(ids("discord.channels.ignore", sec.Channels.Ignore, &c.Ignore))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// Apply copies the settings the block sets onto o; the defaults of what it
// leaves out stay. Channels listed in answer_all join o.Channels.
func (c *Config) Apply(o *Options) {
	if c.AllowBots != nil {
		o.AllowBots = *c.AllowBots
	}
	if c.ThreadOnMention != nil {
		o.ThreadOnMention = c.ThreadOnMention
	}
	if c.ThreadOnEveryMention {
		o.ThreadOnEveryMention = true
	}
	if c.CommandGuildID != "" {
		o.CommandGuildID = c.CommandGuildID
	}
	if c.StreamEditInterval != 0 {
		o.StreamUpdateInterval = c.StreamEditInterval
	}
	if c.AckReaction != nil {
		o.AckReaction = *c.AckReaction
	}
	if c.DoneReaction != nil {
		o.DoneReaction = *c.DoneReaction
	}
	if c.AgentWebhooks != nil {
		o.AgentWebhooks = *c.AgentWebhooks
	}
	if c.CardsAsEmbeds != nil {
		o.CardsAsEmbeds = *c.CardsAsEmbeds
	}
	if c.ForumPosts != nil {
		o.ForumPosts = *c.ForumPosts
	}
	if c.ForumTags != nil {
		o.ForumTags = c.ForumTags
	}
	for _, id := range c.AnswerAll {
		if !slices.Contains(o.Channels, id) {
			o.Channels = append(o.Channels, id)
		}
	}
	o.IgnoreChannels = append(o.IgnoreChannels, c.Ignore...)
	if c.ReplyIsMention != nil {
		o.ReplyIsMention = *c.ReplyIsMention
	}
}

// idField checks a Discord id. YAML reads an unquoted id as a number,
// whose text the section keeps, so both forms are accepted; either must be
// digits.
func idField(where, id string) error {
	if !isSnowflake(id) {
		return fmt.Errorf("%s: must be a Discord id (digits, quoted or not), got %q", where, id)
	}
	return nil
}

// ids checks a list of Discord ids and keeps it in into.
func ids(where string, list []string, into *[]string) error {
	for i, id := range list {
		if err := idField(fmt.Sprintf("%s[%d]", where, i), id); err != nil {
			return err
		}
	}
	*into = list
	return nil
}
