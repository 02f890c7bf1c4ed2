package config

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/core/tool"
)

// Workspace is what switchboard.yaml says about one platform workspace (a
// Slack team, a Discord guild), keyed by its id.
type Workspace struct {
	// Policy is the guard's policy in the workspace, over the platform's.
	Policy tool.Policy `yaml:"policy,omitempty"`
}

// Who may decide an approval.
const (
	DecidersStarter = "starter" // the person whose message started the turn (the default)
	DecidersAdmins  = "admins"  // any owner or admin of the workspace, or one listed in approvals.admins
)

// DefaultApprovalExpiry is how long an approval waits when approvals.expiry
// is not set.
const DefaultApprovalExpiry = 24 * time.Hour

// Approvals is switchboard.yaml's approvals: who decides, and how long a
// request waits.
type Approvals struct {
	// Deciders is who decides: starter, the person whose message started
	// the turn, or admins, the workspace's owners and admins and those
	// listed in admins.
	Deciders string `yaml:"deciders,omitempty" default:"starter"`
	// Admins are platform user ids (Slack U…, Discord snowflakes) who count
	// as admins of every workspace besides the owners and admins each
	// workspace has: the operator's override.
	Admins []string `yaml:"admins,omitempty"`
	// Expiry is how long a request waits for a decision, at least 1m.
	Expiry time.Duration `yaml:"expiry,omitempty" default:"24h"`
}

// ExpiryDuration is Expiry, or the default.
func (a Approvals) ExpiryDuration() time.Duration {
	if a.Expiry == 0 {
		return DefaultApprovalExpiry
	}
	return a.Expiry
}

// ByAdmins reports whether admins decide approvals.
func (a Approvals) ByAdmins() bool { return a.Deciders == DecidersAdmins }

// IsAdmin reports whether user is listed in approvals.admins; the list
// holds in every workspace.
func (a Approvals) IsAdmin(_ /* workspace */, user string) bool {
	return user != "" && slices.Contains(a.Admins, user)
}

// Policies is the guard's three levels as declared.
func (c *Config) Policies() tool.Policies {
	ps := tool.Policies{Platform: c.Policy, Workspaces: map[string]tool.Policy{}, Agents: map[string]tool.Policy{}}
	for id, w := range c.Workspaces {
		ps.Workspaces[id] = w.Policy
	}
	for _, a := range c.Agents {
		if a.Policy != nil {
			ps.Agents[a.Name] = *a.Policy
		}
	}
	return ps
}

func (c *Config) validateGuard() error {
	errs := []error{c.Policy.ValidateAt("policy")}
	for _, id := range sortedIDs(c.Workspaces) {
		if id == "" {
			errs = append(errs, errors.New("workspaces: an empty workspace id"))
		}
		errs = append(errs, c.Workspaces[id].Policy.ValidateAt("workspaces."+id+".policy"))
	}
	for i, a := range c.Agents {
		if a.Policy != nil {
			errs = append(errs, a.Policy.ValidateAt(fmt.Sprintf("agents[%d].policy", i)))
		}
	}
	ap := c.Approvals
	switch ap.Deciders {
	case "", DecidersStarter, DecidersAdmins:
	default:
		errs = append(errs, fmt.Errorf("approvals.deciders: %q must be starter or admins", ap.Deciders))
	}
	for i, id := range ap.Admins {
		if id == "" {
			errs = append(errs, fmt.Errorf("approvals.admins[%d]: empty user id", i))
		}
	}
	if ap.Expiry != 0 && ap.Expiry < time.Minute {
		errs = append(errs, fmt.Errorf("approvals.expiry: %q must be a duration of at least 1m, such as 24h or 90m", ShortDuration(ap.Expiry)))
	}
	return errors.Join(errs...)
}

func sortedIDs[V any](m map[string]V) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
