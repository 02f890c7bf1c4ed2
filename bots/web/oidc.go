package web

import (
	"crypto/subtle"
	"errors"
	"html"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/auth/sso"
)

// Single sign-on's two browser endpoints. They are navigations, not API
// operations (a redirect and a page, no JSON), so they are registered
// beside the route table, as the CORS preflight is:
//
//	GET /auth/oidc/login[?return_to=/path]  302 to the provider
//	GET /auth/oidc/callback?code&state      the provider's answer: a
//	                                        session cookie and 302 back,
//	                                        or a page saying why not

// oidcRoutes registers the SSO endpoints when SSO is on.
func (a *API) oidcRoutes(mux Mux) {
	if a.opts.SignIn == nil || a.opts.SignIn.opts.SSO == nil {
		return
	}
	mux.Handle("GET "+sso.LoginPath, http.HandlerFunc(a.oidcLogin))
	mux.Handle("GET "+sso.CallbackPath, http.HandlerFunc(a.oidcCallback))
}

// OIDCStateCookie binds a sign-in's state to the browser that started
// it: the callback is taken only from a browser holding it.
const OIDCStateCookie = "switchboard_oidc_state"

func (a *API) oidcLogin(w http.ResponseWriter, r *http.Request) {
	s := a.opts.SignIn
	u, state, err := s.opts.SSO.Begin(r.Context(), r.URL.Query().Get("return_to"))
	if err != nil {
		a.log.ErrorContext(r.Context(), "starting a single sign-on", "error", err)
		signInPage(w, http.StatusBadGateway, "Could not reach the identity provider: "+err.Error())
		return
	}
	// Lax: the provider's redirect back is a top-level navigation from
	// its site, which a Lax cookie rides along on.
	http.SetCookie(w, &http.Cookie{
		Name: OIDCStateCookie, Value: state, Path: sso.CallbackPath, MaxAge: int(s.opts.SSO.StateTTL() / time.Second),
		HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteLaxMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u, http.StatusFound)
}

func (a *API) oidcCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s := a.opts.SignIn
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		signInPage(w, http.StatusUnauthorized, "The identity provider did not sign you in: "+e+" "+q.Get("error_description"))
		return
	}
	// The state must be the one this browser started (login CSRF: a
	// callback URL from another browser signs nobody in here).
	bound, _ := r.Cookie(OIDCStateCookie)
	http.SetCookie(w, &http.Cookie{Name: OIDCStateCookie, Value: "", Path: sso.CallbackPath, MaxAge: -1, HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteLaxMode})
	if bound == nil || q.Get("state") == "" || subtle.ConstantTimeCompare([]byte(bound.Value), []byte(q.Get("state"))) != 1 {
		a.log.WarnContext(ctx, "single sign-on refused", "reason", "the callback's state is not bound to this browser")
		signInPage(w, http.StatusUnauthorized, "This sign-in was not started in this browser; start again.")
		return
	}
	id, err := s.opts.SSO.Finish(ctx, q.Get("state"), q.Get("code"))
	if rf := (*sso.Refusal)(nil); errors.As(err, &rf) {
		a.log.WarnContext(ctx, "single sign-on refused", "reason", rf.Msg)
		signInPage(w, http.StatusUnauthorized, rf.Msg)
		return
	}
	if err != nil {
		a.log.ErrorContext(ctx, "finishing a single sign-on", "error", err)
		signInPage(w, http.StatusBadGateway, "The sign-in could not be finished; try again.")
		return
	}
	prov, err := s.opts.SSO.Provision(ctx, id)
	if err != nil {
		a.log.ErrorContext(ctx, "provisioning a single sign-on", "error", err)
		signInPage(w, http.StatusInternalServerError, "The sign-in could not be finished; try again.")
		return
	}
	person := prov.Person.ID
	l, secret, err := s.openSession(ctx, &person, core.LoginByOIDC, id.IDToken, clientOf(r),
		"issuer", id.Issuer, "subject", id.Subject, "created", prov.Created, "role_changes", len(prov.Changes))
	if err != nil {
		a.log.ErrorContext(ctx, "opening a session after single sign-on", "error", err)
		signInPage(w, http.StatusInternalServerError, "The sign-in could not be finished; try again.")
		return
	}
	s.setLaxCookie(w, secret, l.ExpiresAt)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, id.ReturnTo, http.StatusFound)
}

// setLaxCookie sets the session cookie at the end of a redirect from the
// provider: the browser arrives from another site, so the cookie is
// SameSite=Lax (a Strict one set here would not ride along on the redirect
// that follows). Unsafe requests still need the CSRF header.
func (s *SignIn) setLaxCookie(w http.ResponseWriter, secret string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: secret, Path: "/", Expires: expires, HttpOnly: true,
		Secure: s.secure(), SameSite: http.SameSiteLaxMode,
	})
}

// signInPage answers a browser whose sign-in failed, with the reason.
func signInPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`<!doctype html><meta charset="utf-8"><title>Sign-in refused</title>` +
		`<p>` + html.EscapeString(msg) + `</p><p><a href="` + sso.LoginPath + `">Sign in again</a> · <a href="/">Console</a></p>`))
}

// SignInMethodsJSON is GET /auth/methods: how the console's sign-in page
// may sign a browser in.
type SignInMethodsJSON struct {
	// SSO is on (SWITCHBOARD_OIDC_ISSUER): LoginURL starts it.
	SSO      bool   `json:"sso"`
	LoginURL string `json:"login_url,omitempty"`
	// SSORequired: the one-time link and the operator token are refused.
	SSORequired bool `json:"sso_required"`
}

func (a *API) signInMethods(w http.ResponseWriter, r *http.Request) error {
	out := SignInMethodsJSON{}
	if s := a.opts.SignIn; s != nil && s.opts.SSO != nil {
		out.SSO, out.LoginURL, out.SSORequired = true, sso.LoginPath, s.ssoRequired()
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
