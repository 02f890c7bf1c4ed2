package config

import (
	"fmt"
	"slices"
)

// DMPolicy says who may reach an agent in a direct message.
type DMPolicy string

const (
	// DMPairing: a stranger's DM reaches no agent and gets back a one-time
	// code; once an operator or admin approves it, that person is in. The
	// default.
	DMPairing DMPolicy = "pairing"
	// DMAllowlist: only the people listed in allowlist.
	DMAllowlist DMPolicy = "allowlist"
	// DMOpen: anyone who can DM the bot.
	DMOpen DMPolicy = "open"
	// DMDisabled: nobody; DMs get a polite refusal.
	DMDisabled DMPolicy = "disabled"
)

// Valid reports whether p is a known policy ("" is not: it means unset).
func (p DMPolicy) Valid() bool {
	switch p {
	case DMPairing, DMAllowlist, DMOpen, DMDisabled:
		return true
	}
	return false
}

// Access is the top-level access: block of switchboard.yaml: who may talk to
// agents. Each level (the whole instance, a workspace, a channel) may set
// any field; the most specific level that sets one wins.
type Access struct {
	AccessRule `yaml:",inline"`
	// Admins are platform user ids (Slack U…, Discord snowflakes) who may
	// approve pairing codes with !approve.
	Admins []string `yaml:"admins,omitempty"`
	// Workspaces overrides the rule per Slack team id or Discord guild id.
	Workspaces map[string]AccessRule `yaml:"workspaces,omitempty"`
	// Channels overrides the rule per channel id (a DM channel's or a
	// channel's).
	Channels map[string]AccessRule `yaml:"channels,omitempty"`
}

// AccessRule is the policy at one level.
type AccessRule struct {
	// DMPolicy says who may reach an agent in a direct message: pairing
	// (a stranger gets a one-time code an admin approves), allowlist,
	// open or disabled.
	DMPolicy DMPolicy `yaml:"dm_policy,omitempty" default:"pairing"`
	// Allowlist lists the platform user ids that may DM agents under the
	// allowlist and pairing policies without further ado.
	Allowlist []string `yaml:"allowlist,omitempty"`
	// AnswerIn lists the channels where agents answer; empty: every channel
	// the bot is a member of. Not allowed on a channel's own rule.
	AnswerIn []string `yaml:"answer_in,omitempty"`
	// RequireMention: a channel message must mention the bot. False
	// answers every message in the channels where agents answer.
	RequireMention *bool `yaml:"require_mention,omitempty" default:"true"`
}

// ResolvedAccess is the rule that applies in one place, every field set.
type ResolvedAccess struct {
	DMPolicy       DMPolicy
	Allowlist      []string
	AnswerIn       []string // empty: everywhere the bot is a member
	RequireMention bool
}

// Resolve returns the rule for a channel of a workspace: the channel's
// fields over the workspace's over the top level's, with the defaults for
// what none sets.
func (a *Access) Resolve(workspace, channel string) ResolvedAccess {
	r := ResolvedAccess{DMPolicy: DMPairing, RequireMention: true}
	levels := []AccessRule{a.AccessRule}
	if w, ok := a.Workspaces[workspace]; ok && workspace != "" {
		levels = append(levels, w)
	}
	if c, ok := a.Channels[channel]; ok && channel != "" {
		levels = append(levels, c)
	}
	for _, l := range levels {
		if l.DMPolicy != "" {
			r.DMPolicy = l.DMPolicy
		}
		if l.Allowlist != nil {
			r.Allowlist = l.Allowlist
		}
		if l.AnswerIn != nil {
			r.AnswerIn = l.AnswerIn
		}
		if l.RequireMention != nil {
			r.RequireMention = *l.RequireMention
		}
	}
	return r
}

// IsAdmin reports whether userID is listed in admins.
func (a *Access) IsAdmin(userID string) bool {
	return userID != "" && slices.Contains(a.Admins, userID)
}

func (a *Access) validate() error {
	if err := a.AccessRule.validate("access"); err != nil {
		return err
	}
	for i, id := range a.Admins {
		if id == "" {
			return fmt.Errorf("access.admins[%d]: empty user id", i)
		}
	}
	for id, r := range a.Workspaces {
		if err := r.validate(fmt.Sprintf("access.workspaces.%s", id)); err != nil {
			return err
		}
	}
	for id, r := range a.Channels {
		where := fmt.Sprintf("access.channels.%s", id)
		if r.AnswerIn != nil {
			return fmt.Errorf("%s.answer_in: a channel's own rule cannot list channels; set answer_in on the workspace or at the top of access", where)
		}
		if err := r.validate(where); err != nil {
			return err
		}
	}
	return nil
}

func (r *AccessRule) validate(where string) error {
	if r.DMPolicy != "" && !r.DMPolicy.Valid() {
		return fmt.Errorf("%s.dm_policy: %q must be pairing, allowlist, open or disabled", where, r.DMPolicy)
	}
	for i, id := range r.Allowlist {
		if id == "" {
			return fmt.Errorf("%s.allowlist[%d]: empty user id", where, i)
		}
	}
	for i, id := range r.AnswerIn {
		if id == "" {
			return fmt.Errorf("%s.answer_in[%d]: empty channel id", where, i)
		}
	}
	return nil
}
