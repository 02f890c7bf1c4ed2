package app_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// A real OpenID provider on loopback for the single sign-on tests: the
// example OP of zitadel/oidc (its storage, login page and op.Provider),
// with a user store whose groups a test changes, a groups claim in the
// ID token, and switches that make it issue the bad tokens a relying party
// must refuse (another audience, an expired token, another nonce). A
// test-only dependency: the binary never links it.

const (
	opClientID     = "switchboard"
	opClientSecret = "op-secret"
	opPassword     = "correct horse"
)

// testUsers is the OP's user store.
type testUsers struct {
	mu     sync.Mutex
	users  map[string]*storage.User // by id
	groups map[string][]string      // by id
}

func (u *testUsers) GetUserByID(id string) *storage.User {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.users[id]
}

func (u *testUsers) GetUserByUsername(name string) *storage.User {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, x := range u.users {
		if x.Username == name {
			return x
		}
	}
	return nil
}

func (u *testUsers) ExampleClientID() string { return opClientID }

// opTamper makes the OP issue a bad ID token.
type opTamper struct {
	audience []string      // not nil: the ID token's audience (and azp), re-signed with the OP's key
	nonce    string        // not "": the ID token's nonce
	lifetime time.Duration // not 0: the ID token's lifetime (negative: expired)
	foreign  bool          // signed by a key the OP does not publish, under its key id
}

// testOP is the provider's storage: the example's, plus groups and the
// tampering switches.
type testOP struct {
	*storage.Storage
	users *testUsers
	mu    sync.Mutex
	bad   opTamper
	// redirect and logout are the relying party's URIs.
	redirect, logout string
}

func (o *testOP) tamper(t opTamper) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bad = t
}

func (o *testOP) current() opTamper {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bad
}

// SetUserinfoFromRequest fills the ID token's claims: the example's, and
// the user's groups.
func (o *testOP) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, token op.IDTokenRequest, scopes []string) error {
	if err := o.Storage.SetUserinfoFromRequest(ctx, ui, token, scopes); err != nil {
		return err
	}
	o.users.mu.Lock()
	groups := append([]string{}, o.users.groups[token.GetSubject()]...)
	o.users.mu.Unlock()
	ui.AppendClaims("groups", groups)
	return nil
}

type tamperedRequest struct {
	op.AuthRequest
	bad opTamper
}

func (r tamperedRequest) GetNonce() string {
	if r.bad.nonce != "" {
		return r.bad.nonce
	}
	return r.AuthRequest.GetNonce()
}

// AuthRequestByCode is where the token endpoint reads what the ID token
// is made from: a tampered OP changes it here.
func (o *testOP) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	r, err := o.Storage.AuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	return tamperedRequest{AuthRequest: r, bad: o.current()}, nil
}

type testClient struct {
	op.Client
	lifetime time.Duration
	logout   []string
}

func (c testClient) IDTokenLifetime() time.Duration {
	if c.lifetime != 0 {
		return c.lifetime
	}
	return c.Client.IDTokenLifetime()
}

func (c testClient) PostLogoutRedirectURIs() []string { return c.logout }

// GetClientByClientID is the one client, switchboard, with the relying
// party's redirect URI.
func (o *testOP) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := o.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return testClient{Client: c, lifetime: o.current().lifetime, logout: []string{o.logout}}, nil
}

// startOP starts the provider on loopback for a relying party at public
// (its SWITCHBOARD_PUBLIC_URL) and returns it with its issuer URL.
func startOP(t *testing.T, public string) (*testOP, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	users := &testUsers{users: map[string]*storage.User{}, groups: map[string][]string{}}
	clients := map[string]*storage.Client{opClientID: storage.WebClient(opClientID, opClientSecret, public+"/auth/oidc/callback")}
	o := &testOP{Storage: storage.NewStorageWithClients(users, clients), users: users, redirect: public + "/auth/oidc/callback", logout: public + "/"}
	router := exampleop.SetupServer(issuer, o, nil, false, op.WithAllowInsecure())
	srv := &http.Server{Handler: o.rewriteTokens(t, router), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return o, issuer
}

// addUser adds (or replaces) a user with their groups.
func (o *testOP) addUser(id, username, email string, groups ...string) {
	o.users.mu.Lock()
	defer o.users.mu.Unlock()
	o.users.users[id] = &storage.User{
		ID: id, Username: username, Password: opPassword, FirstName: strings.ToUpper(username[:1]) + username[1:], LastName: "Test",
		Email: email, EmailVerified: true, PreferredLanguage: language.English,
	}
	o.users.groups[id] = groups
}

// setGroups changes a user's groups at the provider.
func (o *testOP) setGroups(id string, groups ...string) {
	o.users.mu.Lock()
	defer o.users.mu.Unlock()
	o.users.groups[id] = groups
}

// browser is a cookie jar client that follows redirects, remembering
// the callbacks it was sent to.
type browser struct {
	*http.Client
	mu        sync.Mutex
	callbacks []*url.URL
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{}
	b.Client = &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasSuffix(req.URL.Path, "/auth/oidc/callback") {
			b.mu.Lock()
			b.callbacks = append(b.callbacks, req.URL)
			b.mu.Unlock()
		}
		if len(via) > 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	t.Cleanup(b.CloseIdleConnections)
	return b
}

func (b *browser) lastCallback() *url.URL {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.callbacks) == 0 {
		return nil
	}
	return b.callbacks[len(b.callbacks)-1]
}

// ssoSignIn signs username in through the real flow: the service's
// /auth/oidc/login, the provider's login form, its callback to the
// service. It returns the last answer (the console on success).
func ssoSignIn(t *testing.T, b *browser, base, username string) *http.Response {
	t.Helper()
	resp, err := b.Get(base + "/auth/oidc/login")
	if err != nil {
		t.Fatalf("starting the sign-in: %v", err)
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("the sign-in landed on %s (%d); want the provider's login page", resp.Request.URL, resp.StatusCode)
	}
	form := url.Values{"username": {username}, "password": {opPassword}, "id": {id}}
	login := resp.Request.URL.Scheme + "://" + resp.Request.URL.Host + "/login/username"
	resp, err = b.PostForm(login, form)
	if err != nil {
		t.Fatalf("signing in at the provider: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// rewriteTokens wraps the OP: with tamper.audience or tamper.foreign set,
// the token endpoint's ID token is re-signed with the audience changed
// (by the OP's own key) or by a key the OP does not publish. The OP's
// library always puts the client in the audience, so another audience is
// made here, as a token minted for another app would look.
func (o *testOP) rewriteTokens(t *testing.T, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bad := o.current()
		if r.URL.Path != "/oauth/token" || (bad.audience == nil && !bad.foreign) {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["id_token"] == nil {
			copyResponse(w, rec)
			return
		}
		parts := strings.Split(body["id_token"].(string), ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Errorf("decoding the OP's ID token: %v", err)
			copyResponse(w, rec)
			return
		}
		var claims map[string]any
		_ = json.Unmarshal(payload, &claims)
		if bad.audience != nil {
			claims["aud"], claims["azp"], claims["client_id"] = bad.audience, bad.audience[0], bad.audience[0]
		}
		payload, _ = json.Marshal(claims)
		key, err := o.Storage.SigningKey(r.Context())
		if err != nil {
			t.Errorf("the OP's signing key: %v", err)
			return
		}
		var signer jose.Signer
		if bad.foreign {
			other, _ := rsa.GenerateKey(rand.Reader, 2048)
			signer, err = jose.NewSigner(jose.SigningKey{Algorithm: key.SignatureAlgorithm(), Key: jose.JSONWebKey{Key: other, KeyID: key.ID()}},
				(&jose.SignerOptions{}).WithType("JWT"))
		} else {
			signer, err = op.SignerFromKey(key)
		}
		if err != nil {
			t.Errorf("a signer: %v", err)
			return
		}
		jws, err := signer.Sign(payload)
		if err != nil {
			t.Errorf("signing: %v", err)
			return
		}
		body["id_token"], _ = jws.CompactSerialize()
		out, _ := json.Marshal(body)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	})
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}
