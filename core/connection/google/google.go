// Package google is the Google tools, on the official Google API Go client
// (gmail/v1, calendar/v3, drive/v3): search and read Gmail, create drafts,
// send (high risk), list and create Calendar events, list and read Drive
// files. Each call acts with the account resolved from the conversation
// (package connection): the speaking person's own Google connection, else
// the workspace's.
package google

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/drive/v3"
	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/switchboardhq/switchboard/core/connection"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Accounts hands a call the account it acts with (connection.Accounts).
type Accounts = connection.Accounts

// MaxReadBytes bounds a mail body or a file the tools return.
const MaxReadBytes = 64 << 10

type tools struct{ acc Accounts }

// options are the client options of a call: its account's client, and the
// API base when overridden (path is the service's own path under it, such
// as "calendar/v3/").
func (t tools) options(ctx context.Context, req *tool.Request, path string) ([]option.ClientOption, error) {
	hc, _, err := t.acc.ClientFor(ctx, store.ProviderGoogle, req)
	if err != nil {
		return nil, err
	}
	opts := []option.ClientOption{option.WithHTTPClient(hc)}
	if base := t.acc.APIURL(store.ProviderGoogle); base != "" {
		opts = append(opts, option.WithEndpoint(strings.TrimRight(base, "/")+"/"+path))
	}
	return opts, nil
}

func apiError(doing string, err error) error {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return fmt.Errorf("%s: Google answered %d: %s", doing, ge.Code, ge.Message)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// Register adds the Google tools to reg.
func Register(reg *tool.Registry, acc Accounts) error {
	if acc == nil {
		return errors.New("google: Accounts is required")
	}
	t := tools{acc: acc}
	return errors.Join(
		tool.Register(reg, tool.Def{
			Name:        "gmail__search",
			Description: "Search Gmail with Gmail's query syntax (from:, subject:, is:unread, newer_than:2d ...). Acts with the Google account connected by the person speaking, else the workspace's.",
			Risk:        tool.RiskLow, ReadOnly: true,
		}, t.gmailSearch),
		tool.Register(reg, tool.Def{
			Name: "gmail__read", Description: "Read one Gmail message by id: headers and its plain text.",
			Risk: tool.RiskLow, ReadOnly: true,
		}, t.gmailRead),
		tool.Register(reg, tool.Def{
			Name: "gmail__create_draft", Description: "Create a Gmail draft (not sent).",
			Risk: tool.RiskMedium,
		}, t.gmailDraft),
		tool.Register(reg, tool.Def{
			Name: "gmail__send", Description: "Send an email from the connected Gmail account.",
			Risk: tool.RiskHigh,
		}, t.gmailSend),
		tool.Register(reg, tool.Def{
			Name: "calendar__list_events", Description: "List upcoming Google Calendar events in a time range.",
			Risk: tool.RiskLow, ReadOnly: true,
		}, t.listEvents),
		tool.Register(reg, tool.Def{
			Name: "calendar__create_event", Description: "Create a Google Calendar event.",
			Risk: tool.RiskMedium,
		}, t.createEvent),
		tool.Register(reg, tool.Def{
			Name: "drive__list_files", Description: "List or search Google Drive files (Drive's query syntax, e.g. name contains 'report').",
			Risk: tool.RiskLow, ReadOnly: true,
		}, t.listFiles),
		tool.Register(reg, tool.Def{
			Name: "drive__read_file", Description: "Read a Google Drive file's text (Google Docs as plain text).",
			Risk: tool.RiskLow, ReadOnly: true,
		}, t.readFile),
	)
}

func (t tools) gmail(ctx context.Context, req *tool.Request) (*gmail.Service, error) {
	opts, err := t.options(ctx, req, "")
	if err != nil {
		return nil, err
	}
	return gmail.NewService(ctx, opts...)
}

// ---- gmail ----

type SearchIn struct {
	Query string `json:"query" jsonschema:"a Gmail search query"`
	Limit int64  `json:"limit,omitempty" jsonschema:"at most this many messages, 1 to 50 (default 10)"`
}

type MessageSummary struct {
	ID       string `json:"id"`
	ThreadID string `json:"thread_id"`
	From     string `json:"from"`
	Subject  string `json:"subject"`
	Date     string `json:"date"`
	Snippet  string `json:"snippet"`
}

type SearchOut struct {
	Messages []MessageSummary `json:"messages"`
}

func header(m *gmail.Message, name string) string {
	if m.Payload == nil {
		return ""
	}
	for _, h := range m.Payload.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func (t tools) gmailSearch(ctx context.Context, req *tool.Request, in SearchIn) (SearchOut, error) {
	if in.Limit <= 0 || in.Limit > 50 {
		in.Limit = 10
	}
	svc, err := t.gmail(ctx, req)
	if err != nil {
		return SearchOut{}, err
	}
	list, err := svc.Users.Messages.List("me").Q(in.Query).MaxResults(in.Limit).Context(ctx).Do()
	if err != nil {
		return SearchOut{}, apiError("searching Gmail", err)
	}
	out := SearchOut{Messages: []MessageSummary{}}
	for _, m := range list.Messages {
		full, err := svc.Users.Messages.Get("me", m.Id).Format("metadata").MetadataHeaders("From", "Subject", "Date").Context(ctx).Do()
		if err != nil {
			return SearchOut{}, apiError("reading message "+m.Id, err)
		}
		out.Messages = append(out.Messages, MessageSummary{
			ID: full.Id, ThreadID: full.ThreadId, From: header(full, "From"), Subject: header(full, "Subject"), Date: header(full, "Date"), Snippet: full.Snippet,
		})
	}
	return out, nil
}

type ReadIn struct {
	ID string `json:"id" jsonschema:"the message id, from gmail__search"`
}

type ReadOut struct {
	ID      string `json:"id"`
	From    string `json:"from"`
	To      string `json:"to"`
	Subject string `json:"subject"`
	Date    string `json:"date"`
	Text    string `json:"text"`
}

// plainText finds the first text/plain part.
func plainText(p *gmail.MessagePart) string {
	if p == nil {
		return ""
	}
	if strings.HasPrefix(p.MimeType, "text/plain") && p.Body != nil && p.Body.Data != "" {
		b, err := base64.URLEncoding.DecodeString(p.Body.Data)
		if err != nil {
			b, _ = base64.RawURLEncoding.DecodeString(p.Body.Data)
		}
		return string(b)
	}
	for _, part := range p.Parts {
		if s := plainText(part); s != "" {
			return s
		}
	}
	return ""
}

func (t tools) gmailRead(ctx context.Context, req *tool.Request, in ReadIn) (ReadOut, error) {
	svc, err := t.gmail(ctx, req)
	if err != nil {
		return ReadOut{}, err
	}
	m, err := svc.Users.Messages.Get("me", in.ID).Format("full").Context(ctx).Do()
	if err != nil {
		return ReadOut{}, apiError("reading message "+in.ID, err)
	}
	text := plainText(m.Payload)
	if len(text) > MaxReadBytes {
		text = text[:MaxReadBytes] + "\n[cut]"
	}
	return ReadOut{ID: m.Id, From: header(m, "From"), To: header(m, "To"), Subject: header(m, "Subject"), Date: header(m, "Date"), Text: text}, nil
}

type MailIn struct {
	To      []string `json:"to" jsonschema:"recipients' addresses"`
	Cc      []string `json:"cc,omitempty"`
	Subject string   `json:"subject"`
	Body    string   `json:"body" jsonschema:"the plain text"`
}

// raw builds the RFC 5322 message Gmail takes, base64url-encoded.
func (in MailIn) raw() (string, error) {
	if len(in.To) == 0 {
		return "", errors.New("to: at least one recipient")
	}
	for _, a := range append(append([]string{}, in.To...), in.Cc...) {
		if _, err := mail.ParseAddress(a); err != nil {
			return "", fmt.Errorf("%q is not an email address", a)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "To: %s\r\n", strings.Join(in.To, ", "))
	if len(in.Cc) > 0 {
		fmt.Fprintf(&b, "Cc: %s\r\n", strings.Join(in.Cc, ", "))
	}
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", in.Subject))
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=\"UTF-8\"\r\n\r\n")
	b.WriteString(strings.ReplaceAll(in.Body, "\n", "\r\n"))
	return base64.URLEncoding.EncodeToString([]byte(b.String())), nil
}

type DraftOut struct {
	DraftID   string `json:"draft_id"`
	MessageID string `json:"message_id"`
}

func (t tools) gmailDraft(ctx context.Context, req *tool.Request, in MailIn) (DraftOut, error) {
	raw, err := in.raw()
	if err != nil {
		return DraftOut{}, err
	}
	svc, err := t.gmail(ctx, req)
	if err != nil {
		return DraftOut{}, err
	}
	d, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: raw}}).Context(ctx).Do()
	if err != nil {
		return DraftOut{}, apiError("creating a draft", err)
	}
	out := DraftOut{DraftID: d.Id}
	if d.Message != nil {
		out.MessageID = d.Message.Id
	}
	return out, nil
}

type SendOut struct {
	MessageID string `json:"message_id"`
	ThreadID  string `json:"thread_id"`
}

func (t tools) gmailSend(ctx context.Context, req *tool.Request, in MailIn) (SendOut, error) {
	raw, err := in.raw()
	if err != nil {
		return SendOut{}, err
	}
	svc, err := t.gmail(ctx, req)
	if err != nil {
		return SendOut{}, err
	}
	m, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: raw}).Context(ctx).Do()
	if err != nil {
		return SendOut{}, apiError("sending the email", err)
	}
	return SendOut{MessageID: m.Id, ThreadID: m.ThreadId}, nil
}

// ---- calendar ----

type ListEventsIn struct {
	Calendar string `json:"calendar,omitempty" jsonschema:"the calendar id; default: primary"`
	From     string `json:"from,omitempty" jsonschema:"RFC 3339 start of the range; default: now"`
	To       string `json:"to,omitempty" jsonschema:"RFC 3339 end of the range; default: 7 days after from"`
	Limit    int64  `json:"limit,omitempty" jsonschema:"1 to 100 (default 20)"`
}

type Event struct {
	ID       string   `json:"id"`
	Summary  string   `json:"summary"`
	Start    string   `json:"start"`
	End      string   `json:"end"`
	Location string   `json:"location,omitempty"`
	Attendee []string `json:"attendees,omitempty"`
	URL      string   `json:"url,omitempty"`
}

type ListEventsOut struct {
	Events []Event `json:"events"`
}

func when(dt *calendar.EventDateTime) string {
	if dt == nil {
		return ""
	}
	if dt.DateTime != "" {
		return dt.DateTime
	}
	return dt.Date
}

func (t tools) calendar(ctx context.Context, req *tool.Request) (*calendar.Service, error) {
	opts, err := t.options(ctx, req, "calendar/v3/")
	if err != nil {
		return nil, err
	}
	return calendar.NewService(ctx, opts...)
}

func (t tools) listEvents(ctx context.Context, req *tool.Request, in ListEventsIn) (ListEventsOut, error) {
	from, to := time.Now(), time.Time{}
	var err error
	if in.From != "" {
		if from, err = time.Parse(time.RFC3339, in.From); err != nil {
			return ListEventsOut{}, fmt.Errorf("from %q is not an RFC 3339 time", in.From)
		}
	}
	to = from.Add(7 * 24 * time.Hour)
	if in.To != "" {
		if to, err = time.Parse(time.RFC3339, in.To); err != nil {
			return ListEventsOut{}, fmt.Errorf("to %q is not an RFC 3339 time", in.To)
		}
	}
	if in.Calendar == "" {
		in.Calendar = "primary"
	}
	if in.Limit <= 0 || in.Limit > 100 {
		in.Limit = 20
	}
	svc, err := t.calendar(ctx, req)
	if err != nil {
		return ListEventsOut{}, err
	}
	evs, err := svc.Events.List(in.Calendar).TimeMin(from.Format(time.RFC3339)).TimeMax(to.Format(time.RFC3339)).
		SingleEvents(true).OrderBy("startTime").MaxResults(in.Limit).Context(ctx).Do()
	if err != nil {
		return ListEventsOut{}, apiError("listing the events of "+in.Calendar, err)
	}
	out := ListEventsOut{Events: []Event{}}
	for _, e := range evs.Items {
		ev := Event{ID: e.Id, Summary: e.Summary, Start: when(e.Start), End: when(e.End), Location: e.Location, URL: e.HtmlLink}
		for _, a := range e.Attendees {
			ev.Attendee = append(ev.Attendee, a.Email)
		}
		out.Events = append(out.Events, ev)
	}
	return out, nil
}

type CreateEventIn struct {
	Calendar    string   `json:"calendar,omitempty" jsonschema:"the calendar id; default: primary"`
	Summary     string   `json:"summary"`
	Start       string   `json:"start" jsonschema:"RFC 3339 start time"`
	End         string   `json:"end" jsonschema:"RFC 3339 end time"`
	Description string   `json:"description,omitempty"`
	Attendees   []string `json:"attendees,omitempty" jsonschema:"attendees' email addresses"`
}

func (t tools) createEvent(ctx context.Context, req *tool.Request, in CreateEventIn) (Event, error) {
	for _, v := range []string{in.Start, in.End} {
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return Event{}, fmt.Errorf("%q is not an RFC 3339 time", v)
		}
	}
	if in.Calendar == "" {
		in.Calendar = "primary"
	}
	svc, err := t.calendar(ctx, req)
	if err != nil {
		return Event{}, err
	}
	ev := &calendar.Event{Summary: in.Summary, Description: in.Description,
		Start: &calendar.EventDateTime{DateTime: in.Start}, End: &calendar.EventDateTime{DateTime: in.End}}
	for _, a := range in.Attendees {
		ev.Attendees = append(ev.Attendees, &calendar.EventAttendee{Email: a})
	}
	e, err := svc.Events.Insert(in.Calendar, ev).Context(ctx).Do()
	if err != nil {
		return Event{}, apiError("creating the event", err)
	}
	return Event{ID: e.Id, Summary: e.Summary, Start: when(e.Start), End: when(e.End), URL: e.HtmlLink, Attendee: in.Attendees}, nil
}

// ---- drive ----

type ListFilesIn struct {
	Query string `json:"query,omitempty" jsonschema:"a Drive query, e.g. name contains 'budget'; default: the most recent files"`
	Limit int64  `json:"limit,omitempty" jsonschema:"1 to 100 (default 20)"`
}

type File struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type"`
	Modified string `json:"modified,omitempty"`
	URL      string `json:"url,omitempty"`
}

type ListFilesOut struct {
	Files []File `json:"files"`
}

func (t tools) drive(ctx context.Context, req *tool.Request) (*drive.Service, error) {
	opts, err := t.options(ctx, req, "drive/v3/")
	if err != nil {
		return nil, err
	}
	return drive.NewService(ctx, opts...)
}

func (t tools) listFiles(ctx context.Context, req *tool.Request, in ListFilesIn) (ListFilesOut, error) {
	if in.Limit <= 0 || in.Limit > 100 {
		in.Limit = 20
	}
	svc, err := t.drive(ctx, req)
	if err != nil {
		return ListFilesOut{}, err
	}
	call := svc.Files.List().PageSize(in.Limit).OrderBy("modifiedTime desc").Fields("files(id,name,mimeType,modifiedTime,webViewLink)").Context(ctx)
	if in.Query != "" {
		call = call.Q(in.Query)
	}
	fl, err := call.Do()
	if err != nil {
		return ListFilesOut{}, apiError("listing Drive files", err)
	}
	out := ListFilesOut{Files: []File{}}
	for _, f := range fl.Files {
		out.Files = append(out.Files, File{ID: f.Id, Name: f.Name, MimeType: f.MimeType, Modified: f.ModifiedTime, URL: f.WebViewLink})
	}
	return out, nil
}

type ReadFileIn struct {
	ID string `json:"id" jsonschema:"the file id, from drive__list_files"`
}

type ReadFileOut struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type"`
	Text     string `json:"text"`
}

func (t tools) readFile(ctx context.Context, req *tool.Request, in ReadFileIn) (ReadFileOut, error) {
	svc, err := t.drive(ctx, req)
	if err != nil {
		return ReadFileOut{}, err
	}
	f, err := svc.Files.Get(in.ID).Fields("id,name,mimeType,size").Context(ctx).Do()
	if err != nil {
		return ReadFileOut{}, apiError("reading file "+in.ID, err)
	}
	var resp *http.Response
	if strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
		resp, err = svc.Files.Export(in.ID, "text/plain").Context(ctx).Download()
	} else {
		resp, err = svc.Files.Get(in.ID).Context(ctx).Download()
	}
	if err != nil {
		return ReadFileOut{}, apiError("downloading "+f.Name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxReadBytes+1))
	if err != nil {
		return ReadFileOut{}, fmt.Errorf("downloading %s: %w", f.Name, err)
	}
	if len(data) > MaxReadBytes {
		return ReadFileOut{}, fmt.Errorf("%s is larger than the %d bytes this tool reads", f.Name, MaxReadBytes)
	}
	if !utf8.Valid(data) {
		return ReadFileOut{}, fmt.Errorf("%s (%s) is not a text file", f.Name, f.MimeType)
	}
	return ReadFileOut{ID: f.Id, Name: f.Name, MimeType: f.MimeType, Text: string(data)}, nil
}
