// Package googletest is a fake of the Google APIs the Google tools call
// (userinfo, Gmail, Calendar, Drive), answering with the JSON shapes of
// their discovery documents for the fields the tools read, and
// authenticating every call with a bearer token issued by an oauthtest
// provider in Google's flavour. Each account (by email) has its own
// mailbox, calendar and drive. Gmail's q and Drive's q are matched as
// plain substrings of the subject, the sender or the name: enough to tell
// which mailbox answered, not Gmail's search language.
package googletest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/internal/oauthtest"
)

// Message is a mail in a mailbox.
type Message struct {
	ID, ThreadID      string
	From, To, Subject string
	Date              string
	Text              string
}

// Event is a calendar event.
type Event struct {
	ID, Summary, Start, End string
	Attendees               []string
}

// File is a Drive file.
type File struct {
	ID, Name, MimeType, Content string
}

// Account is what one Google account holds.
type Account struct {
	Email    string
	Messages []Message
	Drafts   []string // raw RFC 5322 messages
	Sent     []string // raw RFC 5322 messages
	Events   []Event
	Files    []File
}

// Call is one request served.
type Call struct {
	Method, Path string
	Email        string // whose token ("" when refused)
}

// Server is the fake.
type Server struct {
	auth     *oauthtest.Server
	srv      *httptest.Server
	mu       sync.Mutex
	accounts map[string]*Account
	calls    []Call
	seq      int
}

// New starts the fake; auth issues and checks the tokens.
func New(tb testing.TB, auth *oauthtest.Server) *Server {
	s := &Server{auth: auth, accounts: map[string]*Account{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth2/v2/userinfo", s.userinfo)
	mux.HandleFunc("GET /gmail/v1/users/me/messages", s.listMessages)
	mux.HandleFunc("GET /gmail/v1/users/me/messages/{id}", s.getMessage)
	mux.HandleFunc("POST /gmail/v1/users/me/drafts", s.createDraft)
	mux.HandleFunc("POST /gmail/v1/users/me/messages/send", s.send)
	mux.HandleFunc("GET /calendar/v3/calendars/{cal}/events", s.listEvents)
	mux.HandleFunc("POST /calendar/v3/calendars/{cal}/events", s.insertEvent)
	mux.HandleFunc("GET /drive/v3/files", s.listFiles)
	mux.HandleFunc("GET /drive/v3/files/{id}", s.getFile)
	mux.HandleFunc("GET /drive/v3/files/{id}/export", s.exportFile)
	s.srv = httptest.NewServer(mux)
	tb.Cleanup(s.srv.Close)
	return s
}

// URL is the APIs' base (SWITCHBOARD_GOOGLE_API_URL).
func (s *Server) URL() string { return s.srv.URL }

// AddAccount adds (or replaces) an account's data.
func (s *Server) AddAccount(a *Account) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[a.Email] = a
}

// Account returns a copy of an account's data.
func (s *Server) Account(email string) Account {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.accounts[email]
}

// Calls lists the requests served.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError is Google's error shape.
func apiError(w http.ResponseWriter, status int, reason, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"code": status, "message": msg, "status": reason,
		"errors": []map[string]any{{"message": msg, "domain": "global", "reason": reason}},
	}})
}

// account authenticates a call; it answers 401 itself when it fails.
func (s *Server) account(w http.ResponseWriter, r *http.Request) (*Account, bool) {
	_, acct, ok := s.auth.Bearer(r)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Email: acct.Email})
	a := s.accounts[acct.Email]
	if ok && a == nil {
		a = &Account{Email: acct.Email}
		s.accounts[acct.Email] = a
	}
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return nil, false
	}
	return a, true
}

func (s *Server) userinfo(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": fmt.Sprint(len(a.Email) * 1000), "email": a.Email, "verified_email": true})
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(w, r)
	if !ok {
		return
	}
	q := strings.ToLower(r.URL.Query().Get("q"))
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, m := range a.Messages {
		if q == "" || strings.Contains(strings.ToLower(m.Subject+" "+m.From), q) {
			out = append(out, map[string]any{"id": m.ID, "threadId": m.ThreadID})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out, "resultSizeEstimate": len(out)})
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range a.Messages {
		if m.ID != r.PathValue("id") {
			continue
		}
		headers := []map[string]string{{"name": "From", "value": m.From}, {"name": "To", "value": m.To}, {"name": "Subject", "value": m.Subject}, {"name": "Date", "value": m.Date}}
		payload := map[string]any{"mimeType": "multipart/alternative", "headers": headers, "body": map[string]any{"size": 0}}
		if r.URL.Query().Get("format") != "metadata" {
			payload["parts"] = []map[string]any{{
				"partId": "0", "mimeType": "text/plain",
				"body": map[string]any{"size": len(m.Text), "data": base64.URLEncoding.EncodeToString([]byte(m.Text))},
			}}
		}
		snippet := m.Text
		if len(snippet) > 100 {
			snippet = snippet[:100]
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": m.ID, "threadId": m.ThreadID, "labelIds": []string{"INBOX"}, "snippet": snippet, "payload": payload})
		return
	}
	apiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
}

// raw reads the base64url raw message of a send or draft body.
func raw(r *http.Request, draft bool) (string, error) {
	var msg struct {
		Raw string `json:"raw"`
	}
	var err error
	if draft {
		var d struct {
			Message *struct {
				Raw string `json:"raw"`
			} `json:"message"`
		}
		err = json.NewDecoder(r.Body).Decode(&d)
		if d.Message != nil {
			msg.Raw = d.Message.Raw
		}
	} else {
		err = json.NewDecoder(r.Body).Decode(&msg)
	}
	if err != nil {
		return "", err
	}
	b, err := base64.URLEncoding.DecodeString(msg.Raw)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func (s *Server) createDraft(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(w, r)
	if !ok {
		return
	}
	m, err := raw(r, true)
	if err != nil {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid draft: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a.Drafts = append(a.Drafts, m)
	s.seq++
	writeJSON(w, http.StatusOK, map[string]any{"id": fmt.Sprintf("r-%d", s.seq), "message": map[string]any{"id": fmt.Sprintf("m-%d", s.seq), "threadId": fmt.Sprintf("t-%d", s.seq), "labelIds": []string{"DRAFT"}}})
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(w, r)
	if !ok {
		return
	}
	m, err := raw(r, false)
	if err != nil {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid message: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a.Sent = append(a.Sent, m)
	s.seq++
	writeJSON(w, http.StatusOK, map[string]any{"id": fmt.Sprintf("s-%d", s.seq), "threadId": fmt.Sprintf("t-%d", s.seq), "labelIds": []string{"SENT"}})
}

func eventJSON(e Event) map[string]any {
	var att []map[string]any
	for _, x := range e.Attendees {
		att = append(att, map[string]any{"email": x, "responseStatus": "needsAction"})
	}
	return map[string]any{
		"kind": "calendar#event", "id": e.ID, "status": "confirmed", "summary": e.Summary,
		"start": map[string]any{"dateTime": e.Start}, "end": map[string]any{"dateTime": e.End},
		"attendees": att, "htmlLink": "https://www.google.com/calendar/event?eid=" + e.ID,
	}
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	items := []map[string]any{}
	for _, e := range a.Events {
		items = append(items, eventJSON(e))
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "calendar#events", "summary": a.Email, "items": items})
}

func (s *Server) insertEvent(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(w, r)
	if !ok {
		return
	}
	var in struct {
		Summary   string
		Start     struct{ DateTime string }
		End       struct{ DateTime string }
		Attendees []struct{ Email string }
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Start.DateTime == "" {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Missing start time.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	e := Event{ID: fmt.Sprintf("ev%d", s.seq), Summary: in.Summary, Start: in.Start.DateTime, End: in.End.DateTime}
	for _, x := range in.Attendees {
		e.Attendees = append(e.Attendees, x.Email)
	}
	a.Events = append(a.Events, e)
	writeJSON(w, http.StatusOK, eventJSON(e))
}

func fileJSON(f File) map[string]any {
	return map[string]any{
		"kind": "drive#file", "id": f.ID, "name": f.Name, "mimeType": f.MimeType, "modifiedTime": "2026-11-30T10:00:00.000Z",
		"webViewLink": "https://drive.google.com/file/d/" + f.ID + "/view",
	}
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(w, r)
	if !ok {
		return
	}
	q := strings.ToLower(r.URL.Query().Get("q"))
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, f := range a.Files {
		if q == "" || strings.Contains(q, strings.ToLower(f.Name)) || strings.Contains(strings.ToLower(f.Name), q) {
			out = append(out, fileJSON(f))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "drive#fileList", "files": out})
}

func (s *Server) file(w http.ResponseWriter, r *http.Request) (File, bool) {
	a, ok := s.account(w, r)
	if !ok {
		return File{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range a.Files {
		if f.ID == r.PathValue("id") {
			return f, true
		}
	}
	apiError(w, http.StatusNotFound, "notFound", "File not found: "+r.PathValue("id"))
	return File{}, false
}

func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	f, ok := s.file(w, r)
	if !ok {
		return
	}
	if r.URL.Query().Get("alt") == "media" {
		if strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
			apiError(w, http.StatusForbidden, "fileNotDownloadable", "Only files with binary content can be downloaded. Use Export with Docs Editors files.")
			return
		}
		w.Header().Set("Content-Type", f.MimeType)
		_, _ = w.Write([]byte(f.Content))
		return
	}
	writeJSON(w, http.StatusOK, fileJSON(f))
}

func (s *Server) exportFile(w http.ResponseWriter, r *http.Request) {
	f, ok := s.file(w, r)
	if !ok {
		return
	}
	if r.URL.Query().Get("mimeType") != "text/plain" {
		apiError(w, http.StatusBadRequest, "badRequest", "this fake exports text/plain only")
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(f.Content))
}
