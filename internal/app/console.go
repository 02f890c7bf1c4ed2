package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/auth/sso"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

// buildSignIn makes the web console's sign-in: links are built under
// SWITCHBOARD_PUBLIC_URL, else under http://localhost:PORT of this
// server's listener (a console used on this machine).
func (a *App) buildSignIn() error {
	single, err := a.buildSSO()
	if err != nil {
		return err
	}
	// The service's store, so sign-in and sign-out rows reach the audit
	// sinks as every other audit row does.
	s, err := web.NewSignIn(web.SignInOptions{
		Store: a.Service.Store(), PublicURL: a.cfg.Env("SWITCHBOARD_PUBLIC_URL"), Now: a.cfg.Now,
		LocalURLFunc: a.localURL, SSO: single,
	})
	if err != nil {
		return err
	}
	a.signIn = s
	return nil
}

// buildSSO makes single sign-on when SWITCHBOARD_OIDC_ISSUER is set (nil
// when it is not); the groups' mapping is the sso: section of
// switchboard.yaml, read at start.
func (a *App) buildSSO() (*sso.SSO, error) {
	return NewSSO(a.cfg, a.Service.Store(), a.agents.Load().SSO)
}

// NewSSO is single sign-on over st as cfg's environment configures it, or
// nil when SWITCHBOARD_OIDC_ISSUER is not set (doctor checks it too).
func NewSSO(cfg Config, st store.Store, section config.SSO) (*sso.SSO, error) {
	o, err := ssoOptions(cfg, section)
	if o == nil || err != nil {
		return nil, err
	}
	o.Store = st
	return sso.New(*o)
}

// ssoOptions reads single sign-on's settings; nil when the issuer is not
// set.
func ssoOptions(cfg Config, section config.SSO) (*sso.Options, error) {
	issuer := cfg.Env(sso.EnvIssuer)
	if issuer == "" {
		if cfg.Env(sso.EnvClientID) != "" || cfg.Env(sso.EnvClientSecret) != "" {
			return nil, fmt.Errorf("%s is set but %s is empty: set the issuer to turn single sign-on on", sso.EnvClientID, sso.EnvIssuer)
		}
		if section.Require {
			return nil, fmt.Errorf("sso.require: single sign-on is required but %s is not set", sso.EnvIssuer)
		}
		return nil, nil
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &sso.Options{
		Issuer: issuer, ClientID: cfg.Env(sso.EnvClientID), ClientSecret: cfg.Env(sso.EnvClientSecret),
		PublicURL: cfg.Env("SWITCHBOARD_PUBLIC_URL"), Config: section,
		Logger: log.With("part", "sso"), Now: cfg.Now,
	}, nil
}

// CheckSSO checks single sign-on's settings and asks the issuer's
// discovery document (switchboard doctor); "" and nil when SSO is off.
func CheckSSO(ctx context.Context, cfg Config, section config.SSO, client *http.Client) (string, error) {
	o, err := ssoOptions(cfg, section)
	if o == nil || err != nil {
		return "", err
	}
	o.HTTPClient = client
	return sso.CheckDiscovery(ctx, *o)
}

// localURL is this server as a browser on this machine reaches it.
func (a *App) localURL() string {
	addr := a.Addr()
	if addr == "" {
		addr = a.cfg.Addr
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		port = "8080"
	}
	return "http://localhost:" + port
}

// agentList names the configured agents, for the console's agent picker.
func (a *App) agentList() []string {
	names, _ := a.agentNames(context.Background())
	return names
}

// webLogins answers `login` for the person behind a platform user.
func (a *App) webLogins() command.Logins { return &consoleLogins{a: a} }

type consoleLogins struct{ a *App }

func (l *consoleLogins) LoginLink(ctx context.Context, platform, workspace, userID string) (string, time.Duration, error) {
	p, err := l.a.People.Ensure(ctx, platform, workspace, userID, "")
	if err != nil {
		return "", 0, fmt.Errorf("finding the person behind %s user %s: %w", platform, userID, err)
	}
	link, err := l.a.signIn.Link(ctx, p.ID)
	if err != nil {
		return "", 0, err
	}
	return link, web.LinkTTL, nil
}
