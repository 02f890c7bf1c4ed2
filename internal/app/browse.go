package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"

	"github.com/switchboardhq/switchboard/core/browse"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	webtool "github.com/switchboardhq/switchboard/core/web"
)

// registerBrowse adds the browse tool when switchboard.yaml has a browser:
// section, every address the browser reaches going through dial. Without
// the section an agent naming browse is refused with the fix, rather than
// told the tool does not exist.
func registerBrowse(reg *tool.Registry, agents *config.Config, dial browse.DialFunc, log *slog.Logger) error {
	c := agents.Browser
	if c == nil {
		for _, a := range agents.Agents {
			if slices.Contains(a.Tools, browse.ToolName) {
				return fmt.Errorf("agent %q: tools: browse needs a browser: section in switchboard.yaml (browser: {} takes the defaults)", a.Name)
			}
		}
		return nil
	}
	b, err := browse.New(browseOptions(c, dial, log))
	if err != nil {
		return fmt.Errorf("browser: %w", err)
	}
	if err := browse.RegisterTools(reg, b); err != nil {
		return fmt.Errorf("registering the browse tool: %w", err)
	}
	return nil
}

// browseOptions are the browse tool's options from the browser: section.
func browseOptions(c *config.Browser, dial browse.DialFunc, log *slog.Logger) browse.Options {
	return browse.Options{
		Chromium: c.Chromium, Dial: dial, Timeout: c.Timeout, MaxPages: c.MaxPages,
		MaxActions: c.MaxActions, MaxConcurrent: c.MaxConcurrent, Logger: log,
	}
}

// NewBrowser is the browse tool's browser as serve would make it from the
// browser: section, for `switchboard doctor` to start.
func NewBrowser(agents *config.Config, log *slog.Logger) (*browse.Browser, error) {
	dial, err := browseDial(agents, log)
	if err != nil {
		return nil, err
	}
	return browse.New(browseOptions(agents.Browser, dial, log))
}

// browseDial is the browse tool's address rules: core/web's guard, the
// one web_fetch dials through, with web.allow_hosts; its refusals are
// browse.ErrRefused, which the browser's proxy answers 403.
func browseDial(agents *config.Config, log *slog.Logger) (browse.DialFunc, error) {
	g, err := webtool.NewGuard(webtool.GuardOptions{Allow: agents.Web.AllowHosts, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("web.allow_hosts: %w", err)
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := g.DialContext(ctx, network, addr)
		if _, ok := errors.AsType[*webtool.RefusedError](err); ok {
			return nil, fmt.Errorf("%w: %w (web.allow_hosts may allow it)", browse.ErrRefused, err)
		}
		return c, err
	}, nil
}
