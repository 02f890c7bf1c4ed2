package app

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/command"
)

// buildSignIn makes the web console's sign-in: links are built under
// SWITCHBOARD_PUBLIC_URL, else under http://localhost:PORT of this
// server's listener (a console used on this machine).
func (a *App) buildSignIn() error {
	s, err := web.NewSignIn(web.SignInOptions{
		Store: a.Store, PublicURL: a.cfg.Env("SWITCHBOARD_PUBLIC_URL"), Now: a.cfg.Now,
		LocalURLFunc: a.localURL,
	})
	if err != nil {
		return err
	}
	a.signIn = s
	return nil
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
