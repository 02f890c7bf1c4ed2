package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/run/coding"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// BackendFunc builds the model backend of an agent.
type BackendFunc func(a *config.Agent) (model.Backend, error)

// CredentialsFunc returns the key and endpoint of an agent's model. The app
// resolves them from its settings (the variable the agent names for its
// key, its base_url, the provider's base URL); core never reads the
// environment. Its error is returned as it is, wrapped with the agent's
// name, so a missing key stops Start naming the agent and the setting.
type CredentialsFunc func(a *config.Agent) (model.Credentials, error)

// ToolsFunc returns the tools offered in a context: the registry with
// frontend tools swapped for their headless equivalents (see package
// headless).
type ToolsFunc func(contextName tool.ContextName) []*tool.Tool

// Options configures a Service.
type Options struct {
	Store  store.Store
	Agents *config.Config
	// Backend builds each agent's model backend; default NewBackend with
	// Model as its base options and Credentials.
	Backend BackendFunc
	// Credentials gives each agent's key and endpoint to the default
	// Backend; nil gives none (see NewBackend).
	Credentials CredentialsFunc
	// Model is the base of every agent's model options when Backend is
	// the default (the idle timeout, the retry policy); its Logger defaults
	// to Logger. The key and endpoint come from each agent.
	Model model.Options
	// StableParts add sections to every agent's stable prompt block, in
	// this order (see StablePartFunc).
	StableParts []StablePartFunc
	// Tools lists what is offered per context; required.
	Tools ToolsFunc
	// Registry resolves tools by name when a paused call resumes; required.
	Registry *tool.Registry
	// Skills, when set, adds the agent's skills to each turn: the tools they
	// grant and their index in the stable prompt block.
	Skills Skills
	// Memory, when set, adds what the agent remembers to each turn's
	// per-turn block (see Memory).
	Memory Memory
	// Policies are the guard's levels (platform, workspace, agent); the
	// zero value is the built-in policy everywhere.
	Policies tool.Policies
	// Deciders says who may decide an approval: DecidersStarter (the
	// default) or DecidersAdmins: the owners and admins of the
	// conversation's workspace, and those Admins names.
	Deciders Deciders
	// Admins, when set, names admins besides the workspace roles (the
	// operator's override).
	Admins Admins
	Hub    *Hub
	Logger *slog.Logger
	Now    func() time.Time
	// WorkerID names this instance in leases, and fences the turn's writes.
	// Give it a value stable across restarts (the app uses
	// SWITCHBOARD_INSTANCE_ID) so a restart takes its leases back at once;
	// the default, host-pid-random, is new for every process.
	WorkerID string
	// LeaseTTL is how long a turn's lease lives between heartbeats (default 15s).
	LeaseTTL time.Duration
	// ApprovalTTL is how long a request to a person stays open (default 24h).
	ApprovalTTL time.Duration
	// MaxTurnAttempts caps automatic retries of a crashed turn (default 3).
	MaxTurnAttempts int
	// CommandFunc answers messages that start with CommandPrefix (scheduling
	// commands such as "!remind in 2h -- call Ana") without a model call.
	// Nil leaves such messages to the agent.
	CommandFunc CommandFunc
	// ReminderActFunc decides the clicks of a reminder's Snooze and Done
	// buttons (the scheduler's ReminderAct); without it they are refused.
	ReminderActFunc ActionFunc
	// Deliverer shows turns on the platforms conversations are bound to;
	// nil delivers nothing (API and terminal clients read the log).
	Deliverer Deliverer
	// Gate decides who may reach an agent before Submit stores anything;
	// nil admits every message.
	Gate Gate

	// People, when set, keeps a person for every platform user who talks
	// to the bot: created by Submit, profiles refreshed on the turn, and
	// their names (not ids) shown to the model.
	People *Directory

	// Observer is told what turns do, for metrics; nil observes nothing.
	Observer Observer
	// TracerProvider makes the spans of turns, model calls and tool calls
	// (see observe.go); nil is the no-op provider.
	TracerProvider trace.TracerProvider
	// RunProgress shows runs' progress on the platforms (nil: runs show
	// only their result message and the API's events).
	RunProgress RunProgress
	// Coding keeps the repositories and worktrees of runs' coding steps
	// (nil: a step whose inputs name a repo fails, saying so).
	Coding *coding.Repos
	// CodeHost reaches owner/name repositories and opens pull requests
	// (the GitHub connection; nil: such repositories are refused).
	CodeHost CodeHost
	// ArtifactLink is the page of an artifact, "" when there is no public
	// address (nil: no links); a coding step's diff links to it.
	ArtifactLink func(id uuid.UUID) string
	// KeepFailedWorktrees is how long a failed run's worktrees stay
	// (DefaultKeepFailedWorktrees).
	KeepFailedWorktrees time.Duration
	// WorkRetention is how long Sweep keeps finished work items
	// (SWITCHBOARD_WORK_RETENTION); zero is store.DefaultWorkRetention.
	WorkRetention time.Duration
	// AuditSinks receive every audit row the service writes (see
	// auditsinks.go); nil: the rows stay in the database.
	AuditSinks *audit.Sinks
	// Voice says how agents' voice engines are built (see VoiceOptions).
	Voice VoiceOptions
}

func (o *Options) validate() error {
	switch {
	case o.Store == nil:
		return errors.New("core: Options.Store is required")
	case o.Agents == nil || len(o.Agents.Agents) == 0:
		return errors.New("core: Options.Agents must declare at least one agent")
	case o.Tools == nil:
		return errors.New("core: Options.Tools is required")
	case o.Registry == nil:
		return errors.New("core: Options.Registry is required")
	case o.LeaseTTL < time.Second:
		return fmt.Errorf("core: Options.LeaseTTL %s must be at least 1s", o.LeaseTTL)
	case o.Policies.Validate() != nil:
		return fmt.Errorf("core: Options.Policies: %w", o.Policies.Validate())
	case o.Deciders != "" && o.Deciders != DecidersStarter && o.Deciders != DecidersAdmins:
		return fmt.Errorf("core: Options.Deciders %q must be starter or admins", o.Deciders)
	case o.MaxTurnAttempts < 1:
		return fmt.Errorf("core: Options.MaxTurnAttempts %d must be at least 1", o.MaxTurnAttempts)
	case o.WorkRetention != 0 && o.WorkRetention < store.MinWorkRetention:
		return fmt.Errorf("core: Options.WorkRetention %s must be at least %s", o.WorkRetention, store.MinWorkRetention)
	}
	return nil
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Model.Logger == nil {
		o.Model.Logger = o.Logger
	}
	if o.Backend == nil {
		base, creds := o.Model, o.Credentials
		o.Backend = func(a *config.Agent) (model.Backend, error) { return NewBackend(a, base, creds) }
	}
	if o.Hub == nil {
		o.Hub = NewHub()
	}
	if o.Observer == nil {
		o.Observer = NopObserver{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WorkerID == "" {
		host, _ := os.Hostname()
		o.WorkerID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.ApprovalTTL == 0 {
		o.ApprovalTTL = 24 * time.Hour
	}
	if o.MaxTurnAttempts == 0 {
		o.MaxTurnAttempts = 3
	}
}

// Service is core: it takes inbound messages and clicks (Submitter), runs
// turns when the worker hands it one, and publishes what turns do.
type Service struct {
	opts Options
	st   store.Store
	log  *slog.Logger
	hub  *Hub

	// current is what a reload replaces: the agents and the guard's
	// settings (see Reload).
	current  atomic.Pointer[settings]
	observer Observer
	tracer   trace.Tracer

	mu       sync.Mutex
	agentIDs map[string]uuid.UUID // name → store id
	backends map[string]model.Backend
	// finishers are the adapters that finish events taken by Accept.
	finishers map[string]InboundFinisher
	// askRepliers answer asks (asks.go), by platform.
	askRepliers map[string]AskReplier
	// voices are the agents' voice engines and the rate of utterances
	// (voices.go).
	voices voices
}

var _ Submitter = (*Service)(nil)

// New validates opts and returns a Service. Call Init before use.
func New(opts Options) (*Service, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	router, err := opts.Agents.Router()
	if err != nil {
		return nil, fmt.Errorf("core: Options.Agents: %w", err)
	}
	s := &Service{
		opts:     opts,
		st:       AuditingStore(opts.Store, opts.AuditSinks, opts.Now),
		log:      opts.Logger,
		hub:      opts.Hub,
		observer: opts.Observer,
		tracer:   newTracer(opts.TracerProvider),
		agentIDs: map[string]uuid.UUID{},
		backends: map[string]model.Backend{},
	}
	s.current.Store(&settings{
		agents: opts.Agents, router: router, policies: opts.Policies, deciders: opts.Deciders,
		admins: opts.Admins, approvalTTL: opts.ApprovalTTL,
	})
	return s, nil
}

// Start upserts the declared agents into the store and checks that each one's
// model backend can be built (an unknown backend or a missing key names the
// agent and the setting).
func (s *Service) Start(ctx context.Context) error {
	for i := range s.agents().Agents {
		if _, err := s.backendFor(&s.agents().Agents[i]); err != nil {
			return err
		}
	}
	if err := s.startVoices(ctx); err != nil {
		return err
	}
	return s.registerAgents(ctx, s.agents())
}

// registerAgents upserts the declared agents into the store and seeds their
// personality documents.
func (s *Service) registerAgents(ctx context.Context, agents *config.Config) error {
	for i := range agents.Agents {
		a := &agents.Agents[i]
		cfg, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encoding agent %q: %w", a.Name, err)
		}
		row, err := s.st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: a.Name, Config: cfg, Now: s.now()})
		if err != nil {
			return fmt.Errorf("registering agent %q: %w", a.Name, err)
		}
		s.mu.Lock()
		s.agentIDs[a.Name] = row.ID
		s.mu.Unlock()
		if err := s.seedPersonality(ctx, a, row); err != nil {
			return err
		}
	}
	return nil
}

// Hub is where live turn events are published.
func (s *Service) Hub() *Hub { return s.hub }

// Store is the service's store.
func (s *Service) Store() store.Store { return s.st }

// Agents is the declared agents.
func (s *Service) Agents() *config.Config { return s.agents() }

// AgentsVisibleIn lists by name, sorted, the declared agents the members
// of workspace ws may use: those the workspace sees (the operator's, its
// members', unless pinned elsewhere) that switchboard.yaml still declares.
func (s *Service) AgentsVisibleIn(ctx context.Context, ws uuid.UUID) ([]string, error) {
	ls, err := s.st.AgentListVisible(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("listing the agents of workspace %s: %w", ws, err)
	}
	agents := s.agents()
	var out []string
	for _, l := range ls {
		if _, ok := agents.Find(l.Name); ok && !slices.Contains(out, l.Name) {
			out = append(out, l.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// WorkerID is this process's name in leases.
func (s *Service) WorkerID() string { return s.opts.WorkerID }

func (s *Service) now() time.Time { return s.opts.Now().UTC() }

func (s *Service) backendFor(a *config.Agent) (model.Backend, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.backends[a.Name]; ok {
		return b, nil
	}
	b, err := s.opts.Backend(a)
	if err != nil {
		return nil, fmt.Errorf("agent %q: %w", a.Name, err)
	}
	s.backends[a.Name] = b
	return b, nil
}

// agentOf finds the agent a conversation belongs to, falling back to the
// default agent when the conversation names none or one no longer declared.
func (s *Service) agentOf(conv *store.Conversation) *config.Agent {
	if conv.AgentID != nil {
		s.mu.Lock()
		var name string
		for n, id := range s.agentIDs {
			if id == *conv.AgentID {
				name = n
				break
			}
		}
		s.mu.Unlock()
		if a, ok := s.agents().Find(name); ok {
			return a
		}
	}
	return s.agents().Default()
}

func (s *Service) agentID(name string) *uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.agentIDs[name]; ok {
		return &id
	}
	return nil
}

// ConversationMeta is what core keeps in a conversation's metadata. Core
// writes it for the conversations it opens, and the scheduler for the ones
// it opens itself; both read it back through DecodeConversationMeta.
type ConversationMeta struct {
	// Context picks the tools offered and scopes the guard's deny entries.
	Context tool.ContextName `json:"context"`
	// Starter is the user who started the conversation; by default only they
	// decide approvals in it.
	Starter string `json:"starter,omitempty"`
	// DM marks a person's direct messages: side threads and delegated
	// tasks opened there post only their result back.
	DM bool `json:"dm,omitempty"`
	// Run marks a run step's conversation: its run and step, and what it
	// may use of its lead's tools and budget.
	Run *RunScope `json:"run,omitempty"`
	// CardOnly marks a briefing run: people see its card, at top level,
	// and none of the agent's text until a person writes in the
	// conversation (a reply in the thread under the card); the text stays
	// in the log (a prose answer is what the card is filled from).
	CardOnly bool `json:"card_only,omitempty"`
}

// Encode returns m as stored in a conversation's Metadata.
func (m ConversationMeta) Encode() json.RawMessage { return mustJSON(m) }

// DecodeConversationMeta reads a conversation's Metadata. A conversation
// that names no context (older rows, or metadata that does not decode)
// runs in tool.ContextAPI; the error says why it did not decode.
func DecodeConversationMeta(raw json.RawMessage) (ConversationMeta, error) {
	var m ConversationMeta
	var err error
	if len(raw) > 0 {
		if err = json.Unmarshal(raw, &m); err != nil {
			err = fmt.Errorf("decoding conversation metadata: %w", err)
		}
	}
	if m.Context == "" {
		m.Context = tool.ContextAPI
	}
	return m, err
}

// metaOf is a conversation's metadata; metadata that does not decode reads
// as the defaults, as DecodeConversationMeta gives them.
func metaOf(conv *store.Conversation) ConversationMeta {
	m, _ := DecodeConversationMeta(conv.Metadata)
	return m
}

// StarterOf is the user who started a conversation ("" when unknown):
// platforms that address a reply to someone (Slack's streams) use it.
func StarterOf(conv *store.Conversation) string { return metaOf(conv).Starter }

// NewBackend builds an agent's backend from its declaration and the
// credentials creds resolves for it (nil: the agent's base_url and no key,
// which only scripted agents and keyless OpenAI-compatible servers run on).
// Core reads no environment: keys enter through creds, whose error (a
// missing key, naming the setting to set) is returned as it is. base gives
// the other options (logger, idle timeout, retry policy); its APIKey and
// BaseURL are replaced by the agent's.
func NewBackend(a *config.Agent, base model.Options, creds CredentialsFunc) (model.Backend, error) {
	spec, err := model.ParseSpec(a.Model)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", a.Model, err)
	}
	c := model.Credentials{BaseURL: a.BaseURL}
	if creds != nil {
		if c, err = creds(a); err != nil {
			return nil, err
		}
	}
	opts := base
	opts.APIKey, opts.BaseURL = c.APIKey, c.BaseURL
	if c.CLI != nil {
		cli := *c.CLI
		if cli.IdleTimeout == 0 {
			cli.IdleTimeout = base.CLI.IdleTimeout
		}
		opts.CLI = cli
	}
	return model.New(spec, opts)
}

// IsDemo reports whether the agent runs on the scripted demo model.
func IsDemo(a *config.Agent) bool { return strings.HasPrefix(a.Model, "scripted:") }
