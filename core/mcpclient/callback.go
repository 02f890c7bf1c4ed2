package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Callbacks is the service's side of the OAuth redirect: Authorize waits
// for the authorization server to send the person back to RedirectURL,
// where ServeHTTP hands the code to the waiting attempt by its state. The
// state is the SDK's (random, one per attempt), so only the redirect of
// the attempt that made the URL completes it.
type Callbacks struct {
	// Relay, when set, hands a redirect that no attempt of this instance
	// waits for to the other instances behind the same redirect URL, and
	// returns the name of the server whose attempt took it (Deliver, on
	// that instance); false when none did. Set it before serving.
	Relay func(ctx context.Context, query url.Values) (server string, ok bool)

	mu      sync.Mutex
	pending map[string]pendingAuth // by state
}

type pendingAuth struct {
	server string
	ch     chan authAnswer
}

type authAnswer struct {
	res *auth.AuthorizationResult
	err error
}

// NewCallbacks makes an empty set of waiting authorizations.
func NewCallbacks() *Callbacks { return &Callbacks{pending: map[string]pendingAuth{}} }

// Authorize is an AuthorizeFunc: it waits (until ctx ends) for the
// redirect of the authorization URL to reach ServeHTTP.
func (c *Callbacks) Authorize(ctx context.Context, req AuthorizeRequest) (*auth.AuthorizationResult, error) {
	server := req.Server
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("the authorization URL of MCP server %s: %w", server, err)
	}
	state := u.Query().Get("state")
	if state == "" {
		return nil, fmt.Errorf("the authorization URL of MCP server %s has no state", server)
	}
	ch := make(chan authAnswer, 1)
	c.mu.Lock()
	c.pending[state] = pendingAuth{server: server, ch: ch}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, state)
		c.mu.Unlock()
	}()
	if req.Waiting != nil {
		req.Waiting()
	}
	select {
	case a := <-ch:
		return a.res, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("nobody authorized MCP server %s in time: %w", server, ctx.Err())
	}
}

// ServeHTTP is the redirect URL: GET with code and state (and iss), or the
// authorization server's error.
func (c *Callbacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	server, ok := c.Deliver(q)
	if !ok && c.Relay != nil {
		server, ok = c.Relay(r.Context(), q)
	}
	if !ok {
		callbackPage(w, http.StatusBadRequest, "Unknown or expired authorization", "No MCP server is waiting for this authorization; start again from the URL in `switchboard mcp status`.")
		return
	}
	if msg := refusal(server, q); msg != "" {
		callbackPage(w, http.StatusBadRequest, "Authorization refused", msg)
		return
	}
	callbackPage(w, http.StatusOK, "Authorized", fmt.Sprintf("Switchboard can now reach MCP server %s. You can close this page.", server))
}

// Deliver hands a redirect's query (code and state, or the authorization
// server's error) to the attempt of this instance waiting for its state,
// and returns that attempt's server; false when none here waits for it.
func (c *Callbacks) Deliver(q url.Values) (server string, ok bool) {
	c.mu.Lock()
	p, ok := c.pending[q.Get("state")]
	if ok {
		delete(c.pending, q.Get("state"))
	}
	c.mu.Unlock()
	if !ok {
		return "", false
	}
	if msg := refusal(p.server, q); msg != "" {
		p.ch <- authAnswer{err: errors.New(msg)}
	} else {
		p.ch <- authAnswer{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
	}
	return p.server, true
}

// refusal is the authorization server's error in a redirect, "" for none.
func refusal(server string, q url.Values) string {
	if e := q.Get("error"); e != "" {
		return fmt.Sprintf("MCP server %s: the authorization server answered %s %s", server, e, q.Get("error_description"))
	}
	return ""
}

func callbackPage(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p>\n", html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

// ClientMetadataHandler serves Switchboard's OAuth client id metadata
// document at docURL (the client id), naming redirectURL.
func ClientMetadataHandler(docURL, redirectURL string) (http.Handler, error) {
	if !isHTTPSNonRoot(docURL) {
		return nil, errors.New("mcpclient: the client metadata URL must be an https URL with a path")
	}
	doc, err := json.Marshal(map[string]any{
		"client_id":                  docURL,
		"client_name":                "Switchboard",
		"redirect_uris":              []string{redirectURL},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	})
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}), nil
}

func isHTTPSNonRoot(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/"
}
