package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
)

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// content is the part of an m.room.message (or m.reaction) content the
// adapter reads, decoded from the raw JSON as the spec writes it.
type content struct {
	MsgType       string `json:"msgtype"`
	Body          string `json:"body"`
	Format        string `json:"format"`
	FormattedBody string `json:"formatted_body"`
	URL           string `json:"url"`
	FileName      string `json:"filename"`
	Info          *struct {
		MimeType string `json:"mimetype"`
		Size     int64  `json:"size"`
	} `json:"info"`
	Mentions *struct {
		UserIDs []string `json:"user_ids"`
	} `json:"m.mentions"`
	RelatesTo *struct {
		RelType       string `json:"rel_type"`
		EventID       string `json:"event_id"`
		Key           string `json:"key"`
		IsFallingBack bool   `json:"is_falling_back"`
		InReplyTo     *struct {
			EventID string `json:"event_id"`
		} `json:"m.in_reply_to"`
	} `json:"m.relates_to"`
	Options []option `json:"app.switchboard.options"`
}

// roomInfo is what the adapter keeps about a room: its members' names
// and whether it is a direct chat. It is read from /joined_members and
// forgotten when a membership changes.
type roomInfo struct {
	names map[id.UserID]string
	at    time.Time
}

const roomInfoTTL = 10 * time.Minute

func (a *Adapter) forgetRoom(roomID id.RoomID) {
	a.roomMu.Lock()
	delete(a.rooms, roomID)
	a.roomMu.Unlock()
}

func (a *Adapter) room(ctx context.Context, roomID id.RoomID) (*roomInfo, error) {
	a.roomMu.Lock()
	info := a.rooms[roomID]
	a.roomMu.Unlock()
	if info != nil && a.opts.Now().Sub(info.at) < roomInfoTTL {
		return info, nil
	}
	var resp struct {
		Joined map[id.UserID]struct {
			DisplayName string `json:"display_name"`
		} `json:"joined"`
	}
	err := a.retry(ctx, func() error {
		_, err := a.cli.MakeRequest(ctx, "GET", a.cli.BuildClientURL("v3", "rooms", roomID, "joined_members"), nil, &resp)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the members of %s: %w", roomID, err)
	}
	info = &roomInfo{names: map[id.UserID]string{}, at: a.opts.Now()}
	for u, m := range resp.Joined {
		info.names[u] = m.DisplayName
	}
	a.roomMu.Lock()
	if len(a.rooms) > 10000 {
		a.rooms = map[id.RoomID]*roomInfo{}
	}
	a.rooms[roomID] = info
	a.roomMu.Unlock()
	return info, nil
}

// isDirect reports whether a room is a direct chat: one the bot's m.direct
// account data lists (the bot records each direct invite it accepts and
// each direct chat it opens there, as the spec asks of clients).
func (a *Adapter) isDirect(roomID id.RoomID) bool {
	a.roomMu.Lock()
	defer a.roomMu.Unlock()
	_, ok := a.directRooms[roomID]
	return ok
}

// setDirect replaces what the adapter knows of m.direct.
func (a *Adapter) setDirect(d directContent) {
	rooms := map[id.RoomID]id.UserID{}
	for u, rs := range d {
		for _, r := range rs {
			rooms[r] = u
		}
	}
	a.roomMu.Lock()
	a.directRooms = rooms
	a.roomMu.Unlock()
}

// loadDirect reads m.direct from the homeserver.
func (a *Adapter) loadDirect(ctx context.Context) (directContent, error) {
	direct := directContent{}
	err := a.retry(ctx, func() error { return a.cli.GetAccountData(ctx, event.AccountDataDirectChats.Type, &direct) })
	if err != nil && !errors.Is(err, mautrix.MNotFound) {
		return nil, fmt.Errorf("reading m.direct: %w", err)
	}
	return direct, nil
}

// recordDirect adds a direct chat with user to m.direct.
func (a *Adapter) recordDirect(ctx context.Context, user id.UserID, roomID id.RoomID) error {
	a.directMu.Lock()
	defer a.directMu.Unlock()
	direct, err := a.loadDirect(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(direct[user], roomID) {
		direct[user] = append(direct[user], roomID)
		if err := a.retry(ctx, func() error { return a.cli.SetAccountData(ctx, event.AccountDataDirectChats.Type, direct) }); err != nil {
			return fmt.Errorf("recording a direct chat in m.direct: %w", err)
		}
	}
	a.setDirect(direct)
	return nil
}

func (r *roomInfo) nameOf(u id.UserID) string {
	if n := r.names[u]; n != "" {
		return n
	}
	return u.Localpart()
}

// onEvent handles one timeline event of a joined room.
func (a *Adapter) onEvent(ctx context.Context, roomID id.RoomID, ev *event.Event) error {
	if ev.Sender == a.bot {
		return nil
	}
	switch ev.Type {
	case event.EventMessage:
		return a.onMessage(ctx, roomID, ev)
	case event.EventReaction:
		return a.onReaction(ctx, roomID, ev)
	case event.EventEncrypted:
		a.tellEncrypted(ctx, roomID)
	}
	return nil
}

// onMessage submits a person's message.
func (a *Adapter) onMessage(ctx context.Context, roomID id.RoomID, ev *event.Event) error {
	var c content
	if err := json.Unmarshal(ev.Content.VeryRaw, &c); err != nil {
		a.log.WarnContext(ctx, "an m.room.message the adapter cannot read", "event_id", ev.ID, "err", err)
		return nil
	}
	// m.notice is what bots send: answering it would make bots talk to
	// each other. An edit is not a new message.
	if c.MsgType == string(event.MsgNotice) || (c.RelatesTo != nil && c.RelatesTo.RelType == string(event.RelReplace)) {
		return nil
	}
	info, err := a.room(ctx, roomID)
	if err != nil {
		return err
	}
	in := &core.Inbound{
		Platform:  Platform,
		EventID:   ev.ID.String(),
		Channel:   roomID.String(),
		MessageID: ev.ID.String(),
		UserID:    ev.Sender.String(),
		UserName:  info.nameOf(ev.Sender),
		IsDM:      a.isDirect(roomID),
		At:        time.UnixMilli(ev.Timestamp),
	}
	if ev.Timestamp == 0 {
		in.At = a.opts.Now()
	}
	mentioned := a.mentions(&c)
	if rel := c.RelatesTo; rel != nil {
		switch {
		case rel.RelType == string(event.RelThread) && rel.EventID != "":
			in.Thread = rel.EventID
		case rel.InReplyTo != nil && rel.InReplyTo.EventID != "":
			mentioned = mentioned || a.repliesToBot(ctx, roomID, id.EventID(rel.InReplyTo.EventID))
		}
	}
	if in.Thread == "" && !in.IsDM {
		// A question at the top of a room is answered in a thread on it.
		in.Thread = ev.ID.String()
	}
	in.Mentioned = mentioned || in.IsDM
	in.Text = a.text(&c)
	if c.URL != "" {
		in.Files = a.readFiles(ctx, &c, in.Mentioned)
		if caption := fileCaption(&c); caption != "" {
			in.Text = a.stripMention(caption)
		} else {
			in.Text = ""
		}
		line := "[attachment: " + fileName(&c) + "]"
		if in.Text == "" {
			in.Text = line
		} else {
			in.Text += "\n" + line
		}
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	res, err := a.opts.Submitter.Submit(subCtx, in)
	if err != nil {
		return fmt.Errorf("submitting matrix event %s: %w", ev.ID, err)
	}
	a.log.DebugContext(ctx, "matrix message submitted", "event_id", ev.ID, "conversation_id", res.ConversationID,
		"duplicate", res.Duplicate, "ignored", res.Ignored, "refused", res.Refused)
	if res.Refused && res.Notice != "" && !res.Duplicate {
		to := bots.Target{Platform: Platform, Channel: in.Channel, Thread: in.Thread, UserID: in.UserID}
		if !in.IsDM {
			// Matrix has no ephemeral messages: a refusal in a room goes
			// to the sender's direct chat.
			to = bots.Target{Platform: Platform, UserID: in.UserID}
		}
		// The notice's key is the refused event's, so a batch synced again
		// does not tell twice.
		if _, err := a.Post(ctx, to, &bots.Message{Text: res.Notice, Key: "refused:" + in.EventID}); err != nil {
			a.log.WarnContext(ctx, "telling a refused matrix user failed", "user_id", in.UserID, "room_id", in.Channel, "err", err)
		}
	}
	return nil
}

// mentions reports whether a message addresses the bot: m.mentions names
// it, or (for clients that send no m.mentions) the body names it by user
// id, or starts with its display name or localpart and a colon, as
// Element's plain-text completion writes it.
func (a *Adapter) mentions(c *content) bool {
	if c.Mentions != nil && slices.Contains(c.Mentions.UserIDs, a.bot.String()) {
		return true
	}
	body := c.Body
	if strings.Contains(body, a.bot.String()) {
		return true
	}
	if c.Mentions != nil {
		// The sender's client says whom it mentions, and not the bot.
		return false
	}
	return a.leadingName().MatchString(body)
}

// leadingName matches the bot's display name or localpart at the start of
// a body, followed by a colon or comma.
func (a *Adapter) leadingName() *regexp.Regexp {
	names := []string{regexp.QuoteMeta(a.bot.Localpart())}
	if n := a.name(); n != "" {
		names = append(names, regexp.QuoteMeta(n))
	}
	return regexp.MustCompile(`(?i)^\s*@?(?:` + strings.Join(names, "|") + `)\s*[:,]`)
}

// stripMention removes the bot's name from the start of a body and its
// user id anywhere.
func (a *Adapter) stripMention(body string) string {
	if loc := a.leadingName().FindStringIndex(body); loc != nil {
		body = body[loc[1]:]
	}
	return strings.TrimSpace(strings.ReplaceAll(body, a.bot.String(), ""))
}

// text is the message as the agent reads it: the body without the reply
// fallback (the quoted lines older clients put first) and without the
// bot's name.
func (a *Adapter) text(c *content) string {
	body := c.Body
	if c.RelatesTo != nil && c.RelatesTo.InReplyTo != nil && strings.HasPrefix(body, "> ") {
		lines := strings.Split(body, "\n")
		i := 0
		for i < len(lines) && strings.HasPrefix(lines[i], ">") {
			i++
		}
		body = strings.Join(lines[i:], "\n")
	}
	return a.stripMention(body)
}

// repliesToBot reports whether an event is the bot's.
func (a *Adapter) repliesToBot(ctx context.Context, roomID id.RoomID, target id.EventID) bool {
	ev, err := a.cli.GetEvent(ctx, roomID, target)
	if err != nil {
		a.log.DebugContext(ctx, "reading the event a matrix reply answers", "event_id", target, "err", err)
		return false
	}
	return ev.Sender == a.bot
}

// fileName is the name of a file message: filename, else body.
func fileName(c *content) string {
	if c.FileName != "" {
		return c.FileName
	}
	return c.Body
}

// fileCaption is the caption of a file message (Matrix 1.10: body is the
// caption when filename is set and differs).
func fileCaption(c *content) string {
	if c.FileName != "" && c.Body != c.FileName {
		return c.Body
	}
	return ""
}

// readFiles downloads a file message's file through the authenticated
// media API, within the limits, for the model.
func (a *Adapter) readFiles(ctx context.Context, c *content, fetch bool) []core.UserFile {
	uf := core.UserFile{Name: fileName(c)}
	if c.Info != nil {
		uf.MimeType, uf.Size = c.Info.MimeType, c.Info.Size
	}
	switch {
	case a.opts.FileMaxCount < 0:
		uf.Note = "the bot does not read files"
	case !fetch:
		uf.Note = "not downloaded: the message did not mention the bot"
	case core.FileKind(uf.MimeType) == "":
		uf.Note = "a file type the model cannot read"
	case uf.Size > a.opts.FileMaxBytes:
		uf.Note = fmt.Sprintf("%d bytes, over the %d-byte limit", uf.Size, a.opts.FileMaxBytes)
	default:
		data, err := a.download(ctx, c.URL)
		if err != nil {
			a.log.WarnContext(ctx, "downloading a matrix file", "url", c.URL, "err", err)
			uf.Note = "it could not be downloaded"
			break
		}
		uf.Data, uf.Size = data, int64(len(data))
	}
	return []core.UserFile{uf}
}

var errTooLarge = errors.New("the file is over the size limit")

// download reads an mxc:// file through the authenticated media API
// (GET /_matrix/client/v1/media/download), at most FileMaxBytes of it.
func (a *Adapter) download(ctx context.Context, mxc string) ([]byte, error) {
	uri, err := id.ParseContentURI(mxc)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", mxc, err)
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.FileTimeout)
	defer cancel()
	resp, err := a.cli.Download(ctx, uri)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, over, err := bots.ReadAtMost(resp.Body, a.opts.FileMaxBytes)
	if over {
		return nil, errTooLarge
	}
	return data, err
}

// encryptedNotice is what the bot says, once per room, when it sees an
// encrypted message.
const encryptedNotice = "I can't read encrypted messages: end-to-end encryption is not supported yet. " +
	"Talk to me in a room without encryption (encryption cannot be turned off in a room once on)."

// tellEncrypted posts encryptedNotice in a room once: its transaction id
// is the room's, so the homeserver keeps it to one across restarts too.
func (a *Adapter) tellEncrypted(ctx context.Context, roomID id.RoomID) {
	a.roomMu.Lock()
	seen := a.encryptedSeen[roomID]
	a.encryptedSeen[roomID] = true
	a.roomMu.Unlock()
	if seen {
		return
	}
	c := &event.MessageEventContent{MsgType: event.MsgNotice, Body: encryptedNotice, Mentions: &event.Mentions{}}
	if _, err := a.send(ctx, roomID, event.EventMessage, c, txnID("encrypted:"+roomID.String(), "n", 0)); err != nil {
		a.log.WarnContext(ctx, "telling a matrix room its messages are unreadable", "room_id", roomID, "err", err)
	}
}
