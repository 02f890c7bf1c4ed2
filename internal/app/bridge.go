package app

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
)

// backend builds each agent's model backend: a runs_on: bridge agent's
// calls go to its bridges, every other agent's are core's own (as core
// builds them when Options.Backend is nil).
func (a *App) backend(cfg Config) core.BackendFunc {
	base, creds := cfg.modelOptions(), cfg.modelCredentials()
	if base.Logger == nil {
		base.Logger = a.log
	}
	return func(ag *config.Agent) (model.Backend, error) {
		if ag.OnBridge() {
			return a.Bridges.Backend(ag), nil
		}
		return core.NewBackend(ag, base, creds)
	}
}

// bridgesReadyz writes one line per runs_on: bridge agent: the bridges
// connected for it, their versions and last heartbeat. A bridge agent
// with none connected does not make the instance unready: its turns wait
// and then say so.
func (a *App) bridgesReadyz(w io.Writer) {
	agents := a.agents.Load()
	if agents == nil || a.Bridges == nil {
		return
	}
	list := a.Bridges.List()
	for _, ag := range agents.Agents {
		if !ag.OnBridge() {
			continue
		}
		var parts []string
		for _, b := range list {
			for _, name := range b.Agents {
				if name == ag.Name {
					parts = append(parts, fmt.Sprintf("%s (%s, heartbeat %s ago)", b.ID, cmp.Or(b.Version, "unknown version"), a.cfg.Now().Sub(b.LastHeartbeat).Round(time.Second)))
				}
			}
		}
		if len(parts) == 0 {
			fmt.Fprintf(w, "bridge %s: none connected\n", ag.Name)
			continue
		}
		fmt.Fprintf(w, "bridge %s: %s\n", ag.Name, strings.Join(parts, ", "))
	}
}

// BridgeBackend builds the backends a `switchboard bridge` runs its calls
// with: this machine's, from its environment (PATH, the CLIs' logins,
// ANTHROPIC_API_KEY...) as serve would build them, each CLI agent working
// in DIR/agents/NAME/work (dir: SWITCHBOARD_DATA_DIR, else ./data). The
// CLIs get no /mcp of the service: its tools are the service's.
func BridgeBackend(cfg Config, dir string) func(agent, spec string) (model.Backend, error) {
	cfg.defaults()
	if dir != "" {
		cfg.CLI.DataDir = dir
	}
	cfg.CLI.MCPURL = "off"
	base := cfg.modelOptions()
	base.Logger = cfg.Logger
	creds := cfg.modelCredentials()
	var mu sync.Mutex
	built := map[string]model.Backend{}
	return func(agent, spec string) (model.Backend, error) {
		mu.Lock()
		defer mu.Unlock()
		key := agent + "\x00" + spec
		if b, ok := built[key]; ok {
			return b, nil
		}
		b, err := core.NewBackend(&config.Agent{Name: agent, Model: spec}, base, creds)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", agent, err)
		}
		built[key] = b
		return b, nil
	}
}
