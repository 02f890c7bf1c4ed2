package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/auth/sso"
)

// Sign-in to the web console. A person asks the bot for a link (`!login`
// in a DM, /switchboard login in Slack, /login in Discord); the link holds a
// random secret, valid LinkTTL and usable once. The page posts it to
// POST /auth/link, which spends it and opens a session: another random
// secret, kept by the browser in an HttpOnly, SameSite=Strict cookie. The
// operator signs in the same way with the operator token (POST /auth/token).
// The store keeps only the SHA-256 of either secret.
//
// A cookie rides along on every request the browser makes to this host,
// so a request authenticated by it must also prove it comes from the page:
// an unsafe method carries X-CSRF-Token, a value derived from the session
// secret that only a page able to read GET /api/session knows, and a
// browser Origin, when sent, must be this host (refuseOtherSites).

// Sign-in defaults.
const (
	LinkTTL           = 10 * time.Minute
	DefaultSessionTTL = 7 * 24 * time.Hour
	// SessionCookie is the name of the session cookie.
	SessionCookie = "switchboard_session"
	// CSRFHeader carries the session's CSRF token on unsafe requests.
	CSRFHeader = "X-CSRF-Token"
)

// SignInOptions configures SignIn.
type SignInOptions struct {
	Store core.LoginStore
	// PublicURL is the address browsers reach this server at
	// (SWITCHBOARD_PUBLIC_URL); links are built under it. Empty:
	// LocalURLFunc's answer, for a server used on this machine.
	PublicURL string
	// LocalURLFunc names this server when PublicURL is empty, such as
	// http://localhost:8080 from the listener's port.
	LocalURLFunc func() string
	// SessionTTL is how long a browser session lasts (default 7 days).
	SessionTTL time.Duration
	// SSO, when set, signs people in with the OpenID provider
	// (GET /auth/oidc/login); with its sso.require the link and the
	// operator token no longer open the console.
	SSO *sso.SSO
	Now func() time.Time
}

func (o *SignInOptions) validate() error {
	if o.Store == nil {
		return errors.New("web: SignInOptions.Store is required")
	}
	if o.PublicURL == "" && o.LocalURLFunc == nil {
		return errors.New("web: SignInOptions needs PublicURL or LocalURLFunc")
	}
	u, err := url.Parse(o.PublicURL)
	if o.PublicURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return fmt.Errorf("SWITCHBOARD_PUBLIC_URL: %q must be the address browsers reach this server at, such as https://switchboard.example.com", o.PublicURL)
	}
	if o.SessionTTL < 0 {
		return errors.New("web: SignInOptions.SessionTTL must not be negative")
	}
	return nil
}

// SignIn issues login links and opens and checks browser sessions.
type SignIn struct {
	opts SignInOptions
}

// NewSignIn validates opts.
func NewSignIn(opts SignInOptions) (*SignIn, error) {
	opts.PublicURL = strings.TrimRight(strings.TrimSpace(opts.PublicURL), "/")
	if opts.SessionTTL == 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &SignIn{opts: opts}, nil
}

// PublicURL is the address links are built under.
func (s *SignIn) PublicURL() string {
	if s.opts.PublicURL != "" {
		return s.opts.PublicURL
	}
	return strings.TrimRight(s.opts.LocalURLFunc(), "/")
}

// secure reports whether the cookie is for HTTPS only.
func (s *SignIn) secure() bool { return strings.HasPrefix(s.PublicURL(), "https://") }

func newSecret() (string, []byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("making a secret: %w", err)
	}
	secret := base64.RawURLEncoding.EncodeToString(b)
	return secret, hashSecret(secret), nil
}

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// csrfToken is the CSRF token of a session: derived from its secret, so
// it needs no storage, and useless without the cookie it belongs to.
func csrfToken(secret string) string {
	h := sha256.Sum256([]byte("switchboard csrf\x00" + secret))
	return hex.EncodeToString(h[:])
}

// Link issues a one-time login link for person, valid LinkTTL.
func (s *SignIn) Link(ctx context.Context, person uuid.UUID) (string, error) {
	secret, hash, err := newSecret()
	if err != nil {
		return "", err
	}
	now := s.opts.Now()
	if _, err := s.opts.Store.LoginCreate(ctx, &core.LoginCreateParams{
		Kind: core.LoginLink, SecretHash: hash, PersonID: &person, ExpiresAt: now.Add(LinkTTL), Now: now,
	}); err != nil {
		return "", fmt.Errorf("storing a login link for person %s: %w", person, err)
	}
	return s.PublicURL() + "/login?t=" + secret, nil
}

// errLinkRefused is what a spent, expired or unknown link gets; the
// message is shown on the page.
type linkRefusal struct{ msg string }

func (e *linkRefusal) Error() string { return e.msg }

// ssoRequired reports whether single sign-on is the only way in.
func (s *SignIn) ssoRequired() bool { return s.opts.SSO != nil && s.opts.SSO.Required() }

// errSSORequired is what the link, the operator token and their sessions
// get when sso.require is set.
var errSSORequired = &linkRefusal{"this server requires single sign-on (sso.require): sign in at " + sso.LoginPath}

// client is where a request comes from, as a session's last use records
// it: the peer's address (a proxy's, behind one) and the user agent.
type client struct{ ip, userAgent string }

func clientOf(r *http.Request) client {
	ip := r.RemoteAddr
	if h, _, err := net.SplitHostPort(ip); err == nil {
		ip = h
	}
	return client{ip: ip, userAgent: r.UserAgent()}
}

// audit records a sign-in or sign-out; a failure is logged by the caller.
func (s *SignIn) audit(ctx context.Context, action, actor string, detail map[string]any) error {
	_, err := s.opts.Store.AuditLog(ctx, &core.AuditLogParams{Action: action, Actor: actor, Detail: sso.Detail(detail), Now: s.opts.Now()})
	if err != nil {
		return fmt.Errorf("auditing %s: %w", action, err)
	}
	return nil
}

func actorOf(person *uuid.UUID) string {
	if person == nil {
		return "operator"
	}
	return "person:" + person.String()
}

// spendLink uses a link once and opens a session for its person.
func (s *SignIn) spendLink(ctx context.Context, secret string, c client) (*core.Login, string, error) {
	if s.ssoRequired() {
		return nil, "", errSSORequired
	}
	now := s.opts.Now()
	l, err := s.opts.Store.LoginUse(ctx, &core.LoginUseParams{SecretHash: hashSecret(secret), Now: now})
	switch {
	case errors.Is(err, core.ErrConflict):
		return nil, "", &linkRefusal{"this sign-in link was already used; ask the bot for a new one (!login)"}
	case errors.Is(err, core.ErrNotFound), errors.Is(err, core.ErrInvalidParams):
		return nil, "", &linkRefusal{"this sign-in link is not valid; ask the bot for a new one (!login)"}
	case err != nil:
		return nil, "", err
	case l.Kind != core.LoginLink:
		return nil, "", &linkRefusal{"this sign-in link is not valid; ask the bot for a new one (!login)"}
	case !now.Before(l.ExpiresAt):
		return nil, "", &linkRefusal{fmt.Sprintf("this sign-in link expired (links last %d minutes); ask the bot for a new one (!login)", int(LinkTTL.Minutes()))}
	}
	return s.openSession(ctx, l.PersonID, core.LoginByLink, "", c)
}

// openSession stores a new session for person (nil: the operator) and
// returns it with its secret, and records the sign-in in the audit.
func (s *SignIn) openSession(ctx context.Context, person *uuid.UUID, method core.LoginMethod, idToken string, c client, extra ...any) (*core.Login, string, error) {
	secret, hash, err := newSecret()
	if err != nil {
		return nil, "", err
	}
	now := s.opts.Now()
	// Links and sessions pile up at one per sign-in; the expired ones go
	// here, a bounded batch at a time.
	if _, err := s.opts.Store.LoginPrune(ctx, &core.PruneParams{Before: now, Limit: 100}); err != nil {
		return nil, "", fmt.Errorf("pruning expired logins: %w", err)
	}
	l, err := s.opts.Store.LoginCreate(ctx, &core.LoginCreateParams{
		Kind: core.LoginSession, SecretHash: hash, PersonID: person, ExpiresAt: now.Add(s.opts.SessionTTL), Now: now,
		Method: method, IDToken: idToken, IP: c.ip, UserAgent: c.userAgent,
	})
	if err != nil {
		return nil, "", fmt.Errorf("opening a session: %w", err)
	}
	detail := map[string]any{"session": l.ID, "method": method, "ip": c.ip, "user_agent": c.userAgent}
	for i := 0; i+1 < len(extra); i += 2 {
		if k, ok := extra[i].(string); ok {
			detail[k] = extra[i+1]
		}
	}
	if err := s.audit(ctx, sso.AuditSignIn, actorOf(person), detail); err != nil {
		return nil, "", err
	}
	return l, secret, nil
}

// session finds the live session of a cookie value; nil when there is
// none (unknown, expired or signed out).
func (s *SignIn) session(ctx context.Context, secret string) (*core.Login, error) {
	if secret == "" {
		return nil, nil
	}
	l, err := s.opts.Store.LoginFind(ctx, hashSecret(secret))
	if errors.Is(err, core.ErrNotFound) || errors.Is(err, core.ErrInvalidParams) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if l.Kind != core.LoginSession || !l.Live(s.opts.Now()) {
		return nil, nil
	}
	return l, nil
}

// touch records a session's use; at most one write a minute per session.
func (s *SignIn) touch(ctx context.Context, l *core.Login, c client) error {
	return s.opts.Store.LoginTouch(ctx, &core.TouchParams{ID: l.ID, IP: c.ip, UserAgent: c.userAgent, Every: time.Minute, Now: s.opts.Now()})
}

func (s *SignIn) setCookie(w http.ResponseWriter, secret string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: secret, Path: "/", Expires: expires, HttpOnly: true,
		Secure: s.secure(), SameSite: http.SameSiteStrictMode,
	})
}

func (s *SignIn) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.secure(), SameSite: http.SameSiteStrictMode,
	})
}

func sessionSecret(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// The sign-in endpoints are outside /api: the caller has no principal yet.

// SignInRequest is the body of POST /auth/link (the link's secret) and
// POST /auth/token (the operator token).
type SignInRequest struct {
	Token string `json:"token"`
}

// SignedInJSON answers a sign-in (with the session's expiry) and a
// sign-out.
type SignedInJSON struct {
	SignedIn  bool       `json:"signed_in"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// LogoutURL, on signing out of a single sign-on session, is the
	// identity provider's end-session page: the console goes there next.
	LogoutURL string `json:"logout_url,omitempty"`
}

// SessionJSON is GET /api/session: who the caller is, the agents it may
// talk to, a console session's CSRF token, and a person's id, name and
// workspaces.
type SessionJSON struct {
	Kind   PrincipalKind `json:"kind"`
	Name   string        `json:"name"`
	Admin  bool          `json:"admin"`
	Cookie bool          `json:"cookie"`
	CSRF   string        `json:"csrf,omitempty"`
	*SessionPerson
	Agents []string `json:"agents"`
}

// SessionPerson is the person a session or token acts as; DisplayName is
// set when the person is known.
type SessionPerson struct {
	PersonID    uuid.UUID              `json:"person_id"`
	DisplayName *string                `json:"display_name,omitempty"`
	Workspaces  []SessionWorkspaceJSON `json:"workspaces"`
}

// SessionWorkspaceJSON is a workspace of the person and their role in it.
type SessionWorkspaceJSON struct {
	ID   uuid.UUID          `json:"id"`
	Name string             `json:"name"`
	Kind core.WorkspaceKind `json:"kind"`
	Role core.Role          `json:"role"`
}

// authHandler refuses other sites and bodies not declared as JSON: a form
// on another site must not sign a browser in (login CSRF).
func (a *API) authHandler(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return a.refuseOtherSites(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if herr := requireJSON(r); herr != nil {
			writeError(w, herr.status, herr.msg)
			return
		}
		if err := h(w, r); err != nil {
			a.fail(w, r, err)
		}
	}))
}

func (a *API) signInLink(w http.ResponseWriter, r *http.Request) error {
	var body SignInRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	l, secret, err := a.opts.SignIn.spendLink(r.Context(), strings.TrimSpace(body.Token), clientOf(r))
	if errors.Is(err, errSSORequired) {
		return &httpError{status: http.StatusForbidden, msg: errSSORequired.msg}
	}
	if lr := (*linkRefusal)(nil); errors.As(err, &lr) {
		return &httpError{status: http.StatusUnauthorized, msg: lr.msg}
	}
	if err != nil {
		return err
	}
	a.opts.SignIn.setCookie(w, secret, l.ExpiresAt)
	writeJSON(w, http.StatusOK, SignedInJSON{SignedIn: true, ExpiresAt: &l.ExpiresAt})
	return nil
}

func (a *API) signInToken(w http.ResponseWriter, r *http.Request) error {
	var body SignInRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if a.opts.SignIn.ssoRequired() {
		return &httpError{status: http.StatusForbidden, msg: errSSORequired.msg}
	}
	if a.opts.Token == "" || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(body.Token)), []byte(a.opts.Token)) != 1 {
		return &httpError{status: http.StatusUnauthorized, msg: "that is not the operator token (SWITCHBOARD_API_TOKEN)"}
	}
	l, secret, err := a.opts.SignIn.openSession(r.Context(), nil, core.LoginByToken, "", clientOf(r))
	if err != nil {
		return err
	}
	a.opts.SignIn.setCookie(w, secret, l.ExpiresAt)
	writeJSON(w, http.StatusOK, SignedInJSON{SignedIn: true, ExpiresAt: &l.ExpiresAt})
	return nil
}

func (a *API) signOut(w http.ResponseWriter, r *http.Request) error {
	secret := sessionSecret(r)
	out := SignedInJSON{}
	if secret != "" {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(csrfToken(secret))) != 1 {
			return &httpError{status: http.StatusForbidden, msg: "missing or wrong " + CSRFHeader}
		}
		s := a.opts.SignIn
		l, err := s.opts.Store.LoginUse(r.Context(), &core.LoginUseParams{SecretHash: hashSecret(secret), Now: s.opts.Now()})
		if err != nil && !errors.Is(err, core.ErrConflict) && !errors.Is(err, core.ErrNotFound) {
			return err
		}
		if err == nil && l.Kind == core.LoginSession {
			if err := s.audit(r.Context(), sso.AuditSignOut, actorOf(l.PersonID), map[string]any{"session": l.ID, "method": l.Method}); err != nil {
				return err
			}
			// An SSO session signs out at the provider too, when it offers
			// RP-initiated logout.
			if l.Method == core.LoginByOIDC && s.opts.SSO != nil {
				out.LogoutURL = s.opts.SSO.EndSessionURL(r.Context(), l.IDToken)
			}
		}
	}
	a.opts.SignIn.clearCookie(w)
	writeJSON(w, http.StatusOK, out)
	return nil
}

// cookiePrincipal resolves the session cookie, if any. ok false: no
// usable session (the caller goes on to other ways of authenticating).
func (a *API) cookiePrincipal(r *http.Request) (*Principal, bool, *httpError) {
	if a.opts.SignIn == nil {
		return nil, false, nil
	}
	secret := sessionSecret(r)
	if secret == "" {
		return nil, false, nil
	}
	l, err := a.opts.SignIn.session(r.Context(), secret)
	if err != nil {
		a.log.ErrorContext(r.Context(), "checking web session", "error", err)
		return nil, false, &httpError{status: http.StatusServiceUnavailable, msg: "could not check the session; try again"}
	}
	if l == nil {
		return nil, false, nil
	}
	if a.opts.SignIn.ssoRequired() && l.Method != core.LoginByOIDC {
		return nil, false, &httpError{status: http.StatusUnauthorized, msg: errSSORequired.msg}
	}
	if err := a.opts.SignIn.touch(r.Context(), l, clientOf(r)); err != nil {
		a.log.WarnContext(r.Context(), "recording the use of a web session", "error", err)
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(csrfToken(secret))) != 1 {
			return nil, false, &httpError{status: http.StatusForbidden, msg: "a request signed in with the session cookie needs the " + CSRFHeader + " header from GET /api/session"}
		}
	}
	p := &Principal{Kind: PrincipalOperator, Session: l, csrf: csrfToken(secret)}
	if l.PersonID != nil {
		p.Kind, p.PersonID = PrincipalPerson, *l.PersonID
	}
	return p, true, nil
}

// session answers GET /api/session: who the page is signed in as, the
// CSRF token for its unsafe requests, and the workspaces it may see.
func (a *API) sessionInfo(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	out := SessionJSON{Kind: p.Kind, Name: p.Name(), Admin: p.Admin(), Cookie: p.Session != nil, CSRF: p.csrf}
	if p.Kind == PrincipalPerson {
		sp := &SessionPerson{PersonID: p.PersonID}
		if person, err := a.svc.Person(r.Context(), p.PersonID); err == nil {
			sp.DisplayName = &person.DisplayName
		}
		ms, err := a.svc.Workspaces().Memberships(r.Context(), p.actor(), p.PersonID)
		if err != nil {
			return err
		}
		sp.Workspaces = make([]SessionWorkspaceJSON, 0, len(ms))
		for _, m := range ms {
			sp.Workspaces = append(sp.Workspaces, SessionWorkspaceJSON{ID: m.Workspace.ID, Name: m.Workspace.Name, Kind: m.Workspace.Kind, Role: m.Role})
		}
		out.SessionPerson = sp
	}
	agents, err := a.agentsFor(r.Context(), p)
	if err != nil {
		return err
	}
	if agents == nil {
		agents = []string{}
	}
	out.Agents = agents
	writeJSON(w, http.StatusOK, out)
	return nil
}
