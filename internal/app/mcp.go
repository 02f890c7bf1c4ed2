package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/bots/mcpserver"
	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/mcpclient"
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
	m, err := mcpclient.New(mcpclient.Options{Config: mc, Registry: a.Registry, Logger: a.log.With("part", "mcp"), Now: a.cfg.Now})
	if err != nil {
		return err
	}
	a.MCP = m
	return nil
}

// buildMCPServer serves the agents to MCP clients at /mcp, with the API's
// credentials.
func (a *App) buildMCPServer(api *web.API) error {
	srv, err := mcpserver.New(mcpserver.Options{
		Service: a.Service, Auth: api, InterruptFunc: a.Worker.Interrupt,
		Logger: a.log.With("part", "mcpserver"), PublicURL: a.cfg.PublicURL,
	})
	if err != nil {
		return err
	}
	a.Mux.Handle("/mcp", srv.Handler())
	a.mcpServer = srv
	return nil
}

// mcpStatus serves GET /api/mcp/status, what `switchboard mcp status`
// prints.
func (a *App) mcpStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"servers": a.MCP.Status()})
}

// mcpReadyz is the /readyz detail: one line per server. A disconnected
// server does not make the instance unready: its tools are withdrawn and
// it reconnects on its own.
func (a *App) mcpReadyz(w io.Writer) {
	for _, s := range a.MCP.Status() {
		line := fmt.Sprintf("mcp %s: %s, %d tools", s.Name, s.State, len(s.Tools))
		if s.State == mcpclient.StateDisconnected && s.Error != "" {
			line += " (" + redact.String(s.Error) + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// mcpMetrics writes the servers' gauges in the Prometheus text format.
func (a *App) mcpMetrics(w io.Writer) {
	st := a.MCP.Status()
	if len(st) == 0 {
		return
	}
	fmt.Fprintln(w, "# HELP switchboard_mcp_server_up 1 when the MCP server is connected and its tools offered.")
	fmt.Fprintln(w, "# TYPE switchboard_mcp_server_up gauge")
	for _, s := range st {
		up := 0
		if s.State == mcpclient.StateConnected {
			up = 1
		}
		fmt.Fprintf(w, "switchboard_mcp_server_up{server=%q} %d\n", s.Name, up)
	}
	fmt.Fprintln(w, "# HELP switchboard_mcp_tools Tools offered from the MCP server.")
	fmt.Fprintln(w, "# TYPE switchboard_mcp_tools gauge")
	for _, s := range st {
		fmt.Fprintf(w, "switchboard_mcp_tools{server=%q} %d\n", s.Name, len(s.Tools))
	}
	fmt.Fprintln(w, "# HELP switchboard_mcp_connects_total Sessions opened to the MCP server since the start.")
	fmt.Fprintln(w, "# TYPE switchboard_mcp_connects_total counter")
	for _, s := range st {
		fmt.Fprintf(w, "switchboard_mcp_connects_total{server=%q} %d\n", s.Name, s.Connects)
	}
}

// startMCP connects the servers before the workers take turns.
func (a *App) startMCP(ctx context.Context) error {
	if err := a.MCP.Start(ctx); err != nil {
		return fmt.Errorf("starting MCP clients: %w", err)
	}
	a.onStop(a.MCP.Stop)
	return nil
}

func mcpConfigPath(getenv func(string) string) string {
	return strings.TrimSpace(getenv("SWITCHBOARD_MCP_CONFIG"))
}
