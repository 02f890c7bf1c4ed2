package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/tool"
	webtool "github.com/switchboardhq/switchboard/core/web"
)

// registerWebTools registers web_fetch (opt-in: only agents listing it
// are offered it) and, when web.search names a provider, web_search. The
// web: section is read once, at start.
func (a *App) registerWebTools(reg *tool.Registry, w config.Web) error {
	guard, err := webtool.NewGuard(webtool.GuardOptions{Allow: w.AllowHosts, Logger: a.log.With("part", "web")})
	if err != nil {
		return fmt.Errorf("web.allow_hosts: %w", err)
	}
	fetcher, err := webtool.NewFetcher(webtool.FetchOptions{Guard: guard, Logger: a.log.With("part", "web")})
	if err != nil {
		return err
	}
	if err := webtool.RegisterFetch(reg, fetcher); err != nil {
		return err
	}
	if !w.Search.Enabled() {
		return nil
	}
	s, err := WebSearcher(a.cfg, w.Search)
	if err != nil {
		return err
	}
	return webtool.RegisterSearch(reg, s)
}

// WebSearcher is web_search's provider as web.search and the environment
// (its api_key_env) set it up; doctor checks it with this too.
func WebSearcher(cfg Config, s config.WebSearch) (webtool.Searcher, error) {
	key := ""
	if s.APIKeyEnv != "" {
		if cfg.Env != nil {
			key = cfg.Env(s.APIKeyEnv)
		}
		if key == "" {
			return nil, fmt.Errorf("web.search.api_key_env: %s is not set in the environment (the %s key)", s.APIKeyEnv, s.Provider)
		}
		redact.AddSecrets(key)
	}
	searcher, err := webtool.NewSearcher(webtool.SearchOptions{
		Provider: s.Provider, APIKey: key, URL: s.URL,
		HTTPClient: &http.Client{Timeout: 20 * time.Second},
		Logger:     cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("web.search: %w", err)
	}
	return searcher, nil
}

// ProbeWebSearch asks web.search's provider one small query: the key is
// accepted and the provider answers.
func ProbeWebSearch(ctx context.Context, cfg Config, s config.WebSearch) error {
	searcher, err := WebSearcher(cfg, s)
	if err != nil {
		return err
	}
	_, err = searcher.Search(ctx, "switchboard", 1)
	return err
}
