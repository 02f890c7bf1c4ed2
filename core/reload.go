package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/route"
	"github.com/switchboardhq/switchboard/core/tool"
)

// settings are the parts of Options that a reload of switchboard.yaml
// replaces as one: a reader sees the old set or the new one, never half of
// each.
type settings struct {
	agents      *config.Config
	router      *route.Router
	policies    tool.Policies
	deciders    Deciders
	admins      Admins
	approvalTTL time.Duration
}

func (s *Service) settings() *settings { return s.current.Load() }

// agents is the declared agents, as last loaded.
func (s *Service) agents() *config.Config { return s.current.Load().agents }

// ReloadParams are what Reload replaces, as in Options.
type ReloadParams struct {
	Agents      *config.Config
	Policies    tool.Policies
	Deciders    Deciders
	Admins      Admins
	ApprovalTTL time.Duration // 0: 24h
}

// Reload replaces the agents and the guard's settings without a restart.
// Everything is checked before anything changes: every agent's model
// backend is built (an unknown backend or a missing key refuses the reload,
// naming the agent), so a refused reload leaves the old settings in place.
// A turn already running keeps the agent and backend it started with; the
// next turn reads the new ones.
func (s *Service) Reload(ctx context.Context, p *ReloadParams) error {
	switch {
	case p.Agents == nil || len(p.Agents.Agents) == 0:
		return errors.New("reload: no agents declared")
	case p.Policies.Validate() != nil:
		return fmt.Errorf("reload: policies: %w", p.Policies.Validate())
	case p.Deciders != "" && p.Deciders != DecidersStarter && p.Deciders != DecidersAdmins:
		return fmt.Errorf("reload: deciders %q must be starter or admins", p.Deciders)
	}
	router, err := p.Agents.Router()
	if err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	backends := make(map[string]model.Backend, len(p.Agents.Agents))
	for i := range p.Agents.Agents {
		a := &p.Agents.Agents[i]
		b, err := s.opts.Backend(a)
		if err != nil {
			return fmt.Errorf("agent %q: %w", a.Name, err)
		}
		backends[a.Name] = b
	}
	if err := s.registerAgents(ctx, p.Agents); err != nil {
		return err
	}
	ttl := p.ApprovalTTL
	if ttl == 0 {
		ttl = 24 * time.Hour
	}
	s.mu.Lock()
	s.backends = backends
	s.mu.Unlock()
	s.current.Store(&settings{
		agents: p.Agents, router: router, policies: p.Policies, deciders: p.Deciders,
		admins: p.Admins, approvalTTL: ttl,
	})
	return nil
}
