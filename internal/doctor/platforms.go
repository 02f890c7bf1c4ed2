package doctor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/slack-go/slack"

	slackbot "github.com/switchboardhq/switchboard/bots/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// openStore opens the store without creating it: a SQLite file that is
// not there is reported, not made.
func openStore(ctx context.Context, cfg app.Config) (store.Store, error) {
	t, err := dial.Parse(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if t.Driver == "sqlite" {
		if _, err := os.Stat(t.Path); err != nil {
			return nil, fmt.Errorf("no SQLite database at %s: %w", t.Path, err)
		}
	}
	return dial.Open(ctx, dial.Options{DatabaseURL: cfg.DatabaseURL, BinaryVersion: cfg.BinaryVersion})
}

func decodeJSON(r io.Reader, v any) error {
	return json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(v)
}

// slack checks the bot token (auth.test), the scopes it was granted
// against the ones the app asks for (bots/slack.BotScopes, the manifest's),
// and how events arrive: the app-level token for Socket Mode, or the
// signing secret for HTTP.
func (d *doctor) slack(ctx context.Context) {
	cfg := d.o.Config
	if cfg.SlackBotToken == "" {
		d.add("slack", StatusSkip, "SLACK_BOT_TOKEN not set", "")
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	opts := []slack.Option{slack.OptionHTTPClient(d.o.HTTPClient)}
	if cfg.SlackAPIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.SlackAPIURL))
	}
	api := slack.New(cfg.SlackBotToken, opts...)
	auth, err := api.AuthTestContext(ctx)
	if err != nil {
		var refused slack.SlackErrorResponse
		if errors.As(err, &refused) {
			d.add("slack", StatusFail, "auth.test: "+err.Error(),
				"SLACK_BOT_TOKEN is wrong or was revoked: reinstall the app to the workspace and copy its Bot User OAuth Token (xoxb-…)")
			return
		}
		d.add("slack", StatusFail, "auth.test: "+err.Error(), "Slack cannot be reached: check the network, and SLACK_API_URL if it is set")
		return
	}
	d.add("slack", StatusOK, fmt.Sprintf("bot %s in team %s (%s)", auth.User, auth.Team, auth.TeamID), "")
	granted := auth.Header.Get("X-OAuth-Scopes")
	if granted == "" {
		d.add("slack scopes", StatusWarn, "Slack did not report the token's scopes", "compare the app's Bot Token Scopes with slack-app-manifest.yaml")
	} else {
		have := map[string]bool{}
		for _, s := range strings.Split(granted, ",") {
			have[strings.TrimSpace(s)] = true
		}
		var missing []string
		for _, s := range slackbot.BotScopes {
			if !have[s] {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			d.add("slack scopes", StatusFail, "missing bot scopes: "+strings.Join(missing, ", "),
				"add them under OAuth & Permissions → Bot Token Scopes (or create the app from slack-app-manifest.yaml), then reinstall the app to the workspace")
		} else {
			d.add("slack scopes", StatusOK, fmt.Sprintf("all %d bot scopes the app needs are granted", len(slackbot.BotScopes)), "")
		}
	}
	switch {
	case cfg.SlackAppToken != "":
		sm := slack.New(cfg.SlackBotToken, append(opts, slack.OptionAppLevelToken(cfg.SlackAppToken))...)
		if _, _, err := sm.StartSocketModeContext(ctx); err != nil {
			d.add("slack events", StatusFail, "Socket Mode: apps.connections.open: "+err.Error(),
				"SLACK_APP_TOKEN must be an app-level token (xapp-…) with connections:write, and Socket Mode must be on in the app's settings")
			return
		}
		d.add("slack events", StatusOK, "Socket Mode: the app-level token opens a connection", "")
	case cfg.SlackSigningSecret != "":
		if cfg.PublicURL == "" {
			d.add("slack events", StatusWarn, "HTTP events (SLACK_SIGNING_SECRET), but SWITCHBOARD_PUBLIC_URL is not set, so where Slack sends them cannot be checked",
				"set SWITCHBOARD_PUBLIC_URL to the https address Slack reaches; the Request URLs are <it>/slack/events and /slack/interactivity")
			return
		}
		d.add("slack events", StatusOK, "HTTP events: Slack's Request URL must be "+cfg.PublicURL+"/slack/events", "")
	default:
		d.add("slack events", StatusFail, "neither SLACK_APP_TOKEN nor SLACK_SIGNING_SECRET is set: Slack cannot send the service any message",
			"set SLACK_APP_TOKEN for Socket Mode (no public URL needed), or SLACK_SIGNING_SECRET and SWITCHBOARD_PUBLIC_URL for HTTP events")
	}
}

// slackInstalls checks the workspaces installed through the OAuth flow:
// a rotating token whose renewal Slack refused for good fails (it runs
// out; the app must be reinstalled there), one whose last renewal failed
// or that expired warns.
func (d *doctor) slackInstalls(ctx context.Context) {
	if d.o.Config.SlackClientID == "" {
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	st, err := openStore(ctx, d.o.Config)
	if err != nil {
		d.add("slack installs", StatusSkip, "the database is not readable: "+err.Error(), "")
		return
	}
	defer st.Close()
	var installs []core.SlackInstall
	for after := ""; ; {
		page, err := core.ReadSlackInstalls(ctx, st, after, 0)
		if err != nil {
			d.add("slack installs", StatusFail, "reading the installs: "+err.Error(), "run switchboard migrate")
			return
		}
		installs = append(installs, page.Installs...)
		if after = page.Next; after == "" {
			break
		}
	}
	now := time.Now()
	var stopped, retrying, expired []string
	rotating := 0
	for _, in := range installs {
		name := fmt.Sprintf("%s (%s)", cmp.Or(in.TeamName, in.EnterpriseName, in.Key), in.Key)
		if in.Renewal != core.RenewalNone {
			rotating++
		}
		switch {
		case in.Renewal == core.RenewalStopped:
			stopped = append(stopped, name+": "+in.RenewalError)
		case in.TokenExpiresAt != nil && !in.TokenExpiresAt.After(now):
			expired = append(expired, name)
		case in.Renewal == core.RenewalRetrying:
			retrying = append(retrying, name+": "+in.RenewalError)
		}
	}
	switch {
	case len(stopped) > 0:
		d.add("slack installs", StatusFail, "token renewal stopped for good in "+strings.Join(stopped, "; "),
			"Slack refused the refresh token (revoked, or spent by an instance that died before storing the new one): reinstall the app there through /slack/install")
	case len(expired) > 0:
		d.add("slack installs", StatusWarn, "expired tokens: "+strings.Join(expired, ", "),
			"no instance renewed them: check that switchboard serve runs with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, and its log for \"renewing a slack token\"")
	case len(retrying) > 0:
		d.add("slack installs", StatusWarn, "the last token renewal failed in "+strings.Join(retrying, "; "), "it is tried again; check that Slack is reachable and the client secret is right")
	default:
		d.add("slack installs", StatusOK, fmt.Sprintf("%d installed, %d with rotating tokens, every renewal working", len(installs), rotating), "")
	}
}

// messageContentFlags are the application flags that grant the Message
// Content intent (GATEWAY_MESSAGE_CONTENT and its limited form).
const messageContentFlags = 1<<19 | 1<<18

// discord checks the bot token (GET /users/@me), the gateway, and that
// the Message Content intent the adapter asks for is enabled.
func (d *doctor) discord(ctx context.Context) {
	cfg := d.o.Config
	if cfg.DiscordBotToken == "" {
		d.add("discord", StatusSkip, "DISCORD_BOT_TOKEN not set", "")
		return
	}
	s, err := discordgo.New("Bot " + cfg.DiscordBotToken)
	if err != nil {
		d.add("discord", StatusFail, err.Error(), "")
		return
	}
	client := *d.o.HTTPClient
	if cfg.DiscordAPIURL != "" {
		target, err := url.Parse(cfg.DiscordAPIURL)
		if err != nil || target.Host == "" {
			d.add("discord", StatusFail, fmt.Sprintf("DISCORD_API_URL %q is not a URL", cfg.DiscordAPIURL), "set DISCORD_API_URL to an http(s) origin, or unset it")
			return
		}
		base := client.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		client.Transport = &rewrite{base: base, target: target}
	}
	s.Client = &client
	s.ShouldRetryOnRateLimit = false
	me, err := s.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		d.add("discord", StatusFail, "GET /users/@me: "+err.Error(),
			"DISCORD_BOT_TOKEN is wrong or was reset: copy the bot's token from the Developer Portal (Bot → Reset Token)")
		return
	}
	d.add("discord", StatusOK, fmt.Sprintf("bot %s (%s)", me.Username, me.ID), "")
	if _, err := s.GatewayBot(discordgo.WithContext(ctx)); err != nil {
		d.add("discord gateway", StatusFail, "GET /gateway/bot: "+err.Error(), "check the network path to Discord's gateway")
	} else {
		d.add("discord gateway", StatusOK, "the gateway answers", "")
	}
	application, err := s.Application("@me")
	switch {
	case err != nil:
		d.add("discord intents", StatusWarn, "reading the application's flags: "+err.Error(), "check Bot → Privileged Gateway Intents → Message Content Intent in the Developer Portal")
	case application.Flags&messageContentFlags == 0:
		d.add("discord intents", StatusFail, "the Message Content intent is not enabled: the bot sees mentions, but not what channel messages say",
			"Developer Portal → your application → Bot → Privileged Gateway Intents: turn on Message Content Intent")
	default:
		d.add("discord intents", StatusOK, "Message Content intent enabled", "")
	}
}

// rewrite sends discord.com's requests to DISCORD_API_URL, as the adapter
// does.
type rewrite struct {
	base   http.RoundTripper
	target *url.URL
}

func (t *rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != "discord.com" {
		return t.base.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.URL.Scheme, r2.URL.Host = t.target.Scheme, t.target.Host
	prefix := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(t.target.Path, "/"), "/api/v"+discordgo.APIVersion), "/api")
	r2.URL.Path = prefix + r.URL.Path
	r2.Host = ""
	return t.base.RoundTrip(r2)
}

// mcp connects to each server of mcp-servers.json and lists its tools.
func (d *doctor) mcp(ctx context.Context) {
	mc, err := app.LoadMCP(d.o.Config)
	if err != nil || mc == nil || len(mc.Servers) == 0 {
		if err == nil {
			d.add("mcp", StatusSkip, "no MCP servers declared", "")
		}
		return
	}
	// A server behind OAuth is connected by the running service with the
	// token a person granted it; doctor asks the service, never starting a
	// sign-in of its own.
	direct := &mcpclient.Config{Servers: map[string]*mcpclient.Server{}}
	var oauth []string
	for name, s := range mc.Servers {
		if s.OAuth != nil {
			oauth = append(oauth, name)
			continue
		}
		direct.Servers[name] = s
	}
	slices.Sort(oauth)
	if len(oauth) > 0 {
		d.mcpOAuth(ctx, oauth)
	}
	if len(direct.Servers) == 0 {
		return
	}
	m, err := mcpclient.New(mcpclient.Options{Config: direct, Registry: tool.NewRegistry(), ConnectTimeout: d.o.Timeout, Getenv: d.o.Config.Env})
	if err != nil {
		d.add("mcp", StatusFail, err.Error(), "correct mcp-servers.json")
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	_ = m.Start(ctx)
	defer func() { _ = m.Stop(context.WithoutCancel(ctx)) }()
	for _, st := range m.Status() {
		check := "mcp " + st.Name
		switch st.State {
		case mcpclient.StateConnected:
			d.add(check, StatusOK, fmt.Sprintf("%s: %d tool(s)", st.Transport, len(st.Tools)), "")
		case mcpclient.StateDisabled:
			d.add(check, StatusSkip, "disabled", "")
		default:
			d.add(check, StatusFail, fmt.Sprintf("%s: %s", st.State, st.Error),
				"check the server's command or url in mcp-servers.json, and that it runs; agents cannot use its tools until it connects")
		}
	}
}

// mcpOAuth reports the servers reached with OAuth from the running
// service's GET /api/mcp/status, when doctor has its address.
func (d *doctor) mcpOAuth(ctx context.Context, names []string) {
	states := map[string]mcpclient.Status{}
	asked := false
	if d.o.ServiceURL != "" {
		ctx, cancel := d.ctx(ctx)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(d.o.ServiceURL, "/")+"/api/mcp/status", nil)
		if err == nil {
			if d.o.Config.APIToken != "" {
				req.Header.Set("Authorization", "Bearer "+d.o.Config.APIToken)
			}
			if resp, err := d.o.HTTPClient.Do(req); err == nil {
				var body struct {
					Servers []mcpclient.Status `json:"servers"`
				}
				if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&body) == nil {
					asked = true
					for _, st := range body.Servers {
						states[st.Name] = st
					}
				}
				_ = resp.Body.Close()
			}
		}
	}
	for _, name := range names {
		check := "mcp " + name
		st, ok := states[name]
		switch {
		case !asked:
			d.add(check, StatusSkip, "an OAuth server: the running service connects it with the token a person granted",
				"run doctor with -url pointing at the running service to see its state")
		case !ok:
			d.add(check, StatusFail, "the running service does not know this server", "reload or restart the service after editing mcp-servers.json")
		case st.State == mcpclient.StateConnected:
			d.add(check, StatusOK, fmt.Sprintf("%s, OAuth: %d tool(s)", st.Transport, len(st.Tools)), "")
		case st.AuthorizeURL != "":
			d.add(check, StatusWarn, "waiting for a person to authorize Switchboard", "open "+st.AuthorizeURL+" and sign in")
		default:
			d.add(check, StatusFail, fmt.Sprintf("%s: %s", st.State, st.Error),
				"check the server's url in mcp-servers.json and its OAuth settings; agents cannot use its tools until it connects")
		}
	}
}

// publicURL checks that SWITCHBOARD_PUBLIC_URL reaches this service: the
// Slack install, HTTP events, Discord interactions and OAuth connections
// come back to it.
func (d *doctor) publicURL(ctx context.Context) {
	cfg := d.o.Config
	if cfg.PublicURL == "" {
		st, why := StatusSkip, "SWITCHBOARD_PUBLIC_URL not set"
		if cfg.DiscordPublicKey != "" || (cfg.SlackSigningSecret != "" && cfg.SlackAppToken == "") {
			st, why = StatusWarn, "SWITCHBOARD_PUBLIC_URL not set, but HTTP events or interactions are configured"
		}
		d.add("public url", st, why, "set SWITCHBOARD_PUBLIC_URL to the https address the platforms reach this service at")
		return
	}
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || u.Host == "" {
		d.add("public url", StatusFail, fmt.Sprintf("SWITCHBOARD_PUBLIC_URL %q is not a URL", cfg.PublicURL), "set it to an https:// address")
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(cfg.PublicURL, "/")+"/healthz", nil)
	resp, err := d.o.HTTPClient.Do(req)
	if err != nil {
		d.add("public url", StatusFail, fmt.Sprintf("GET %s/healthz: %v", cfg.PublicURL, err),
			"point SWITCHBOARD_PUBLIC_URL's host at this service (DNS, reverse proxy or tunnel) so Slack and Discord can reach it")
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		d.add("public url", StatusFail, fmt.Sprintf("GET %s/healthz answered %s, not Switchboard's ok", cfg.PublicURL, resp.Status),
			"the address reaches something else: route it to the service's SWITCHBOARD_ADDR")
		return
	}
	local := slices.Contains([]string{"localhost", "127.0.0.1", "::1"}, u.Hostname())
	if u.Scheme != "https" && !local {
		d.add("public url", StatusWarn, cfg.PublicURL+" answers, over plain http", "serve it over https: Slack and Discord require https Request URLs")
		return
	}
	d.add("public url", StatusOK, cfg.PublicURL+" reaches this service", "")
}
