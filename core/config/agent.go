// Package config declares agents: who they are (name, persona), which model
// they run on with which credentials, which tools they may use and where they
// answer. Declarations come from switchboard.yaml and are upserted into the
// store at start; with no file there is one default agent.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/switchboardhq/switchboard/core/tool"
)

// DefaultName is the agent that answers when no file declares one.
const DefaultName = "switchboard"

// DefaultPersona is the default agent's persona.
const DefaultPersona = "You are Switchboard, a helpful assistant working inside a team chat. " +
	"Answer concisely, use Markdown, and ask before doing anything risky."

// Agent is one declared agent.
type Agent struct {
	// Name is how people and other agents address the agent, unique in
	// the file: 1-64 lowercase letters, digits, - or _.
	Name string `yaml:"name" json:"name"`
	// Persona is who the agent is and how it answers, the start of its
	// system prompt; empty: a short helpful-assistant persona.
	Persona string `yaml:"persona" json:"persona"`
	// Model is "provider:model", e.g. anthropic:claude-sonnet-4-5,
	// openai:gpt-4.1-mini, claude-code:sonnet, codex:default,
	// scripted:path/to/script.yaml. Empty: SWITCHBOARD_MODEL, else a
	// provider whose key is set, else the offline demo (scripted:demo).
	Model string `yaml:"model" json:"model"`
	// APIKeyEnv names the environment variable holding the key (the
	// credentials reference; the key itself is never stored). Defaults to
	// the provider's own (ANTHROPIC_API_KEY, OPENAI_API_KEY).
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// BaseURL overrides the provider endpoint (an OpenAI-compatible server).
	BaseURL string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	// Thinking is how much the model reasons before it answers: off, low,
	// medium or high; empty leaves it to the provider.
	Thinking string `yaml:"thinking,omitempty" json:"thinking,omitempty"`
	// MaxTokens caps the tokens of one model answer, up to 200000.
	MaxTokens int `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty" default:"4096"`
	// Temperature is the model's sampling temperature, from 0 to 2; unset
	// leaves it to the provider.
	Temperature *float64 `yaml:"temperature,omitempty" json:"temperature,omitempty"`
	// Tools lists the tools the agent may use; empty means every registered
	// tool but the opt-in ones (web_fetch, web_search, run_code, browse),
	// which are offered only to agents that name them.
	Tools []string `yaml:"tools,omitempty" json:"tools,omitempty"`
	// StepBudget caps model calls per turn, from 1 to 200.
	StepBudget int `yaml:"step_budget,omitempty" json:"step_budget,omitempty" default:"25"`
	// Answers says where the agent answers.
	Answers Answers `yaml:"answers,omitempty" json:"answers,omitempty"`
	// DisplayName is the name the agent posts under on platforms that
	// allow it (Slack's chat:write.customize, Discord webhooks).
	DisplayName string `yaml:"display_name,omitempty" json:"display_name,omitempty"`
	// IconURL is the image the agent posts with there.
	IconURL string `yaml:"icon_url,omitempty" json:"icon_url,omitempty"`

	// Policy is the guard's policy for this agent's calls, over the
	// workspace's and the platform's (see tool.Layer).
	Policy *tool.Policy `yaml:"policy,omitempty" json:"policy,omitempty"`

	// Personality bounds how sharply the agent may shrink its own
	// personality document (see PersonalityGuard).
	Personality PersonalityGuard `yaml:"personality,omitempty" json:"personality,omitempty"`

	// Context bounds what the agent's conversations send the model (see
	// ContextSettings); unset fields come from the file's context block.
	Context ContextSettings `yaml:"context,omitempty" json:"context,omitempty"`
	// Role is specialist or generalist (empty reads as generalist): with
	// the domains, it decides who speaks first where several agents
	// answer (see package route).
	Role string `yaml:"role,omitempty" json:"role,omitempty"`
	// Domains are the areas the agent knows; a specialist needs at least
	// one.
	Domains []Domain `yaml:"domains,omitempty" json:"domains,omitempty"`
	// DoneMarker, when set, is text that signals the agent is done, as the
	// done tool does; it is removed from what people see.
	DoneMarker string `yaml:"done_marker,omitempty" json:"done_marker,omitempty"`
	// Family names the agents of one owner that share family-scoped memory
	// notes; every agent that declares none is in the default family (see
	// FamilyName).
	Family string `yaml:"family,omitempty" json:"family,omitempty" default:"default"`
	// MaxConcurrent caps the turns the agent's conversations run at once,
	// as delegation reads it: an agent at its cap cannot take a task now
	// (0: no cap).
	MaxConcurrent int `yaml:"max_concurrent,omitempty" json:"max_concurrent,omitempty"`
	// Latency is how long the agent typically takes to answer, as
	// delegation weighs it (0: unknown, scored as middling).
	Latency time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
	// Class is the slot class of the agent's run steps, as runs.slots
	// bounds them; empty: coding for a coding-CLI model (claude-code,
	// codex), else default (see RunClass).
	Class string `yaml:"class,omitempty" json:"class,omitempty"`
	// Plans makes the agent a lead whose answer may be a plan: a JSON
	// plan in its reply becomes a run (see package plan).
	Plans bool `yaml:"plans,omitempty" json:"plans,omitempty"`
	// RunCheck is the completion check of the runs it leads.
	RunCheck RunCheck `yaml:"run_check,omitempty" json:"run_check,omitempty"`
	// Voice is how the agent hears and speaks: voice notes, the console's
	// microphone, Discord voice (see Voice); left out, it does neither.
	Voice Voice `yaml:"voice,omitempty" json:"voice,omitempty"`
	// RunsOn is where the agent's model calls run: service (inside
	// switchboard serve) or bridge (on a machine of the agent's own, a
	// `switchboard bridge` connected to the service; see bridge:).
	RunsOn string `yaml:"runs_on,omitempty" json:"runs_on,omitempty" default:"service"`
}

// DefaultFamily is the family of every agent that declares none: by
// default all the agents of one install share their family notes.
const DefaultFamily = "default"

// FamilyName is the agent's family: its own, or DefaultFamily.
func (a *Agent) FamilyName() string {
	if a.Family == "" {
		return DefaultFamily
	}
	return a.Family
}

// Answers is where an agent answers.
type Answers struct {
	// Default makes the agent answer wherever no other agent is configured.
	Default bool `yaml:"default,omitempty" json:"default,omitempty"`
	// Channels (Slack or Discord channel ids) where it answers every message,
	// not only mentions.
	Channels []string `yaml:"channels,omitempty" json:"channels,omitempty"`
}

// Config is the file, switchboard.yaml, read once by Load: every section
// is typed and decoded strictly, so an unknown field anywhere is an error
// naming its line and path. The parts that belong to other packages (the
// schedules, the Slack and Discord adapters' settings, memory) are handed
// to them as they are here; they fill their defaults and check their
// values.
type Config struct {
	// Agents are the declared agents; with none, one default agent
	// (switchboard) answers everywhere.
	Agents []Agent `yaml:"agents"`
	// Context is every agent's default context block; an agent's own
	// overrides it field by field.
	Context ContextSettings `yaml:"context,omitempty"`
	// Schedules are the routines, pulses and goal loops the file declares.
	Schedules SchedulesSection `yaml:"schedules,omitempty"`
	// Memory tunes the agents' memory notes: recall budget, decay and
	// consolidation.
	Memory MemorySection `yaml:"memory,omitempty"`

	// Policy is the guard's policy for the whole platform: the widest of
	// its three levels (platform, workspace, agent).
	Policy tool.Policy `yaml:"policy,omitempty"`
	// Workspaces are what the file says about each workspace, by Slack
	// team or Discord guild id.
	Workspaces map[string]Workspace `yaml:"workspaces,omitempty"`
	// Approvals say who decides the calls the guard holds for a person,
	// and how long a request waits.
	Approvals Approvals `yaml:"approvals,omitempty"`
	// Access says who may talk to agents (see Access).
	Access Access `yaml:"access,omitempty"`

	// Channels are per-channel settings by channel id (the fallback order).
	Channels map[string]Channel `yaml:"channels,omitempty"`
	// Loop bounds agents talking among themselves.
	Loop Loop `yaml:"loop,omitempty"`
	// Routing tunes the domain classifier.
	Routing Routing `yaml:"routing,omitempty"`
	// SideThreads: whether agents are told about <dm> side threads, and
	// when one is abandoned.
	SideThreads SideThreads `yaml:"side_threads,omitempty"`
	// Delegation weighs the delegate tool's choice.
	Delegation Delegation `yaml:"delegation,omitempty"`
	// Runs bounds the steps of runs working at once (see Runs).
	Runs Runs `yaml:"runs,omitempty"`
	// Budgets bound what calls may spend (see Budget).
	Budgets []Budget `yaml:"budgets,omitempty"`
	// Prices are models' prices by "provider:model", over the built-in
	// list prices (see Price).
	Prices map[string]Price `yaml:"prices,omitempty"`
	// Web configures the web tools, web_fetch and web_search (see Web).
	Web Web `yaml:"web,omitempty"`
	// Sandbox turns on the run_code tool (for the agents whose tools
	// name it) and bounds its runs (see Sandbox); left out, run_code is
	// never offered.
	Sandbox *Sandbox `yaml:"sandbox,omitempty"`
	// Browser turns the browse tool on and bounds it (see Browser); absent,
	// no agent is offered it.
	Browser *Browser `yaml:"browser,omitempty"`

	// SSO maps the identity provider's groups to workspace roles, when
	// single sign-on is on (see SSO).
	SSO SSO `yaml:"sso,omitempty"`

	// Slack is the Slack adapter's settings.
	Slack SlackSection `yaml:"slack,omitempty"`
	// Discord is the Discord adapter's settings.
	Discord DiscordSection `yaml:"discord,omitempty"`

	// Audit sends every audit row to sinks besides the database: a
	// JSON-lines file, a signed webhook, OTLP logs (see Audit).
	Audit Audit `yaml:"audit,omitempty"`

	// Bridge bounds how turns of runs_on: bridge agents wait for their
	// machine (see Bridge).
	Bridge Bridge `yaml:"bridge,omitempty"`
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

var thinkingLevels = map[string]bool{"": true, "off": true, "low": true, "medium": true, "high": true}

// Env is the slice of the environment the config reads; tests pass their own.
type Env func(key string) string

// Load reads the file at path. An empty path reads nothing and returns the
// default agent. env is the environment as the app read it (nil: an empty
// one; this package reads none itself): SWITCHBOARD_MODEL is the model of
// every agent that declares none (and of the default agent).
func Load(path string, env Env) (*Config, error) {
	if path == "" {
		return Parse("", nil, env)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config %s: %w", path, err)
	}
	return Parse(path, raw, env)
}

// Parse reads a switchboard.yaml held in raw; file names it in errors (""
// leaves it out). Empty raw declares nothing: the default agent. env is
// as for Load.
func Parse(file string, raw []byte, env Env) (*Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	cfg := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	// An empty file decodes as io.EOF: it declares nothing.
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, YAMLError(file, raw, err)
	}
	if len(cfg.Agents) == 0 {
		cfg.Agents = []Agent{{Name: DefaultName, Persona: DefaultPersona, Answers: Answers{Default: true}}}
	}
	for i := range cfg.Agents {
		a := &cfg.Agents[i]
		if a.Model == "" {
			a.Model = DefaultModel(env)
		}
		if a.Persona == "" {
			a.Persona = DefaultPersona
		}
		if a.StepBudget == 0 {
			a.StepBudget = DefaultStepBudget
		}
		if a.MaxTokens == 0 {
			a.MaxTokens = DefaultMaxTokens
		}
		a.Context = a.Context.Over(cfg.Context)
		a.Voice.defaults()
	}
	if len(cfg.Agents) == 1 {
		cfg.Agents[0].Answers.Default = true
	}
	cfg.Loop.defaults()
	err := cfg.validate()
	if err == nil {
		err = cfg.Audit.checkEnv(env)
	}
	if err != nil {
		if file != "" {
			return nil, fmt.Errorf("config %s: %w", file, err)
		}
		return nil, err
	}
	return cfg, nil
}

// Defaults of Agent.
const (
	DefaultStepBudget = 25
	DefaultMaxTokens  = 4096
)

// DefaultModel picks the model for agents that declare none: SWITCHBOARD_MODEL,
// else a provider whose key is set, else the offline demo.
func DefaultModel(env Env) string {
	switch {
	case env("SWITCHBOARD_MODEL") != "":
		return env("SWITCHBOARD_MODEL")
	case env("ANTHROPIC_API_KEY") != "":
		return "anthropic:claude-sonnet-4-5"
	case env("OPENAI_API_KEY") != "":
		return "openai:gpt-4.1-mini"
	default:
		return DemoModel
	}
}

// DemoModel is the scripted offline demo: never presented as a real model.
const DemoModel = "scripted:demo"

func (c *Config) validate() error {
	seen := map[string]bool{}
	defaults := 0
	for i, a := range c.Agents {
		where := fmt.Sprintf("agents[%d]", i)
		if !nameRE.MatchString(a.Name) {
			return fmt.Errorf("%s.name: %q must be 1-64 lowercase letters, digits, - or _", where, a.Name)
		}
		where = fmt.Sprintf("agent %q", a.Name)
		if seen[a.Name] {
			return fmt.Errorf("%s: declared twice", where)
		}
		seen[a.Name] = true
		provider, model, ok := strings.Cut(a.Model, ":")
		if !ok || provider == "" || model == "" {
			return fmt.Errorf("%s: model %q must be provider:model, as in anthropic:claude-sonnet-4-5", where, a.Model)
		}
		switch provider {
		case "anthropic", "openai", "scripted", "claude-code", "codex":
		default:
			return fmt.Errorf("%s: unknown model backend %q (use anthropic, openai, claude-code, codex or scripted)", where, provider)
		}
		if err := a.validateRunsOn(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if !thinkingLevels[a.Thinking] {
			return fmt.Errorf("%s: thinking %q must be off, low, medium or high", where, a.Thinking)
		}
		if a.MaxTokens < 0 || a.MaxTokens > 200000 {
			return fmt.Errorf("%s: max_tokens %d out of range", where, a.MaxTokens)
		}
		if a.Temperature != nil && (*a.Temperature < 0 || *a.Temperature > 2) {
			return fmt.Errorf("%s: temperature %v must be between 0 and 2", where, *a.Temperature)
		}
		if a.StepBudget < 1 || a.StepBudget > 200 {
			return fmt.Errorf("%s: step_budget %d must be between 1 and 200", where, a.StepBudget)
		}
		if err := a.Personality.validate(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if a.Family != "" && !nameRE.MatchString(a.Family) {
			return fmt.Errorf("%s: family %q must be 1-64 lowercase letters, digits, - or _", where, a.Family)
		}
		if err := a.Context.validate(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := a.Voice.validate(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if a.Answers.Default {
			defaults++
		}
	}
	if defaults > 1 {
		return fmt.Errorf("agents: %d agents have answers.default; at most one may", defaults)
	}
	if err := c.validateGuard(); err != nil {
		return err
	}
	if err := c.validateTeam(); err != nil {
		return err
	}
	if err := c.validateRuns(); err != nil {
		return err
	}
	if err := c.Bridge.validate(); err != nil {
		return err
	}
	if err := c.validateBudgets(); err != nil {
		return err
	}
	if err := c.validateWeb(); err != nil {
		return err
	}
	if err := c.Sandbox.validate(); err != nil {
		return err
	}
	if err := c.Browser.validate(); err != nil {
		return err
	}
	if err := c.SSO.validate(); err != nil {
		return err
	}
	if err := c.Audit.validate(); err != nil {
		return err
	}
	return c.Access.validate()
}

// Find returns the named agent.
func (c *Config) Find(name string) (*Agent, bool) {
	for i := range c.Agents {
		if c.Agents[i].Name == name {
			return &c.Agents[i], true
		}
	}
	return nil, false
}

// Default returns the agent that answers where none is configured: the one
// marked default, else the first.
func (c *Config) Default() *Agent {
	for i := range c.Agents {
		if c.Agents[i].Answers.Default {
			return &c.Agents[i]
		}
	}
	return &c.Agents[0]
}

// ForChannel returns the agent configured to answer every message in channel.
func (c *Config) ForChannel(channel string) (*Agent, bool) {
	for i := range c.Agents {
		for _, ch := range c.Agents[i].Answers.Channels {
			if ch == channel {
				return &c.Agents[i], true
			}
		}
	}
	return nil, false
}

// KeyEnv is the environment variable holding the agent's key.
func (a *Agent) KeyEnv() string {
	if a.APIKeyEnv != "" {
		return a.APIKeyEnv
	}
	provider, _, _ := strings.Cut(a.Model, ":")
	switch provider {
	case "anthropic":
		return "ANTHROPIC_API_KEY"
	case "openai":
		return "OPENAI_API_KEY"
	}
	return ""
}
