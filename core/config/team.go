package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/core/route"
)

// Several agents in one conversation: what switchboard.yaml says about who
// speaks next and when agents stop talking among themselves.

// Domain is an area an agent declares (domains: in switchboard.yaml).
type Domain struct {
	// Name names the domain, as routing and delegation report it.
	Name string `yaml:"name" json:"name"`
	// Keywords are words that put a message in the domain; each found
	// counts 1 towards its score.
	Keywords []string `yaml:"keywords,omitempty" json:"keywords,omitempty"`
	// Description says what the domain covers; each of its words found in
	// a message counts routing.description_weight. A domain needs keywords
	// or a description.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
}

// Channel is a channel's own settings (channels.<id> in switchboard.yaml).
type Channel struct {
	// Fallback is who answers, in order, when a message addresses nobody
	// and matches no domain; default: the channel's agent, else the
	// default agent.
	Fallback []string `yaml:"fallback,omitempty"`
	// SideThreads overrides the file's side_threads settings here (tell
	// and prompt; abandon_after is the file's).
	SideThreads *SideThreads `yaml:"side_threads,omitempty"`
}

// SideThreads says whether agents are told about side threads and how
// long one may go without progress (side_threads: in switchboard.yaml).
type SideThreads struct {
	// Tell, when false, leaves side threads out of the agents' prompt
	// (the tag still works for an agent that writes it).
	Tell *bool `yaml:"tell,omitempty" default:"true"`
	// Prompt is what agents are told about side threads; empty: a
	// paragraph on the <dm target="NAME"> tag and resolve_side_thread.
	Prompt string `yaml:"prompt,omitempty"`
	// AbandonAfter is how long a side thread may go with no message
	// before the sweep marks it abandoned.
	AbandonAfter time.Duration `yaml:"abandon_after,omitempty" default:"30m"`
}

// DefaultSideThreadPrompt tells agents how to open a side thread.
const DefaultSideThreadPrompt = `To talk with another agent apart from this conversation, write <dm target="NAME">your message</dm> in your reply: ` +
	`people do not see the tag, and a side conversation with that agent opens (or goes on). ` +
	`When a side conversation has reached its answer, either of you calls resolve_side_thread with a short summary; ` +
	`the summary is posted back here.`

// DefaultAbandonAfter is how long a side thread may go without progress.
const DefaultAbandonAfter = 30 * time.Minute

// SideThreadsFor is whether agents are told about side threads in
// channel, and in what words: the channel's override, else the file's.
func (c *Config) SideThreadsFor(channel string) (tell bool, prompt string) {
	tell, prompt = true, DefaultSideThreadPrompt
	apply := func(st *SideThreads) {
		if st == nil {
			return
		}
		if st.Tell != nil {
			tell = *st.Tell
		}
		if st.Prompt != "" {
			prompt = st.Prompt
		}
	}
	apply(&c.SideThreads)
	if ch, ok := c.Channels[channel]; ok {
		apply(ch.SideThreads)
	}
	return tell, prompt
}

// AbandonAfter is side_threads.abandon_after, or its default.
func (c *Config) AbandonAfter() time.Duration {
	if c.SideThreads.AbandonAfter > 0 {
		return c.SideThreads.AbandonAfter
	}
	return DefaultAbandonAfter
}

// Delegation tunes how the delegate tool picks an agent (delegation: in
// switchboard.yaml).
type Delegation struct {
	// Weights weigh the factors of each candidate's score.
	Weights DelegationWeights `yaml:"weights,omitempty"`
}

// DelegationWeights weigh the factors of an agent's score; each factor is
// between 0 and 1, and the score is their weighted sum. A weight left out
// (or 0) takes its default, so a factor is switched off with a tiny
// weight such as 0.0001.
type DelegationWeights struct {
	// Capability weighs how well the agent's domains match the task,
	// against the best match.
	Capability float64 `yaml:"capability,omitempty" json:"capability" default:"4"`
	// Role weighs how well its role fits: a specialist for a task of one
	// domain, a generalist for a broad one.
	Role float64 `yaml:"role,omitempty" json:"role" default:"1"`
	// Available weighs whether it can take a task now (under its
	// max_concurrent).
	Available float64 `yaml:"available,omitempty" json:"available" default:"3"`
	// Load weighs how little open work it has.
	Load float64 `yaml:"load,omitempty" json:"load" default:"1"`
	// TrackRecord weighs the share of its delegated tasks it completed.
	TrackRecord float64 `yaml:"track_record,omitempty" json:"track_record" default:"1"`
	// Cost weighs how cheap its model is, against the dearest candidate.
	Cost float64 `yaml:"cost,omitempty" json:"cost" default:"0.5"`
	// Latency weighs how fast it typically answers, against the slowest.
	Latency float64 `yaml:"latency,omitempty" json:"latency" default:"0.5"`
	// Tools weighs the share of the tools the task needs that it may use.
	Tools float64 `yaml:"tools,omitempty" json:"tools" default:"3"`
}

// DefaultDelegationWeights are the weights a file leaves out.
var DefaultDelegationWeights = DelegationWeights{
	Capability: 4, Role: 1, Available: 3, Load: 1, TrackRecord: 1, Cost: 0.5, Latency: 0.5, Tools: 3,
}

// WithDefaults fills the weights left out (zero) with the defaults.
func (w DelegationWeights) WithDefaults() DelegationWeights {
	d := DefaultDelegationWeights
	or := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	return DelegationWeights{
		Capability: or(w.Capability, d.Capability), Role: or(w.Role, d.Role), Available: or(w.Available, d.Available),
		Load: or(w.Load, d.Load), TrackRecord: or(w.TrackRecord, d.TrackRecord), Cost: or(w.Cost, d.Cost),
		Latency: or(w.Latency, d.Latency), Tools: or(w.Tools, d.Tools),
	}
}

func (w DelegationWeights) validate() error {
	for name, v := range map[string]float64{
		"capability": w.Capability, "role": w.Role, "available": w.Available, "load": w.Load,
		"track_record": w.TrackRecord, "cost": w.Cost, "latency": w.Latency, "tools": w.Tools,
	} {
		if v < 0 {
			return fmt.Errorf("delegation.weights.%s: %v must not be negative", name, v)
		}
	}
	return nil
}

// Loop bounds agents talking among themselves (loop: in switchboard.yaml).
type Loop struct {
	// MaxAgentMessagesGroup is how many agent messages in a row, with no
	// person in between, a group conversation takes before agents stop
	// being woken there.
	MaxAgentMessagesGroup int `yaml:"max_agent_messages_group,omitempty" default:"6"`
	// MaxAgentMessagesDirect is the same for a one-to-one conversation
	// between two agents.
	MaxAgentMessagesDirect int `yaml:"max_agent_messages_direct,omitempty" default:"3"`
}

// Routing tunes the domain classifier (routing: in switchboard.yaml).
type Routing struct {
	// MinScore is the score a domain needs to count as matched (1: one
	// keyword).
	MinScore float64 `yaml:"min_score,omitempty" default:"1"`
	// Margin: with several matched domains, the best counts as the one
	// domain when its score is at least this many times the runner-up's.
	Margin float64 `yaml:"margin,omitempty" default:"2"`
	// DescriptionWeight is what one word of a domain's description
	// counts, against 1 for a keyword.
	DescriptionWeight float64 `yaml:"description_weight,omitempty" default:"0.5"`
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
		switch {
		case a.MaxConcurrent < 0:
			return fmt.Errorf("%s.max_concurrent: %d must not be negative", where, a.MaxConcurrent)
		case a.Latency < 0:
			return fmt.Errorf("%s.latency: %s must not be negative", where, a.Latency)
		}
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
	if err := c.Delegation.Weights.validate(); err != nil {
		return err
	}
	switch {
	case c.SideThreads.AbandonAfter < 0:
		return fmt.Errorf("side_threads.abandon_after: %s must not be negative", c.SideThreads.AbandonAfter)
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
