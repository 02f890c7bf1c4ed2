package mcptest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// OAuthServer is an MCP server behind a bearer token and its authorization
// server (metadata, dynamic registration, authorize with PKCE, token with
// code and refresh grants), in one httptest server.
type OAuthServer struct {
	srv *httptest.Server

	mu         sync.Mutex
	clients    map[string]bool
	challenges map[string]string // code -> PKCE challenge
	valid      map[string]bool   // access tokens accepted now
	refresh    map[string]bool   // refresh tokens accepted now
	n          int
	registered int
	codes      int
	refreshes  int
	keepRT     bool // refresh tokens stay valid after use
}

// NewOAuthServer starts one until the test ends. Its tool whoami answers
// "caller person-1" to a valid token.
func NewOAuthServer(t testing.TB) *OAuthServer {
	f := &OAuthServer{clients: map[string]bool{}, challenges: map[string]string{}, valid: map[string]bool{}, refresh: map[string]bool{}}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	base := f.srv.URL

	ms := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(ms, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "caller " + req.Extra.TokenInfo.UserID}}}, nil, nil
	})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.valid[token] {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "person-1", Expiration: time.Now().Add(time.Hour)}, nil
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp"})(mcpHandler))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: base + "/mcp", AuthorizationServers: []string{base}, ScopesSupported: []string{"tools"},
	}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		_ = json.NewDecoder(r.Body).Decode(&md)
		f.mu.Lock()
		f.registered++
		id := fmt.Sprintf("client-%d", f.registered)
		f.clients[id] = true
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		md["client_id"] = id
		md["token_endpoint_auth_method"] = "none"
		writeJSON(w, md)
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f.mu.Lock()
		ok := f.clients[q.Get("client_id")]
		f.codes++
		code := fmt.Sprintf("code-%d", f.codes)
		f.challenges[code] = q.Get("code_challenge")
		f.mu.Unlock()
		if !ok || q.Get("code_challenge_method") != "S256" {
			http.Error(w, "unknown client or no PKCE", http.StatusBadRequest)
			return
		}
		// The person has signed in and consented: back to the client.
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		defer f.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			ch, ok := f.challenges[r.Form.Get("code")]
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != ch {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
			delete(f.challenges, r.Form.Get("code"))
		case "refresh_token":
			if !f.refresh[r.Form.Get("refresh_token")] {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
			if !f.keepRT {
				delete(f.refresh, r.Form.Get("refresh_token"))
			}
			f.refreshes++
		default:
			http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
			return
		}
		f.n++
		at, rt := fmt.Sprintf("access-%d", f.n), fmt.Sprintf("refresh-%d", f.n)
		f.valid[at], f.refresh[rt] = true, true
		writeJSON(w, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "expires_in": 3600})
	})
	return f
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Expire makes every access token invalid, as when they run out.
func (f *OAuthServer) Expire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.valid = map[string]bool{}
}

// KeepRefreshTokens makes a refresh token stay valid after it is used
// (by default each is good for one refresh, as servers that rotate them
// do), so that clients refreshing with it at once all get a new token.
func (f *OAuthServer) KeepRefreshTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keepRT = true
}

// Accepts reports whether the MCP endpoint takes token now.
func (f *OAuthServer) Accepts(token string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.valid[token]
}

// Counts are the dynamic registrations, authorization requests and
// refresh grants so far.
func (f *OAuthServer) Counts() (registered, codes, refreshes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registered, f.codes, f.refreshes
}

// URL is the authorization server's issuer; MCPURL the protected MCP
// endpoint.
func (f *OAuthServer) URL() string    { return f.srv.URL }
func (f *OAuthServer) MCPURL() string { return f.srv.URL + "/mcp" }
