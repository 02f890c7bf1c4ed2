// Package matrixtest is a local fake Matrix homeserver for tests: the part
// of the client-server API (https://spec.matrix.org/v1.16/client-server-api/)
// that Switchboard's Matrix adapter speaks, held to the spec's shapes, with
// helpers for tests to act as people in rooms and to read what the bot did.
//
// What it does as the spec says: /sync with since and timeout (long-poll,
// next_batch tokens, rooms.join timelines and rooms.invite invite_state),
// /account/whoami, PUT /rooms/{roomId}/send/{eventType}/{txnId} idempotent
// per access token and transaction id (a repeat answers the first event's
// id and makes nothing), joins, /joined_members, /profile, /createRoom,
// account data, typing, redactions, GET /rooms/{roomId}/event/{eventId},
// media upload (/_matrix/media/v3/upload) and authenticated download
// (/_matrix/client/v1/media/download), and 429 M_LIMIT_EXCEEDED with
// retry_after_ms (and Retry-After) when a test asks for it (Limit).
//
// What it leaves out: federation, encryption, filters (a filter parameter
// is ignored), state resolution, power levels, presence, receipts. Only the
// bot has an access token; people act through the helpers.
package matrixtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Defaults of a new Server.
const (
	ServerName    = "localhost"
	DefaultToken  = "syt_switchboard_test_token"
	BotLocalpart  = "switchboard"
	BotName       = "Switchboard"
	DefaultDevice = "SWITCHBOARDTEST"
)

// User is a Matrix account on the fake server.
type User struct {
	ID   string // @localpart:localhost
	Name string // the display name
}

// Event is a room event as the fake keeps it.
type Event struct {
	ID       string          `json:"event_id"`
	Room     string          `json:"room_id"`
	Sender   string          `json:"sender"`
	Type     string          `json:"type"`
	StateKey *string         `json:"state_key,omitempty"`
	Content  json.RawMessage `json:"content"`
	TS       int64           `json:"origin_server_ts"`
	// TxnID is the transaction id the bot sent the event with ("" for
	// events the helpers made); the spec returns it only to its sender, in
	// unsigned.transaction_id.
	TxnID string `json:"-"`
	pos   int64
}

// Decode unmarshals the event's content into v.
func (e *Event) Decode(v any) error { return json.Unmarshal(e.Content, v) }

// Call is one request the fake received.
type Call struct {
	// Route is the matched pattern without /_matrix/client/v3 (or the media
	// prefix), such as "PUT /rooms/{roomId}/send/{eventType}/{txnId}".
	Route  string
	Method string
	Path   string
	Query  url.Values
	Body   []byte
	Status int
	At     time.Time
}

// Route names, as Call.Route spells them.
const (
	RouteSync     = "GET /sync"
	RouteSend     = "PUT /rooms/{roomId}/send/{eventType}/{txnId}"
	RouteUpload   = "POST /upload"
	RouteDownload = "GET /download/{serverName}/{mediaId}"
	RouteJoin     = "POST /rooms/{roomId}/join"
	RouteTyping   = "PUT /rooms/{roomId}/typing/{userId}"
)

type room struct {
	id         string
	name       string
	membership map[string]string // user id -> join, invite, leave
	joinedAt   map[string]int64  // user id -> stream position of their join
	direct     bool
}

type media struct {
	contentType string
	name        string
	data        []byte
}

// Server is the fake homeserver.
type Server struct {
	// URL is the homeserver base URL (MATRIX_HOMESERVER_URL).
	URL   string
	Token string
	Bot   User

	srv *httptest.Server

	mu       sync.Mutex
	changed  chan struct{}
	users    map[string]User
	rooms    map[string]*room
	stream   []*Event
	txns     map[string]string // token \x00 txnId -> event id
	media    map[string]*media
	account  map[string]json.RawMessage // the bot's account data by type
	typing   map[string]bool            // room -> the bot is typing
	limits   map[string]int             // route -> 429s still to answer
	retryMS  int64
	calls    []Call
	seq      int
	syncs    int
	liveSync int // syncs with a since token being held now
}

// NewServer starts a fake homeserver on loopback; it closes when the test
// ends.
func NewServer(tb testing.TB) *Server {
	s := &Server{
		Token:   DefaultToken,
		changed: make(chan struct{}),
		users:   map[string]User{},
		rooms:   map[string]*room{},
		txns:    map[string]string{},
		media:   map[string]*media{},
		account: map[string]json.RawMessage{},
		typing:  map[string]bool{},
		limits:  map[string]int{},
		retryMS: 300,
	}
	s.Bot = s.NewUser(BotLocalpart, BotName)
	s.srv = httptest.NewServer(s.handler())
	s.URL = s.srv.URL
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server; held syncs return at once.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// NewUser registers an account with a display name.
func (s *Server) NewUser(localpart, name string) User {
	u := User{ID: "@" + localpart + ":" + ServerName, Name: name}
	s.mu.Lock()
	s.users[u.ID] = u
	s.mu.Unlock()
	return u
}

// wake tells waiting syncs and Wait callers that something changed.
// Callers hold mu.
func (s *Server) wakeLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%06dfake:%s", prefix, s.seq, ServerName)
}

// appendLocked adds an event to the room's timeline and the sync stream.
func (s *Server) appendLocked(roomID, sender, typ string, stateKey *string, content any) *Event {
	raw, err := json.Marshal(content)
	if err != nil {
		panic(err)
	}
	ev := &Event{ID: s.nextID("$"), Room: roomID, Sender: sender, Type: typ, StateKey: stateKey, Content: raw, TS: time.Now().UnixMilli()}
	ev.pos = int64(len(s.stream) + 1)
	s.stream = append(s.stream, ev)
	s.wakeLocked()
	return ev
}

func (s *Server) memberLocked(r *room, sender, user, membership string, extra map[string]any) *Event {
	content := map[string]any{"membership": membership}
	if u, ok := s.users[user]; ok && membership == "join" {
		content["displayname"] = u.Name
	}
	for k, v := range extra {
		content[k] = v
	}
	key := user
	ev := s.appendLocked(r.id, sender, "m.room.member", &key, content)
	r.membership[user] = membership
	if membership == "join" {
		r.joinedAt[user] = ev.pos
	}
	return ev
}

// RoomOptions describes a room a test creates.
type RoomOptions struct {
	Name string
	// Members join at once (the creator always does).
	Members []User
	// InviteBot invites the bot (it joins through the API); otherwise the
	// bot is a member from the start, as if it had joined long ago.
	InviteBot bool
	// Direct marks the bot's invite is_direct (a DM).
	Direct bool
}

// CreateRoom makes a room created by creator and returns its id.
func (s *Server) CreateRoom(creator User, o RoomOptions) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &room{id: s.nextID("!"), name: o.Name, membership: map[string]string{}, joinedAt: map[string]int64{}, direct: o.Direct}
	s.rooms[r.id] = r
	empty := ""
	s.appendLocked(r.id, creator.ID, "m.room.create", &empty, map[string]any{"creator": creator.ID, "room_version": "11"})
	s.memberLocked(r, creator.ID, creator.ID, "join", nil)
	if o.Name != "" {
		s.appendLocked(r.id, creator.ID, "m.room.name", &empty, map[string]any{"name": o.Name})
	}
	for _, m := range o.Members {
		if m.ID != creator.ID {
			s.memberLocked(r, m.ID, m.ID, "join", nil)
		}
	}
	if o.InviteBot {
		extra := map[string]any{}
		if o.Direct {
			extra["is_direct"] = true
		}
		s.memberLocked(r, creator.ID, s.Bot.ID, "invite", extra)
	} else {
		s.memberLocked(r, s.Bot.ID, s.Bot.ID, "join", nil)
	}
	return r.id
}

// DM makes a direct room between user and the bot, the bot invited with
// is_direct as Element does, and returns its id.
func (s *Server) DM(user User) string {
	return s.CreateRoom(user, RoomOptions{InviteBot: true, Direct: true})
}

// Send makes sender send an event of type typ with content into room and
// returns its id.
func (s *Server) Send(roomID string, sender User, typ string, content any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(roomID, sender.ID, typ, nil, content).ID
}

// Say sends a plain m.text message.
func (s *Server) Say(roomID string, sender User, body string) string {
	return s.Send(roomID, sender, "m.room.message", map[string]any{"msgtype": "m.text", "body": body})
}

// Mention sends a message that mentions the bot as Element does: a pill
// in formatted_body, the display name in body, and m.mentions.user_ids.
func (s *Server) Mention(roomID string, sender User, body string) string {
	return s.Send(roomID, sender, "m.room.message", s.mentionContent(body))
}

func (s *Server) mentionContent(body string) map[string]any {
	return map[string]any{
		"msgtype":        "m.text",
		"body":           s.Bot.Name + ": " + body,
		"format":         "org.matrix.custom.html",
		"formatted_body": `<a href="https://matrix.to/#/` + s.Bot.ID + `">` + s.Bot.Name + `</a>: ` + body,
		"m.mentions":     map[string]any{"user_ids": []string{s.Bot.ID}},
	}
}

// InThread sends a message into the thread rooted at root, with the
// fallback reply to the thread's latest event as Element sends it.
func (s *Server) InThread(roomID string, sender User, root, body string, mention bool) string {
	content := map[string]any{"msgtype": "m.text", "body": body}
	if mention {
		content = s.mentionContent(body)
	}
	content["m.relates_to"] = map[string]any{
		"rel_type": "m.thread", "event_id": root, "is_falling_back": true,
		"m.in_reply_to": map[string]any{"event_id": root},
	}
	return s.Send(roomID, sender, "m.room.message", content)
}

// React sends a reaction (an m.annotation) of key to target.
func (s *Server) React(roomID string, sender User, target, key string) string {
	return s.Send(roomID, sender, "m.reaction", map[string]any{
		"m.relates_to": map[string]any{"rel_type": "m.annotation", "event_id": target, "key": key},
	})
}

// SendFile uploads data as sender and sends it as an m.file (m.image for
// an image type) with body as its caption when set. It returns the event
// id and the mxc URI.
func (s *Server) SendFile(roomID string, sender User, name, mimeType string, data []byte, body string, mention bool) (string, string) {
	s.mu.Lock()
	uri := s.storeMediaLocked(name, mimeType, data)
	s.mu.Unlock()
	msgtype := "m.file"
	if strings.HasPrefix(mimeType, "image/") {
		msgtype = "m.image"
	}
	content := map[string]any{"msgtype": msgtype, "body": name, "filename": name, "url": uri,
		"info": map[string]any{"mimetype": mimeType, "size": len(data)}}
	if body != "" {
		content["body"] = body
		if mention {
			content["body"] = s.Bot.Name + ": " + body
			content["m.mentions"] = map[string]any{"user_ids": []string{s.Bot.ID}}
		}
	}
	return s.Send(roomID, sender, "m.room.message", content), uri
}

func (s *Server) storeMediaLocked(name, contentType string, data []byte) string {
	id := fmt.Sprintf("media%06d", len(s.media)+1)
	s.media[id] = &media{contentType: contentType, name: name, data: bytes.Clone(data)}
	return "mxc://" + ServerName + "/" + id
}

// Media returns an uploaded file by its mxc URI.
func (s *Server) Media(uri string) (data []byte, contentType, name string, ok bool) {
	id, found := strings.CutPrefix(uri, "mxc://"+ServerName+"/")
	if !found {
		return nil, "", "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.media[id]
	if !ok {
		return nil, "", "", false
	}
	return bytes.Clone(m.data), m.contentType, m.name, true
}

// Limit makes the next n requests on route answer 429 M_LIMIT_EXCEEDED
// with retry_after_ms retryAfter.
func (s *Server) Limit(route string, n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[route] += n
	s.retryMS = retryAfter.Milliseconds()
}

// Events lists the events of a room in order.
func (s *Server) Events(roomID string) []*Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Event
	for _, e := range s.stream {
		if e.Room == roomID {
			out = append(out, e)
		}
	}
	return out
}

// Message is a bot message as people see it: edits applied.
type Message struct {
	ID      string
	Body    string // the latest body (m.new_content of the latest edit)
	HTML    string // the latest formatted_body
	MsgType string
	// Thread is the thread root when the message is in a thread; ReplyTo
	// the event it replies to (a thread's fallback included).
	Thread  string
	ReplyTo string
	URL     string // an m.file's or m.image's mxc URI
	Edits   int
	// Content is the original event's content; Latest the content it
	// shows now.
	Content map[string]any
	Latest  map[string]any
	// Reactions are the bot's own reaction keys on the message.
	Reactions []string
	Redacted  bool
}

type messageContent struct {
	MsgType       string          `json:"msgtype"`
	Body          string          `json:"body"`
	FormattedBody string          `json:"formatted_body"`
	URL           string          `json:"url"`
	NewContent    json.RawMessage `json:"m.new_content"`
	RelatesTo     *struct {
		RelType   string `json:"rel_type"`
		EventID   string `json:"event_id"`
		Key       string `json:"key"`
		InReplyTo *struct {
			EventID string `json:"event_id"`
		} `json:"m.in_reply_to"`
	} `json:"m.relates_to"`
}

// BotMessages lists the bot's messages in a room (not edits, reactions or
// redacted ones) as they read now.
func (s *Server) BotMessages(roomID string) []*Message {
	return s.messages(roomID, s.Bot.ID)
}

// Messages lists every sender's messages in a room, as they read now.
func (s *Server) Messages(roomID string) []*Message { return s.messages(roomID, "") }

func (s *Server) messages(roomID, sender string) []*Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Message
	byID := map[string]*Message{}
	senders := map[string]string{}
	for _, e := range s.stream {
		if e.Room != roomID {
			continue
		}
		switch e.Type {
		case "m.room.message":
			var c messageContent
			_ = json.Unmarshal(e.Content, &c)
			if c.RelatesTo != nil && c.RelatesTo.RelType == "m.replace" {
				m := byID[c.RelatesTo.EventID]
				// Only the original sender's edits apply (spec: Validity
				// of replacement events).
				if m == nil || senders[m.ID] != e.Sender || m.Redacted {
					continue
				}
				var nc messageContent
				_ = json.Unmarshal(c.NewContent, &nc)
				m.Body, m.HTML, m.MsgType, m.Edits = nc.Body, nc.FormattedBody, nc.MsgType, m.Edits+1
				m.Latest = map[string]any{}
				_ = json.Unmarshal(c.NewContent, &m.Latest)
				continue
			}
			if sender != "" && e.Sender != sender {
				continue
			}
			m := &Message{ID: e.ID, Body: c.Body, HTML: c.FormattedBody, MsgType: c.MsgType, URL: c.URL}
			_ = json.Unmarshal(e.Content, &m.Content)
			m.Latest = m.Content
			if c.RelatesTo != nil {
				if c.RelatesTo.RelType == "m.thread" {
					m.Thread = c.RelatesTo.EventID
				}
				if c.RelatesTo.InReplyTo != nil {
					m.ReplyTo = c.RelatesTo.InReplyTo.EventID
				}
			}
			byID[e.ID], senders[e.ID] = m, e.Sender
			out = append(out, m)
		case "m.reaction":
			var c messageContent
			_ = json.Unmarshal(e.Content, &c)
			if c.RelatesTo != nil && e.Sender == s.Bot.ID {
				if m := byID[c.RelatesTo.EventID]; m != nil {
					m.Reactions = append(m.Reactions, c.RelatesTo.Key)
				}
			}
		case "m.room.redaction":
			var c struct {
				Redacts string `json:"redacts"`
			}
			_ = json.Unmarshal(e.Content, &c)
			if m := byID[c.Redacts]; m != nil {
				m.Redacted = true
			}
		}
	}
	live := out[:0]
	for _, m := range out {
		if !m.Redacted {
			live = append(live, m)
		}
	}
	return live
}

// Typing reports whether the bot shows as typing in a room.
func (s *Server) Typing(roomID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.typing[roomID]
}

// Membership is the user's membership of a room ("" when none).
func (s *Server) Membership(roomID, userID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.rooms[roomID]; r != nil {
		return r.membership[userID]
	}
	return ""
}

// Calls lists every request so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallsTo lists the requests on one route.
func (s *Server) CallsTo(route string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Route == route {
			out = append(out, c)
		}
	}
	return out
}

// SyncStats is how the bot has been syncing.
type SyncStats struct {
	// Requests counts /sync requests; Live those with a since token being
	// held open now (the bot is caught up and waiting).
	Requests int
	Live     int
}

// Syncs reports the sync stats.
func (s *Server) Syncs() SyncStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SyncStats{Requests: s.syncs, Live: s.liveSync}
}

// Wait calls cond whenever the fake changes until it holds, for at most
// 30 seconds.
func (s *Server) Wait(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			tb.Fatalf("matrixtest: timed out after 30s waiting for %s", what)
		}
	}
}

// WaitSyncing waits until the bot holds a sync with a since token open:
// it has caught up and will see the next event.
func (s *Server) WaitSyncing(tb testing.TB) {
	tb.Helper()
	s.Wait(tb, "the bot to hold a /sync open", func() bool { return s.Syncs().Live > 0 })
}

// ---- HTTP ----

// matrixError is the spec's standard error body.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"errcode": code, "error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	const c3 = "/_matrix/client/v3"
	routes := []struct {
		pattern string // method and path below the prefix
		prefix  string
		auth    bool
		h       func(w http.ResponseWriter, r *http.Request)
	}{
		{"GET /versions", "/_matrix/client", false, s.versions},
		{"GET /account/whoami", c3, true, s.whoami},
		{RouteSync, c3, true, s.sync},
		{RouteSend, c3, true, s.send},
		{"PUT /rooms/{roomId}/redact/{eventId}/{txnId}", c3, true, s.redact},
		{RouteJoin, c3, true, s.join},
		{"POST /join/{roomIdOrAlias}", c3, true, s.join},
		{"POST /rooms/{roomId}/leave", c3, true, s.leave},
		{"GET /rooms/{roomId}/joined_members", c3, true, s.joinedMembers},
		{"GET /rooms/{roomId}/event/{eventId}", c3, true, s.getEvent},
		{RouteTyping, c3, true, s.setTyping},
		{"GET /profile/{userId}", c3, true, s.profile},
		{"GET /profile/{userId}/displayname", c3, true, s.profile},
		{"POST /createRoom", c3, true, s.createRoom},
		{"GET /user/{userId}/account_data/{type}", c3, true, s.getAccountData},
		{"PUT /user/{userId}/account_data/{type}", c3, true, s.putAccountData},
		{RouteUpload, "/_matrix/media/v3", true, s.upload},
		{RouteDownload, "/_matrix/client/v1/media", true, s.download},
		{"GET /download/{serverName}/{mediaId}/{fileName}", "/_matrix/client/v1/media", true, s.download},
	}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		route, h, auth := rt.pattern, rt.h, rt.auth
		mux.HandleFunc(method+" "+rt.prefix+path, func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			rec := &recorder{ResponseWriter: w, status: http.StatusOK}
			defer func() {
				s.mu.Lock()
				s.calls = append(s.calls, Call{Route: route, Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body, Status: rec.status, At: time.Now()})
				s.wakeLocked()
				s.mu.Unlock()
			}()
			if auth && !s.authorized(rec, r) {
				return
			}
			s.mu.Lock()
			limited := s.limits[route] > 0
			if limited {
				s.limits[route]--
			}
			retry := s.retryMS
			s.mu.Unlock()
			if limited {
				rec.Header().Set("Retry-After", strconv.FormatInt((retry+999)/1000, 10))
				writeJSON(rec, http.StatusTooManyRequests, map[string]any{"errcode": "M_LIMIT_EXCEEDED", "error": "Too many requests", "retry_after_ms": retry})
				return
			}
			h(rec, r)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "M_UNRECOGNIZED", "Unrecognized request")
	})
	return mux
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		writeError(w, http.StatusUnauthorized, "M_MISSING_TOKEN", "Missing access token")
		return false
	}
	if tok != s.Token {
		writeError(w, http.StatusUnauthorized, "M_UNKNOWN_TOKEN", "Unknown access token")
		return false
	}
	return true
}

func (s *Server) versions(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"versions": []string{"v1.11", "v1.12", "v1.13", "v1.14", "v1.15", "v1.16"}})
}

func (s *Server) whoami(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"user_id": s.Bot.ID, "device_id": DefaultDevice, "is_guest": false})
}

// sync answers GET /sync: everything past since, held up to timeout ms
// while there is nothing.
func (s *Server) sync(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since := int64(0)
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseInt(strings.TrimPrefix(v, "s"), 10, 64)
		if err != nil || !strings.HasPrefix(v, "s") || n < 0 {
			writeError(w, http.StatusBadRequest, "M_INVALID_PARAM", "Invalid since token")
			return
		}
		since = n
	}
	timeout := time.Duration(0)
	if v := q.Get("timeout"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			writeError(w, http.StatusBadRequest, "M_INVALID_PARAM", "Invalid timeout")
			return
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	s.mu.Lock()
	s.syncs++
	live := q.Get("since") != ""
	if live {
		s.liveSync++
		s.wakeLocked()
	}
	defer func() {
		if live {
			s.mu.Lock()
			s.liveSync--
			s.mu.Unlock()
		}
	}()
	for {
		resp, any := s.syncResponseLocked(since)
		if any || timeout == 0 {
			s.mu.Unlock()
			writeJSON(w, http.StatusOK, resp)
			return
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			timeout = 0
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
}

// syncResponseLocked builds the /sync body for events past since and
// reports whether it holds any.
func (s *Server) syncResponseLocked(since int64) (map[string]any, bool) {
	next := int64(len(s.stream))
	join := map[string]any{}
	invite := map[string]any{}
	timelines := map[string][]*Event{}
	if since > next {
		since = next
	}
	for _, e := range s.stream[since:] {
		r := s.rooms[e.Room]
		if r == nil {
			continue
		}
		switch r.membership[s.Bot.ID] {
		case "join":
			if e.pos >= r.joinedAt[s.Bot.ID] {
				timelines[e.Room] = append(timelines[e.Room], e)
			}
		case "invite":
			if e.Type == "m.room.member" && e.StateKey != nil && *e.StateKey == s.Bot.ID {
				var state []any
				if r.name != "" {
					state = append(state, map[string]any{"type": "m.room.name", "state_key": "", "sender": e.Sender, "content": map[string]any{"name": r.name}})
				}
				ev := map[string]any{"type": e.Type, "state_key": s.Bot.ID, "sender": e.Sender, "content": e.Content, "event_id": e.ID, "origin_server_ts": e.TS}
				invite[e.Room] = map[string]any{"invite_state": map[string]any{"events": append(state, ev)}}
			}
		}
	}
	for id, evs := range timelines {
		list := make([]map[string]any, 0, len(evs))
		for _, e := range evs {
			list = append(list, s.clientEvent(e, false))
		}
		join[id] = map[string]any{"timeline": map[string]any{"events": list, "limited": false, "prev_batch": "s" + strconv.FormatInt(evs[0].pos-1, 10)}}
	}
	return map[string]any{
		"next_batch": "s" + strconv.FormatInt(next, 10),
		"rooms":      map[string]any{"join": join, "invite": invite, "leave": map[string]any{}},
	}, len(join)+len(invite) > 0
}

// clientEvent is an event in the client-server format; withRoom adds
// room_id (the format of GET /event; /sync leaves it out).
func (s *Server) clientEvent(e *Event, withRoom bool) map[string]any {
	m := map[string]any{"event_id": e.ID, "sender": e.Sender, "type": e.Type, "content": e.Content, "origin_server_ts": e.TS}
	if e.StateKey != nil {
		m["state_key"] = *e.StateKey
	}
	if withRoom {
		m["room_id"] = e.Room
	}
	if e.TxnID != "" && e.Sender == s.Bot.ID {
		m["unsigned"] = map[string]any{"transaction_id": e.TxnID}
	}
	return m
}

func (s *Server) joinedRoomLocked(w http.ResponseWriter, roomID string) *room {
	r := s.rooms[roomID]
	if r == nil || r.membership[s.Bot.ID] != "join" {
		writeError(w, http.StatusForbidden, "M_FORBIDDEN", "You are not in room "+roomID)
		return nil
	}
	return r
}

// send is PUT /rooms/{roomId}/send/{eventType}/{txnId}: idempotent per
// access token and transaction id, as the spec requires.
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	roomID, typ, txn := r.PathValue("roomId"), r.PathValue("eventType"), r.PathValue("txnId")
	body, _ := io.ReadAll(r.Body)
	var content map[string]any
	if err := json.Unmarshal(body, &content); err != nil || content == nil {
		writeError(w, http.StatusBadRequest, "M_NOT_JSON", "Content not JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := s.Token + "\x00" + txn
	if id, ok := s.txns[key]; ok {
		writeJSON(w, http.StatusOK, map[string]any{"event_id": id})
		return
	}
	rm := s.joinedRoomLocked(w, roomID)
	if rm == nil {
		return
	}
	if typ == "m.room.message" {
		if _, ok := content["body"].(string); !ok {
			if _, edit := content["m.new_content"]; !edit {
				writeError(w, http.StatusBadRequest, "M_BAD_JSON", "m.room.message needs a body")
				return
			}
		}
	}
	if len(body) > 65536 {
		writeError(w, http.StatusRequestEntityTooLarge, "M_TOO_LARGE", "Event too large")
		return
	}
	ev := s.appendLocked(roomID, s.Bot.ID, typ, nil, json.RawMessage(body))
	ev.TxnID = txn
	s.txns[key] = ev.ID
	writeJSON(w, http.StatusOK, map[string]any{"event_id": ev.ID})
}

func (s *Server) redact(w http.ResponseWriter, r *http.Request) {
	roomID, target, txn := r.PathValue("roomId"), r.PathValue("eventId"), r.PathValue("txnId")
	s.mu.Lock()
	defer s.mu.Unlock()
	key := s.Token + "\x00redact\x00" + txn
	if id, ok := s.txns[key]; ok {
		writeJSON(w, http.StatusOK, map[string]any{"event_id": id})
		return
	}
	if s.joinedRoomLocked(w, roomID) == nil {
		return
	}
	ev := s.appendLocked(roomID, s.Bot.ID, "m.room.redaction", nil, map[string]any{"redacts": target})
	s.txns[key] = ev.ID
	writeJSON(w, http.StatusOK, map[string]any{"event_id": ev.ID})
}

func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	roomID := r.PathValue("roomId")
	if roomID == "" {
		roomID = r.PathValue("roomIdOrAlias")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := s.rooms[roomID]
	if rm == nil {
		writeError(w, http.StatusNotFound, "M_NOT_FOUND", "No known servers")
		return
	}
	switch rm.membership[s.Bot.ID] {
	case "join":
	case "invite":
		s.memberLocked(rm, s.Bot.ID, s.Bot.ID, "join", nil)
	default:
		writeError(w, http.StatusForbidden, "M_FORBIDDEN", "You are not invited to this room.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"room_id": roomID})
}

// leave is POST /rooms/{roomId}/leave: leaving a room, or declining an
// invite.
func (s *Server) leave(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := s.rooms[r.PathValue("roomId")]
	if rm == nil || (rm.membership[s.Bot.ID] != "join" && rm.membership[s.Bot.ID] != "invite") {
		writeError(w, http.StatusForbidden, "M_FORBIDDEN", "You are not in this room")
		return
	}
	s.memberLocked(rm, s.Bot.ID, s.Bot.ID, "leave", nil)
	writeJSON(w, http.StatusOK, map[string]any{})
}

func (s *Server) joinedMembers(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := s.joinedRoomLocked(w, r.PathValue("roomId"))
	if rm == nil {
		return
	}
	joined := map[string]any{}
	for u, m := range rm.membership {
		if m == "join" {
			joined[u] = map[string]any{"display_name": s.users[u].Name}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"joined": joined})
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) {
	roomID, id := r.PathValue("roomId"), r.PathValue("eventId")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.joinedRoomLocked(w, roomID) == nil {
		return
	}
	for _, e := range s.stream {
		if e.ID == id && e.Room == roomID {
			writeJSON(w, http.StatusOK, s.clientEvent(e, true))
			return
		}
	}
	writeError(w, http.StatusNotFound, "M_NOT_FOUND", "Event not found.")
}

func (s *Server) setTyping(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Typing  *bool `json:"typing"`
		Timeout int   `json:"timeout"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Typing == nil {
		writeError(w, http.StatusBadRequest, "M_BAD_JSON", "typing is required")
		return
	}
	if r.PathValue("userId") != s.Bot.ID {
		writeError(w, http.StatusForbidden, "M_FORBIDDEN", "Cannot set another user's typing state")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.joinedRoomLocked(w, r.PathValue("roomId")) == nil {
		return
	}
	s.typing[r.PathValue("roomId")] = *body.Typing
	writeJSON(w, http.StatusOK, map[string]any{})
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	u, ok := s.users[r.PathValue("userId")]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "M_NOT_FOUND", "Profile was not found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"displayname": u.Name})
}

// createRoom is POST /createRoom. The people invited accept at once (their
// clients are the test's helpers), so a DM the bot opens is ready to use.
func (s *Server) createRoom(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Invite   []string `json:"invite"`
		IsDirect bool     `json:"is_direct"`
		Name     string   `json:"name"`
		Preset   string   `json:"preset"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "M_NOT_JSON", "Content not JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := &room{id: s.nextID("!"), name: body.Name, membership: map[string]string{}, joinedAt: map[string]int64{}, direct: body.IsDirect}
	s.rooms[rm.id] = rm
	empty := ""
	s.appendLocked(rm.id, s.Bot.ID, "m.room.create", &empty, map[string]any{"creator": s.Bot.ID, "room_version": "11"})
	s.memberLocked(rm, s.Bot.ID, s.Bot.ID, "join", nil)
	for _, u := range body.Invite {
		if _, ok := s.users[u]; !ok {
			writeError(w, http.StatusNotFound, "M_NOT_FOUND", "Unknown user "+u)
			return
		}
		extra := map[string]any{}
		if body.IsDirect {
			extra["is_direct"] = true
		}
		s.memberLocked(rm, s.Bot.ID, u, "invite", extra)
		s.memberLocked(rm, u, u, "join", nil)
	}
	writeJSON(w, http.StatusOK, map[string]any{"room_id": rm.id})
}

func (s *Server) getAccountData(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("userId") != s.Bot.ID {
		writeError(w, http.StatusForbidden, "M_FORBIDDEN", "Cannot read another user's account data")
		return
	}
	s.mu.Lock()
	data, ok := s.account[r.PathValue("type")]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "M_NOT_FOUND", "Account data not found")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

func (s *Server) putAccountData(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("userId") != s.Bot.ID {
		writeError(w, http.StatusForbidden, "M_FORBIDDEN", "Cannot write another user's account data")
		return
	}
	body, _ := io.ReadAll(r.Body)
	if !json.Valid(body) {
		writeError(w, http.StatusBadRequest, "M_NOT_JSON", "Content not JSON")
		return
	}
	s.mu.Lock()
	s.account[r.PathValue("type")] = body
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{})
}

// MaxUploadBytes is the fake's m.upload.size.
const MaxUploadBytes = 10 << 20

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	if len(data) > MaxUploadBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "M_TOO_LARGE", "Upload too large")
		return
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/octet-stream"
	}
	s.mu.Lock()
	uri := s.storeMediaLocked(r.URL.Query().Get("filename"), ct, data)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"content_uri": uri})
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("serverName") != ServerName {
		writeError(w, http.StatusNotFound, "M_NOT_FOUND", "Not found")
		return
	}
	s.mu.Lock()
	m, ok := s.media[r.PathValue("mediaId")]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "M_NOT_FOUND", "Not found")
		return
	}
	w.Header().Set("Content-Type", m.contentType)
	w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(m.name))
	_, _ = w.Write(m.data)
}
