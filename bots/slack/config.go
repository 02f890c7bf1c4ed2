package slack

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
)

// Config is what an operator sets for Slack under slack: in
// switchboard.yaml (config.SlackSection), checked by ConfigFrom. A field
// left out is nil or zero, and Apply leaves the matching option at its
// default.
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

// Bounds of the streaming settings: Slack takes an append about once a
// second, and ends a stream after about 5 minutes.
const (
	minUpdateInterval = time.Second
	maxUpdateInterval = time.Minute
	minStreamMaxAge   = 30 * time.Second
	maxStreamMaxAge   = 290 * time.Second
)

// ConfigFrom checks the slack: section of switchboard.yaml, as config.Load
// decoded it, and returns the settings to apply. Errors name the field as
// written in the file (slack.streaming.max_age); every wrong field is
// reported.
func ConfigFrom(sec *config.SlackSection) (*Config, error) {
	c := &Config{
		AllowBots: sec.AllowBots, AgentView: sec.AgentView, TaskUpdates: sec.TaskUpdates,
		FeedbackButtons: sec.FeedbackButtons, HomeTab: sec.HomeTab,
		FileMaxBytes: sec.Files.MaxBytes, FileMaxCount: sec.Files.MaxCount,
	}
	var errs []error
	switch sec.Ack {
	case "", "deferred", "inline":
		c.Ack = sec.Ack
	default:
		errs = append(errs, fmt.Errorf("slack.ack: %q must be deferred or inline", sec.Ack))
	}
	var err error
	if c.AckReaction, err = emoji("slack.ack_reaction", sec.AckReaction); err != nil {
		errs = append(errs, err)
	}
	if c.DoneReaction, err = emoji("slack.done_reaction", sec.DoneReaction); err != nil {
		errs = append(errs, err)
	}
	if n := sec.Files.MaxBytes; n != nil && *n < 1 {
		errs = append(errs, fmt.Errorf("slack.files.max_bytes: %d must be at least 1", *n))
	}
	if n := sec.Files.MaxCount; n != nil && *n < 0 {
		errs = append(errs, fmt.Errorf("slack.files.max_count: %d must be a whole number of at least 0", *n))
	}
	if c.UpdateInterval, err = duration("slack.streaming.update_interval", sec.Streaming.UpdateInterval, minUpdateInterval, maxUpdateInterval); err != nil {
		errs = append(errs, err)
	}
	if c.MaxAge, err = duration("slack.streaming.max_age", sec.Streaming.MaxAge, minStreamMaxAge, maxStreamMaxAge); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// emoji reads a Slack emoji name, with or without its colons.
func emoji(where string, v *string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	name := strings.Trim(*v, ":")
	if strings.ContainsAny(name, " :") || len(name) > 100 {
		return nil, fmt.Errorf("%s: %q must be an emoji name such as eyes or white_check_mark, or \"\" for none", where, *v)
	}
	return &name, nil
}

// duration checks a duration the section sets (0: not set).
func duration(where string, d, lo, hi time.Duration) (time.Duration, error) {
	if d != 0 && (d < lo || d > hi) {
		short := config.ShortDuration
		return 0, fmt.Errorf("%s: %q must be a duration from %s to %s, such as 1s or 4m", where, short(d), short(lo), short(hi))
	}
	return d, nil
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
