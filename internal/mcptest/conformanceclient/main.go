// Command conformanceclient is Switchboard's MCP client as the official
// conformance suite drives it (`conformance client --command ...`): it
// connects to the server URL given as its last argument through
// mcpclient.Manager, the same code the service runs, lists the tools and
// calls them through the tool registry, then disconnects. The scenario
// (MCP_CONFORMANCE_SCENARIO) picks the calls.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/mcpclient"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformanceclient:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return fmt.Errorf("usage: conformanceclient SERVER_URL")
	}
	url := os.Args[len(os.Args)-1]
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	reg := tool.NewRegistry()
	m, err := mcpclient.New(mcpclient.Options{
		Config:   &mcpclient.Config{Servers: map[string]*mcpclient.Server{"srv": {Name: "srv", URL: url, Risk: mcpclient.Risk{Default: tool.RiskLow}}}},
		Registry: reg, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)), ConnectTimeout: 15 * time.Second,
	})
	if err != nil {
		return err
	}
	if err := m.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = m.Stop(context.Background()) }()
	st := m.Status()[0]
	if st.State != mcpclient.StateConnected {
		return fmt.Errorf("not connected: %s", st.Error)
	}
	args := map[string]json.RawMessage{
		"srv__add_numbers": json.RawMessage(`{"a": 5, "b": 3}`),
	}
	for _, t := range reg.List() {
		in, ok := args[t.Name()]
		if !ok {
			in = json.RawMessage(`{}`)
		}
		res := t.Call(ctx, &tool.Request{Agent: "conformance"}, in)
		fmt.Printf("%s -> error=%v %s\n", t.Name(), res.IsError, res.Output)
	}
	return nil
}
