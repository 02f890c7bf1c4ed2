// Command conformanceclient is Switchboard's MCP client as the official
// conformance suite drives it (`conformance client --command ...`): it
// connects to the server URL given as its last argument through
// mcpclient.Manager, the same code the service runs, lists the tools and
// calls them through the tool registry, then disconnects. The scenario
// (MCP_CONFORMANCE_SCENARIO) picks the calls.
//
// The server entry has "oauth" (pre-registered with the client_id and
// client_secret of MCP_CONFORMANCE_CONTEXT when the scenario gives them,
// else dynamic registration) and "elicitation": "defaults". The harness
// plays the person's browser: the suite's authorization server redirects
// at once, so authorize reads the code from that redirect. Tokens go
// through mcpclient.StoreTokens, as in the service, into a SQLite database
// in a temporary folder, sealed under a fresh key.
// The client id metadata document URL is the one the suite expects (the
// service uses the one it serves under an https SWITCHBOARD_PUBLIC_URL).
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/store/sqlite"
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
	var sc struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	keys, err := secret.ParseKeys(base64.StdEncoding.EncodeToString(key))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "conformanceclient")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "switchboard.db")})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	m, err := mcpclient.New(mcpclient.Options{
		Config: &mcpclient.Config{Servers: map[string]*mcpclient.Server{"srv": {
			Name: "srv", URL: url, Risk: mcpclient.Risk{Default: tool.RiskLow},
			OAuth:       &mcpclient.OAuth{ClientID: sc.ClientID, ClientSecret: sc.ClientSecret},
			Elicitation: mcpclient.ElicitDefaults,
		}}},
		Registry: reg, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)), ConnectTimeout: 15 * time.Second,
		OAuth: &mcpclient.OAuthOptions{
			RedirectURL: "http://localhost:3000/callback",
			Authorize:   followRedirect,
			Tokens:      &mcpclient.StoreTokens{Store: db, Keys: keys},
			// The suite expects its own address for the document (it does
			// not fetch it); the service uses the one it serves under an
			// https SWITCHBOARD_PUBLIC_URL.
			ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
		},
	})
	if err != nil {
		return err
	}
	if err := m.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = m.Stop(context.Background()) }()
	// Start does not wait for an authorization (a person may take
	// minutes); here the redirect comes at once, so wait for the session.
	st := m.Status()[0]
	for st.State != mcpclient.StateConnected {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not connected (%s): %s", st.State, st.Error)
		case <-time.After(20 * time.Millisecond):
		}
		st = m.Status()[0]
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

// followRedirect is the browser: it opens the authorization URL and reads
// the code, state and issuer from the redirect the suite's authorization
// server answers with.
func followRedirect(ctx context.Context, ar mcpclient.AuthorizeRequest) (*auth.AuthorizationResult, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ar.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	loc, err := neturl.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode/100 != 3 {
		return nil, fmt.Errorf("authorization answered %s without a redirect", resp.Status)
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
