package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboardhq/switchboard/bots/mcp"
	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/store"
)

// loadMCP reads mcp-servers.json (SWITCHBOARD_MCP_CONFIG): a missing file
// at the default path means no servers.
func (c *Config) loadMCP() (*mcpclient.Config, error) {
	explicit := c.MCPConfigPath != ""
	mc, err := mcpclient.Load(c.MCPConfigPath, explicit, c.Env)
	if err != nil {
		return nil, err
	}
	redact.AddSecrets(mc.Secrets()...)
	return mc, nil
}

// buildMCP makes the client of the outside MCP servers; their tools join
// the registry at Start.
func (a *App) buildMCP(mc *mcpclient.Config) error {
	if err := a.buildMCPOAuth(); err != nil {
		return err
	}
	opts, err := a.mcpOptions(mc)
	if err != nil {
		return err
	}
	m, err := mcpclient.New(opts)
	if err != nil {
		return err
	}
	a.MCP, a.mcpConfig = m, mc
	if err := a.Metrics.Registry().Register(mcpCollector{a.mcpNow}); err != nil {
		return fmt.Errorf("registering the MCP metrics: %w", err)
	}
	return nil
}

// buildMCPServer serves the agents to MCP clients at /mcp, with the API's
// credentials.
func (a *App) buildMCPServer(api *web.API) error {
	srv, err := mcp.New(mcp.Options{
		Service: a.Service, Auth: api, InterruptFunc: a.Worker.Interrupt, StopFunc: a.Service.StopConversation,
		Logger: a.log.With("part", "mcpserver"), PublicURL: a.cfg.PublicURL,
	})
	if err != nil {
		return err
	}
	a.Mux.Handle("/mcp", srv.Handler())
	a.mcpServer = srv
	return nil
}

// mcpReadyz is the /readyz detail: one line per server. A disconnected
// server does not make the instance unready: its tools are withdrawn and
// it reconnects on its own.
func (a *App) mcpReadyz(w io.Writer) {
	for _, s := range a.mcpNow().Status() {
		line := fmt.Sprintf("mcp %s: %s, %d tools", s.Name, s.State, len(s.Tools))
		if s.State == mcpclient.StateDisconnected && s.Error != "" {
			line += " (" + redact.String(s.Error) + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// mcpCollector reports the MCP servers' state on each scrape of /metrics.
type mcpCollector struct{ m func() *mcpclient.Manager }

var (
	mcpUpDesc       = prometheus.NewDesc("switchboard_mcp_server_up", "1 when the MCP server is connected and its tools offered.", []string{"server"}, nil)
	mcpToolsDesc    = prometheus.NewDesc("switchboard_mcp_tools", "Tools offered from the MCP server.", []string{"server"}, nil)
	mcpConnectsDesc = prometheus.NewDesc("switchboard_mcp_connects_total", "Sessions opened to the MCP server since the start.", []string{"server"}, nil)
)

// Describe sends the collector's descriptions.
func (c mcpCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- mcpUpDesc
	ch <- mcpToolsDesc
	ch <- mcpConnectsDesc
}

// Collect sends one value of each series per server.
func (c mcpCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.m().Status() {
		up := 0.0
		if s.State == mcpclient.StateConnected {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(mcpUpDesc, prometheus.GaugeValue, up, s.Name)
		ch <- prometheus.MustNewConstMetric(mcpToolsDesc, prometheus.GaugeValue, float64(len(s.Tools)), s.Name)
		ch <- prometheus.MustNewConstMetric(mcpConnectsDesc, prometheus.CounterValue, float64(s.Connects), s.Name)
	}
}

// startMCP connects the servers before the workers take turns.
func (a *App) startMCP(ctx context.Context) error {
	a.importMCPTokenFiles(ctx, a.mcpConfig)
	if err := a.takeRelayedMCPCallbacks(ctx); err != nil {
		return err
	}
	if err := a.MCP.Start(ctx); err != nil {
		return fmt.Errorf("starting MCP clients: %w", err)
	}
	// The clients in use at the stop: a reload may have replaced them.
	a.onStop(func(ctx context.Context) error { return a.mcpNow().Stop(ctx) })
	a.started.Store(true)
	return nil
}

// mcpTokenDir is SWITCHBOARD_MCP_TOKEN_DIR (default ./mcp-oauth), where
// earlier versions kept the OAuth grants of MCP servers as sealed files.
// It is read only to import them (importMCPTokenFiles).
func (a *App) mcpTokenDir() string {
	if a.cfg.Env != nil {
		if d := strings.TrimSpace(a.cfg.Env("SWITCHBOARD_MCP_TOKEN_DIR")); d != "" {
			return d
		}
	}
	return "mcp-oauth"
}

// importMCPTokenFiles moves into the database, once, the grant files of
// the servers with "oauth" that the database holds no grant for (each
// import is logged); the files are no longer read afterwards. A file that
// does not open (another key) is reported and left: its server asks a
// person to sign in, as it would have.
func (a *App) importMCPTokenFiles(ctx context.Context, mc *mcpclient.Config) {
	if a.mcpTokens == nil || mc == nil {
		return
	}
	var keys []mcpclient.GrantKey
	for _, name := range mc.NeedsOAuth() {
		keys = append(keys, mcpclient.GrantKey{Server: name, Workspace: mc.Servers[name].Workspace})
	}
	if _, err := a.mcpTokens.ImportFiles(ctx, a.mcpTokenDir(), keys, a.log.With("part", "mcp")); err != nil {
		a.log.WarnContext(ctx, "importing the MCP OAuth token files of SWITCHBOARD_MCP_TOKEN_DIR (legacy import)", "error", err)
	}
}

func mcpConfigPath(getenv func(string) string) string {
	return strings.TrimSpace(getenv("SWITCHBOARD_MCP_CONFIG"))
}

// mcpNow is the client of the outside MCP servers in use: a reload of a
// changed mcp-servers.json replaces it (reloadMCP).
func (a *App) mcpNow() *mcpclient.Manager {
	a.mcpMu.Lock()
	defer a.mcpMu.Unlock()
	return a.MCP
}

// reloadMCP replaces the MCP clients when mcp-servers.json changed: the old
// sessions end (their tools leave the registry), then the new servers
// connect, as at start. A turn between the two finds no MCP tool and is
// told so like any unknown tool.
func (a *App) reloadMCP(ctx context.Context, mc *mcpclient.Config) error {
	a.mcpMu.Lock()
	old, same := a.MCP, reflect.DeepEqual(a.mcpConfig, mc)
	a.mcpMu.Unlock()
	if same {
		return nil
	}
	opts, err := a.mcpOptions(mc)
	if err != nil {
		return err
	}
	next, err := mcpclient.New(opts)
	if err != nil {
		return err
	}
	a.importMCPTokenFiles(ctx, mc)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := old.Stop(sctx); err != nil {
		a.log.WarnContext(ctx, "stopping the previous MCP clients", "error", err)
	}
	a.mcpMu.Lock()
	a.MCP, a.mcpConfig = next, mc
	a.mcpMu.Unlock()
	if err := next.Start(ctx); err != nil {
		return fmt.Errorf("starting MCP clients: %w", err)
	}
	a.log.InfoContext(ctx, "MCP servers reloaded", "servers", len(mc.Servers))
	return nil
}

// mcpOAuthCallback is where the authorization servers of MCP servers with
// "oauth" send the person back; mcpClientMetadata is Switchboard's OAuth
// client id metadata document (served when SWITCHBOARD_PUBLIC_URL is
// https).
const (
	mcpOAuthCallback  = "/mcp/oauth/callback"
	mcpClientMetadata = "/mcp/oauth/client-metadata.json"
)

// buildMCPOAuth prepares OAuth to MCP servers: the callback route, the
// client metadata document and the token store (the database, sealed
// with SWITCHBOARD_SECRET_KEY, shared by every instance on it). It needs
// SWITCHBOARD_PUBLIC_URL and SWITCHBOARD_SECRET_KEY; without them a
// server with "oauth" is refused when the MCP clients are made, naming the
// settings.
func (a *App) buildMCPOAuth() error {
	public := strings.TrimRight(a.cfg.PublicURL, "/")
	if public == "" || !a.cfg.Keys.Configured() {
		return nil
	}
	a.mcpTokens = &mcpclient.StoreTokens{Store: a.Store, Keys: a.cfg.Keys, Now: a.cfg.Now}
	o := &mcpclient.OAuthOptions{
		RedirectURL: public + mcpOAuthCallback,
		Tokens:      a.mcpTokens,
	}
	cb := mcpclient.NewCallbacks()
	cb.Relay = a.relayMCPCallback
	a.mcpCallbacks = cb
	o.Authorize = cb.Authorize
	a.Mux.Handle("GET "+mcpOAuthCallback, cb)
	if strings.HasPrefix(public, "https://") {
		h, err := mcpclient.ClientMetadataHandler(public+mcpClientMetadata, o.RedirectURL)
		if err != nil {
			return err
		}
		a.Mux.Handle("GET "+mcpClientMetadata, h)
		o.ClientMetadataURL = public + mcpClientMetadata
	}
	a.mcpOAuth = o
	return nil
}

// mcpOptions are the options of the MCP clients for mc; a server with
// "oauth" needs SWITCHBOARD_PUBLIC_URL and SWITCHBOARD_SECRET_KEY.
func (a *App) mcpOptions(mc *mcpclient.Config) (mcpclient.Options, error) {
	if names := mc.NeedsOAuth(); len(names) > 0 && a.mcpOAuth == nil {
		return mcpclient.Options{}, fmt.Errorf("mcp-servers.json: MCP server %s: %w", names[0], mcpclient.ErrNoOAuth)
	}
	return mcpclient.Options{Config: mc, Registry: a.Registry, Logger: a.log.With("part", "mcp"), Now: a.cfg.Now, OAuth: a.mcpOAuth, Getenv: a.cfg.Env}, nil
}

// Topics of the relay of OAuth redirects between instances: behind one
// SWITCHBOARD_PUBLIC_URL the redirect of a sign-in may reach an instance
// other than the one waiting for it. That one publishes it
// (mcpCallbackTopic); the instance whose attempt has its state takes it
// and answers (mcpCallbackAckTopic), so the person's page says whether it
// worked. The code is useless without the waiting attempt's PKCE verifier.
const (
	mcpCallbackTopic    = "sb_mcp_oauth_callback"
	mcpCallbackAckTopic = "sb_mcp_oauth_callback_ack"
	mcpRelayWait        = 5 * time.Second
)

type relayedCallback struct {
	ID     string `json:"id"`
	Query  string `json:"query,omitempty"`
	Server string `json:"server,omitempty"`
}

// takeRelayedMCPCallbacks delivers the redirects other instances relay to
// this one's waiting attempts, until the service stops.
func (a *App) takeRelayedMCPCallbacks(ctx context.Context) error {
	if a.mcpCallbacks == nil {
		return nil
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	relayed, err := a.Store.Subscribe(rctx, mcpCallbackTopic)
	if err != nil {
		cancel()
		return fmt.Errorf("listening for relayed MCP OAuth redirects: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var n store.Notification
			select {
			case <-rctx.Done():
				return
			case got, ok := <-relayed:
				if !ok {
					return
				}
				n = got
			}
			var m relayedCallback
			if json.Unmarshal([]byte(n.Payload), &m) != nil || m.ID == "" {
				continue
			}
			q, err := url.ParseQuery(m.Query)
			if err != nil {
				continue
			}
			server, ok := a.mcpCallbacks.Deliver(q)
			if !ok {
				continue // another instance's attempt, or none
			}
			ack, _ := json.Marshal(relayedCallback{ID: m.ID, Server: server})
			if err := a.Store.Publish(rctx, mcpCallbackAckTopic, string(ack)); err != nil {
				a.log.WarnContext(rctx, "answering a relayed MCP OAuth redirect", "server", server, "error", err)
			}
			a.log.InfoContext(rctx, "took an MCP OAuth redirect relayed by another instance", "server", server)
		}
	}()
	a.onStop(func(context.Context) error {
		cancel()
		<-done
		return nil
	})
	return nil
}

// relayMCPCallback is Callbacks.Relay: it publishes a redirect no attempt
// here waits for and waits briefly for the instance whose attempt took it.
func (a *App) relayMCPCallback(ctx context.Context, q url.Values) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, mcpRelayWait)
	defer cancel()
	acks, err := a.Store.Subscribe(ctx, mcpCallbackAckTopic)
	if err != nil {
		a.log.WarnContext(ctx, "relaying an MCP OAuth redirect", "error", err)
		return "", false
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	m := relayedCallback{ID: hex.EncodeToString(id), Query: q.Encode()}
	payload, _ := json.Marshal(m)
	if len(payload) > store.MaxPublishPayload {
		return "", false
	}
	if err := a.Store.Publish(ctx, mcpCallbackTopic, string(payload)); err != nil {
		a.log.WarnContext(ctx, "relaying an MCP OAuth redirect", "error", err)
		return "", false
	}
	for {
		select {
		case n, ok := <-acks:
			if !ok {
				return "", false
			}
			var ack relayedCallback
			if json.Unmarshal([]byte(n.Payload), &ack) == nil && ack.ID == m.ID {
				return ack.Server, true
			}
		case <-ctx.Done():
			return "", false
		}
	}
}
