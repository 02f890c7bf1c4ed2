package app

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/compare"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/model"
)

// compareTimeout bounds each model of a comparison.
const compareTimeout = 2 * time.Minute

// CompareBackend builds the backend of a model to compare with the keys and
// endpoints the service's agents would use: the provider's own variables
// (ANTHROPIC_API_KEY, OPENAI_API_KEY, their _BASE_URL) from cfg.Env.
func CompareBackend(cfg Config) func(model.Spec) (model.Backend, error) {
	cfg.defaults()
	creds := credentials(cfg.Env)
	base := cfg.modelOptions()
	base.Logger = cfg.Logger
	return func(spec model.Spec) (model.Backend, error) {
		return core.NewBackend(&config.Agent{Model: spec.String()}, base, creds)
	}
}

// Compare runs one prompt on several models at once (switchboard compare).
func Compare(ctx context.Context, cfg Config, req *web.CompareRequest) ([]compare.Result, error) {
	cfg.defaults()
	return compare.Run(ctx, compare.Options{
		Models: req.Models, Prompt: req.Prompt, System: req.System, MaxTokens: req.MaxTokens,
		Timeout: compareTimeout, BackendFunc: CompareBackend(cfg), Now: cfg.Now,
	})
}

// AgentBackend builds an agent's model backend as the service would, with
// the agent's own key variable and endpoint, making one attempt per call
// (switchboard doctor: a check must say what is wrong, not retry it).
func AgentBackend(cfg Config, a *config.Agent) (model.Backend, error) {
	cfg.defaults()
	base := cfg.modelOptions()
	base.Logger, base.Retry = cfg.Logger, model.RetryPolicy{MaxAttempts: 1}
	return core.NewBackend(a, base, credentials(cfg.Env))
}

// LoadMCP reads mcp-servers.json as the service does.
func LoadMCP(cfg Config) (*mcpclient.Config, error) { return cfg.loadMCP() }
