// Package web is the HTTP client API: create conversations, post messages and
// tool results, fork, read the log at any seq, and follow a conversation as
// Server-Sent Events that resume exactly where a client left off.
//
// Who may call it: a caller holding the operator token, or, when no token is
// set, a process on this machine that reaches the listener directly (not
// through a proxy). Browsers are the other concern: a page on any site can
// make a browser send requests to localhost, so a request that a browser
// marks as coming from another site is refused unless its origin is listed
// in Options.AllowedOrigins (then CORS applies), and a request that changes
// state must declare a JSON body, which no cross-site form or no-CORS fetch
// can do without a preflight. No request header is taken as the caller's
// identity: it comes from how the caller authenticated.
package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/rs/cors"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/core/workspace"
)

// Conversations is what the API needs of core: open a conversation, post
// into it, fork it, read what waits for the client, and follow it live;
// and, one small interface per concept, the reads and use cases of the
// other routes (the handlers never reach the store themselves).
// *core.Service implements it; tests can fake it.
type Conversations interface {
	Hub() *core.Hub
	ConversationReads
	HistoryUses
	RunReads
	RunStarts
	TeamReads
	ArtifactUses
	ApprovalReads
	AdminReads
	BudgetUses
	InstallReads
	// Workspaces is workspace administration: roles, members, bindings,
	// retention, where agents answer, and who may use a conversation.
	Workspaces() *workspace.Service
	CreateConversation(ctx context.Context, agentName string, contextName tool.ContextName, starter string) (*core.Conversation, error)
	PostMessage(ctx context.Context, conv uuid.UUID, userID, text string) (int64, error)
	PostMessageWith(ctx context.Context, conv uuid.UUID, userID, text string, o core.MessageOptions) (int64, error)
	PostToolResults(ctx context.Context, conv uuid.UUID, userID string, results []core.ToolResultInput) (int64, error)
	Fork(ctx context.Context, conv uuid.UUID, seq int64, userID, text string) (*core.EntryAppendResult, error)
	PendingCalls(ctx context.Context, conv uuid.UUID) ([]core.PendingCall, error)
	// StateAt is the status, pending calls and approvals as they were at a
	// seq (time travel).
	StateAt(ctx context.Context, conv uuid.UUID, at int64) (*core.ConversationState, error)
}

var _ Conversations = (*core.Service)(nil)

// ConversationReads is what the API reads of conversations, their logs
// and the agents and people they name (core/conversations.go).
type ConversationReads interface {
	Conversation(ctx context.Context, id uuid.UUID) (*core.Conversation, error)
	Forks(ctx context.Context, id uuid.UUID) ([]*core.Conversation, error)
	ConversationWorkspace(ctx context.Context, id uuid.UUID) (*uuid.UUID, error)
	MoveConversation(ctx context.Context, id, ws uuid.UUID) error
	Entries(ctx context.Context, p *core.EntryListParams) ([]*core.Entry, error)
	EntryWakeups(ctx context.Context, conv uuid.UUID) (<-chan struct{}, error)
	Cursor(conv uuid.UUID, after int64) *core.Cursor
	AgentByName(ctx context.Context, name string) (*core.Agent, error)
	AgentsConversation(ctx context.Context, agent string, id uuid.UUID) error
	AgentName(ctx context.Context, id uuid.UUID) (string, error)
	Person(ctx context.Context, id uuid.UUID) (*core.Person, error)
}

// HistoryUses searches, files, exports and imports conversations, and
// keeps their folders (core/history.go).
type HistoryUses interface {
	SearchConversations(ctx context.Context, p *core.ConversationSearchParams) ([]*core.ConversationListing, error)
	FileConversation(ctx context.Context, p *core.ConversationFileParams) (*core.ConversationListing, error)
	DeleteConversation(ctx context.Context, id uuid.UUID) error
	FileConversations(ctx context.Context, ids []uuid.UUID, file *core.ConversationFileParams) error
	ExportConversation(ctx context.Context, id uuid.UUID) (*transcript.Doc, error)
	ImportConversation(ctx context.Context, p *transcript.ImportParams) (uuid.UUID, error)
	Folder(ctx context.Context, id uuid.UUID) (*core.Folder, error)
	Folders(ctx context.Context, v core.Visibility) ([]*core.Folder, error)
	CreateFolder(ctx context.Context, p *core.FolderCreateParams) (*core.Folder, error)
	UpdateFolder(ctx context.Context, p *core.FolderUpdateParams) (*core.Folder, error)
	DeleteFolder(ctx context.Context, id uuid.UUID) error
}

// RunReads reads runs, their steps and events (core/runs.go).
type RunReads interface {
	Run(ctx context.Context, id uuid.UUID) (*core.Run, error)
	Runs(ctx context.Context, f core.RunFilter) ([]*core.Run, error)
	RunSteps(ctx context.Context, id uuid.UUID) ([]*core.RunStep, error)
	RunStepOf(ctx context.Context, conv uuid.UUID) (*core.RunStep, error)
	RunEvents(ctx context.Context, id uuid.UUID, after int64, limit int) ([]*core.RunEvent, error)
}

// TeamReads reads delegations and side threads (core/team.go).
type TeamReads interface {
	DelegationByID(ctx context.Context, id uuid.UUID) (*core.Delegation, error)
	Delegations(ctx context.Context, from uuid.UUID) ([]*core.Delegation, error)
	DelegationOf(ctx context.Context, child uuid.UUID) (*core.Delegation, error)
	SideThreads(ctx context.Context, parent uuid.UUID) ([]*core.SideThread, error)
	SideThreadOf(ctx context.Context, child uuid.UUID) (*core.SideThread, error)
}

// ArtifactUses reads artifacts and comments on them (core/artifacts.go).
type ArtifactUses interface {
	Artifact(ctx context.Context, id uuid.UUID) (*core.Artifact, error)
	Artifacts(ctx context.Context, p *core.ArtifactListParams) ([]*core.Artifact, error)
	ArtifactVersions(ctx context.Context, id uuid.UUID) ([]*core.ArtifactVersion, error)
	ArtifactVersion(ctx context.Context, id uuid.UUID, n int) (*core.ArtifactVersion, error)
	ArtifactComments(ctx context.Context, id uuid.UUID) ([]*core.ArtifactComment, error)
	CommentArtifact(ctx context.Context, id uuid.UUID, version int, by core.Author, text string) (*core.ArtifactComment, error)
}

// ApprovalReads reads approvals (core/approvals.go).
type ApprovalReads interface {
	Approval(ctx context.Context, id uuid.UUID) (*core.Approval, error)
	ApprovalOfCall(ctx context.Context, conv uuid.UUID, callID string) (*core.Approval, error)
	PendingApprovals(ctx context.Context, p *core.ApprovalListVisibleParams) ([]*core.Approval, error)
	ConversationApprovals(ctx context.Context, conv uuid.UUID) ([]*core.Approval, error)
}

// AdminReads are the operator's reads across workspaces, and the audit
// (core/schedules.go, core/usage.go, core/audit.go, core/forget.go).
type AdminReads interface {
	Schedules(ctx context.Context, a workspace.Actor, limit int) ([]*core.Schedule, error)
	Schedule(ctx context.Context, a workspace.Actor, id uuid.UUID) (*core.Schedule, error)
	// Audit reads a page of the audit of guarded tool calls.
	Audit(ctx context.Context, a workspace.Actor, q *core.AuditQuery) (*core.AuditRows, error)
	// ExportAudit writes a time range of the audit as JSON lines.
	ExportAudit(ctx context.Context, a workspace.Actor, x *core.AuditExport, w io.Writer) (int, error)
	// Usage reads what the model calls cost (the operator).
	Usage(ctx context.Context, a workspace.Actor, since time.Time, limit int) (*core.Usage, error)
	// ForgetPerson deletes a person's data (the operator).
	ForgetPerson(ctx context.Context, a workspace.Actor, person uuid.UUID, deleteMessages bool, by string) (*core.PersonForgetResult, error)
}

// Options configures the API.
type Options struct {
	// Service runs the conversations the API serves; required.
	Service Conversations
	// Token, when set, is required as "Authorization: Bearer <Token>". When
	// empty the API answers only requests made directly from loopback
	// addresses.
	Token string
	// AllowedOrigins are the browser origins ("https://app.example.com")
	// whose pages may call the API from another site, with CORS. Requests
	// from pages of any other site are refused. Same-origin requests need no
	// entry.
	AllowedOrigins []string
	// PollInterval bounds how long a stream waits when a wake-up is lost
	// (default 2s).
	PollInterval time.Duration
	// KeepAlive is the interval of SSE comments that keep proxies from
	// closing an idle stream (default 15s).
	KeepAlive time.Duration
	// FrameCacheBytes bounds the encoded catch-up kept for the
	// conversations being followed (default DefaultFrameCacheBytes;
	// negative: none is kept, each stream reads the store).
	FrameCacheBytes int64
	Logger          *slog.Logger
	// Grants, when set, serves the standing grants (GET /api/grants,
	// DELETE /api/grants/{id}).
	Grants Grants

	// Keys checks agent keys, sessions, personal and host tokens, and
	// serves /api/auth/token and /api/keys; nil: only the operator token
	// (or loopback) is accepted.
	Keys *apikey.Keys
	// AuthorizeFunc overrides the workspace rights check (see authorize);
	// nil: the roles of the workspace decide (Rights).
	AuthorizeFunc AuthorizeFunc
	// Pairings, when set, serves the pairing codes (GET /api/pairing,
	// POST /api/pairing/{code}/approve).
	Pairings Pairings
	// Now is the clock GET /api/usage?days= counts back from (default
	// time.Now).
	Now func() time.Time
	// Personalities, when set, serves the agents' personality documents
	// (/api/agents/{name}/personality).
	Personalities Personalities
	// Skills, when set, serves the skills (POST, GET /api/skills,
	// DELETE /api/skills/{name}).
	Skills Skills
	// Rulebooks, when set, serves the conversations' rulebooks (GET, PUT
	// /api/conversations/{id}/rules).
	Rulebooks Rulebooks
	// Connections, when set, serves the GitHub and Google connections
	// (GET /api/connections, DELETE /api/connections/{id}).
	Connections Connections
	// Runs, when set, serves cancel and retry of runs (POST
	// /api/runs/{id}/cancel, /retry); the reads are core's.
	Runs Runs
	// Compare, when set, serves POST /api/compare (see compare.go).
	Compare CompareFunc
	// MCPStatus, when set, serves GET /api/mcp/status: the state of each
	// MCP server the service connects to (status.go).
	MCPStatus func() []mcpclient.Status
	// ConfigStatus, when set, serves GET /api/config/status: the outcome
	// of the last reload of the configuration files (status.go).
	ConfigStatus func() config.ReloadStatus
	// SignIn, when set, serves the web console's sign-in (POST /auth/link,
	// /auth/token, /auth/logout) and accepts its session cookie as a
	// principal on /api/.
	SignIn *SignIn
	// AgentsFunc lists the configured agents' names, for the page's agent
	// picker and the agent of each listed conversation; nil: none listed.
	AgentsFunc func() []string
	// Actor, when set, serves the approvals inbox (GET /api/approvals,
	// POST /api/conversations/{id}/decide).
	Actor Actor
	// Schedules, when set, serves the operator's schedules (GET
	// /api/schedules, POST /api/schedules/{id}/pause and /resume).
	Schedules Schedules
	// Sessions, when set, serves the console sessions and personal tokens
	// people see and end (GET /api/sessions, POST
	// /api/sessions/{session}/end).
	Sessions Sessions
	// Voice, when set, serves live voice in a conversation (GET
	// /api/conversations/{id}/voice, a WebSocket; see voice.go).
	Voice Voice
	// Bridges, when set, serves the bridges of runs_on: bridge agents
	// (/api/bridge/..., GET /api/bridges; see bridge.go).
	Bridges Bridges
}

// API serves /api/.
type API struct {
	opts    Options
	svc     Conversations
	log     *slog.Logger
	origins map[string]bool // canonical allowed origins
	cors    *cors.Cors      // nil when no origin is allowed
	// closing is closed by CloseStreams: open streams end, so a server
	// shutdown does not wait for them.
	closing   chan struct{}
	closeOnce sync.Once
	frames    *frameCache // nil: none kept
}

// CloseStreams ends every open SSE stream (each client reconnects with
// Last-Event-ID, to this process or the next); call it before shutting the
// HTTP server down, which otherwise waits for them.
func (a *API) CloseStreams() {
	a.closeOnce.Do(func() { close(a.closing) })
}

// New validates opts.
func New(opts Options) (*API, error) {
	if opts.Service == nil {
		return nil, errors.New("web: Options.Service is required")
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &API{opts: opts, svc: opts.Service, log: opts.Logger, origins: map[string]bool{}, closing: make(chan struct{})}
	switch {
	case opts.FrameCacheBytes == 0:
		a.frames = newFrameCache(DefaultFrameCacheBytes)
	case opts.FrameCacheBytes > 0:
		a.frames = newFrameCache(opts.FrameCacheBytes)
	}
	for _, o := range opts.AllowedOrigins {
		canon, err := ParseOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("web: Options.AllowedOrigins: %w", err)
		}
		a.origins[canon] = true
	}
	if len(a.origins) > 0 {
		// Never without origins: rs/cors then allows every origin.
		a.cors = cors.New(cors.Options{
			AllowOriginFunc: a.originAllowed,
			AllowedMethods:  []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
			AllowedHeaders:  []string{"Authorization", "Content-Type", "Last-Event-ID", CSRFHeader},
			MaxAge:          600,
		})
	}
	return a, nil
}

// ParseOrigin checks that s is a browser origin, scheme://host[:port] with
// the scheme http or https and nothing after the host, and returns it in the
// form browsers send: lower case, without the scheme's default port.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("%q is not an origin; want scheme://host[:port], e.g. https://app.example.com", s)
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	return u.Scheme + "://" + host, nil
}

// ParseOrigins parses a comma-separated list of origins (empty items are
// skipped).
func ParseOrigins(list string) ([]string, error) {
	var out []string
	for item := range strings.SplitSeq(list, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		o, err := ParseOrigin(item)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func (a *API) originAllowed(origin string) bool {
	canon, err := ParseOrigin(origin)
	return err == nil && a.origins[canon]
}

type callerKey struct{}

// principal is who the request authenticated as; never nil inside a
// handler.
func principal(r *http.Request) *Principal {
	if p := PrincipalFrom(r.Context()); p != nil {
		return p
	}
	return &Principal{}
}

// caller names the principal as the log and the conversations record it.
func caller(r *http.Request) string { return principal(r).Name() }

// handle wraps a route: other sites refused, CORS for allowed origins, then
// authentication and the body's content type, in that order, so that a
// preflight needs no token and a browser page of an allowed origin can
// read why it was refused.
func (a *API) handle(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return a.handleRoute(routeOrdinary, h)
}

// handleRoute is handle for a route that admits the principals rt says.
func (a *API) handleRoute(rt route, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	var next http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, herr := a.authenticate(r)
		if herr == nil {
			herr = admit(who, rt)
		}
		if herr == nil {
			herr = requireJSON(r)
		}
		if herr != nil {
			writeError(w, herr.status, herr.msg)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, who))
		// Every route under /api/conversations/{id} is about that
		// conversation: whether this principal may touch it is decided once,
		// here.
		if id, err := uuid.Parse(r.PathValue("id")); err == nil && strings.HasPrefix(r.URL.Path, "/api/conversations/") {
			if err := a.mayUseConversation(r, who, id); err != nil {
				a.fail(w, r, err)
				return
			}
		}
		if err := h(w, r); err != nil {
			a.fail(w, r, err)
		}
	})
	if a.cors != nil {
		next = a.cors.Handler(next)
	}
	return a.refuseOtherSites(next)
}

// refuseOtherSites refuses a request that a browser sent from a page of
// another site (its Origin is not this host, or Sec-Fetch-Site says
// cross-site or same-site) unless that origin is allowed. Clients that are
// not browsers send neither header and pass.
func (a *API) refuseOtherSites(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		site := r.Header.Get("Sec-Fetch-Site")
		other := site == "cross-site" || site == "same-site" || (origin != "" && !sameOrigin(origin, r.Host))
		if other && !a.originAllowed(origin) {
			from := origin
			if from == "" {
				from = "a page of another site"
			}
			writeError(w, http.StatusForbidden, fmt.Sprintf("cross-site request from %s refused: list the origin in SWITCHBOARD_ALLOWED_ORIGINS to allow it", from))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin names the host the request was sent to.
// The scheme is not compared: behind a TLS-terminating proxy the request
// arrives over plain HTTP from an https page.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// authenticate names the caller, or says why it is refused: the operator
// token, then the credentials of Options.Keys, then (with no operator token
// set) a direct loopback caller.
func (a *API) authenticate(r *http.Request) (*Principal, *httpError) {
	if a.opts.Token != "" && validToken(r, a.opts.Token) {
		return &Principal{Kind: PrincipalOperator}, nil
	}
	if tok, ok := bearer(r.Header.Get("Authorization")); ok && (a.opts.Token != "" || apikey.Looks(tok)) {
		return a.bearerPrincipal(r, tok)
	}
	if p, ok, herr := a.cookiePrincipal(r); ok || herr != nil {
		return p, herr
	}
	if a.opts.Token != "" {
		return nil, &httpError{status: http.StatusUnauthorized, msg: "a valid Authorization: Bearer token is required"}
	}
	if herr := directLoopback(r); herr != nil {
		return nil, herr
	}
	return &Principal{Kind: PrincipalLocal}, nil
}

// directLoopback says why r is not from a process on this machine that
// reached the listener directly, or nil when it is: the peer is a loopback
// address, the request carries no header a proxy adds, and its Host is a
// loopback name. This holds whatever address the listener is bound to: a
// proxy on this machine (nginx, a tunnel, a Cloudflare or Tailscale agent)
// connects from loopback too, and it cannot be told apart by the peer.
func directLoopback(r *http.Request) *httpError {
	if !loopback(r.RemoteAddr) {
		return &httpError{status: http.StatusForbidden, msg: "without SWITCHBOARD_API_TOKEN only direct loopback callers are answered; set the token"}
	}
	// A proxy on this machine makes every caller look local.
	if h := proxyHeader(r.Header); h != "" {
		return &httpError{status: http.StatusForbidden, msg: fmt.Sprintf(
			"without SWITCHBOARD_API_TOKEN only direct loopback callers are answered; this request came through a proxy (%s header): set the token", h)}
	}
	// A page whose name was rebound to 127.0.0.1 sends its own name as Host
	// and passes as same-origin; a direct local caller names a loopback host.
	if !loopbackHost(r.Host) {
		return &httpError{status: http.StatusForbidden, msg: fmt.Sprintf(
			"without SWITCHBOARD_API_TOKEN only direct loopback callers are answered; Host %q is not a loopback name (use localhost or 127.0.0.1, or set the token)", r.Host)}
	}
	return nil
}

// proxyHeaders are the headers proxies, load balancers and CDNs add
// (canonical form); every X-Forwarded-* counts as well.
var proxyHeaders = []string{
	"Forwarded", "Via", "X-Real-Ip", "Cf-Connecting-Ip", "True-Client-Ip", "X-Client-Ip",
	"X-Cluster-Client-Ip", "Fastly-Client-Ip", "X-Original-Forwarded-For",
}

// proxyHeader names the first proxy header h holds, or "".
func proxyHeader(h http.Header) string {
	for _, name := range proxyHeaders {
		if _, ok := h[name]; ok {
			return name
		}
	}
	for name := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Forwarded-") {
			return name
		}
	}
	return ""
}

// RequireToken wraps h so that it answers only requests carrying
// "Authorization: Bearer <token>"; others get 401. With an empty token it
// answers only direct loopback callers, as the API does; others get 403.
func RequireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if herr := directLoopback(r); herr != nil {
				writeError(w, herr.status, herr.msg)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !validToken(r, token) {
			writeError(w, http.StatusUnauthorized, "a valid Authorization: Bearer token is required")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func validToken(r *http.Request, token string) bool {
	got, ok := bearer(r.Header.Get("Authorization"))
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// requireJSON refuses a state-changing request whose body is not declared
// as JSON, even an empty one: a browser sends text/plain, form and
// multipart bodies across sites without a CORS preflight, never
// application/json.
func requireJSON(r *http.Request) *httpError {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); (err == nil && mt == "application/json") || archiveBody(r) {
		return nil
	}
	return &httpError{status: http.StatusUnsupportedMediaType, msg: fmt.Sprintf(
		"Content-Type must be application/json, even with an empty body (got %q)", ct)}
}

// bearer reads the token of an "Authorization: Bearer <token>" header. The
// scheme is case-insensitive (RFC 9110, section 11.1), so "bearer" from a
// hand-written client works too.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a Host header names this machine by a
// loopback name: localhost (or a name under .localhost, RFC 6761) or a
// loopback address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	return loopback(host)
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	switch {
	case errors.As(err, &he):
		writeError(w, he.status, he.msg)
	case errors.Is(err, ErrForbidden):
		writeError(w, http.StatusForbidden, err.Error())
	case errors.Is(err, core.ErrInvalid), errors.Is(err, core.ErrInvalidParams):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, workspace.ErrForbidden):
		writeError(w, http.StatusForbidden, err.Error())
	case errors.Is(err, core.ErrNotFound) && r.PathValue("id") == "":
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, core.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("conversation %s not found", r.PathValue("id")))
	case errors.Is(err, core.ErrNotPending):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, core.ErrNotForClient):
		writeError(w, http.StatusConflict, err.Error()+"; only calls listed with waiting_for \"client\" take a posted result")
	case errors.Is(err, core.ErrNeedsPerson):
		writeError(w, http.StatusForbidden, err.Error()+": only the person asked can answer it, on the platform or with POST /api/approvals/{id}")
	case errors.Is(err, core.ErrConflict):
		writeError(w, http.StatusConflict, "conflict")
	default:
		a.log.ErrorContext(r.Context(), "api request failed", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusInternalServerError, "internal error")
	}
}

// ErrorJSON is the answer of every refused or failed request.
type ErrorJSON struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, ErrorJSON{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// httpError is an answer other than 400/404/409/500 that a handler asks for.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// maxBody bounds a request body: the largest legitimate one is a batch of
// tool results, far below this.
const maxBody = 1 << 20

// decode reads exactly one JSON value into v. Unknown fields, a second value
// after the first and an empty body (unless allowEmpty) are errors, so a
// typo in a client is reported instead of silently ignored.
func decode(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) {
		if allowEmpty {
			return nil
		}
		return fmt.Errorf("%w: request body is empty; want a JSON object", core.ErrInvalid)
	}
	if err == nil {
		// Anything but white space after the value is a malformed body.
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("unexpected data after the JSON object")
			if mbe := (*http.MaxBytesError)(nil); errors.As(terr, &mbe) {
				err = terr
			}
		}
	}
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit)}
	}
	if err != nil {
		return fmt.Errorf("%w: request body: %v", core.ErrInvalid, err)
	}
	return nil
}

func convID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return uuid.Nil, fmt.Errorf("%w: conversation id %q is not a UUID", core.ErrInvalid, r.PathValue("id"))
	}
	return id, nil
}

// CreateConversationRequest is the (optional) body of POST
// /api/conversations.
type CreateConversationRequest struct {
	Agent     string `json:"agent,omitempty"`     // default: the default agent
	Workspace string `json:"workspace,omitempty"` // default: a person's personal workspace
}

func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	var body CreateConversationRequest
	// The body is optional: no agent means the default one.
	if err := decode(w, r, &body, true); err != nil {
		return err
	}
	if err := a.mayCreateConversation(r, &body.Agent); err != nil {
		return err
	}
	ws, err := a.workspaceForNew(r, body.Workspace)
	if err != nil {
		return err
	}
	conv, err := a.svc.CreateConversation(r.Context(), body.Agent, tool.ContextAPI, caller(r))
	if err != nil {
		return err
	}
	if ws != nil {
		if err := a.svc.MoveConversation(r.Context(), conv.ID, *ws); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusCreated, conversationJSON(conv))
	return nil
}

func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	conv, err := a.svc.Conversation(r.Context(), id)
	if err != nil {
		return err
	}
	out := ConversationDetail{ConversationJSON: conversationJSON(conv)}
	forks, err := a.svc.Forks(r.Context(), id)
	if err != nil {
		return err
	}
	out.Forks = make([]uuid.UUID, 0, len(forks))
	for _, f := range forks {
		out.Forks = append(out.Forks, f.ID)
	}
	if v := r.URL.Query().Get("at"); v != "" {
		// Time travel: the derived state as it was at a seq, by replay.
		at, err := strconv.ParseInt(v, 10, 64)
		if err != nil || at < 1 || at > conv.LastSeq {
			return fmt.Errorf("%w: at=%q must be a seq of this conversation, from 1 to %d", core.ErrInvalid, v, conv.LastSeq)
		}
		st, err := a.svc.StateAt(r.Context(), id, at)
		if err != nil {
			return err
		}
		out.At, out.Status, out.PendingCalls = &st.At, st.Status, st.PendingCalls
		out.Approvals = approvalsJSON(st.Approvals)
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	pending, err := a.svc.PendingCalls(r.Context(), id)
	if err != nil {
		return err
	}
	out.PendingCalls = pending
	approvals, err := a.svc.ConversationApprovals(r.Context(), id)
	if err != nil {
		return err
	}
	out.Approvals = approvalsJSON(approvals)
	writeJSON(w, http.StatusOK, out)
	return nil
}

func approvalsJSON(aps []*core.Approval) []ApprovalJSON {
	out := make([]ApprovalJSON, 0, len(aps))
	for _, ap := range aps {
		out = append(out, approvalJSON(ap))
	}
	return out
}

// ConversationJSON is a conversation as the API shows it.
type ConversationJSON struct {
	ID     uuid.UUID `json:"id"`
	RootID uuid.UUID `json:"root_id"`
	// ParentID and ForkSeq say where a fork diverged; a root has neither.
	ParentID   *uuid.UUID              `json:"parent_id,omitempty"`
	ForkSeq    *int64                  `json:"fork_seq,omitempty"`
	Title      string                  `json:"title"`
	TitleAuto  bool                    `json:"title_auto"`
	Status     core.ConversationStatus `json:"status"`
	LastSeq    int64                   `json:"last_seq"`
	ChildCount int                     `json:"child_count"`
	CreatedAt  time.Time               `json:"created_at"`
}

// ConversationDetail is GET /api/conversations/{id}: the conversation, its
// forks, and what waits: the pending calls and the approvals waiting for a
// person (with ?at=, as they were at that seq).
type ConversationDetail struct {
	ConversationJSON
	Forks        []uuid.UUID        `json:"forks"`
	At           *int64             `json:"at,omitempty"`
	PendingCalls []core.PendingCall `json:"pending_calls"`
	Approvals    []ApprovalJSON     `json:"approvals"`
}

func conversationJSON(c *core.Conversation) ConversationJSON {
	out := ConversationJSON{
		ID: c.ID, RootID: c.RootID, Title: c.Title, TitleAuto: c.TitleAuto, Status: c.Status,
		LastSeq: c.LastSeq, ChildCount: c.ChildCount, CreatedAt: c.CreatedAt,
	}
	if c.ParentID != nil {
		out.ParentID, out.ForkSeq = c.ParentID, c.ForkSeq
	}
	return out
}

// MessageRequest is the body of POST /api/conversations/{id}/messages.
type MessageRequest struct {
	Text string `json:"text"`
	// Context is what the person looks at in the page (optional).
	Context string `json:"context,omitempty"`
}

// PostedJSON answers a post into a conversation with the seq of the entry
// it wrote.
type PostedJSON struct {
	ConversationID uuid.UUID `json:"conversation_id"`
	Seq            int64     `json:"seq"`
}

func (a *API) message(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	var body MessageRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	o := core.MessageOptions{PageContext: body.Context}
	if p := principal(r); p.Kind == PrincipalPerson {
		// The model reads the person's name, not "person:<id>".
		if person, err := a.svc.Person(r.Context(), p.PersonID); err == nil {
			o.UserName = person.DisplayName
		}
	}
	seq, err := a.svc.PostMessageWith(r.Context(), id, caller(r), body.Text, o)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, PostedJSON{ConversationID: id, Seq: seq})
	return nil
}

// ToolResultsRequest is the body of POST
// /api/conversations/{id}/tool-results.
type ToolResultsRequest struct {
	Results []core.ToolResultInput `json:"results"`
}

func (a *API) toolResults(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	var body ToolResultsRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	// An unknown conversation has no pending calls either; say which it is.
	if _, err := a.svc.Conversation(r.Context(), id); err != nil {
		return err
	}
	seq, err := a.svc.PostToolResults(r.Context(), id, caller(r), body.Results)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, PostedJSON{ConversationID: id, Seq: seq})
	return nil
}

// ForkRequest is the body of POST /api/conversations/{id}/fork: the
// message at seq edited to content.
type ForkRequest struct {
	Seq     int64  `json:"seq"`
	Content string `json:"content"`
}

// ForkedJSON answers a fork: the new conversation and its edited message's
// seq. Forked is false when the edit left the message as it was.
type ForkedJSON struct {
	ConversationID uuid.UUID `json:"conversation_id"`
	Forked         bool      `json:"forked"`
	Seq            int64     `json:"seq"`
	ParentID       uuid.UUID `json:"parent_id"`
}

func (a *API) fork(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	var body ForkRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	res, err := a.svc.Fork(r.Context(), id, body.Seq, caller(r), body.Content)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, ForkedJSON{ConversationID: res.ConversationID, Forked: res.Forked, Seq: res.Entry.SeqValue(), ParentID: id})
	return nil
}

func (a *API) entries(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	p := &core.EntryListParams{ConversationID: id, WithErrors: r.URL.Query().Get("errors") != "0"}
	if v := r.URL.Query().Get("at"); v != "" {
		at, err := strconv.ParseInt(v, 10, 64)
		if err != nil || at < 1 {
			return fmt.Errorf("%w: at=%q must be a seq of 1 or more", core.ErrInvalid, v)
		}
		p.UpToSeq = at
	}
	if _, err := a.svc.Conversation(r.Context(), id); err != nil {
		return err
	}
	list, err := a.svc.Entries(r.Context(), p)
	if err != nil {
		return err
	}
	out := EntryList{ConversationID: id, Entries: make([]EntryJSON, 0, len(list))}
	for _, e := range list {
		out.Entries = append(out.Entries, toEntryJSON(e))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// EntryList is the log of a conversation.
type EntryList struct {
	ConversationID uuid.UUID   `json:"conversation_id"`
	Entries        []EntryJSON `json:"entries"`
}

// EntryJSON is an entry as clients see it, in the log and in a stream's
// entry and error events. An entry has a seq; an error entry has none, and
// after_seq places it. The fields are in the order of their names, the
// order appendEntryFrame writes them in.
type EntryJSON struct {
	AfterSeq  *int64          `json:"after_seq,omitempty"`
	Author    core.Author     `json:"author"`
	Content   json.RawMessage `json:"content"`
	CreatedAt time.Time       `json:"created_at"`
	ID        uuid.UUID       `json:"id"`
	Kind      core.EntryKind  `json:"kind"`
	Seq       *int64          `json:"seq,omitempty"`
}

func toEntryJSON(e *core.Entry) EntryJSON {
	out := EntryJSON{ID: e.ID, Kind: e.Kind, Author: e.Author, Content: e.Content, CreatedAt: e.CreatedAt, Seq: e.Seq}
	if e.Seq == nil {
		out.AfterSeq = &e.AfterSeq
	}
	return out
}

// MaxStreamTail is the most entries a stream's ?tail= asks for; a client
// that wants more reads from a cursor.
const MaxStreamTail = 10000

// stream follows a conversation. The SSE id of each entry is its seq; a
// client that reconnects with Last-Event-ID (or ?cursor=) gets exactly the
// entries it missed, then live ones. ?tail=N starts with the newest N
// entries instead of the whole log (past ?cursor= when both are given); a
// reconnect's Last-Event-ID overrides both, so it resumes exactly where it
// was. Token deltas are a separate event type with no id: they are
// ephemeral and never replayed.
func (a *API) stream(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	cursor, resumed := int64(0), false
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		cursor, err = strconv.ParseInt(v, 10, 64)
		resumed = true
	} else if v := q.Get("cursor"); v != "" {
		cursor, err = strconv.ParseInt(v, 10, 64)
	}
	if err != nil || cursor < 0 {
		return fmt.Errorf("%w: cursor must be a seq of 0 or more", core.ErrInvalid)
	}
	tail := int64(-1) // none
	if q.Has("tail") {
		v := q.Get("tail")
		if tail, err = strconv.ParseInt(v, 10, 64); err != nil || tail < 0 || tail > MaxStreamTail {
			return fmt.Errorf("%w: tail=%q must be a number of entries from 0 to %d", core.ErrInvalid, v, MaxStreamTail)
		}
	}
	conv, err := a.svc.Conversation(r.Context(), id)
	if err != nil {
		return err
	}
	if tail >= 0 && !resumed {
		// Seqs have no gaps: the newest tail entries are those past this.
		cursor = max(cursor, conv.LastSeq-tail)
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming unsupported by the response writer")
	}
	ctx := r.Context()
	// Subscribe before the catch-up read so nothing falls between them.
	wake, err := a.svc.EntryWakeups(ctx, id)
	if err != nil {
		return err
	}
	live, unsubscribe := a.svc.Hub().Subscribe(id, 1024)
	defer unsubscribe()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	cur := a.svc.Cursor(id, cursor)
	var frames *convFrames
	if a.frames != nil {
		frames = a.frames.follow(id, conv.ContentRev, min(cursor, conv.LastSeq))
		defer a.frames.release(frames)
	}
	openCursor := func(after int64) *core.Cursor { return a.svc.Cursor(id, after) }
	write := func(b []byte) error {
		_, err := w.Write(b)
		return err
	}
	var sseBuf []byte // catch-up's encoding buffer, kept between reads
	// catchUp sends the entries past the cursor, up to the seq upTo (0: all).
	// With guard, a read of the whole log sends nothing if live events were
	// queued while it read: a turn of this process may have written entries
	// whose deltas are among them, and those events bring the entries, in
	// order.
	catchUp := func(upTo int64, guard bool) error {
		raced := func() bool { return guard && upTo == 0 && len(live) > 0 }
		for {
			// The conversation's frames, kept for all its followers, serve
			// what they can: a catch-up is then a copy of bytes. A cursor
			// before where they start reads the store up to there first.
			bound := upTo
			if frames != nil {
				if lo := frames.start(); lo >= 0 && cur.Seq() >= lo {
					err := frames.read(ctx, a.frames, openCursor, cur, upTo, raced, write)
					if !errors.Is(err, errNotCached) {
						flusher.Flush()
						return err
					}
				} else if lo > cur.Seq() && (bound == 0 || bound > lo) {
					bound = lo
				}
			}
			// The log is read a page of seqs at a time (core.CursorPage)
			// and each page written before the next is read: a catch-up
			// from cursor 0 or a reconnect after a long absence holds one
			// page in memory, not the whole backlog. Each entry is encoded
			// from the store's bytes into one buffer, written in large
			// chunks: a catch-up of thousands of entries is a few writes,
			// not one per entry.
			buf := sseBuf[:0]
			last, err := cur.ScanPage(ctx, bound, func(r *core.EntryRow) error {
				var err error
				buf, err = appendEntryFrame(buf, r)
				return err
			}, func() bool { return !raced() })
			if err != nil {
				return err
			}
			if raced() {
				return nil
			}
			for rest := buf; len(rest) > 0; {
				n := min(len(rest), streamChunk)
				if err := write(rest[:n]); err != nil {
					return err
				}
				rest = rest[n:]
			}
			// Each page reaches the client before the next is read.
			flusher.Flush()
			if sseBuf = buf[:0]; cap(sseBuf) > 4*streamChunk {
				sseBuf = nil // an unusually large page: not kept
			}
			// Done at upTo, or where the log ends; a read bounded by where
			// the frames start goes on with them.
			if last && (bound == upTo || cur.Seq() < bound) {
				return nil
			}
		}
	}
	if err := catchUp(0, false); err != nil {
		return nil // the client went away or the store failed mid-stream; nothing more to say
	}

	// A turn run in this process is followed through its live events, in
	// the order it published them: deltas, then the entry they add up to,
	// read from the log when its event arrives. Reading the log on any
	// other signal while such a turn runs could send an entry ahead of its
	// deltas, so wake-ups only read it when no turn runs here. A turn run by
	// another instance arrives the same way through a shared hub (Postgres),
	// a few milliseconds behind.
	localTurn := false
	handle := func(ev core.Event) error {
		switch ev.Kind {
		case core.EventDelta:
			localTurn = true
			return writeEvent(w, "", "delta", map[string]string{"text": ev.Text})
		case core.EventEntry:
			// Up to this entry, not past it: a later entry's deltas may
			// still be queued behind this event.
			return catchUp(core.EntryBound(ev.Entry), true)
		case core.EventTurnEnd:
			localTurn = false
			if err := catchUp(0, true); err != nil {
				return err
			}
			return writeEvent(w, "", string(ev.Kind), map[string]string{"text": ev.Text})
		case core.EventStatus, core.EventRestart, core.EventTurnStart:
			localTurn = true
			return writeEvent(w, "", string(ev.Kind), map[string]string{"text": ev.Text})
		}
		return nil
	}
	// drain handles the live events already queued: a turn here publishes
	// its turn_start before anything it writes can wake us.
	drain := func() error {
		for {
			select {
			case ev := <-live:
				if err := handle(ev); err != nil {
					return err
				}
			default:
				flusher.Flush()
				return nil
			}
		}
	}
	poll := time.NewTicker(a.opts.PollInterval)
	defer poll.Stop()
	keep := time.NewTicker(a.opts.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.closing:
			return nil
		case _, ok := <-wake:
			if !ok {
				return nil
			}
		case ev := <-live:
			if err := handle(ev); err != nil {
				return nil
			}
			flusher.Flush()
			continue
		case <-poll.C:
			// The safety net for a lost turn_end (a full live buffer): a
			// conversation no longer running has no local turn to wait for.
			if localTurn {
				c, err := a.svc.Conversation(ctx, id)
				if err != nil {
					return nil
				}
				localTurn = c.Status == core.ConversationRunning
			}
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			flusher.Flush()
			continue
		}
		if err := drain(); err != nil {
			return nil
		}
		if localTurn {
			continue
		}
		if err := catchUp(0, true); err != nil {
			return nil
		}
	}
}

func writeEvent(w http.ResponseWriter, id, event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if id != "" {
		if _, err := fmt.Fprintf(w, "id: %s\n", id); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	return err
}
