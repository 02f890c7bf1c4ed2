package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/internal/app"
)

const mcpUsage = `usage: switchboard mcp status [-url URL] [-json]

  status   the outside MCP servers of the running service (mcp-servers.json):
           connected or not, the tools each offers, why the last attempt failed

It asks the running service at -url (default: SWITCHBOARD_ADDR on this
machine) with SWITCHBOARD_API_TOKEN.
`

// mcpCommand asks the running service for its MCP servers: their sessions
// live in its memory, not in the store.
func mcpCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "status" {
		fmt.Fprint(stderr, mcpUsage)
		return errors.New("mcp: say status")
	}
	fs := flag.NewFlagSet("mcp status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", localURL(cfg.Addr), "the running service's address")
	asJSON := fs.Bool("json", false, "print the status as JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("mcp status: unexpected arguments %q", fs.Args())
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(*base, "/")+"/api/mcp/status", nil)
	if err != nil {
		return fmt.Errorf("mcp status: -url %q: %w", *base, err)
	}
	if cfg.APIToken != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("mcp status: asking the service at %s (is it running? -url): %w", *base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("mcp status: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("mcp status: the service answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var out struct {
		Servers []mcpclient.Status `json:"servers"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("mcp status: decoding the answer: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(out.Servers) == 0 {
		fmt.Fprintln(stdout, "no MCP servers configured (mcp-servers.json, SWITCHBOARD_MCP_CONFIG)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATE\tSINCE\tCONNECTS\tTOOLS\tERROR")
	for _, s := range out.Servers {
		errMsg := s.Error
		if s.State == mcpclient.StateConnected || errMsg == "" {
			errMsg = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", s.Name, s.Transport, s.State, s.Since.Format(time.RFC3339), s.Connects, len(s.Tools), errMsg)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range out.Servers {
		if len(s.Tools) > 0 {
			fmt.Fprintf(stdout, "\n%s: %s\n", s.Name, strings.Join(s.Tools, ", "))
		}
		if s.AuthorizeURL != "" {
			fmt.Fprintf(stdout, "\n%s needs OAuth authorization: open\n  %s\n", s.Name, s.AuthorizeURL)
		}
	}
	return nil
}

// localURL is the address of the service on this machine from its listen
// address (":8080" → http://127.0.0.1:8080).
func localURL(addr string) string {
	if addr == "" {
		addr = ":8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
