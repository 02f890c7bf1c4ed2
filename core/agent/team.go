package agent

import (
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core/route"
)

// Several agents in one conversation: what switchboard.yaml says about who
// speaks next and when agents stop talking among themselves.

// Domain is an area an agent declares (domains: in switchboard.yaml).
type Domain struct {
	Name        string   `yaml:"name" json:"name"`
	Keywords    []string `yaml:"keywords,omitempty" json:"keywords,omitempty"`
	Description string   `yaml:"description,omitempty" json:"description,omitempty"`
}

// Channel is a channel's own settings (channels.<id> in switchboard.yaml).
type Channel struct {
	// Fallback is who answers, in order, when a message addresses nobody
	// and matches no domain; default: the channel's agent, else the
	// default agent.
	Fallback []string `yaml:"fallback,omitempty"`
}

// Loop bounds agents talking among themselves (loop: in switchboard.yaml).
type Loop struct {
	// MaxAgentMessagesGroup is how many agent messages in a row, with no
	// person in between, a group conversation takes before agents stop
	// being woken there (default 6).
	MaxAgentMessagesGroup int `yaml:"max_agent_messages_group,omitempty"`
	// MaxAgentMessagesDirect is the same for a one-to-one conversation
	// between two agents (default 3).
	MaxAgentMessagesDirect int `yaml:"max_agent_messages_direct,omitempty"`
}

// Routing tunes the domain classifier (routing: in switchboard.yaml).
type Routing struct {
	MinScore          float64 `yaml:"min_score,omitempty"`
	Margin            float64 `yaml:"margin,omitempty"`
	DescriptionWeight float64 `yaml:"description_weight,omitempty"`
}

// Defaults of Loop.
const (
	DefaultMaxAgentMessagesGroup  = 6
	DefaultMaxAgentMessagesDirect = 3
)

func (l *Loop) defaults() {
	if l.MaxAgentMessagesGroup == 0 {
		l.MaxAgentMessagesGroup = DefaultMaxAgentMessagesGroup
	}
	if l.MaxAgentMessagesDirect == 0 {
		l.MaxAgentMessagesDirect = DefaultMaxAgentMessagesDirect
	}
}

func (c *Config) validateTeam() error {
	for i, a := range c.Agents {
		where := fmt.Sprintf("agents[%d] (%s)", i, a.Name)
		if !route.Role(a.Role).Valid() {
			return fmt.Errorf("%s.role: %q must be specialist or generalist", where, a.Role)
		}
		for j, d := range a.Domains {
			if d.Name == "" {
				return fmt.Errorf("%s.domains[%d].name: empty", where, j)
			}
			if len(d.Keywords) == 0 && d.Description == "" {
				return fmt.Errorf("%s.domains[%d] (%s): needs keywords or a description", where, j, d.Name)
			}
		}
		if a.Role == string(route.Specialist) && len(a.Domains) == 0 {
			return fmt.Errorf("%s.domains: a specialist needs at least one domain", where)
		}
	}
	for id, ch := range c.Channels {
		for j, n := range ch.Fallback {
			if _, ok := c.Find(n); !ok {
				return fmt.Errorf("channels.%s.fallback[%d]: no agent named %q", id, j, n)
			}
		}
	}
	switch {
	case c.Loop.MaxAgentMessagesGroup < 1:
		return fmt.Errorf("loop.max_agent_messages_group: %d must be at least 1", c.Loop.MaxAgentMessagesGroup)
	case c.Loop.MaxAgentMessagesDirect < 1:
		return fmt.Errorf("loop.max_agent_messages_direct: %d must be at least 1", c.Loop.MaxAgentMessagesDirect)
	}
	if _, err := c.Router(); err != nil {
		return err
	}
	return nil
}

// Router is the router over the declared agents, in declaration order.
func (c *Config) Router() (*route.Router, error) {
	agents := make([]route.Agent, len(c.Agents))
	for i, a := range c.Agents {
		ra := route.Agent{Name: a.Name, Role: route.Role(a.Role)}
		for _, d := range a.Domains {
			ra.Domains = append(ra.Domains, route.Domain{Name: d.Name, Keywords: d.Keywords, Description: d.Description})
		}
		agents[i] = ra
	}
	r, err := route.New(agents, route.Options{
		MinScore: c.Routing.MinScore, Margin: c.Routing.Margin, DescriptionWeight: c.Routing.DescriptionWeight,
	})
	if err != nil {
		return nil, fmt.Errorf("routing: %w", err)
	}
	return r, nil
}

// ChannelAgents are the agents configured to answer in channel
// (answers.channels), in declaration order.
func (c *Config) ChannelAgents(channel string) []string {
	var out []string
	for _, a := range c.Agents {
		if slices.Contains(a.Answers.Channels, channel) {
			out = append(out, a.Name)
		}
	}
	return out
}

// Fallback is who answers in channel when nothing else decides: the
// channel's fallback, else its first configured agent, else the default.
func (c *Config) Fallback(channel string) []string {
	if ch, ok := c.Channels[channel]; ok && len(ch.Fallback) > 0 {
		return ch.Fallback
	}
	if a, ok := c.ForChannel(channel); ok {
		return []string{a.Name}
	}
	return []string{c.Default().Name}
}
