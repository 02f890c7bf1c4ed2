package discord

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the discord: block of switchboard.yaml: the adapter's
// settings an operator chooses. Every field is optional; Apply copies the
// ones set onto Options.
//
//	discord:
//	  allow_bots: false           # other bots' messages reach core (the loop guard applies)
//	  thread_on_mention: [123]    # or true: every channel
//	  command_guild_id: "456"     # register slash commands in one guild
//	  streaming:
//	    edit_interval: 1s         # least time between two edits of a streamed reply
//	  ack_reaction: "👀"          # added to each message taken up
//	  done_reaction: "✅"         # replaces it once the reply is delivered
//	  agent_webhooks: true        # agents post under their own name and avatar
//	  cards: components_v2        # or embeds
//	  forum_posts: true           # a new forum post is a conversation
//	  channels:
//	    answer_all: [789]         # every message is addressed to the bot
//	    ignore: [790]             # never read
//	  mentions:
//	    replies: true             # a reply to the bot's message counts as a mention
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
	AnswerAll            []string
	Ignore               []string
	ReplyIsMention       *bool
}

// Card styles of the cards: field.
const (
	CardsComponentsV2 = "components_v2"
	CardsEmbeds       = "embeds"
)

// ParseConfig reads the discord: block of a switchboard.yaml (raw is the
// whole file). A missing block is an empty Config. Errors name the field as
// it is written in the file (discord.streaming.edit_interval), never a Go
// type.
func ParseConfig(raw []byte) (*Config, error) {
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	node, ok := doc["discord"]
	c := &Config{}
	if !ok || node.Kind == 0 || node.Tag == "!!null" {
		return c, nil
	}
	fields, err := mapping(&node, "discord")
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, f := range fields {
		key, v := f.key, f.v
		where := "discord." + key
		var err error
		switch key {
		case "allow_bots":
			c.AllowBots, err = boolField(v, where)
		case "thread_on_mention":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
				var all bool
				err = v.Decode(&all)
				c.ThreadOnEveryMention = all
			} else {
				c.ThreadOnMention, err = idsField(v, where)
			}
		case "command_guild_id":
			c.CommandGuildID, err = idField(v, where)
		case "streaming":
			err = c.streaming(v, where)
		case "ack_reaction", "done_reaction":
			var s string
			if err = scalar(v, where, "an emoji such as \"👀\"", &s); err == nil {
				if s != strings.TrimSpace(s) || len(s) > 64 {
					err = fmt.Errorf("%s: %q must be one emoji (unicode, or name:id for a custom one)", where, s)
				}
				if key == "ack_reaction" {
					c.AckReaction = &s
				} else {
					c.DoneReaction = &s
				}
			}
		case "agent_webhooks":
			c.AgentWebhooks, err = boolField(v, where)
		case "cards":
			var s string
			if err = scalar(v, where, CardsComponentsV2+" or "+CardsEmbeds, &s); err == nil {
				switch s {
				case CardsComponentsV2:
					c.CardsAsEmbeds = new(bool)
				case CardsEmbeds:
					t := true
					c.CardsAsEmbeds = &t
				default:
					err = fmt.Errorf("%s: %q must be %s or %s", where, s, CardsComponentsV2, CardsEmbeds)
				}
			}
		case "forum_posts":
			c.ForumPosts, err = boolField(v, where)
		case "channels":
			err = c.channels(v, where)
		case "mentions":
			err = c.mentions(v, where)
		default:
			err = fmt.Errorf("%s: unknown field (known: allow_bots, thread_on_mention, command_guild_id, streaming, ack_reaction, done_reaction, agent_webhooks, cards, forum_posts, channels, mentions)", where)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) streaming(v *yaml.Node, where string) error {
	fields, err := mapping(v, where)
	if err != nil {
		return err
	}
	for _, kv := range fields {
		key, f := kv.key, kv.v
		switch key {
		case "edit_interval":
			var s string
			if err := scalar(f, where+"."+key, "a duration such as 1s or 1500ms", &s); err != nil {
				return err
			}
			d, err := time.ParseDuration(s)
			if err != nil || d < minStreamInterval {
				return fmt.Errorf("%s.%s: %q must be a duration of at least %s, such as 1s or 1500ms", where, key, s, minStreamInterval)
			}
			c.StreamEditInterval = d
		default:
			return fmt.Errorf("%s.%s: unknown field (known: edit_interval)", where, key)
		}
	}
	return nil
}

func (c *Config) channels(v *yaml.Node, where string) error {
	fields, err := mapping(v, where)
	if err != nil {
		return err
	}
	for _, kv := range fields {
		key, f := kv.key, kv.v
		switch key {
		case "answer_all":
			c.AnswerAll, err = idsField(f, where+"."+key)
		case "ignore":
			c.Ignore, err = idsField(f, where+"."+key)
		default:
			err = fmt.Errorf("%s.%s: unknown field (known: answer_all, ignore)", where, key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) mentions(v *yaml.Node, where string) error {
	fields, err := mapping(v, where)
	if err != nil {
		return err
	}
	for _, kv := range fields {
		key, f := kv.key, kv.v
		switch key {
		case "replies":
			c.ReplyIsMention, err = boolField(f, where+"."+key)
		default:
			err = fmt.Errorf("%s.%s: unknown field (known: replies)", where, key)
		}
		if err != nil {
			return err
		}
	}
	return nil
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

// field is one key of a mapping and its value.
type field struct {
	key string
	v   *yaml.Node
}

// mapping reads a mapping node's fields in file order, refusing a field
// given twice.
func mapping(v *yaml.Node, where string) ([]field, error) {
	if v.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping of settings (line %d)", where, v.Line)
	}
	var out []field
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i].Value
		if seen[k] {
			return nil, fmt.Errorf("%s.%s: given twice (line %d)", where, k, v.Content[i].Line)
		}
		seen[k] = true
		out = append(out, field{k, v.Content[i+1]})
	}
	return out, nil
}

func scalar(v *yaml.Node, where, want string, into *string) error {
	if v.Kind != yaml.ScalarNode {
		return fmt.Errorf("%s: must be %s (line %d)", where, want, v.Line)
	}
	*into = v.Value
	return nil
}

func boolField(v *yaml.Node, where string) (*bool, error) {
	var b bool
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
		return nil, fmt.Errorf("%s: must be true or false (line %d)", where, v.Line)
	}
	return &b, nil
}

// idField reads a Discord id. YAML reads an unquoted id as a number, so
// both forms are accepted; either must be digits.
func idField(v *yaml.Node, where string) (string, error) {
	if v.Kind != yaml.ScalarNode || !isSnowflake(v.Value) {
		return "", fmt.Errorf("%s: must be a Discord id (digits, quoted or not), got %q (line %d)", where, v.Value, v.Line)
	}
	return v.Value, nil
}

func idsField(v *yaml.Node, where string) ([]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: must be a list of Discord ids (line %d)", where, v.Line)
	}
	out := make([]string, 0, len(v.Content))
	for i, e := range v.Content {
		id, err := idField(e, fmt.Sprintf("%s[%d]", where, i))
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}
