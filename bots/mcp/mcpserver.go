// Package mcp serves Switchboard's agents to MCP clients at /mcp
// (streamable HTTP, every protocol revision the official Go SDK speaks).
//
// A caller authenticates with the bearer tokens /api takes (the operator
// token, a session, a personal token; a direct loopback caller when no
// operator token is set). Each agent it may use is a tool: a call opens a
// conversation of its own in the caller's workspace, posts the message
// through the same path an API client's message takes, and waits for the
// turn. Status lines and text stream back as progress notifications
// (throttled); the result is the agent's final answer, with
// structuredContent when the answer is a card. A turn that pauses for an
// approval ends the call with where to decide. Cancelling the request
// interrupts the turn.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
)

// Conversations is what the server needs of core: the agents a caller
// may use, a conversation to post into, the turn's live events, whether
// it is over, and what it answered or waits for. *core.Service implements
// it.
type Conversations interface {
	Hub() *core.Hub
	Agents() *config.Config
	AgentsVisibleIn(ctx context.Context, ws uuid.UUID) ([]string, error)
	CreateConversationWith(ctx context.Context, p *core.CreateConversationParams) (*core.Conversation, error)
	PostMessage(ctx context.Context, conv uuid.UUID, userID, text string) (int64, error)
	TurnQueue(ctx context.Context, conv uuid.UUID) (core.TurnQueue, error)
	PendingCalls(ctx context.Context, conv uuid.UUID) ([]core.PendingCall, error)
	AnswerAfter(ctx context.Context, conv uuid.UUID, seq int64) (*core.Answer, error)
}

var _ Conversations = (*core.Service)(nil)

// Auth is the API's authentication; *web.API implements it.
type Auth interface {
	Authenticate(r *http.Request) (*web.Principal, int, string)
	WorkspaceFor(ctx context.Context, p *web.Principal, asked string) (*uuid.UUID, error)
}

var _ Auth = (*web.API)(nil)

// Options configures the server.
type Options struct {
	Service Conversations // required
	Auth    Auth          // required
	// InterruptFunc cuts off a conversation's running turn on this
	// instance and reports how many it cut (core.Worker.Interrupt).
	// Required: cancelling a call must stop the work it asked for.
	InterruptFunc func(conv uuid.UUID) int
	// StopFunc asks a conversation's running turns to stop on whichever
	// instance runs them (core.Service.StopConversation), for a turn that
	// does not run here. nil: only turns running here are cut off.
	StopFunc func(ctx context.Context, conv uuid.UUID, who string) (int, error)
	Logger   *slog.Logger
	// ProgressInterval is the least time between two progress
	// notifications of one call (default 500ms).
	ProgressInterval time.Duration
	// PollInterval is how often a call checks the store for its turn's end
	// besides the live events (a turn run by another instance sends none
	// here); default 1s.
	PollInterval time.Duration
	// PublicURL is the service's address, named in an approval pause
	// (SWITCHBOARD_PUBLIC_URL); may be empty.
	PublicURL string
	// Version is sent at initialisation.
	Version string
}

func (o *Options) validate() error {
	switch {
	case o.Service == nil:
		return errors.New("mcp: Options.Service is required")
	case o.Auth == nil:
		return errors.New("mcp: Options.Auth is required")
	case o.InterruptFunc == nil:
		return errors.New("mcp: Options.InterruptFunc is required")
	case o.ProgressInterval < 0 || o.PollInterval < 0:
		return errors.New("mcp: Options.ProgressInterval and PollInterval must not be negative")
	}
	return nil
}

// Server serves /mcp.
type Server struct {
	opts Options
	log  *slog.Logger
	h    http.Handler

	mu      sync.Mutex
	servers []*mcp.Server // one per session, until Stop
}

// Stop closes every MCP session, ending their streams, so that the HTTP
// server's shutdown is not held by clients that keep a stream open.
func (s *Server) Stop(context.Context) error {
	s.mu.Lock()
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()
	for _, srv := range servers {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	}
	return nil
}

// track remembers srv for Stop, forgetting servers whose sessions ended.
func (s *Server) track(srv *mcp.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.servers = slices.DeleteFunc(s.servers, func(old *mcp.Server) bool {
		for range old.Sessions() {
			return false
		}
		return true
	})
	s.servers = append(s.servers, srv)
}

// New validates opts.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ProgressInterval == 0 {
		opts.ProgressInterval = 500 * time.Millisecond
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = time.Second
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger}
	streamable := mcp.NewStreamableHTTPHandler(s.serverFor, &mcp.StreamableHTTPOptions{
		Logger: opts.Logger, SessionTimeout: 30 * time.Minute,
	})
	bearer := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	s.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			bearer(streamable).ServeHTTP(w, r)
			return
		}
		// No credentials: only a direct loopback caller without an
		// operator token gets through, as on /api.
		if p, status, msg := opts.Auth.Authenticate(r); p == nil {
			http.Error(w, msg, status)
			return
		}
		streamable.ServeHTTP(w, r)
	})
	return s, nil
}

// Handler serves /mcp.
func (s *Server) Handler() http.Handler { return s.h }

// principalKey is where the verifier keeps the principal in TokenInfo.
const principalKey = "switchboard_principal"

// verify checks a bearer token as /api does; the session is bound to the
// principal's name, so nobody else's token can use it.
func (s *Server) verify(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
	p, _, msg := s.opts.Auth.Authenticate(r)
	if p == nil {
		return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, msg)
	}
	ti := &auth.TokenInfo{UserID: p.Name(), Extra: map[string]any{principalKey: p}}
	if p.Key != nil && p.Key.ExpiresAt != nil {
		ti.Expiration = *p.Key.ExpiresAt
	}
	return ti, nil
}

// principal is who a request acts as: the verified token's, or the local
// caller the handler let through without one.
func principal(ti *auth.TokenInfo) *web.Principal {
	if ti != nil {
		if p, ok := ti.Extra[principalKey].(*web.Principal); ok {
			return p
		}
	}
	return &web.Principal{Kind: web.PrincipalLocal}
}

// serverFor builds the MCP server of a new session: the agents its caller
// may use, as tools.
func (s *Server) serverFor(r *http.Request) *mcp.Server {
	p := principal(auth.TokenInfoFromContext(r.Context()))
	srv := mcp.NewServer(&mcp.Implementation{Name: "switchboard", Version: s.opts.Version}, &mcp.ServerOptions{
		Logger:       s.log,
		Instructions: "Each tool is a Switchboard agent. Call it with a message; it answers as a person in a chat would, after running its own tools.",
	})
	names, err := s.agentsFor(r.Context(), p)
	if err != nil {
		s.log.WarnContext(r.Context(), "listing the agents of an MCP caller", "principal", p.Name(), "error", err)
	}
	for _, name := range names {
		ag, ok := s.opts.Service.Agents().Find(name)
		if !ok || !toolName.MatchString(name) {
			continue
		}
		srv.AddTool(&mcp.Tool{
			Name:        name,
			Title:       cmpOr(ag.DisplayName, ag.Name),
			Description: describe(ag),
			InputSchema: inputSchema,
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(true)},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.call(ctx, req, name)
		})
	}
	s.track(srv)
	return srv
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)

// inputSchema is every agent tool's input.
var inputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"message":{"type":"string","description":"what to ask or tell the agent"},` +
	`"workspace":{"type":"string","description":"optional: the Switchboard workspace id the conversation belongs to (default: yours)"}},` +
	`"required":["message"],"additionalProperties":false}`)

type callInput struct {
	Message   string `json:"message"`
	Workspace string `json:"workspace,omitempty"`
}

func describe(a *config.Agent) string {
	persona := strings.Join(strings.Fields(a.Persona), " ")
	if r := []rune(persona); len(r) > 400 {
		persona = string(r[:399]) + "…"
	}
	d := fmt.Sprintf("Ask the Switchboard agent %s. It runs a turn with its own tools and answers with text (or a card).", a.Name)
	if persona != "" {
		d += " Its persona: " + persona
	}
	return d
}

// agentsFor lists the agents p may call: every declared agent for the
// operator, a session's own agent, the agents visible in a person's
// workspaces.
func (s *Server) agentsFor(ctx context.Context, p *web.Principal) ([]string, error) {
	var all []string
	for _, a := range s.opts.Service.Agents().Agents {
		all = append(all, a.Name)
	}
	switch {
	case p.Admin():
		return all, nil
	case p.Kind == web.PrincipalAgent:
		return slices.DeleteFunc(slices.Clone(p.Agents), func(n string) bool { return !slices.Contains(all, n) }), nil
	case p.Kind == web.PrincipalPerson:
		ws, err := s.opts.Auth.WorkspaceFor(ctx, p, "")
		if err != nil || ws == nil {
			return nil, err
		}
		return s.opts.Service.AgentsVisibleIn(ctx, *ws)
	}
	return nil, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func ptr[T any](v T) *T { return &v }
