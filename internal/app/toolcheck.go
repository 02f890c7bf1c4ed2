package app

import (
	"fmt"
	"sort"
	"strings"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/tool"
)

// checkAgentTools refuses a tool named in an agent's tools that nothing
// provides: a typo would otherwise leave the agent without the tool and
// nobody told. The tools of an outside MCP server (server__tool) join the
// registry only once it connects, so for those the server must be declared
// in mcp-servers.json.
func checkAgentTools(agents *config.Config, reg *tool.Registry, mcp *mcpclient.Config) error {
	for _, a := range agents.Agents {
		for _, name := range a.Tools {
			if _, ok := reg.Get(name); ok {
				continue
			}
			// Turned on but not runnable here: logged at start, and the
			// service runs without it.
			if _, ok := reg.Unavailable(name); ok {
				continue
			}
			if server, _, ok := strings.Cut(name, "__"); ok {
				if mcp != nil && mcp.Servers[server] != nil {
					continue
				}
				return fmt.Errorf("agent %q: tools: %q names MCP server %q, which mcp-servers.json does not declare (servers: %s)", a.Name, name, server, serverNames(mcp))
			}
			return fmt.Errorf("agent %q: tools: no tool named %q (tools: %s)", a.Name, name, toolNames(reg))
		}
	}
	return nil
}

func toolNames(reg *tool.Registry) string {
	var names []string
	for _, t := range reg.List() {
		names = append(names, t.Name())
	}
	return strings.Join(names, ", ")
}

func serverNames(mcp *mcpclient.Config) string {
	if mcp == nil || len(mcp.Servers) == 0 {
		return "none"
	}
	names := make([]string, 0, len(mcp.Servers))
	for n := range mcp.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
