// Package slacktest is a fake Slack for tests: a Web API server and a Socket
// Mode endpoint on one local HTTP server, which the real slack-go client talks
// to. It answers in Slack's wire format ({"ok":true,...} or
// {"ok":false,"error":"..."}, 429 with Retry-After), enforces the documented
// message limits that matter to us, records every call, keeps a model of the
// messages it holds (posted, updated, streamed, deleted), and lets a test push
// Socket Mode envelopes, read the acks, and force disconnects.
//
// Point a client at it with slack.OptionAPIURL(srv.APIURL()).
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
)

// Options configures a Server. The zero value works.
type Options struct {
	TeamID    string // default T0FAKE
	BotUserID string // default U0BOT
	BotID     string // default B0BOT
	AppID     string // default A0APP
	// BotToken, when set, is the only token the Web API accepts; otherwise any
	// xoxb- or xoxp- token is accepted.
	BotToken string
	// AppToken, when set, is the only token apps.connections.open accepts;
	// otherwise any xapp- token is.
	AppToken string
	// PingInterval is how often the Socket Mode endpoint pings each
	// connection. Default 5s (slack-go reconnects after 30s without a ping).
	PingInterval time.Duration
	// SpreadEvents hands Socket Mode envelopes to the live connections in
	// turn, as Slack spreads an app's events over its connections (several
	// instances each holding one). By default each goes to the newest.
	SpreadEvents bool
	// Scopes, when set, are the scopes granted to the token, sent as the
	// X-OAuth-Scopes header of every Web API answer, as Slack does.
	Scopes []string
	// NoDataVisualization answers invalid_blocks to a message with a
	// data_visualization block, as a workspace Slack has not rolled the
	// block out to would.
	NoDataVisualization bool
}

// Call is one recorded Web API request.
type Call struct {
	Method string
	Token  string
	// Params holds the form fields, or for a JSON body its top-level fields
	// (strings as they are, anything else as JSON text).
	Params url.Values
	Status int    // HTTP status answered
	Error  string // Slack error answered, "" when ok
	// At is when the call reached the server, for latency measurements.
	At time.Time
}

// OK reports whether the call was answered with ok:true.
func (c Call) OK() bool { return c.Status == http.StatusOK && c.Error == "" }

// Fault is an injected failure for the next call of a method.
type Fault struct {
	Status     int    // HTTP status; default 200 (an ok:false answer)
	RetryAfter int    // seconds, sent as Retry-After
	Error      string // Slack error code; default "ratelimited" for 429
	// Needed is the scope a missing_scope answer names ("needed").
	Needed string
	// Always keeps answering every later call of the method with this
	// fault (a scope that stays missing), instead of only the next one.
	Always bool
	// Params, when set, limits the fault to the calls whose parameters
	// hold these values (oauth.v2.access with grant_type=refresh_token:
	// renewals refused, installs taken); the other calls are answered as
	// usual and leave the fault in place.
	Params map[string]string
}

// matches reports whether the fault applies to a call with params.
func (f *Fault) matches(params url.Values) bool {
	for k, v := range f.Params {
		if params.Get(k) != v {
			return false
		}
	}
	return true
}

// RateLimited is a 429 answer asking the client to wait the given seconds.
func RateLimited(seconds int) Fault {
	return Fault{Status: http.StatusTooManyRequests, RetryAfter: seconds, Error: "ratelimited"}
}

// Message is the fake's view of one message in a channel.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	User     string // the bot user for messages posted through the API
	Text     string
	Blocks   json.RawMessage
	Username string
	IconURL  string
	// Markdown is the streamed text of a chat.startStream message.
	Markdown string
	// Chunks are the chunks streamed to it (chat.startStream,
	// chat.appendStream, chat.stopStream), in order, markdown_text given
	// as a field included as a markdown_text chunk.
	Chunks    []Chunk
	Streaming bool // started and not stopped
	Streamed  bool // made by chat.startStream
	Edits     int
	Deleted   bool
	// Metadata is the message metadata as posted (event_type and
	// event_payload), nil when none.
	Metadata json.RawMessage
}

// Chunk is one streaming chunk as Slack documents it
// (https://docs.slack.dev/reference/methods/chat.appendStream): markdown_text
// with Text, or task_update with ID, Title, Status, Details and Output.
type Chunk struct {
	Type    string `json:"type"`
	Text    string `json:"text,omitempty"`
	ID      string `json:"id,omitempty"`
	Title   string `json:"title,omitempty"`
	Status  string `json:"status,omitempty"`
	Details string `json:"details,omitempty"`
	Output  string `json:"output,omitempty"`
}

// Reaction is a reaction the app added (reactions.add).
type Reaction struct {
	Channel, TS, Name string
}

// File is an uploaded file.
type File struct {
	ID       string
	Name     string
	Title    string
	Data     []byte
	Uploaded bool
	Channel  string // set once shared by files.completeUploadExternal
	ThreadTS string
	// InitialComment is the message shared with the file.
	InitialComment string
}

// Server is the fake Slack.
type Server struct {
	opts Options
	http *httptest.Server

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every state change
	calls    []Call
	faults   map[string][]Fault
	messages []*Message
	files    map[string]*File
	fileSeq  int
	tsSeq    int64

	socket socketState
	oauth  oauthState
	wg     sync.WaitGroup

	users map[string]User // by user id, for users.info

	reactions []Reaction
	// shared are files people shared (ShareFile), served at their
	// url_private_download to a request with a valid token.
	shared    map[string]*File
	downloads []Download
	homes     map[string]json.RawMessage // user id → published Home tab view
	sessions  map[string]string          // channel/thread → agent session status
	views     viewState                  // modals opened with views.open (views.go)

	functions   map[string]*function // custom step runs by execution id
	completions []StepCompletion     // functions.completeSuccess/Error taken
}

// User is a workspace member as users.info shows them (SetUser).
type User struct {
	ID          string
	Name        string // the handle
	RealName    string
	DisplayName string // profile.display_name; "" when not set, as Slack allows
	TZ          string // an IANA name, e.g. America/New_York
	TZOffset    int    // seconds east of UTC
}

// SetUser makes users.info answer u for u.ID.
func (s *Server) SetUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == nil {
		s.users = map[string]User{}
	}
	s.users[u.ID] = u
}

// NewServer starts a fake Slack on a local port. Close it when done.
func NewServer(opts Options) *Server {
	if opts.TeamID == "" {
		opts.TeamID = "T0FAKE"
	}
	if opts.BotUserID == "" {
		opts.BotUserID = "U0BOT"
	}
	if opts.BotID == "" {
		opts.BotID = "B0BOT"
	}
	if opts.AppID == "" {
		opts.AppID = "A0APP"
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = 5 * time.Second
	}
	s := &Server{
		opts:    opts,
		changed: make(chan struct{}),
		faults:  map[string][]Fault{},
		files:   map[string]*File{},
	}
	s.socket.init()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{method}", s.serveAPI)
	mux.HandleFunc("GET /api/{method}", s.serveAPI)
	mux.HandleFunc("POST /upload/{id}", s.serveUpload)
	mux.HandleFunc("GET /socket-mode", s.serveSocket)
	mux.HandleFunc("GET /files-pri/{id}/{name}", s.serveFile)
	s.http = httptest.NewServer(mux)
	return s
}

// Download is one request for a shared file's bytes.
type Download struct {
	FileID string
	Token  string // the bearer token it carried ("" for none)
	Status int
}

// ShareFile keeps a file as if a person had shared it in Slack and returns
// the file object a message event carries in its files array (id, name,
// mimetype, size, url_private, url_private_download). The bytes are served
// only with the bot token in an Authorization header, as Slack serves
// url_private_download.
func (s *Server) ShareFile(name, mimeType string, data []byte) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fileSeq++
	id := fmt.Sprintf("F%07d", s.fileSeq)
	if s.shared == nil {
		s.shared = map[string]*File{}
	}
	s.shared[id] = &File{ID: id, Name: name, Data: data, Uploaded: true}
	u := s.http.URL + "/files-pri/" + s.opts.TeamID + "-" + id + "/" + url.PathEscape(name)
	return map[string]any{
		"id": id, "name": name, "title": name, "mimetype": mimeType, "size": len(data),
		"url_private": u, "url_private_download": u + "?download=1",
	}
}

// Downloads lists the requests for shared files, oldest first.
func (s *Server) Downloads() []Download {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.downloads)
}

// serveFile answers a url_private_download: the bytes for a request with a
// valid bot token, a 403 otherwise (Slack answers a sign-in page).
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	d := Download{Token: token, Status: http.StatusOK}
	_, id, _ := strings.Cut(r.PathValue("id"), "-")
	d.FileID = id
	f := s.shared[id]
	switch {
	case f == nil:
		d.Status = http.StatusNotFound
	case s.checkTokenLocked(request{method: "files.download", token: token}) != "":
		d.Status = http.StatusForbidden
	}
	s.downloads = append(s.downloads, d)
	s.notifyLocked()
	s.mu.Unlock()
	if d.Status != http.StatusOK {
		http.Error(w, http.StatusText(d.Status), d.Status)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(f.Data)
}

// Close shuts the server and every Socket Mode connection down.
func (s *Server) Close() {
	s.closeSockets()
	s.http.CloseClientConnections()
	s.http.Close()
	s.wg.Wait()
}

// URL is the server's base URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.http.URL }

// APIURL is the Web API base for slack.OptionAPIURL, ending in "/api/".
func (s *Server) APIURL() string { return s.http.URL + "/api/" }

// TeamID, BotUserID and BotID are what auth.test answers.
func (s *Server) TeamID() string    { return s.opts.TeamID }
func (s *Server) BotUserID() string { return s.opts.BotUserID }
func (s *Server) BotID() string     { return s.opts.BotID }

// Fail queues faults for the next calls of method, one per call.
func (s *Server) Fail(method string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], faults...)
}

// Calls returns the recorded calls of the given methods (all calls when none
// is given), oldest first.
func (s *Server) Calls(methods ...string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if len(methods) == 0 || slices.Contains(methods, c.Method) {
			c.Params = maps.Clone(c.Params)
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits until at least n calls of method were recorded and returns
// them, or fails with an error saying what it saw after timeout.
func (s *Server) WaitCalls(method string, n int, timeout time.Duration) ([]Call, error) {
	var got []Call
	ok := s.waitFor(timeout, func() bool {
		got = s.callsLocked(method)
		return len(got) >= n
	})
	if !ok {
		return got, fmt.Errorf("waited %s for %d %s calls, got %d", timeout, n, method, len(got))
	}
	return got, nil
}

func (s *Server) callsLocked(method string) []Call {
	var out []Call
	for _, c := range s.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns the messages in channel (every channel when ""), in the
// order they were posted, including deleted ones (Deleted set).
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if channel == "" || m.Channel == channel {
			out = append(out, *m)
		}
	}
	return out
}

// Message returns one message by channel and ts.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.findLocked(channel, ts); m != nil {
		return *m, true
	}
	return Message{}, false
}

// Files returns the uploaded files, ordered by id.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]File, 0, len(s.files))
	for _, f := range s.files {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// waitFor polls cond under the lock, waking on every state change, until it
// holds or timeout passes.
func (s *Server) waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// notifyLocked wakes waiters; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// nextTSLocked is a new message ts: the current time in microseconds, as
// Slack's are, kept unique and increasing.
func (s *Server) nextTSLocked() string {
	t := time.Now().UnixMicro()
	if t <= s.tsSeq {
		t = s.tsSeq + 1
	}
	s.tsSeq = t
	return fmt.Sprintf("%d.%06d", t/1000000, t%1000000)
}

func (s *Server) findLocked(channel, ts string) *Message {
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

// request is one decoded Web API request.
type request struct {
	method string
	token  string
	params url.Values
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	req, err := decodeRequest(r)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.opts.Scopes) > 0 {
		w.Header().Set("X-OAuth-Scopes", strings.Join(s.opts.Scopes, ","))
	}
	call := Call{Method: req.method, Token: req.token, Params: req.params, Status: http.StatusOK, At: time.Now()}
	defer func() {
		s.calls = append(s.calls, call)
		s.notifyLocked()
	}()

	if q := s.faults[req.method]; len(q) > 0 && q[0].matches(req.params) {
		f := q[0]
		if !f.Always {
			s.faults[req.method] = q[1:]
		}
		if f.Status == 0 {
			f.Status = http.StatusOK
		}
		if f.Error == "" {
			f.Error = "ratelimited"
		}
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
		call.Status, call.Error = f.Status, f.Error
		answer := map[string]any{"ok": false, "error": f.Error}
		if f.Needed != "" {
			answer["needed"] = f.Needed
		}
		writeJSON(w, f.Status, answer)
		return
	}
	if req.method == "oauth.v2.access" { // authenticated by the client id and secret
		resp, e := s.oauthV2Access(req)
		if e != "" {
			call.Error = e
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": e})
			return
		}
		resp["ok"] = true
		writeJSON(w, http.StatusOK, resp)
		return
	}
	if e := s.checkTokenLocked(req); e != "" {
		call.Error = e
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": e})
		return
	}
	h, ok := s.handlers()[req.method]
	if !ok {
		call.Error = "unknown_method"
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "unknown_method"})
		return
	}
	resp, e := h(req)
	if e != "" {
		call.Error = e
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": e})
		return
	}
	if resp == nil {
		resp = map[string]any{}
	}
	resp["ok"] = true
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) checkTokenLocked(req request) string {
	if req.token == "" {
		return "not_authed"
	}
	if req.method == "apps.connections.open" {
		if s.opts.AppToken != "" && req.token != s.opts.AppToken {
			return "invalid_auth"
		}
		if !strings.HasPrefix(req.token, "xapp-") {
			return "not_allowed_token_type"
		}
		return ""
	}
	if e, known := s.checkOAuthTokenLocked(req.token); known {
		return e
	}
	if s.opts.BotToken != "" && req.token != s.opts.BotToken {
		return "invalid_auth"
	}
	if !strings.HasPrefix(req.token, "xoxb-") && !strings.HasPrefix(req.token, "xoxp-") {
		return "not_allowed_token_type"
	}
	return ""
}

type handler func(request) (map[string]any, string)

func (s *Server) handlers() map[string]handler {
	return map[string]handler{
		"auth.test":                             s.authTest,
		"apps.connections.open":                 s.appsConnectionsOpen,
		"chat.postMessage":                      s.chatPostMessage,
		"chat.update":                           s.chatUpdate,
		"chat.delete":                           s.chatDelete,
		"chat.postEphemeral":                    s.chatPostEphemeral,
		"chat.startStream":                      s.chatStartStream,
		"chat.appendStream":                     s.chatAppendStream,
		"chat.stopStream":                       s.chatStopStream,
		"assistant.threads.setStatus":           s.assistantThread,
		"assistant.threads.setSuggestedPrompts": s.assistantPrompts,
		"assistant.threads.setTitle":            s.assistantThread,
		"files.getUploadURLExternal":            s.filesGetUploadURL,
		"files.completeUploadExternal":          s.filesComplete,
		"conversations.open":                    s.conversationsOpen,
		"users.info":                            s.usersInfo,
		"conversations.replies":                 s.conversationsReplies,
		"conversations.history":                 s.conversationsHistory,
		"agents.sessions.setStatus":             s.agentsSessionsSetStatus,
		"reactions.add":                         s.reactionsAdd,
		"reactions.remove":                      s.reactionsRemove,
		"views.publish":                         s.viewsPublish,
		"views.open":                            s.viewsOpen,
		"functions.completeSuccess":             s.functionsComplete(true),
		"functions.completeError":               s.functionsComplete(false),
	}
}

// conversationsReplies answers a thread: the parent and its replies, oldest
// first, from "oldest" on, at most "limit" (default 1000), with metadata
// only when include_all_metadata is set, as Slack documents.
func (s *Server) conversationsReplies(req request) (map[string]any, string) {
	p := req.params
	ch, ts := p.Get("channel"), p.Get("ts")
	if ch == "" {
		return nil, "channel_not_found"
	}
	if ts == "" {
		return nil, "thread_not_found"
	}
	var out []*Message
	for _, m := range s.messages {
		if m.Channel == ch && !m.Deleted && (m.TS == ts || m.ThreadTS == ts) {
			out = append(out, m)
		}
	}
	return s.messagePage(p, out, false), ""
}

// conversationsHistory answers a channel's messages (not thread replies),
// newest first, as Slack documents.
func (s *Server) conversationsHistory(req request) (map[string]any, string) {
	p := req.params
	ch := p.Get("channel")
	if ch == "" {
		return nil, "channel_not_found"
	}
	var out []*Message
	for _, m := range s.messages {
		if m.Channel == ch && !m.Deleted && (m.ThreadTS == "" || m.ThreadTS == m.TS) {
			out = append(out, m)
		}
	}
	return s.messagePage(p, out, true), ""
}

func (s *Server) messagePage(p url.Values, msgs []*Message, newestFirst bool) map[string]any {
	oldest, _ := strconv.ParseFloat(p.Get("oldest"), 64)
	limit, _ := strconv.Atoi(p.Get("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	withMeta := p.Get("include_all_metadata") == "1" || p.Get("include_all_metadata") == "true"
	if newestFirst {
		slices.Reverse(msgs)
	}
	list := []map[string]any{}
	for _, m := range msgs {
		if ts, _ := strconv.ParseFloat(m.TS, 64); ts < oldest {
			continue
		}
		if len(list) == limit {
			break
		}
		j := messageJSON(m, s.opts.BotID)
		if withMeta && m.Metadata != nil {
			j["metadata"] = m.Metadata
		}
		list = append(list, j)
	}
	return map[string]any{"messages": list, "has_more": false}
}

func (s *Server) authTest(req request) (map[string]any, string) {
	if t := s.teamLocked(req.token); t != nil {
		resp := map[string]any{
			"url": "https://fake.slack.test/", "team": t.Name, "user": "switchboard",
			"team_id": installKey(t), "user_id": t.BotUserID, "bot_id": t.BotID,
		}
		if t.EnterpriseID != "" {
			resp["enterprise_id"] = t.EnterpriseID
			resp["is_enterprise_install"] = t.OrgWide
		}
		return resp, ""
	}
	return map[string]any{
		"url":     "https://fake.slack.test/",
		"team":    "Fake Team",
		"user":    "switchboard",
		"team_id": s.opts.TeamID,
		"user_id": s.opts.BotUserID,
		"bot_id":  s.opts.BotID,
	}, ""
}

func (s *Server) appsConnectionsOpen(request) (map[string]any, string) {
	u := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/socket-mode?ticket=" + strconv.Itoa(s.socket.nextTicket())
	return map[string]any{"url": u}, ""
}

func (s *Server) chatPostMessage(req request) (map[string]any, string) {
	p := req.params
	ch := p.Get("channel")
	if ch == "" {
		return nil, "channel_not_found"
	}
	if e := s.checkMessage(p); e != "" {
		return nil, e
	}
	// Any thread_ts is accepted: tests reply under messages they invented.
	thread := p.Get("thread_ts")
	m := &Message{
		Channel:  ch,
		TS:       s.nextTSLocked(),
		ThreadTS: thread,
		User:     s.botUserLocked(req.token),
		Text:     p.Get("text"),
		Blocks:   rawOrNil(p.Get("blocks")),
		Username: p.Get("username"),
		IconURL:  p.Get("icon_url"),
	}
	if md := p.Get("metadata"); md != "" {
		var meta struct {
			EventType    string         `json:"event_type"`
			EventPayload map[string]any `json:"event_payload"`
		}
		if json.Unmarshal([]byte(md), &meta) != nil || meta.EventType == "" || meta.EventPayload == nil {
			return nil, "invalid_metadata_format"
		}
		m.Metadata = json.RawMessage(md)
	}
	s.messages = append(s.messages, m)
	return map[string]any{"channel": ch, "ts": m.TS, "message": messageJSON(m, s.opts.BotID)}, ""
}

func (s *Server) chatUpdate(req request) (map[string]any, string) {
	p := req.params
	m := s.findLocked(p.Get("channel"), p.Get("ts"))
	if m == nil || m.Deleted {
		return nil, "message_not_found"
	}
	if p.Get("text") == "" && p.Get("blocks") == "" && p.Get("attachments") == "" {
		return nil, "no_text"
	}
	if e := s.checkMessage(p); e != "" {
		return nil, e
	}
	if p.Has("text") {
		m.Text = p.Get("text")
	}
	if p.Has("blocks") {
		m.Blocks = rawOrNil(p.Get("blocks"))
	}
	if m.Streamed && !m.Streaming {
		// An update replaces what a stopped stream showed.
		m.Streamed, m.Markdown = false, ""
	}
	m.Edits++
	return map[string]any{"channel": m.Channel, "ts": m.TS, "text": m.Text, "message": messageJSON(m, s.opts.BotID)}, ""
}

func (s *Server) chatDelete(req request) (map[string]any, string) {
	p := req.params
	m := s.findLocked(p.Get("channel"), p.Get("ts"))
	if m == nil || m.Deleted {
		return nil, "message_not_found"
	}
	m.Deleted = true
	return map[string]any{"channel": m.Channel, "ts": m.TS}, ""
}

func (s *Server) chatPostEphemeral(req request) (map[string]any, string) {
	p := req.params
	if p.Get("channel") == "" {
		return nil, "channel_not_found"
	}
	if p.Get("user") == "" {
		return nil, "user_not_in_channel"
	}
	if e := s.checkMessage(p); e != "" {
		return nil, e
	}
	return map[string]any{"message_ts": s.nextTSLocked()}, ""
}

func (s *Server) chatStartStream(req request) (map[string]any, string) {
	p := req.params
	ch := p.Get("channel")
	if ch == "" {
		return nil, "channel_not_found"
	}
	if p.Get("thread_ts") == "" {
		return nil, "invalid_arguments"
	}
	// Outside a DM the stream needs its recipient.
	if !strings.HasPrefix(ch, "D") && (p.Get("recipient_user_id") == "" || p.Get("recipient_team_id") == "") {
		return nil, "invalid_arguments"
	}
	if utf8.RuneCountInString(p.Get("markdown_text")) > slacklimit.StreamMarkdown {
		return nil, "msg_too_long"
	}
	chunks, e := streamChunks(p)
	if e != "" {
		return nil, e
	}
	m := &Message{
		Channel:   ch,
		TS:        s.nextTSLocked(),
		ThreadTS:  p.Get("thread_ts"),
		User:      s.botUserLocked(req.token),
		Markdown:  p.Get("markdown_text"),
		Username:  p.Get("username"),
		IconURL:   p.Get("icon_url"),
		Streaming: true,
		Streamed:  true,
		Chunks:    chunks,
	}
	m.Markdown = markdownOf(chunks)
	s.messages = append(s.messages, m)
	return map[string]any{"channel": ch, "ts": m.TS}, ""
}

func (s *Server) chatAppendStream(req request) (map[string]any, string) {
	p := req.params
	m := s.findLocked(p.Get("channel"), p.Get("ts"))
	if m == nil {
		return nil, "message_not_found"
	}
	if !m.Streaming {
		return nil, "message_not_in_streaming_state"
	}
	if p.Get("markdown_text") == "" && p.Get("chunks") == "" {
		return nil, "invalid_arguments"
	}
	if utf8.RuneCountInString(p.Get("markdown_text")) > slacklimit.StreamMarkdown {
		return nil, "msg_too_long"
	}
	chunks, e := streamChunks(p)
	if e != "" {
		return nil, e
	}
	m.Chunks = append(m.Chunks, chunks...)
	m.Markdown += markdownOf(chunks)
	return map[string]any{"channel": m.Channel, "ts": m.TS}, ""
}

func (s *Server) chatStopStream(req request) (map[string]any, string) {
	p := req.params
	m := s.findLocked(p.Get("channel"), p.Get("ts"))
	if m == nil {
		return nil, "message_not_found"
	}
	if !m.Streaming {
		return nil, "message_not_in_streaming_state"
	}
	if utf8.RuneCountInString(p.Get("markdown_text")) > slacklimit.StreamMarkdown {
		return nil, "msg_too_long"
	}
	if b := p.Get("blocks"); b != "" {
		if e := checkBlocks(b); e != "" {
			return nil, e
		}
		m.Blocks = json.RawMessage(b)
	}
	chunks, e := streamChunks(p)
	if e != "" {
		return nil, e
	}
	m.Chunks = append(m.Chunks, chunks...)
	m.Markdown += markdownOf(chunks)
	m.Streaming = false
	return map[string]any{"channel": m.Channel, "ts": m.TS, "message": messageJSON(m, s.opts.BotID)}, ""
}

func (s *Server) assistantThread(req request) (map[string]any, string) {
	if req.params.Get("channel_id") == "" || req.params.Get("thread_ts") == "" {
		return nil, "invalid_arguments"
	}
	return nil, ""
}

// assistantPrompts takes prompts for a thread, or without thread_ts for
// the top of an agent_view conversation.
func (s *Server) assistantPrompts(req request) (map[string]any, string) {
	if req.params.Get("channel_id") == "" {
		return nil, "invalid_arguments"
	}
	var prompts []map[string]any
	if err := json.Unmarshal([]byte(req.params.Get("prompts")), &prompts); err != nil || len(prompts) == 0 || len(prompts) > 4 {
		return nil, "invalid_arguments"
	}
	return nil, ""
}

// streamChunks reads a streaming call's markdown_text and chunks, checking
// each chunk against Slack's documented shapes and limits.
func streamChunks(p url.Values) ([]Chunk, string) {
	var out []Chunk
	if t := p.Get("markdown_text"); t != "" {
		out = append(out, Chunk{Type: "markdown_text", Text: t})
	}
	raw := p.Get("chunks")
	if raw == "" {
		return out, ""
	}
	var chunks []Chunk
	if err := json.Unmarshal([]byte(raw), &chunks); err != nil || len(chunks) == 0 {
		return nil, "invalid_chunks"
	}
	for _, c := range chunks {
		switch c.Type {
		case "markdown_text":
			if c.Text == "" || utf8.RuneCountInString(c.Text) > slacklimit.StreamMarkdown {
				return nil, "invalid_chunks"
			}
		case "task_update":
			switch c.Status {
			case "pending", "in_progress", "complete", "error":
			default:
				return nil, "invalid_chunks"
			}
			if c.ID == "" || c.Title == "" || utf8.RuneCountInString(c.Details) > slacklimit.TaskText || utf8.RuneCountInString(c.Output) > slacklimit.TaskText {
				return nil, "invalid_chunks"
			}
		case "plan_update":
			if c.Title == "" {
				return nil, "invalid_chunks"
			}
		default:
			return nil, "invalid_chunks"
		}
	}
	return append(out, chunks...), ""
}

// markdownOf is the text of the markdown chunks.
func markdownOf(chunks []Chunk) string {
	var b strings.Builder
	for _, c := range chunks {
		if c.Type == "markdown_text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// StopSession is a person pressing the stop button of the agent session in
// channel/thread: Slack stops the app's streaming messages there. It
// returns their ts, for the agent_session_stopped event's
// streaming_message_ts.
func (s *Server) StopSession(channel, thread string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var stopped []string
	for _, m := range s.messages {
		if m.Channel == channel && m.ThreadTS == thread && m.Streaming {
			m.Streaming = false
			stopped = append(stopped, m.TS)
		}
	}
	s.notifyLocked()
	return stopped
}

// SessionStatus is the agent session status last set in channel/thread
// ("" when never set).
func (s *Server) SessionStatus(channel, thread string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[channel+"/"+thread]
}

// Reactions are the reactions the app added, in order.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions)
}

// Home is the Home tab view last published for user, nil when none.
func (s *Server) Home(user string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.homes[user]
}

func (s *Server) agentsSessionsSetStatus(req request) (map[string]any, string) {
	p := req.params
	st := p.Get("status")
	switch st {
	case "active", "processing", "suspended", "closed":
	default:
		return nil, "invalid_arguments"
	}
	if p.Get("channel_id") == "" {
		return nil, "invalid_arguments"
	}
	if s.sessions == nil {
		s.sessions = map[string]string{}
	}
	s.sessions[p.Get("channel_id")+"/"+p.Get("thread_ts")] = st
	return map[string]any{"status": st, "agent_status": st}, ""
}

func (s *Server) reactionsAdd(req request) (map[string]any, string) {
	p := req.params
	r := Reaction{Channel: p.Get("channel"), TS: p.Get("timestamp"), Name: p.Get("name")}
	if r.Channel == "" || r.TS == "" || r.Name == "" || strings.Contains(r.Name, ":") {
		return nil, "invalid_arguments"
	}
	if slices.Contains(s.reactions, r) {
		return nil, "already_reacted"
	}
	s.reactions = append(s.reactions, r)
	return nil, ""
}

// reactionsRemove takes the app's reaction off a message; no_reaction when
// it has none, as Slack answers.
func (s *Server) reactionsRemove(req request) (map[string]any, string) {
	p := req.params
	r := Reaction{Channel: p.Get("channel"), TS: p.Get("timestamp"), Name: p.Get("name")}
	if r.Channel == "" || r.TS == "" || r.Name == "" {
		return nil, "invalid_arguments"
	}
	i := slices.Index(s.reactions, r)
	if i < 0 {
		return nil, "no_reaction"
	}
	s.reactions = slices.Delete(s.reactions, i, i+1)
	return nil, ""
}

// viewsPublish takes a Home tab view (type home, at most 100 blocks).
func (s *Server) viewsPublish(req request) (map[string]any, string) {
	user := req.params.Get("user_id")
	var v struct {
		Type   string            `json:"type"`
		Blocks []json.RawMessage `json:"blocks"`
	}
	if user == "" || json.Unmarshal([]byte(req.params.Get("view")), &v) != nil {
		return nil, "invalid_arguments"
	}
	if v.Type != "home" || len(v.Blocks) == 0 || len(v.Blocks) > 100 {
		return nil, "invalid_arguments"
	}
	if s.homes == nil {
		s.homes = map[string]json.RawMessage{}
	}
	s.homes[user] = json.RawMessage(req.params.Get("view"))
	return map[string]any{"view": map[string]any{"id": "V" + user, "type": "home"}}, ""
}

func (s *Server) filesGetUploadURL(req request) (map[string]any, string) {
	name := req.params.Get("filename")
	n, err := strconv.Atoi(req.params.Get("length"))
	if name == "" || err != nil || n <= 0 {
		return nil, "invalid_arguments"
	}
	s.fileSeq++
	id := fmt.Sprintf("F%07d", s.fileSeq)
	s.files[id] = &File{ID: id, Name: name}
	return map[string]any{"upload_url": s.http.URL + "/upload/" + id, "file_id": id}, ""
}

func (s *Server) filesComplete(req request) (map[string]any, string) {
	var summaries []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(req.params.Get("files")), &summaries); err != nil || len(summaries) == 0 {
		return nil, "invalid_arguments"
	}
	var out []map[string]any
	for _, sum := range summaries {
		f := s.files[sum.ID]
		if f == nil || !f.Uploaded {
			return nil, "file_not_found"
		}
	}
	for _, sum := range summaries {
		f := s.files[sum.ID]
		f.Title = sum.Title
		f.Channel = req.params.Get("channel_id")
		f.ThreadTS = req.params.Get("thread_ts")
		f.InitialComment = req.params.Get("initial_comment")
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	return map[string]any{"files": out}, ""
}

func (s *Server) conversationsOpen(req request) (map[string]any, string) {
	users := req.params.Get("users")
	if users == "" || strings.Contains(users, ",") {
		return nil, "invalid_arguments"
	}
	return map[string]any{"channel": map[string]any{"id": "D" + strings.TrimPrefix(users, "U")}}, ""
}

func (s *Server) usersInfo(req request) (map[string]any, string) {
	id := req.params.Get("user")
	if id == "" {
		return nil, "user_not_found"
	}
	u, ok := s.users[id] // serveAPI holds s.mu
	if !ok {
		u = User{ID: id, Name: strings.ToLower(id), RealName: "User " + id}
	}
	// The shape of https://api.slack.com/methods/users.info: the names and
	// the time zone at the top, the display name in the profile.
	return map[string]any{"user": map[string]any{
		"id": u.ID, "team_id": s.opts.TeamID, "name": u.Name, "real_name": u.RealName,
		"tz": u.TZ, "tz_label": u.TZ, "tz_offset": u.TZOffset,
		"profile": map[string]any{"real_name": u.RealName, "display_name": u.DisplayName, "real_name_normalized": u.RealName, "display_name_normalized": u.DisplayName},
	}}, ""
}

// serveUpload takes the file body posted to an upload URL, as Slack's upload
// endpoint does, and answers "OK - <size>".
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	data, err := readUpload(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[id]
	if f == nil {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	f.Data = data
	f.Uploaded = true
	s.notifyLocked()
	fmt.Fprintf(w, "OK - %d", len(data))
}

func readUpload(r *http.Request) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return io.ReadAll(r.Body)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, fmt.Errorf("reading multipart upload: %w", err)
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, fmt.Errorf("no file part in upload: %w", err)
		}
		if part.FormName() == "file" {
			return io.ReadAll(part)
		}
	}
}

func decodeRequest(r *http.Request) (request, error) {
	req := request{method: r.PathValue("method"), params: url.Values{}}
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
		req.token = strings.TrimPrefix(auth, "Bearer ")
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/json":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return req, err
		}
		if len(strings.TrimSpace(string(body))) > 0 && string(body) != "null" {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(body, &fields); err != nil {
				return req, err
			}
			for k, v := range fields {
				var str string
				if json.Unmarshal(v, &str) == nil {
					req.params.Set(k, str)
				} else {
					req.params.Set(k, string(v))
				}
			}
		}
	default:
		if err := r.ParseForm(); err != nil {
			return req, err
		}
		for k, v := range r.Form {
			req.params[k] = slices.Clone(v)
		}
	}
	if t := req.params.Get("token"); t != "" && req.token == "" {
		req.token = t
	}
	req.params.Del("token")
	return req, nil
}

// checkContent applies chat.postMessage's content rules.
func checkContent(p url.Values) string {
	if p.Get("text") == "" && p.Get("blocks") == "" && p.Get("attachments") == "" {
		return "no_text"
	}
	if utf8.RuneCountInString(p.Get("text")) > slacklimit.MessageText {
		return "msg_too_long"
	}
	if b := p.Get("blocks"); b != "" {
		return checkBlocks(b)
	}
	return ""
}

// checkMessage is checkContent plus the blocks this workspace refuses.
func (s *Server) checkMessage(p url.Values) string {
	if e := checkContent(p); e != "" {
		return e
	}
	if b := p.Get("blocks"); b != "" {
		return checkDataVisualizations(b, s.opts.NoDataVisualization)
	}
	return ""
}

type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type blockJSON struct {
	Type     string            `json:"type"`
	RawText  json.RawMessage   `json:"text"` // an object, or a markdown block's string
	Elements []json.RawMessage `json:"elements"`
	// Text is a text object's, TextString a markdown block's.
	Text       *textObject `json:"-"`
	TextString string      `json:"-"`
}

type elementJSON struct {
	Type     string      `json:"type"`
	Text     *textObject `json:"text"`
	ActionID string      `json:"action_id"`
	Value    string      `json:"value"`
}

// checkBlocks enforces the Block Kit limits documented for the blocks we use.
func checkBlocks(raw string) string {
	var blocks []blockJSON
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return "invalid_blocks_format"
	}
	if len(blocks) > slacklimit.Blocks {
		return "invalid_blocks"
	}
	markdown := 0
	for i := range blocks {
		b := &blocks[i]
		if len(b.RawText) > 0 && b.RawText[0] == '"' {
			_ = json.Unmarshal(b.RawText, &b.TextString)
			markdown += utf8.RuneCountInString(b.TextString)
		} else if len(b.RawText) > 0 && string(b.RawText) != "null" {
			b.Text = &textObject{}
			if json.Unmarshal(b.RawText, b.Text) != nil {
				return "invalid_blocks"
			}
		}
	}
	// The markdown blocks of one message share one 12,000-character limit.
	if markdown > slacklimit.MarkdownBlock {
		return "invalid_blocks"
	}
	for _, b := range blocks {
		switch b.Type {
		case "section":
			if b.Text != nil && utf8.RuneCountInString(b.Text.Text) > slacklimit.SectionText {
				return "invalid_blocks"
			}
		case "actions":
			if len(b.Elements) == 0 || len(b.Elements) > slacklimit.ActionsElements {
				return "invalid_blocks"
			}
			for _, raw := range b.Elements {
				var e elementJSON
				if json.Unmarshal(raw, &e) != nil {
					return "invalid_blocks"
				}
				if e.Type == "button" {
					if e.Text == nil || e.Text.Text == "" || utf8.RuneCountInString(e.Text.Text) > slacklimit.ButtonText ||
						utf8.RuneCountInString(e.ActionID) > slacklimit.ActionID || utf8.RuneCountInString(e.Value) > slacklimit.ButtonValue {
						return "invalid_blocks"
					}
				}
			}
		case "context":
			if len(b.Elements) == 0 || len(b.Elements) > slacklimit.ContextElements {
				return "invalid_blocks"
			}
		case "context_actions":
			if len(b.Elements) == 0 || len(b.Elements) > slacklimit.ContextActionsElements {
				return "invalid_blocks"
			}
			for _, raw := range b.Elements {
				var e struct {
					Type     string `json:"type"`
					ActionID string `json:"action_id"`
					Positive *struct {
						Text  *textObject `json:"text"`
						Value string      `json:"value"`
					} `json:"positive_button"`
					Negative *struct {
						Text  *textObject `json:"text"`
						Value string      `json:"value"`
					} `json:"negative_button"`
				}
				if json.Unmarshal(raw, &e) != nil || utf8.RuneCountInString(e.ActionID) > slacklimit.ActionID {
					return "invalid_blocks"
				}
				if e.Type == "feedback_buttons" && (e.Positive == nil || e.Negative == nil || e.Positive.Text == nil || e.Negative.Text == nil ||
					e.Positive.Value == "" || e.Negative.Value == "") {
					return "invalid_blocks"
				}
			}
		case "markdown":
			if b.TextString == "" || utf8.RuneCountInString(b.TextString) > slacklimit.MarkdownBlock {
				return "invalid_blocks"
			}
		}
	}
	return ""
}

func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func messageJSON(m *Message, botID string) map[string]any {
	out := map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": m.User, "bot_id": botID}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// upgrader accepts Socket Mode connections; the origin slack-go sends is
// https://api.slack.com, which is not this host.
var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
