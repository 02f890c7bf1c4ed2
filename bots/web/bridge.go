package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/core/model"
)

// The bridge routes: a `switchboard bridge` process, holding an agent's
// session, follows the announcements of its agent's model calls, claims
// them, heartbeats, streams their events and posts their end (see
// core.Bridges and docs/bridge.md). Every route acts as the session's
// agent only: a bridge never claims, sees or answers another agent's call.

// Bridges is the relay of bridge agents' model calls (core.Bridges).
type Bridges interface {
	Connect(id, agent, version string) (release func())
	Beat(id string)
	Lease() time.Duration
	List() []core.BridgeInfo
	Wakeups(ctx context.Context) (<-chan string, error)
	Claim(ctx context.Context, id, agent string, limit int) ([]*core.BridgeCall, error)
	Heartbeat(ctx context.Context, call uuid.UUID, id, agent string) error
	Events(ctx context.Context, call uuid.UUID, id, agent string, attempt int, events []model.Event) error
	Finish(ctx context.Context, call uuid.UUID, id, agent string, attempt int, resp *model.Response, fail *core.BridgeFailure) error
}

func withBridges(o *Options) bool { return o.Bridges != nil }

// BridgeClaimRequest is POST /api/bridge/claim.
type BridgeClaimRequest struct {
	Bridge string `json:"bridge"`          // the bridge's id, its name in leases
	Limit  int    `json:"limit,omitempty"` // at most this many calls (default 1)
}

// BridgeCallJSON is a model call a bridge claimed: the agent's model and
// the request to run with the backend of the bridge's machine.
type BridgeCallJSON struct {
	ID      uuid.UUID      `json:"id"`
	Attempt int            `json:"attempt"`
	Agent   string         `json:"agent"`
	Model   string         `json:"model"`
	Request *model.Request `json:"request"`
}

// BridgeClaimJSON is the answer of POST /api/bridge/claim.
type BridgeClaimJSON struct {
	Calls []BridgeCallJSON `json:"calls"`
	// LeaseMS is how long a claim holds without a heartbeat, in
	// milliseconds: heartbeat at least every third of it.
	LeaseMS int64 `json:"lease_ms"`
}

// BridgeBeatRequest is POST /api/bridge/calls/{call}/heartbeat.
type BridgeBeatRequest struct {
	Bridge string `json:"bridge"`
}

// BridgeEventsRequest is POST /api/bridge/calls/{call}/events: events of
// the attempt the bridge claimed, in order.
type BridgeEventsRequest struct {
	Bridge  string        `json:"bridge"`
	Attempt int           `json:"attempt"`
	Events  []model.Event `json:"events"`
}

// BridgeResultRequest is POST /api/bridge/calls/{call}/result: the
// attempt's response, or its failure.
type BridgeResultRequest struct {
	Bridge   string              `json:"bridge"`
	Attempt  int                 `json:"attempt"`
	Response *model.Response     `json:"response,omitempty"`
	Failure  *core.BridgeFailure `json:"failure,omitempty"`
}

// BridgeList is GET /api/bridges.
type BridgeList struct {
	Bridges []core.BridgeInfo `json:"bridges"`
}

// bridgeAgent is the agent a bridge route acts as: the session's.
func bridgeAgent(r *http.Request) (string, error) {
	p := PrincipalFrom(r.Context())
	if p.Kind != PrincipalAgent {
		return "", &httpError{status: http.StatusForbidden, msg: "the bridge routes take an agent's session (exchange a host token or agent key at POST /api/auth/token)"}
	}
	return p.Agents[0], nil
}

func bridgeID(id string) error {
	if id == "" || len(id) > 100 || strings.ContainsAny(id, " \t\r\n") {
		return fmt.Errorf("%w: bridge must be the bridge's id, 1-100 characters without spaces", core.ErrInvalid)
	}
	return nil
}

// readBridgeReport reads what every report on a call carries: the
// session's agent, the call's id from the path, and the body into body,
// whose bridge field (*bridge, once decoded) must name the bridge.
func readBridgeReport(w http.ResponseWriter, r *http.Request, body any, bridge *string) (string, uuid.UUID, error) {
	agent, err := bridgeAgent(r)
	if err != nil {
		return "", uuid.Nil, err
	}
	id, err := callID(r)
	if err != nil {
		return "", uuid.Nil, err
	}
	if err := decode(w, r, body, false); err != nil {
		return "", uuid.Nil, err
	}
	if err := bridgeID(*bridge); err != nil {
		return "", uuid.Nil, err
	}
	return agent, id, nil
}

func callID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("call"))
	if err != nil {
		return uuid.Nil, fmt.Errorf("%w: call id %q is not a UUID", core.ErrInvalid, r.PathValue("call"))
	}
	return id, nil
}

// bridgeError maps the relay's refusals to statuses a bridge acts on.
func bridgeError(err error) error {
	switch {
	case errors.Is(err, core.ErrBridgeCallGone):
		return &httpError{status: http.StatusGone, msg: err.Error()}
	case errors.Is(err, core.ErrBridgeAgent):
		return &httpError{status: http.StatusForbidden, msg: err.Error()}
	case errors.Is(err, core.ErrBridgeLeaseLost):
		return &httpError{status: http.StatusConflict, msg: err.Error()}
	}
	return err
}

// bridgeCheckEvery is how often an announcement stream checks its token
// again: a revoked one closes the stream within this.
const bridgeCheckEvery = time.Second

func (a *API) bridgeAnnounce(w http.ResponseWriter, r *http.Request) error {
	agent, err := bridgeAgent(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	id := q.Get("bridge")
	if err := bridgeID(id); err != nil {
		return err
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming unsupported by the response writer")
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	wake, err := a.opts.Bridges.Wakeups(ctx)
	if err != nil {
		return err
	}
	release := a.opts.Bridges.Connect(id, agent, q.Get("version"))
	defer release()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	kind := core.BridgeKind(agent)
	send := func(event string) error {
		if _, err := fmt.Fprintf(w, "event: %s\ndata: {\"agent\":%q}\n\n", event, agent); err != nil {
			return err
		}
		flusher.Flush()
		return nil
	}
	// A (re)connected bridge claims at once: what was announced while it
	// was away is found by the same claim.
	if err := send("work"); err != nil {
		return nil
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	check := time.NewTicker(bridgeCheckEvery)
	defer check.Stop()
	keepAlive := time.NewTicker(a.opts.KeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.closing:
			return nil
		case k, ok := <-wake:
			if !ok {
				return nil
			}
			if k == kind {
				if err := send("work"); err != nil {
					return nil
				}
			}
		case <-check.C:
			// A revoked (or expired) session, or one whose host token was
			// revoked, closes the stream at once.
			if a.opts.Keys != nil && token != "" {
				if _, err := a.opts.Keys.Check(ctx, token); err != nil && (errors.Is(err, apikey.ErrRevoked) || errors.Is(err, apikey.ErrExpired)) {
					_, _ = fmt.Fprintf(w, "event: closed\ndata: {\"error\":%q}\n\n", err.Error())
					flusher.Flush()
					return nil
				}
			}
			a.opts.Bridges.Beat(id)
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			flusher.Flush()
		}
	}
}

func (a *API) bridgeClaim(w http.ResponseWriter, r *http.Request) error {
	agent, err := bridgeAgent(r)
	if err != nil {
		return err
	}
	var body BridgeClaimRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if err := bridgeID(body.Bridge); err != nil {
		return err
	}
	if body.Limit < 0 || body.Limit > 16 {
		return fmt.Errorf("%w: limit %d must be from 1 to 16", core.ErrInvalid, body.Limit)
	}
	calls, err := a.opts.Bridges.Claim(r.Context(), body.Bridge, agent, max(body.Limit, 1))
	if err != nil {
		return err
	}
	out := BridgeClaimJSON{Calls: []BridgeCallJSON{}, LeaseMS: a.opts.Bridges.Lease().Milliseconds()}
	for _, c := range calls {
		out.Calls = append(out.Calls, BridgeCallJSON{ID: c.ID, Attempt: c.Attempt, Agent: c.Args.Agent, Model: c.Args.Model, Request: c.Args.Request})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) bridgeHeartbeat(w http.ResponseWriter, r *http.Request) error {
	var body BridgeBeatRequest
	agent, id, err := readBridgeReport(w, r, &body, &body.Bridge)
	if err != nil {
		return err
	}
	if err := a.opts.Bridges.Heartbeat(r.Context(), id, body.Bridge, agent); err != nil {
		return bridgeError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) bridgeEvents(w http.ResponseWriter, r *http.Request) error {
	var body BridgeEventsRequest
	agent, id, err := readBridgeReport(w, r, &body, &body.Bridge)
	if err != nil {
		return err
	}
	if err := a.opts.Bridges.Events(r.Context(), id, body.Bridge, agent, body.Attempt, body.Events); err != nil {
		return bridgeError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) bridgeResult(w http.ResponseWriter, r *http.Request) error {
	var body BridgeResultRequest
	agent, id, err := readBridgeReport(w, r, &body, &body.Bridge)
	if err != nil {
		return err
	}
	if err := a.opts.Bridges.Finish(r.Context(), id, body.Bridge, agent, body.Attempt, body.Response, body.Failure); err != nil {
		return bridgeError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) bridgeList(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(PrincipalFrom(r.Context()), "list the bridges"); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, BridgeList{Bridges: a.opts.Bridges.List()})
	return nil
}
