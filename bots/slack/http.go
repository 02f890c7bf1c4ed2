package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/slack-go/slack"
)

// Routes registers the HTTP Events API endpoints, POST /slack/events,
// POST /slack/interactivity and POST /slack/commands (the slash command),
// when a signing secret is set.
func (a *Adapter) Routes(mux *http.ServeMux) {
	if a.opts.SigningSecret == "" {
		return
	}
	mux.Handle("POST /slack/events", a.EventsHandler())
	mux.Handle("POST /slack/interactivity", a.InteractivityHandler())
	mux.HandleFunc("POST /slack/commands", a.serveCommands)
}

// EventsHandler answers Slack's Events API requests: the url_verification
// challenge and event callbacks. A request that is not signed with the
// signing secret within the last five minutes gets 401.
func (a *Adapter) EventsHandler() http.Handler { return http.HandlerFunc(a.serveEvents) }

// InteractivityHandler answers Slack's interactivity requests (button clicks).
func (a *Adapter) InteractivityHandler() http.Handler { return http.HandlerFunc(a.serveInteractivity) }

var (
	errNoSignature    = errors.New("missing signature headers")
	errStaleSignature = errors.New("request timestamp outside the five-minute window")
	errBadSignature   = errors.New("signature does not match")
)

// verify checks Slack's v0 signature over the raw body against the injected
// clock. slack.NewSecretsVerifier reads the wall clock, so it is not used.
func verify(secret string, h http.Header, body []byte, now time.Time) error {
	sig, tsText := h.Get("X-Slack-Signature"), h.Get("X-Slack-Request-Timestamp")
	if sig == "" || tsText == "" {
		return errNoSignature
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("parsing request timestamp %q: %w", tsText, err)
	}
	if age := now.Sub(time.Unix(ts, 0)); age > signatureMaxAge || age < -signatureMaxAge {
		return errStaleSignature
	}
	const prefix = "v0="
	if len(sig) <= len(prefix) || sig[:len(prefix)] != prefix {
		return errBadSignature
	}
	got, err := hex.DecodeString(sig[len(prefix):])
	if err != nil {
		return errBadSignature
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:", tsText)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), got) {
		return errBadSignature
	}
	return nil
}

// readVerified reads the body and checks its signature, answering the
// request itself when it fails.
func (a *Adapter) readVerified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if !a.ready.Load() {
		http.Error(w, "slack adapter not started", http.StatusServiceUnavailable)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "reading body", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if err := verify(a.opts.SigningSecret, r.Header, body, a.opts.Now()); err != nil {
		a.log.WarnContext(r.Context(), "rejecting unsigned slack request", "path", r.URL.Path, "err", err)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

func (a *Adapter) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readVerified(w, r)
	if !ok {
		return
	}
	var cb callback
	if err := json.Unmarshal(body, &cb); err != nil {
		http.Error(w, "body is not an events api payload", http.StatusBadRequest)
		return
	}
	switch cb.Type {
	case "url_verification":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": cb.Challenge})
	case "event_callback":
		if n := r.Header.Get("X-Slack-Retry-Num"); n != "" {
			// A retry still goes to core, which dedupes on event_id: the first
			// delivery may have failed before it was stored.
			a.log.InfoContext(r.Context(), "slack event retry", "event_id", cb.EventID,
				"retry_num", n, "retry_reason", r.Header.Get("X-Slack-Retry-Reason"))
		}
		if err := a.handleCallback(r.Context(), &cb); err != nil {
			a.log.ErrorContext(r.Context(), "slack event not stored; slack will retry", "event_id", cb.EventID, "err", err)
			http.Error(w, "not stored", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	case "app_rate_limited":
		a.log.WarnContext(r.Context(), "slack is rate limiting this app's events", "body", string(body))
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

func (a *Adapter) serveInteractivity(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readVerified(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "missing payload", http.StatusBadRequest)
		return
	}
	var ic slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &ic); err != nil {
		http.Error(w, "payload does not decode", http.StatusBadRequest)
		return
	}
	if resp, ok := a.formSubmission(r.Context(), &ic); ok {
		writeFormAnswer(w, resp)
		return
	}
	if err := a.handleInteraction(r.Context(), &ic); err != nil {
		a.log.ErrorContext(r.Context(), "slack click not handled", "trigger_id", ic.TriggerID, "err", err)
		http.Error(w, "not handled", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}
