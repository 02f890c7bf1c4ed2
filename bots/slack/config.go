package slack

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config holds what an operator sets for Slack under slack: in
// switchboard.yaml. A field left out is nil or zero, and Apply leaves the
// matching option at its default.
//
//	slack:
//	  allow_bots: false          # other bots' messages reach core (the loop guard applies)
//	  agent_view: true           # agent session status and the stop button (features.agent_view)
//	  task_updates: true         # tool calls shown as tasks in the streamed reply
//	  feedback_buttons: true     # 👍/👎 under each reply, recorded in the log
//	  home_tab: true             # the App Home tab lists agents, schedules, approvals
//	  ack: deferred              # deferred (default): the ack stores the event alone; inline: the whole message (see Options.InlineAck)
//	  ack_reaction: eyes         # added to each message taken up ("" for none)
//	  done_reaction: white_check_mark # replaces it once the reply is delivered ("" for none)
//	  files:
//	    max_bytes: 5242880       # largest shared file read for the model (default 5 MB)
//	    max_count: 5             # files read per message; 0 reads none
//	  streaming:
//	    update_interval: 1s      # least time between two updates of a streamed reply
//	    max_age: 4m              # a reply streamed longer goes on in a new message
type Config struct {
	AllowBots       *bool
	AgentView       *bool
	TaskUpdates     *bool
	FeedbackButtons *bool
	HomeTab         *bool
	Ack             string // "", "deferred" or "inline"
	AckReaction     *string
	DoneReaction    *string
	UpdateInterval  time.Duration
	MaxAge          time.Duration
	FileMaxBytes    *int64
	FileMaxCount    *int
}

// configFields are the slack: block's keys, for the error that names an
// unknown one.
var configFields = []string{"ack", "allow_bots", "agent_view", "task_updates", "feedback_buttons", "home_tab", "ack_reaction", "done_reaction", "files", "streaming"}

// ParseConfig reads the slack: block of a switchboard.yaml (raw is the
// whole file). A missing block is an empty Config. Errors name the field as
// written in the file (slack.streaming.max_age) and its line.
func ParseConfig(raw []byte) (*Config, error) {
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	c := &Config{}
	node, ok := doc["slack"]
	if !ok || node.Kind == 0 || node.Tag == "!!null" {
		return c, nil
	}
	var errs []error
	err := eachKey(&node, "slack", func(key string, v *yaml.Node) error {
		where := "slack." + key
		switch key {
		case "allow_bots":
			return yamlBool(v, where, &c.AllowBots)
		case "agent_view":
			return yamlBool(v, where, &c.AgentView)
		case "task_updates":
			return yamlBool(v, where, &c.TaskUpdates)
		case "feedback_buttons":
			return yamlBool(v, where, &c.FeedbackButtons)
		case "home_tab":
			return yamlBool(v, where, &c.HomeTab)
		case "ack":
			if v.Kind != yaml.ScalarNode || (v.Value != "deferred" && v.Value != "inline") {
				return fmt.Errorf("%s: %q must be deferred or inline (line %d)", where, v.Value, v.Line)
			}
			c.Ack = v.Value
			return nil
		case "ack_reaction":
			return yamlEmoji(v, where, &c.AckReaction)
		case "done_reaction":
			return yamlEmoji(v, where, &c.DoneReaction)
		case "files":
			return eachKey(v, where, func(k string, f *yaml.Node) error {
				if k != "max_bytes" && k != "max_count" {
					return fmt.Errorf("%s.%s: unknown field (known: max_bytes, max_count) (line %d)", where, k, f.Line)
				}
				var n int64
				if f.Kind != yaml.ScalarNode || f.Tag != "!!int" || f.Decode(&n) != nil || n < 0 {
					return fmt.Errorf("%s.%s: %q must be a whole number of at least 0 (line %d)", where, k, f.Value, f.Line)
				}
				if k == "max_bytes" {
					if n < 1 {
						return fmt.Errorf("%s.%s: must be at least 1 (line %d)", where, k, f.Line)
					}
					c.FileMaxBytes = &n
					return nil
				}
				m := int(n)
				c.FileMaxCount = &m
				return nil
			})
		case "streaming":
			return eachKey(v, where, func(k string, f *yaml.Node) error {
				switch k {
				case "update_interval":
					return yamlDuration(f, where+"."+k, time.Second, time.Minute, &c.UpdateInterval)
				case "max_age":
					return yamlDuration(f, where+"."+k, 30*time.Second, 290*time.Second, &c.MaxAge)
				}
				return fmt.Errorf("%s.%s: unknown field (known: update_interval, max_age) (line %d)", where, k, f.Line)
			})
		}
		return fmt.Errorf("%s: unknown field (known: %s) (line %d)", where, strings.Join(configFields, ", "), v.Line)
	}, &errs)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// eachKey calls f for each key of a mapping node in file order. An error
// from f is gathered in errs when errs is given (so one pass reports every
// bad field), else returned.
func eachKey(v *yaml.Node, where string, f func(key string, v *yaml.Node) error, errs ...*[]error) error {
	if v.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: must be a mapping of settings (line %d)", where, v.Line)
	}
	var seen []string
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i]
		err := f(k.Value, v.Content[i+1])
		if slices.Contains(seen, k.Value) {
			err = fmt.Errorf("%s.%s: given twice (line %d)", where, k.Value, k.Line)
		}
		seen = append(seen, k.Value)
		if err == nil {
			continue
		}
		if len(errs) == 0 {
			return err
		}
		*errs[0] = append(*errs[0], err)
	}
	return nil
}

// yamlEmoji reads a Slack emoji name, with or without its colons.
func yamlEmoji(v *yaml.Node, where string, into **string) error {
	name := strings.Trim(v.Value, ":")
	if v.Kind != yaml.ScalarNode || strings.ContainsAny(name, " :") || len(name) > 100 {
		return fmt.Errorf("%s: %q must be an emoji name such as eyes or white_check_mark, or \"\" for none (line %d)", where, v.Value, v.Line)
	}
	*into = &name
	return nil
}

func yamlBool(v *yaml.Node, where string, into **bool) error {
	var b bool
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
		return fmt.Errorf("%s: must be true or false, got %q (line %d)", where, v.Value, v.Line)
	}
	*into = &b
	return nil
}

func yamlDuration(v *yaml.Node, where string, lo, hi time.Duration, into *time.Duration) error {
	d, err := time.ParseDuration(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || d < lo || d > hi {
		return fmt.Errorf("%s: %q must be a duration from %s to %s, such as 1s or 4m (line %d)", where, v.Value, lo, hi, v.Line)
	}
	*into = d
	return nil
}

// Apply copies the settings the block sets onto o; the defaults of what it
// leaves out stay.
func (c *Config) Apply(o *Options) {
	set := func(p *bool, into *bool) {
		if p != nil {
			*into = *p
		}
	}
	set(c.AllowBots, &o.AllowBots)
	set(c.AgentView, &o.AgentSessions)
	set(c.TaskUpdates, &o.TaskUpdates)
	if c.FeedbackButtons != nil && !*c.FeedbackButtons {
		o.FeedbackFunc = nil
	}
	if c.HomeTab != nil && !*c.HomeTab {
		o.HomeFunc = nil
	}
	if c.Ack != "" {
		o.InlineAck = c.Ack == "inline"
	}
	if c.AckReaction != nil {
		o.AckReaction = *c.AckReaction
	}
	if c.DoneReaction != nil {
		o.DoneReaction = *c.DoneReaction
	}
	if c.FileMaxBytes != nil {
		o.FileMaxBytes = *c.FileMaxBytes
	}
	if c.FileMaxCount != nil {
		o.FileMaxCount = *c.FileMaxCount
		if *c.FileMaxCount == 0 {
			o.FileMaxCount = -1
		}
	}
	if c.UpdateInterval != 0 {
		o.StreamUpdateInterval = c.UpdateInterval
	}
	if c.MaxAge != 0 {
		o.StreamMaxAge = c.MaxAge
	}
}
