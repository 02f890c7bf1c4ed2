// Package web is the HTTP client API: create conversations, post messages and
// tool results, fork, read the log at any seq, and follow a conversation as
// Server-Sent Events that resume exactly where a client left off.
package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Options configures the API.
type Options struct {
	Service *core.Service
	// Token, when set, is required as "Authorization: Bearer <Token>". When
	// empty the API answers only requests from loopback addresses.
	Token string
	// PollInterval bounds how long a stream waits when a wake-up is lost
	// (default 2s).
	PollInterval time.Duration
	// KeepAlive is the interval of SSE comments that keep proxies from
	// closing an idle stream (default 15s).
	KeepAlive time.Duration
	Logger    *slog.Logger
}

// API serves /api/.
type API struct {
	opts Options
	svc  *core.Service
	st   store.Store
	log  *slog.Logger
}

// New validates opts.
func New(opts Options) (*API, error) {
	if opts.Service == nil {
		return nil, errors.New("web: Options.Service is required")
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &API{opts: opts, svc: opts.Service, st: opts.Service.Store(), log: opts.Logger}, nil
}

// Routes registers the API on mux.
func (a *API) Routes(mux *http.ServeMux) {
	mux.Handle("POST /api/conversations", a.auth(a.create))
	mux.Handle("GET /api/conversations/{id}", a.auth(a.get))
	mux.Handle("POST /api/conversations/{id}/messages", a.auth(a.message))
	mux.Handle("GET /api/conversations/{id}/stream", a.auth(a.stream))
	mux.Handle("POST /api/conversations/{id}/tool-results", a.auth(a.toolResults))
	mux.Handle("POST /api/conversations/{id}/fork", a.auth(a.fork))
	mux.Handle("GET /api/conversations/{id}/entries", a.auth(a.entries))
}

func (a *API) auth(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.opts.Token != "" {
			got, ok := bearer(r.Header.Get("Authorization"))
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(a.opts.Token)) != 1 {
				writeError(w, http.StatusUnauthorized, "a valid Authorization: Bearer token is required")
				return
			}
		} else if !loopback(r.RemoteAddr) {
			writeError(w, http.StatusForbidden, "without SWITCHBOARD_API_TOKEN the API answers only on loopback")
			return
		}
		if err := h(w, r); err != nil {
			a.fail(w, r, err)
		}
	})
}

// bearer reads the token of an "Authorization: Bearer <token>" header. The
// scheme is case-insensitive (RFC 9110, section 11.1), so "bearer" from a
// hand-written client works too.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	switch {
	case errors.As(err, &he):
		writeError(w, he.status, he.msg)
	case errors.Is(err, core.ErrInvalid), errors.Is(err, store.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, store.ErrNotFound):
		// Every route that can miss names a conversation.
		writeError(w, http.StatusNotFound, fmt.Sprintf("conversation %s not found", r.PathValue("id")))
	case errors.Is(err, core.ErrNotPending):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, store.ErrConflict):
		writeError(w, http.StatusConflict, "conflict")
	default:
		a.log.ErrorContext(r.Context(), "api request failed", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusInternalServerError, "internal error")
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// httpError is an answer other than 400/404/409/500 that a handler asks for.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// maxBody bounds a request body: the largest legitimate one is a batch of
// tool results, far below this.
const maxBody = 1 << 20

// decode reads exactly one JSON value into v. Unknown fields, a second value
// after the first and an empty body (unless allowEmpty) are errors, so a
// typo in a client is reported instead of silently ignored.
func decode(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) {
		if allowEmpty {
			return nil
		}
		return fmt.Errorf("%w: request body is empty; want a JSON object", core.ErrInvalid)
	}
	if err == nil {
		// Anything but white space after the value is a malformed body.
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("unexpected data after the JSON object")
			if mbe := (*http.MaxBytesError)(nil); errors.As(terr, &mbe) {
				err = terr
			}
		}
	}
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit)}
	}
	if err != nil {
		return fmt.Errorf("%w: request body: %v", core.ErrInvalid, err)
	}
	return nil
}

func convID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return uuid.Nil, fmt.Errorf("%w: conversation id %q is not a UUID", core.ErrInvalid, r.PathValue("id"))
	}
	return id, nil
}

// user names the API caller in the log.
func user(r *http.Request) string {
	if u := r.Header.Get("X-Switchboard-User"); u != "" {
		return u
	}
	return "api"
}

func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Agent string `json:"agent"`
	}
	// The body is optional: no agent means the default one.
	if err := decode(w, r, &body, true); err != nil {
		return err
	}
	conv, err := a.svc.CreateConversation(r.Context(), body.Agent, "api", user(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, conversationJSON(conv))
	return nil
}

func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	id, err := convID(r)
	if err != nil {
		return err
	}
	conv, err := a.st.ConversationGet(r.Context(), id)
	if err != nil {
		return err
	}
	out := conversationJSON(conv)
	forks, err := a.st.ConversationForks(r.Context(), id)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(forks))
	for _, f := range forks {
		ids = append(ids, f.ID.String())
	}
	out["forks"] = ids
	pending, err := a.svc.PendingCalls(r.Context(), id)
	if err != nil {
		return err
	}
	out["pending_calls"] = pending
	writeJSON(w, http.StatusOK, out)
	return nil
}

func conversationJSON(c *store.Conversation) map[string]any {
	out := map[string]any{
		"id": c.ID, "root_id": c.RootID, "status": c.Status, "last_seq": c.LastSeq,
		"child_count": c.ChildCount, "created_at": c.CreatedAt,
	}
	if c.ParentID != nil {
		out["parent_id"] = c.ParentID
		out["fork_seq"] = c.ForkSeq
	}
	return out
}

func (a *API) message(w http.ResponseWriter, r *http.Request) error {
	id, err := convID(r)
	if err != nil {
		return err
	}
	var body struct {
		Text string `json:"text"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	seq, err := a.svc.PostMessage(r.Context(), id, user(r), body.Text)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"conversation_id": id, "seq": seq})
	return nil
}

func (a *API) toolResults(w http.ResponseWriter, r *http.Request) error {
	id, err := convID(r)
	if err != nil {
		return err
	}
	var body struct {
		Results []core.ToolResultInput `json:"results"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	// An unknown conversation has no pending calls either; say which it is.
	if _, err := a.st.ConversationGet(r.Context(), id); err != nil {
		return err
	}
	seq, err := a.svc.PostToolResults(r.Context(), id, user(r), body.Results)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"conversation_id": id, "seq": seq})
	return nil
}

func (a *API) fork(w http.ResponseWriter, r *http.Request) error {
	id, err := convID(r)
	if err != nil {
		return err
	}
	var body struct {
		Seq     int64  `json:"seq"`
		Content string `json:"content"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	res, err := a.svc.Fork(r.Context(), id, body.Seq, user(r), body.Content)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"conversation_id": res.ConversationID, "forked": res.Forked, "seq": res.Entry.SeqValue(), "parent_id": id,
	})
	return nil
}

func (a *API) entries(w http.ResponseWriter, r *http.Request) error {
	id, err := convID(r)
	if err != nil {
		return err
	}
	p := &store.EntryListParams{ConversationID: id, WithErrors: r.URL.Query().Get("errors") != "0"}
	if v := r.URL.Query().Get("at"); v != "" {
		at, err := strconv.ParseInt(v, 10, 64)
		if err != nil || at < 1 {
			return fmt.Errorf("%w: at=%q must be a seq of 1 or more", core.ErrInvalid, v)
		}
		p.UpToSeq = at
	}
	if _, err := a.st.ConversationGet(r.Context(), id); err != nil {
		return err
	}
	list, err := a.st.EntryList(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		out = append(out, EntryJSON(e))
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation_id": id, "entries": out})
	return nil
}

// EntryJSON is an entry as clients see it.
func EntryJSON(e *store.Entry) map[string]any {
	out := map[string]any{
		"id": e.ID, "kind": e.Kind, "author": e.Author, "content": e.Content, "created_at": e.CreatedAt,
	}
	if e.Seq != nil {
		out["seq"] = *e.Seq
	} else {
		out["after_seq"] = e.AfterSeq
	}
	return out
}

// stream follows a conversation. The SSE id of each entry is its seq; a
// client that reconnects with Last-Event-ID (or ?cursor=) gets exactly the
// entries it missed, then live ones. Token deltas are a separate event type
// with no id: they are ephemeral and never replayed.
func (a *API) stream(w http.ResponseWriter, r *http.Request) error {
	id, err := convID(r)
	if err != nil {
		return err
	}
	cursor := int64(0)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		cursor, err = strconv.ParseInt(v, 10, 64)
	} else if v := r.URL.Query().Get("cursor"); v != "" {
		cursor, err = strconv.ParseInt(v, 10, 64)
	}
	if err != nil || cursor < 0 {
		return fmt.Errorf("%w: cursor must be a seq of 0 or more", core.ErrInvalid)
	}
	if _, err := a.st.ConversationGet(r.Context(), id); err != nil {
		return err
	}
	if cursor, err = a.resumePoint(r.Context(), id, cursor); err != nil {
		return err
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming unsupported by the response writer")
	}
	ctx := r.Context()
	// Subscribe before the catch-up read so nothing falls between them.
	wake, err := a.st.Subscribe(ctx, store.TopicEntries)
	if err != nil {
		return err
	}
	live, unsubscribe := a.svc.Hub().Subscribe(id, 1024)
	defer unsubscribe()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	shownErrors := map[uuid.UUID]bool{}
	// catchUp sends the entries past the cursor, up to the seq upTo (0: all).
	// With guard, a read of the whole log sends nothing if live events were
	// queued while it read: a turn of this process may have written entries
	// whose deltas are among them, and those events bring the entries, in
	// order.
	catchUp := func(upTo int64, guard bool) error {
		p := &store.EntryListParams{ConversationID: id, AfterSeq: cursor, WithErrors: true}
		if upTo > 0 {
			p.UpToSeq = max(upTo, cursor)
		}
		list, err := a.st.EntryList(ctx, p)
		if err != nil {
			return err
		}
		if guard && upTo == 0 && len(live) > 0 {
			return nil
		}
		for _, e := range list {
			if e.Seq == nil {
				if shownErrors[e.ID] {
					continue
				}
				shownErrors[e.ID] = true
				if err := writeEvent(w, "", "error", EntryJSON(e)); err != nil {
					return err
				}
				continue
			}
			if err := writeEvent(w, strconv.FormatInt(*e.Seq, 10), "entry", EntryJSON(e)); err != nil {
				return err
			}
			cursor = *e.Seq
		}
		flusher.Flush()
		return nil
	}
	if err := catchUp(0, false); err != nil {
		return nil // the client went away or the store failed mid-stream; nothing more to say
	}

	// A turn run in this process is followed through its live events, in
	// the order it published them: deltas, then the entry they add up to,
	// read from the log when its event arrives. Reading the log on any
	// other signal while such a turn runs could send an entry ahead of its
	// deltas, so wake-ups only read it when no turn runs here (a turn run by
	// another instance publishes nothing here).
	localTurn := false
	handle := func(ev core.Event) error {
		switch ev.Kind {
		case core.EventDelta:
			localTurn = true
			return writeEvent(w, "", "delta", map[string]string{"text": ev.Text})
		case core.EventEntry:
			// Up to this entry, not past it: a later entry's deltas may
			// still be queued behind this event.
			return catchUp(entryBound(ev.Entry), true)
		case core.EventTurnEnd:
			localTurn = false
			if err := catchUp(0, true); err != nil {
				return err
			}
			return writeEvent(w, "", string(ev.Kind), map[string]string{"text": ev.Text})
		case core.EventStatus, core.EventRestart, core.EventTurnStart:
			localTurn = true
			return writeEvent(w, "", string(ev.Kind), map[string]string{"text": ev.Text})
		}
		return nil
	}
	// drain handles the live events already queued: a turn here publishes
	// its turn_start before anything it writes can wake us.
	drain := func() error {
		for {
			select {
			case ev := <-live:
				if err := handle(ev); err != nil {
					return err
				}
			default:
				flusher.Flush()
				return nil
			}
		}
	}
	poll := time.NewTicker(a.opts.PollInterval)
	defer poll.Stop()
	keep := time.NewTicker(a.opts.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case n, ok := <-wake:
			if !ok {
				return nil
			}
			if n.Payload != id.String() {
				continue
			}
		case ev := <-live:
			if err := handle(ev); err != nil {
				return nil
			}
			flusher.Flush()
			continue
		case <-poll.C:
			// The safety net for a lost turn_end (a full live buffer): a
			// conversation no longer running has no local turn to wait for.
			if localTurn {
				c, err := a.st.ConversationGet(ctx, id)
				if err != nil {
					return nil
				}
				localTurn = c.Status == store.ConversationRunning
			}
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			flusher.Flush()
			continue
		}
		if err := drain(); err != nil {
			return nil
		}
		if localTurn {
			continue
		}
		if err := catchUp(0, true); err != nil {
			return nil
		}
	}
}

// entryBound is the seq to read the log up to so that e is included (0:
// the whole log).
func entryBound(e *store.Entry) int64 {
	switch {
	case e == nil:
		return 0
	case e.Seq != nil:
		return *e.Seq
	default:
		return e.AfterSeq // an error entry sorts after the entry it followed
	}
}

// resumePoint moves a cursor that points into entries a crashed turn left
// behind back to where the retried turn restarted. Those seqs were taken
// again by the retry's entries; resuming past them would skip the new
// entries. A client whose cursor already covers the replacements gets them
// again (same entry ids, so it can tell), never misses them.
func (a *API) resumePoint(ctx context.Context, conv uuid.UUID, cursor int64) (int64, error) {
	if cursor == 0 {
		return 0, nil
	}
	discarded, err := a.st.EntryListDiscarded(ctx, conv)
	if err != nil {
		return 0, err
	}
	var batch *time.Time
	for _, d := range discarded {
		if d.Seq != nil && *d.Seq == cursor {
			at := d.DiscardedAt
			batch = &at
		}
	}
	if batch == nil {
		return cursor, nil
	}
	for _, d := range discarded {
		if d.Seq != nil && d.DiscardedAt.Equal(*batch) && *d.Seq-1 < cursor {
			cursor = *d.Seq - 1
		}
	}
	return cursor, nil
}

func writeEvent(w http.ResponseWriter, id, event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if id != "" {
		if _, err := fmt.Fprintf(w, "id: %s\n", id); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	return err
}
