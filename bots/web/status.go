package web

import (
	"net/http"

	"github.com/switchboardhq/switchboard/core/mcpclient"
)

// MCPStatusResponse answers GET /api/mcp/status: every MCP server of
// mcp-servers.json, by name, as `switchboard mcp status` prints it.
type MCPStatusResponse struct {
	Servers []mcpclient.Status `json:"servers"`
}

// mcpStatus serves GET /api/mcp/status.
func (a *API) mcpStatus(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(PrincipalFrom(r.Context()), "read the MCP servers' state"); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, MCPStatusResponse{Servers: a.opts.MCPStatus()})
	return nil
}

// configStatus serves GET /api/config/status.
func (a *API) configStatus(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(PrincipalFrom(r.Context()), "read the configuration's state"); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.opts.ConfigStatus())
	return nil
}
