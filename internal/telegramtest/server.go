// Package telegramtest is a fake Telegram Bot API for tests: a local HTTP
// server that the real client (github.com/go-telegram/bot) and the
// adapter's own long poll talk to, held to the documented API
// (https://core.telegram.org/bots/api): getMe, getUpdates with offset and
// timeout (409 to a second poller or while a webhook is set),
// sendMessage, editMessageText, deleteMessage, sendChatAction,
// answerCallbackQuery, sendDocument and sendPhoto (multipart), getFile and
// the file download URL, getChat, setWebhook and deleteWebhook, and 429
// answers with parameters.retry_after. HTML parse mode is parsed as
// Telegram parses it, so a malformed message is refused as Telegram
// refuses it ("can't parse entities"). Tests inject updates (a person's
// message, a reply, a button click) and read the chats.
package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Defaults the fake answers with.
const (
	DefaultToken    = "123456789:TEST-secret-token_abcdefgh"
	BotID           = int64(123456789)
	BotUsername     = "switchboard_test_bot"
	MaxMessageChars = 4096
	MaxCaptionChars = 1024
	MaxCallbackData = 64
)

// User is a Telegram user.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// Chat is a Telegram chat: "private" (its id is the user's), "group",
// "supergroup" (ids below zero).
type Chat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`
	Title    string `json:"title,omitempty"`
	Username string `json:"username,omitempty"`
	First    string `json:"first_name,omitempty"`
	IsForum  bool   `json:"is_forum,omitempty"`
}

// Button is one inline keyboard button.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
	Style        string `json:"style,omitempty"`
}

// Keyboard is an inline keyboard.
type Keyboard struct {
	InlineKeyboard [][]Button `json:"inline_keyboard"`
}

// File is a file the fake holds.
type File struct {
	ID       string
	Name     string
	MimeType string
	Data     []byte
}

// Message is a message in a chat, as the fake keeps it.
type Message struct {
	ID        int
	Chat      Chat
	From      User
	Date      time.Time
	Text      string // as shown (after the parse mode)
	Raw       string // as sent
	ParseMode string
	Entities  []Entity
	Caption   string
	ThreadID  int // message_thread_id
	IsTopic   bool
	ReplyTo   int // the message it replies to
	Keyboard  *Keyboard
	Document  *File
	Photo     *File
	Edits     int
	EditTimes []time.Time
	Deleted   bool
	SentAt    time.Time
}

// Call is one Bot API request the fake took.
type Call struct {
	Method string
	Params url.Values
	Status int
	At     time.Time
}

// Fault is an answer the fake gives instead of running a method.
type Fault struct {
	Code        int
	Description string
	RetryAfter  int
}

// Server is the fake Bot API.
type Server struct {
	URL   string
	Token string
	Bot   User

	srv *httptest.Server

	mu       sync.Mutex
	changed  chan struct{}
	calls    []Call
	chats    map[int64]*chatState
	files    map[string]*File
	nextFile int
	updates  []json.RawMessage // pending, in update_id order
	ids      []int64
	nextUpd  int64
	polling  int // generation of the running getUpdates
	webhook  struct {
		url, secret string
	}
	faults   map[string][]Fault
	answered map[string]answer
}

type chatState struct {
	chat   Chat
	nextID int
	msgs   []*Message
}

type answer struct {
	Text      string
	ShowAlert bool
}

// NewServer starts a fake closed when tb ends.
func NewServer(tb testing.TB) *Server {
	s := &Server{
		Token:    DefaultToken,
		Bot:      User{ID: BotID, IsBot: true, FirstName: "Switchboard", Username: BotUsername},
		changed:  make(chan struct{}),
		chats:    map[int64]*chatState{},
		files:    map[string]*File{},
		nextUpd:  100000,
		faults:   map[string][]Fault{},
		answered: map[string]answer{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	tb.Cleanup(s.srv.Close)
	return s
}

// notifyLocked wakes Wait and the long poll.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Fail makes the next calls of method answer f, in order.
func (s *Server) Fail(method string, f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f...)
}

// TooManyRequests is the 429 Telegram answers, with its retry_after.
func TooManyRequests(retryAfter int) Fault {
	return Fault{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter}
}

type apiError struct {
	code int
	desc string
	ra   int
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: 400, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if rest, ok := strings.CutPrefix(path, "/file/bot"); ok {
		s.serveFile(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeErr(w, &apiError{code: 404, desc: "Not Found"})
		return
	}
	if token != s.Token {
		writeErr(w, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	params, files, err := readParams(r)
	if err != nil {
		writeErr(w, badRequest("%v", err))
		return
	}
	method = strings.ToLower(method)
	result, aerr := s.run(r.Context(), method, params, files)
	status := 200
	if aerr != nil {
		status = aerr.code
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Params: params, Status: status, At: time.Now()})
	s.notifyLocked()
	s.mu.Unlock()
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func writeErr(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.desc}
	if e.ra > 0 {
		body["parameters"] = map[string]any{"retry_after": e.ra}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	_ = json.NewEncoder(w).Encode(body)
}

// readParams reads a method's parameters the four ways the Bot API takes
// them: query string, urlencoded form, JSON body, multipart form (with
// files).
func readParams(r *http.Request) (url.Values, map[string]*File, error) {
	params := r.URL.Query()
	files := map[string]*File{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && err != io.EOF {
			return nil, nil, fmt.Errorf("can't parse JSON: %v", err)
		}
		for k, v := range body {
			switch t := v.(type) {
			case string:
				params.Set(k, t)
			default:
				b, _ := json.Marshal(t)
				params.Set(k, string(b))
			}
		}
	case "multipart/form-data":
		err := r.ParseMultipartForm(64 << 20)
		if err != nil && strings.Contains(err.Error(), "NextPart: EOF") {
			break // a method without parameters: an empty form
		}
		if err != nil {
			return nil, nil, fmt.Errorf("can't parse multipart form: %v", err)
		}
		for k, vs := range r.MultipartForm.Value {
			params[k] = vs
		}
		for k, fhs := range r.MultipartForm.File {
			fh := fhs[0]
			f, err := fh.Open()
			if err != nil {
				return nil, nil, err
			}
			data, _ := io.ReadAll(f)
			f.Close()
			files[k] = &File{Name: fh.Filename, MimeType: fh.Header.Get("Content-Type"), Data: data}
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return nil, nil, err
		}
		for k, vs := range r.PostForm {
			params[k] = vs
		}
	}
	return params, files, nil
}

func (s *Server) run(ctx context.Context, method string, p url.Values, files map[string]*File) (any, *apiError) {
	s.mu.Lock()
	if fs := s.faults[method]; len(fs) > 0 {
		f := fs[0]
		s.faults[method] = fs[1:]
		s.mu.Unlock()
		return nil, &apiError{code: f.Code, desc: f.Description, ra: f.RetryAfter}
	}
	s.mu.Unlock()
	switch method {
	case "getme":
		return s.Bot, nil
	case "getupdates":
		return s.getUpdates(ctx, p)
	case "setwebhook":
		return s.setWebhook(p)
	case "deletewebhook":
		s.mu.Lock()
		s.webhook.url, s.webhook.secret = "", ""
		s.mu.Unlock()
		return true, nil
	case "getwebhookinfo":
		s.mu.Lock()
		defer s.mu.Unlock()
		return map[string]any{"url": s.webhook.url, "pending_update_count": len(s.updates)}, nil
	case "sendmessage":
		return s.sendMessage(p)
	case "editmessagetext":
		return s.editMessageText(p)
	case "deletemessage":
		return s.deleteMessage(p)
	case "sendchataction":
		if _, aerr := s.chatOf(p); aerr != nil {
			return nil, aerr
		}
		if p.Get("action") == "" {
			return nil, badRequest("wrong parameter action in request")
		}
		return true, nil
	case "answercallbackquery":
		id := p.Get("callback_query_id")
		if id == "" {
			return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.answered[id]; ok {
			return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
		}
		s.answered[id] = answer{Text: p.Get("text"), ShowAlert: p.Get("show_alert") == "true"}
		return true, nil
	case "senddocument":
		return s.sendFile(p, files, "document")
	case "sendphoto":
		return s.sendFile(p, files, "photo")
	case "getfile":
		s.mu.Lock()
		defer s.mu.Unlock()
		f := s.files[p.Get("file_id")]
		if f == nil {
			return nil, badRequest("invalid file_id")
		}
		return map[string]any{"file_id": f.ID, "file_unique_id": "u" + f.ID, "file_size": len(f.Data), "file_path": "documents/" + f.ID + "/" + f.Name}, nil
	case "getchat":
		id, _ := strconv.ParseInt(p.Get("chat_id"), 10, 64)
		s.mu.Lock()
		defer s.mu.Unlock()
		c := s.chats[id]
		if c == nil {
			return nil, badRequest("chat not found")
		}
		return c.chat, nil
	}
	return nil, &apiError{code: 404, desc: "Not Found: method not found"}
}

func (s *Server) serveFile(w http.ResponseWriter, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	if token != s.Token {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	parts := strings.Split(path, "/")
	if len(parts) != 3 {
		http.NotFound(w, nil)
		return
	}
	s.mu.Lock()
	f := s.files[parts[1]]
	s.mu.Unlock()
	if f == nil {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(f.Data)
}

// ---- updates ----

func (s *Server) getUpdates(ctx context.Context, p url.Values) (any, *apiError) {
	offset, _ := strconv.ParseInt(p.Get("offset"), 10, 64)
	timeout, _ := strconv.Atoi(p.Get("timeout"))
	limit, _ := strconv.Atoi(p.Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	s.mu.Lock()
	if s.webhook.url != "" {
		s.mu.Unlock()
		return nil, &apiError{code: 409, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	s.polling++
	gen := s.polling
	// Asking past an update confirms it: Telegram forgets it.
	if offset > 0 {
		for len(s.ids) > 0 && s.ids[0] < offset {
			s.ids, s.updates = s.ids[1:], s.updates[1:]
		}
	}
	s.notifyLocked() // an earlier poll is terminated
	s.mu.Unlock()
	deadline := time.After(time.Duration(timeout) * time.Second)
	for {
		s.mu.Lock()
		if s.polling != gen {
			s.mu.Unlock()
			return nil, &apiError{code: 409, desc: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
		}
		if len(s.updates) > 0 {
			n := min(limit, len(s.updates))
			out := append([]json.RawMessage(nil), s.updates[:n]...)
			s.mu.Unlock()
			return out, nil
		}
		ch := s.changed
		s.mu.Unlock()
		if timeout <= 0 {
			return []json.RawMessage{}, nil
		}
		select {
		case <-ch:
		case <-deadline:
			return []json.RawMessage{}, nil
		case <-ctx.Done():
			return []json.RawMessage{}, nil
		}
	}
}

func (s *Server) setWebhook(p url.Values) (any, *apiError) {
	u := p.Get("url")
	if u == "" {
		s.mu.Lock()
		s.webhook.url, s.webhook.secret = "", ""
		s.mu.Unlock()
		return true, nil
	}
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" || (pu.Scheme != "https" && pu.Scheme != "http") {
		return nil, badRequest("bad webhook: An HTTPS URL must be provided for webhook")
	}
	secret := p.Get("secret_token")
	for _, r := range secret {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') || len(secret) > 256 {
			return nil, badRequest("bad webhook: secret token contains unallowed characters")
		}
	}
	s.mu.Lock()
	s.webhook.url, s.webhook.secret = u, secret
	s.notifyLocked()
	s.mu.Unlock()
	go s.pushWebhook()
	return true, nil
}

// pushWebhook delivers pending updates to the webhook, one at a time, as
// Telegram does: an update is dropped once the webhook answers 2xx, and
// sent again otherwise.
func (s *Server) pushWebhook() {
	for {
		s.mu.Lock()
		u, secret := s.webhook.url, s.webhook.secret
		if u == "" || len(s.updates) == 0 {
			s.mu.Unlock()
			return
		}
		upd, id := s.updates[0], s.ids[0]
		s.mu.Unlock()
		req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(upd))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		ok := err == nil && resp.StatusCode/100 == 2
		if resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if !ok {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if len(s.ids) > 0 && s.ids[0] == id {
			s.ids, s.updates = s.ids[1:], s.updates[1:]
		}
		s.notifyLocked()
		s.mu.Unlock()
	}
}

// PollsStarted counts the getUpdates calls the fake has begun (a call is
// in Calls only once it returns, which for a long poll is up to its
// timeout later).
func (s *Server) PollsStarted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polling
}

// PendingUpdates is how many updates no poller confirmed yet.
func (s *Server) PendingUpdates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// push queues an update; it returns its update_id.
func (s *Server) pushLocked(kind string, v any) int64 {
	s.nextUpd++
	id := s.nextUpd
	b, _ := json.Marshal(map[string]any{"update_id": id, kind: v})
	s.updates = append(s.updates, b)
	s.ids = append(s.ids, id)
	s.notifyLocked()
	if s.webhook.url != "" && len(s.updates) == 1 {
		go s.pushWebhook()
	}
	return id
}

// ---- chats and messages ----

func (s *Server) chatLocked(c Chat) *chatState {
	st := s.chats[c.ID]
	if st == nil {
		st = &chatState{chat: c}
		s.chats[c.ID] = st
	}
	return st
}

func (s *Server) chatOf(p url.Values) (*chatState, *apiError) {
	raw := p.Get("chat_id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return nil, badRequest("chat not found")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.chats[id]
	if st == nil {
		return nil, badRequest("chat not found")
	}
	return st, nil
}

// place reads message_thread_id and reply_parameters for a new message
// in st, as Telegram threads it: a reply in a supergroup joins the
// thread of the message it replies to.
func (s *Server) placeLocked(st *chatState, m *Message, p url.Values) *apiError {
	if v := p.Get("message_thread_id"); v != "" {
		n, _ := strconv.Atoi(v)
		if !st.chat.IsForum {
			return badRequest("message thread not found")
		}
		m.ThreadID, m.IsTopic = n, true
	}
	if v := p.Get("reply_parameters"); v != "" {
		var rp struct {
			MessageID int  `json:"message_id"`
			Allow     bool `json:"allow_sending_without_reply"`
		}
		if err := json.Unmarshal([]byte(v), &rp); err != nil {
			return badRequest("can't parse reply parameters JSON object")
		}
		if to := st.find(rp.MessageID); to != nil {
			m.ReplyTo = to.ID
			if m.ThreadID == 0 && st.chat.Type == "supergroup" {
				m.ThreadID = to.ThreadID
				if m.ThreadID == 0 {
					m.ThreadID = to.ID
				}
				m.IsTopic = to.IsTopic
			}
		} else if !rp.Allow {
			return badRequest("message to be replied not found")
		}
	}
	return nil
}

func (st *chatState) find(id int) *Message {
	for _, m := range st.msgs {
		if m.ID == id && !m.Deleted {
			return m
		}
	}
	return nil
}

func readKeyboard(p url.Values) (*Keyboard, *apiError) {
	v := p.Get("reply_markup")
	if v == "" {
		return nil, nil
	}
	var kb Keyboard
	if err := json.Unmarshal([]byte(v), &kb); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if b.Text == "" {
				return nil, badRequest("text buttons are unallowed in the inline keyboard")
			}
			if len(b.CallbackData) > MaxCallbackData {
				return nil, badRequest("BUTTON_DATA_INVALID")
			}
			if b.CallbackData == "" && b.URL == "" {
				return nil, badRequest("can't find field \"callback_data\"")
			}
			switch b.Style {
			case "", "primary", "danger", "success":
			default:
				return nil, badRequest("invalid button style specified")
			}
		}
	}
	return &kb, nil
}

// formatted reads text in parse_mode (or with entities) as Telegram shows
// it.
func formatted(text, mode, entities string) (string, []Entity, *apiError) {
	switch strings.ToLower(mode) {
	case "html":
		shown, ents, err := parseHTML(text)
		if err != nil {
			return "", nil, badRequest("%v", err)
		}
		return shown, ents, nil
	case "":
		var ents []Entity
		if entities != "" {
			if err := json.Unmarshal([]byte(entities), &ents); err != nil {
				return "", nil, badRequest("can't parse entities JSON object")
			}
		}
		return strings.TrimSpace(text), ents, nil
	}
	return "", nil, badRequest("unsupported parse_mode %q in this fake", mode)
}

func (s *Server) sendMessage(p url.Values) (any, *apiError) {
	st, aerr := s.chatOf(p)
	if aerr != nil {
		return nil, aerr
	}
	shown, ents, aerr := formatted(p.Get("text"), p.Get("parse_mode"), p.Get("entities"))
	if aerr != nil {
		return nil, aerr
	}
	if shown == "" {
		return nil, badRequest("message text is empty")
	}
	if utf16Len(shown) > MaxMessageChars {
		return nil, badRequest("message is too long")
	}
	kb, aerr := readKeyboard(p)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{Chat: st.chat, From: s.Bot, Date: time.Now(), SentAt: time.Now(), Text: shown, Raw: p.Get("text"), ParseMode: p.Get("parse_mode"), Entities: ents, Keyboard: kb}
	if aerr := s.placeLocked(st, m, p); aerr != nil {
		return nil, aerr
	}
	st.nextID++
	m.ID = st.nextID
	st.msgs = append(st.msgs, m)
	s.notifyLocked()
	return s.jsonLocked(st, m), nil
}

func (s *Server) sendFile(p url.Values, files map[string]*File, field string) (any, *apiError) {
	st, aerr := s.chatOf(p)
	if aerr != nil {
		return nil, aerr
	}
	f := files[field]
	if f == nil {
		return nil, badRequest("there is no %s in the request", field)
	}
	if field == "photo" && len(f.Data) > 10<<20 {
		return nil, badRequest("PHOTO_INVALID_DIMENSIONS")
	}
	if len(f.Data) > 50<<20 {
		return nil, &apiError{code: 413, desc: "Request Entity Too Large"}
	}
	caption, ents, aerr := formatted(p.Get("caption"), p.Get("parse_mode"), p.Get("caption_entities"))
	if aerr != nil {
		return nil, aerr
	}
	if utf16Len(caption) > MaxCaptionChars {
		return nil, badRequest("message caption is too long")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextFile++
	f.ID = "F" + strconv.Itoa(s.nextFile)
	s.files[f.ID] = f
	m := &Message{Chat: st.chat, From: s.Bot, Date: time.Now(), SentAt: time.Now(), Caption: caption, Entities: ents}
	if field == "photo" {
		m.Photo = f
	} else {
		m.Document = f
	}
	if aerr := s.placeLocked(st, m, p); aerr != nil {
		return nil, aerr
	}
	st.nextID++
	m.ID = st.nextID
	st.msgs = append(st.msgs, m)
	s.notifyLocked()
	return s.jsonLocked(st, m), nil
}

func (s *Server) editMessageText(p url.Values) (any, *apiError) {
	st, aerr := s.chatOf(p)
	if aerr != nil {
		return nil, aerr
	}
	id, _ := strconv.Atoi(p.Get("message_id"))
	shown, ents, aerr := formatted(p.Get("text"), p.Get("parse_mode"), p.Get("entities"))
	if aerr != nil {
		return nil, aerr
	}
	if shown == "" {
		return nil, badRequest("message text is empty")
	}
	if utf16Len(shown) > MaxMessageChars {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	kb, aerr := readKeyboard(p)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := st.find(id)
	if m == nil {
		return nil, badRequest("message to edit not found")
	}
	if m.From.ID != s.Bot.ID {
		return nil, badRequest("message can't be edited")
	}
	sameKB := p.Get("reply_markup") == "" || keyboardJSON(kb) == keyboardJSON(m.Keyboard)
	if m.Text == shown && entsJSON(m.Entities) == entsJSON(ents) && sameKB {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.Text, m.Raw, m.ParseMode, m.Entities = shown, p.Get("text"), p.Get("parse_mode"), ents
	if p.Get("reply_markup") != "" {
		m.Keyboard = kb
		if kb != nil && len(kb.InlineKeyboard) == 0 {
			m.Keyboard = nil
		}
	}
	m.Edits++
	m.EditTimes = append(m.EditTimes, time.Now())
	s.notifyLocked()
	return s.jsonLocked(st, m), nil
}

func keyboardJSON(k *Keyboard) string {
	if k == nil || len(k.InlineKeyboard) == 0 {
		return ""
	}
	b, _ := json.Marshal(k)
	return string(b)
}

func entsJSON(e []Entity) string {
	if len(e) == 0 {
		return ""
	}
	b, _ := json.Marshal(e)
	return string(b)
}

func (s *Server) deleteMessage(p url.Values) (any, *apiError) {
	st, aerr := s.chatOf(p)
	if aerr != nil {
		return nil, aerr
	}
	id, _ := strconv.Atoi(p.Get("message_id"))
	s.mu.Lock()
	defer s.mu.Unlock()
	m := st.find(id)
	if m == nil {
		return nil, badRequest("message to delete not found")
	}
	m.Deleted = true
	s.notifyLocked()
	return true, nil
}

// jsonLocked is a message as the Bot API returns it.
func (s *Server) jsonLocked(st *chatState, m *Message) map[string]any {
	out := map[string]any{
		"message_id": m.ID, "date": m.Date.Unix(), "chat": m.Chat,
		"from": m.From,
	}
	if m.Text != "" {
		out["text"] = m.Text
		if len(m.Entities) > 0 {
			out["entities"] = m.Entities
		}
	}
	if m.Caption != "" {
		out["caption"] = m.Caption
	}
	if m.ThreadID != 0 {
		out["message_thread_id"] = m.ThreadID
		if m.IsTopic {
			out["is_topic_message"] = true
		}
	}
	if m.ReplyTo != 0 {
		if to := st.find(m.ReplyTo); to != nil {
			inner := s.jsonLocked(st, &Message{ID: to.ID, Chat: to.Chat, From: to.From, Date: to.Date, Text: to.Text, Entities: to.Entities, ThreadID: to.ThreadID, IsTopic: to.IsTopic})
			out["reply_to_message"] = inner
		}
	}
	if m.Keyboard != nil {
		out["reply_markup"] = m.Keyboard
	}
	if f := m.Document; f != nil {
		out["document"] = map[string]any{"file_id": f.ID, "file_unique_id": "u" + f.ID, "file_name": f.Name, "mime_type": f.MimeType, "file_size": len(f.Data)}
	}
	if f := m.Photo; f != nil {
		out["photo"] = []map[string]any{{"file_id": f.ID, "file_unique_id": "u" + f.ID, "width": 640, "height": 480, "file_size": len(f.Data)}}
	}
	return out
}
