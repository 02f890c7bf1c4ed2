package mcpclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/childenv"
)

// State is where a server's session stands.
type State string

const (
	StateConnecting   State = "connecting"   // the first attempt has not finished
	StateConnected    State = "connected"    // initialised, its tools are offered
	StateDisconnected State = "disconnected" // its tools are withdrawn; reconnecting with backoff
	StateDisabled     State = "disabled"     // "disabled": true in the file
	// StateAuthorizing: the server wants OAuth and a person must open
	// Status.AuthorizeURL; the attempt waits for the callback.
	StateAuthorizing State = "authorizing"
)

// Status is one server as `switchboard mcp status`, /readyz and /metrics
// show it.
type Status struct {
	Name      string    `json:"name"`
	Transport Transport `json:"transport"`
	State     State     `json:"state"`
	// Tools are the registry names of the tools offered now (none unless
	// connected).
	Tools []string `json:"tools"`
	// Error is why the last attempt failed or the session ended.
	Error string `json:"error,omitempty"`
	// Since is when the server entered State.
	Since time.Time `json:"since"`
	// Connects counts the sessions opened since the start; more than one
	// means it reconnected.
	Connects int `json:"connects"`
	// Server is the name and version the server gave at initialisation.
	Server          string `json:"server,omitempty"`
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// AuthorizeURL is where a person authorizes Switchboard on the
	// server's authorization server, while State is authorizing.
	AuthorizeURL string `json:"authorize_url,omitempty"`
}

// Options configures a Manager.
type Options struct {
	// Config lists the servers; required (an empty one is fine).
	Config *Config
	// Registry receives the servers' tools; required.
	Registry *tool.Registry
	Logger   *slog.Logger
	Now      func() time.Time
	// ConnectTimeout bounds one attempt to connect, initialise and list
	// the tools (default 30s). Start waits for the first attempts at most
	// this long.
	ConnectTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts, doubling from the first to the second (defaults 1s, 1m).
	MinBackoff, MaxBackoff time.Duration
	// KeepAlive is the interval of the pings that find a dead HTTP server
	// between calls (default 15s; a stdio server's exit is seen at once).
	KeepAlive time.Duration
	// CallTimeout is a call's limit when the server sets no timeout of
	// its own (default 60s).
	CallTimeout time.Duration
	// MaxOutputBytes caps what one call returns to the model (default
	// tool.DefaultMaxOutputBytes); longer text is cut, with a note saying so.
	MaxOutputBytes int
	// HTTPClient reaches streamable HTTP servers (default: a client with no
	// overall timeout, as the session's event stream stays open).
	HTTPClient *http.Client
	// Version is Switchboard's version, sent at initialisation.
	Version string
	// OAuth authorizes the servers with an "oauth" entry (required when
	// one has).
	OAuth *OAuthOptions
	// Getenv is the service's environment, from which a stdio server's
	// base environment (PATH, HOME, the locale, TZ, TMPDIR) is read
	// (default os.Getenv). A stdio server gets those and its own block's
	// env entries, nothing else.
	Getenv func(string) string
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = time.Minute
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = time.Minute
	}
	if o.MaxOutputBytes == 0 {
		o.MaxOutputBytes = tool.DefaultMaxOutputBytes
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.OAuth != nil {
		oa := *o.OAuth
		if oa.Wait == 0 {
			oa.Wait = 15 * time.Minute
		}
		if oa.Poll == 0 {
			oa.Poll = 2 * time.Second
		}
		if oa.RefreshWait == 0 {
			oa.RefreshWait = 10 * time.Second
		}
		o.OAuth = &oa
	}
}

func (o *Options) validate() error {
	switch {
	case o.Config == nil:
		return errors.New("mcpclient: Options.Config is required")
	case o.Registry == nil:
		return errors.New("mcpclient: Options.Registry is required")
	case o.MinBackoff < 0 || o.MaxBackoff < o.MinBackoff:
		return fmt.Errorf("mcpclient: Options.MaxBackoff %s must be at least Options.MinBackoff %s", o.MaxBackoff, o.MinBackoff)
	case o.MaxOutputBytes < 1024:
		return fmt.Errorf("mcpclient: Options.MaxOutputBytes %d must be at least 1024", o.MaxOutputBytes)
	}
	if o.OAuth != nil {
		return o.OAuth.validate()
	}
	return nil
}

// Manager keeps a session to every configured server.
type Manager struct {
	opts    Options
	log     *slog.Logger
	servers map[string]*server

	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New validates opts. Nothing connects until Start.
func New(opts Options) (*Manager, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m := &Manager{opts: opts, log: opts.Logger, servers: map[string]*server{}}
	for name, cfg := range opts.Config.Servers {
		st := StateConnecting
		if cfg.Disabled {
			st = StateDisabled
		}
		m.servers[name] = &server{m: m, cfg: cfg, log: m.log.With("mcp_server", name), state: st, since: opts.Now()}
	}
	return m, nil
}

// Start connects every server, waiting up to ConnectTimeout for the first
// attempts so that the tools are offered from the first turn. A server that
// cannot be reached does not stop the start: it is marked disconnected and
// retried in the background.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.cancel != nil {
		m.mu.Unlock()
		return errors.New("mcpclient: already started")
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	m.mu.Unlock()
	var first sync.WaitGroup
	for _, s := range m.servers {
		if s.cfg.Disabled {
			continue
		}
		first.Add(1)
		m.wg.Go(func() { s.run(life, first.Done) })
	}
	done := make(chan struct{})
	go func() { first.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// Stop closes every session (ending the stdio servers' processes) and waits
// for the reconnection loops to end, until ctx's deadline.
func (m *Manager) Stop(ctx context.Context) error {
	m.mu.Lock()
	cancel := m.cancel
	m.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	for _, s := range m.servers {
		s.closeSession()
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stopping MCP clients: %w", ctx.Err())
	}
}

// Status lists the servers, by name.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	slices.SortFunc(out, func(a, b Status) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Disconnect ends a server's current session as if the server had gone
// away; the manager then reconnects it with backoff. It reports whether
// the server had a session.
func (m *Manager) Disconnect(name string) bool {
	s, ok := m.servers[name]
	if !ok {
		return false
	}
	return s.closeSession()
}

// server is one configured server and its session.
type server struct {
	m   *Manager
	cfg *Server
	log *slog.Logger

	mu       sync.Mutex
	state    State
	err      string
	since    time.Time
	tools    []string          // registry names offered now
	remote   map[string]string // registry name -> the server's name
	session  *mcp.ClientSession
	connects int
	info     *mcp.InitializeResult
	authURL  string
	// firstDone ends Start's wait for this server (also when it starts
	// waiting for a person to authorize it).
	firstDone func()
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Name: s.cfg.Name, Transport: s.cfg.Transport(), State: s.state, Tools: slices.Clone(s.tools),
		Error: s.err, Since: s.since, Connects: s.connects, AuthorizeURL: s.authURL,
	}
	if st.Tools == nil {
		st.Tools = []string{}
	}
	if s.info != nil {
		st.ProtocolVersion = s.info.ProtocolVersion
		if s.info.ServerInfo != nil {
			st.Server = s.info.ServerInfo.Name + " " + s.info.ServerInfo.Version
		}
	}
	return st
}

// run connects and, whenever the session ends, withdraws the tools and
// reconnects with backoff, until ctx ends. firstDone is called once the
// first attempt finished, either way.
func (s *server) run(ctx context.Context, firstDone func()) {
	var once sync.Once
	defer once.Do(firstDone)
	s.mu.Lock()
	s.firstDone = func() { once.Do(firstDone) }
	s.mu.Unlock()
	failures := 0
	for ctx.Err() == nil {
		cs, err := s.connect(ctx)
		once.Do(firstDone)
		if err != nil {
			failures++
			s.down(err)
			wait := s.backoff(failures)
			s.log.WarnContext(ctx, "MCP server unreachable; retrying", "error", err, "retry_in", wait.String())
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			continue
		}
		failures = 0
		werr := cs.Wait()
		if ctx.Err() != nil {
			s.withdraw()
			return
		}
		if werr == nil {
			werr = errors.New("the session ended")
		}
		s.log.WarnContext(ctx, "MCP server disconnected; its tools are withdrawn", "error", werr)
		s.down(werr)
		failures = 1
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.backoff(failures)):
		}
	}
}

// backoff is the wait before attempt n+1: doubling from MinBackoff, capped
// at MaxBackoff, with jitter so that servers restarted together are not
// hit together.
func (s *server) backoff(n int) time.Duration {
	o := s.m.opts
	d := o.MinBackoff << min(n-1, 16)
	if d <= 0 || d > o.MaxBackoff {
		d = o.MaxBackoff
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// connect opens a session, lists the tools and registers them.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, error) {
	o := s.m.opts
	limit := o.ConnectTimeout
	if s.cfg.OAuth != nil && o.OAuth != nil {
		limit += o.OAuth.Wait // a person may have to authorize
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t, err := s.transport(ctx)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "switchboard", Version: o.Version}, &mcp.ClientOptions{
		KeepAlive:          o.KeepAlive,
		ElicitationHandler: s.elicitHandler(),
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// Not in the notification's goroutine: listing is a request on
			// the same session.
			go s.refresh(ctx)
		},
	})
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to MCP server %s: %w", s.cfg.Name, err)
	}
	s.mu.Lock()
	s.session, s.info = cs, cs.InitializeResult()
	s.connects++
	s.mu.Unlock()
	if err := s.list(cctx, cs); err != nil {
		_ = cs.Close()
		return nil, err
	}
	s.mu.Lock()
	s.state, s.err, s.since = StateConnected, "", o.Now()
	n := len(s.tools)
	s.mu.Unlock()
	s.log.InfoContext(ctx, "MCP server connected", "tools", n, "protocol_version", cs.InitializeResult().ProtocolVersion)
	return cs, nil
}

func (s *server) transport(ctx context.Context) (mcp.Transport, error) {
	switch s.cfg.Transport() {
	case TransportHTTP:
		hc := *s.m.opts.HTTPClient
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		hc.Transport = headerTransport{base: base, headers: s.cfg.Headers}
		t := &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &hc, MaxRetries: 2}
		if s.cfg.OAuth != nil {
			h, err := s.oauthHandler(ctx)
			if err != nil {
				return nil, err
			}
			t.OAuthHandler = h
		}
		return t, nil
	default:
		// Not CommandContext: the process lives as long as the session,
		// not as long as the attempt to connect; Close ends it.
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = s.m.childEnv(s.cfg)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return nil, fmt.Errorf("starting MCP server %s: %w", s.cfg.Name, err)
		}
		go s.logStderr(stderr)
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	}
}

// childEnv is the environment of a stdio server: the base environment
// (childenv.Base) read from Options.Getenv, then its own block's env
// entries, which win. Nothing else of the service's environment (provider
// keys, DATABASE_URL, platform tokens, SWITCHBOARD_* settings) is passed.
func (m *Manager) childEnv(cfg *Server) []string {
	env := childenv.From(m.opts.Getenv, childenv.Base...)
	for _, k := range sortedKeys(cfg.Env) {
		env = append(env, k+"="+cfg.Env[k])
	}
	return env
}

// logStderr passes a stdio server's own messages to the log.
func (s *server) logStderr(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		s.log.Debug("MCP server stderr", "line", sc.Text())
	}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// refresh lists the tools again after notifications/tools/list_changed.
func (s *server) refresh(ctx context.Context) {
	s.mu.Lock()
	cs := s.session
	s.mu.Unlock()
	if cs == nil {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, s.m.opts.ConnectTimeout)
	defer cancel()
	if err := s.list(lctx, cs); err != nil {
		s.log.WarnContext(ctx, "refreshing the MCP server's tools after list_changed", "error", err)
		return
	}
	s.log.InfoContext(ctx, "MCP server's tools refreshed", "tools", len(s.status().Tools))
}

// list reads the server's tools and swaps them into the registry at once.
func (s *server) list(ctx context.Context, cs *mcp.ClientSession) error {
	var built []*tool.Tool
	remote := map[string]string{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing the tools of MCP server %s: %w", s.cfg.Name, err)
		}
		tl, err := s.build(t)
		if err != nil {
			s.log.WarnContext(ctx, "skipping an MCP tool that cannot be offered", "tool", t.Name, "error", err)
			continue
		}
		if _, dup := remote[tl.Name()]; dup {
			s.log.WarnContext(ctx, "skipping an MCP tool whose name collides after cleaning", "tool", t.Name)
			continue
		}
		remote[tl.Name()] = t.Name
		built = append(built, tl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != cs {
		return errors.New("the session ended while listing its tools")
	}
	if err := s.m.opts.Registry.Replace(s.tools, built); err != nil {
		return fmt.Errorf("registering the tools of MCP server %s: %w", s.cfg.Name, err)
	}
	s.tools = s.tools[:0]
	for _, tl := range built {
		s.tools = append(s.tools, tl.Name())
	}
	slices.Sort(s.tools)
	s.remote = remote
	return nil
}

// down marks the server disconnected and withdraws its tools.
func (s *server) down(err error) {
	s.withdraw()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.since = StateDisconnected, s.m.opts.Now()
	if err != nil {
		s.err = err.Error()
	}
}

func (s *server) withdraw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.opts.Registry.Remove(s.tools...)
	s.tools = nil
	s.session = nil
}

// closeSession ends the current session, if any.
func (s *server) closeSession() bool {
	s.mu.Lock()
	cs := s.session
	s.mu.Unlock()
	if cs == nil {
		return false
	}
	_ = cs.Close()
	return true
}

// current is the live session, or nil.
func (s *server) current() *mcp.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}
