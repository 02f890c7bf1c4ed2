package matrix

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/format"
	"maunium.net/go/mautrix/id"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/mdsplit"
)

// Rate limits: a 429 is waited out at most this long, this often.
const (
	maxRetryAfter = time.Minute
	maxAttempts   = 5
)

// retryAfter reads how long a 429 M_LIMIT_EXCEEDED asks to wait:
// retry_after_ms in the body, else the Retry-After header, else a second.
func retryAfter(err error) (time.Duration, bool) {
	var he mautrix.HTTPError
	if !errors.As(err, &he) {
		return 0, false
	}
	limited := he.IsStatus(http.StatusTooManyRequests) || (he.RespError != nil && he.RespError.ErrCode == mautrix.MLimitExceeded.ErrCode)
	if !limited {
		return 0, false
	}
	d := time.Second
	if he.RespError != nil {
		if ms, ok := he.RespError.ExtraData["retry_after_ms"].(float64); ok && ms >= 0 {
			d = time.Duration(ms) * time.Millisecond
		}
	} else if he.Response != nil {
		if s, err := strconv.Atoi(he.Response.Header.Get("Retry-After")); err == nil && s >= 0 {
			d = time.Duration(s) * time.Second
		}
	}
	return min(d, maxRetryAfter), true
}

// retry runs f, waiting out rate limits (see retryAfter) up to
// maxAttempts times and never past ctx.
func (a *Adapter) retry(ctx context.Context, f func() error) error {
	for attempt := 1; ; attempt++ {
		err := f()
		d, limited := retryAfter(err)
		if !limited || attempt >= maxAttempts {
			return err
		}
		a.log.DebugContext(ctx, "matrix rate limit; waiting", "retry_after", d, "attempt", attempt)
		if !sleep(ctx, d) {
			return errors.Join(err, ctx.Err())
		}
	}
}

// txnID is the transaction id of part i of kind of the post with
// idempotency key key: the same for the same three, within the
// characters the spec's path segment takes. An empty key gets a fresh id.
func txnID(key, kind string, i int) string {
	if key == "" {
		return "sb." + uuid.NewString()
	}
	sum := sha256.Sum256([]byte(key))
	return "sb." + base64.RawURLEncoding.EncodeToString(sum[:18]) + "." + kind + strconv.Itoa(i)
}

// send PUTs one event with a transaction id, waiting out rate limits.
func (a *Adapter) send(ctx context.Context, roomID id.RoomID, typ event.Type, c any, txn string) (id.EventID, error) {
	var resp *mautrix.RespSendEvent
	err := a.retry(ctx, func() error {
		var err error
		resp, err = a.cli.SendMessageEvent(ctx, roomID, typ, c, mautrix.ReqSendEvent{TransactionID: txn})
		return err
	})
	if err != nil {
		return "", refusal(err)
	}
	return resp.EventID, nil
}

// refusal wraps the errors that sending again cannot cure as
// bots.Refused.
func refusal(err error) error {
	switch {
	case errors.Is(err, mautrix.MForbidden):
		return bots.Refused("the bot may not post in this room (not a member, or lacking power)", err)
	case errors.Is(err, mautrix.MTooLarge):
		return bots.Refused("the message or file is larger than the homeserver accepts", err)
	case errors.Is(err, mautrix.MNotFound):
		return bots.Refused("the room is unknown to the homeserver", err)
	case errors.Is(err, mautrix.MBadJSON) || errors.Is(err, mautrix.MNotJSON):
		return bots.Refused("the homeserver refused the message's form", err)
	}
	return err
}

// option is one numbered choice of a message, carried in its content
// (app.switchboard.options) so that a reaction finds its action wherever
// and whenever it arrives.
type option struct {
	Key      string `json:"key"`
	ActionID string `json:"action_id"`
	Value    string `json:"value,omitempty"`
	Label    string `json:"label"`
}

// optionKeys are the reactions of the options, in order.
var optionKeys = []string{"1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣", "🔟"}

// MaxOptions is the most buttons a message shows as options.
var MaxOptions = len(optionKeys)

// sameKey compares reaction keys without variation selectors, which
// clients add or drop (1️⃣ is 1, U+FE0F, U+20E3).
func sameKey(a, b string) bool {
	strip := func(s string) string { return strings.ReplaceAll(s, "\uFE0F", "") }
	return strip(a) == strip(b)
}

// message is an m.room.message with the adapter's options.
type message struct {
	*event.MessageEventContent
	Options []option `json:"app.switchboard.options,omitempty"`
}

// markdown renders Markdown as the spec asks of a formatted message: HTML
// in formatted_body (raw HTML in the text escaped), and the Markdown
// itself as the plain body.
func markdown(text string, msgtype event.MessageType) *event.MessageEventContent {
	c := format.RenderMarkdown(text, true, false)
	c.Body = text
	c.MsgType = msgtype
	// Nobody is pinged by what a model wrote.
	c.Mentions = &event.Mentions{}
	if c.FormattedBody == "" {
		c.Format = ""
	}
	return &c
}

// buttonOptions turns buttons (the message's and its card's) into options.
func buttonOptions(m *bots.Message) ([]option, error) {
	buttons := append([]bots.Button(nil), m.Buttons...)
	if m.Card != nil && m.Card.Stamped != nil {
		for _, act := range m.Card.Stamped.Actions {
			buttons = append(buttons, cardButton(m.Card.EntryID, act.ID, act.Label))
		}
	}
	if len(buttons) > MaxOptions {
		return nil, bots.Refused(fmt.Sprintf("%d choices are more than the %d a Matrix message offers", len(buttons), MaxOptions),
			fmt.Errorf("matrix: %d buttons", len(buttons)))
	}
	out := make([]option, len(buttons))
	for i, b := range buttons {
		label := b.Label
		if label == "" {
			label = b.Value
		}
		out[i] = option{Key: optionKeys[i], ActionID: b.ActionID, Value: b.Value, Label: label}
	}
	return out, nil
}

// optionsText is the list of options under a message's text.
func optionsText(opts []option) string {
	var b strings.Builder
	for _, o := range opts {
		fmt.Fprintf(&b, "%s %s\n", o.Key, o.Label)
	}
	b.WriteString("\n_React with a number to choose._")
	return b.String()
}

// outgoing is one event of a bots.Message.
type outgoing struct {
	text    string // Markdown
	options []option
	file    *bots.File
}

// render splits m into the events Matrix shows: the text in parts (the
// card's text when there is a card), the options with the last part, then
// one event per file.
func (a *Adapter) render(m *bots.Message) ([]outgoing, error) {
	opts, err := buttonOptions(m)
	if err != nil {
		return nil, err
	}
	text := m.Text
	if m.Card != nil && m.Card.Stamped != nil {
		if t := m.Card.Stamped.PlainTextMax(a.opts.MaxMessageChars); t != "" {
			text = t
		}
	}
	var out []outgoing
	for _, p := range mdsplit.Split(text, a.opts.MaxMessageChars) {
		out = append(out, outgoing{text: p})
	}
	if len(opts) > 0 {
		if len(out) == 0 {
			out = append(out, outgoing{text: "Choose:"})
		}
		out[len(out)-1].options = opts
	}
	for i := range m.Files {
		out = append(out, outgoing{file: &m.Files[i]})
	}
	if len(out) == 0 {
		out = append(out, outgoing{text: "…"})
	}
	return out, nil
}

// relation puts an event in the target's thread (with the fallback reply
// for clients without threads).
func relation(to bots.Target) *event.RelatesTo {
	if to.Thread == "" {
		return nil
	}
	root := id.EventID(to.Thread)
	return (&event.RelatesTo{}).SetThread(root, root)
}

// contentOf is the event content of one outgoing text.
func contentOf(o outgoing, msgtype event.MessageType) *message {
	text := o.text
	if len(o.options) > 0 {
		text += "\n\n" + optionsText(o.options)
	}
	return &message{MessageEventContent: markdown(text, msgtype), Options: o.options}
}

// Post implements bots.Adapter. Each event's transaction id comes from
// m.Key, so posting the same message again after a crash makes nothing
// new and returns the same events.
func (a *Adapter) Post(ctx context.Context, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	roomID, err := a.targetRoom(ctx, to, m.Ephemeral)
	if err != nil {
		return nil, err
	}
	if to.Channel != roomID.String() {
		to.Thread = "" // a DM the message was moved to has no thread of the target's
	}
	parts, err := a.render(m)
	if err != nil {
		return nil, err
	}
	var refs []bots.MessageRef
	for i, p := range parts {
		evID, err := a.sendPart(ctx, roomID, to, p, txnID(m.Key, "p", i), event.MsgText)
		if err != nil {
			return refs, fmt.Errorf("matrix: posting to %s: %w", roomID, err)
		}
		refs = append(refs, bots.MessageRef{Channel: roomID.String(), ID: evID.String()})
		if err := a.offer(ctx, roomID, evID, p.options, m.Key); err != nil {
			return refs, err
		}
	}
	return refs, nil
}

// sendPart sends one outgoing: a text, or a file uploaded first.
func (a *Adapter) sendPart(ctx context.Context, roomID id.RoomID, to bots.Target, p outgoing, txn string, msgtype event.MessageType) (id.EventID, error) {
	if p.file != nil {
		c, err := a.fileContent(ctx, p.file)
		if err != nil {
			return "", err
		}
		c.RelatesTo = relation(to)
		return a.send(ctx, roomID, event.EventMessage, c, txn)
	}
	c := contentOf(p, msgtype)
	c.RelatesTo = relation(to)
	return a.send(ctx, roomID, event.EventMessage, c, txn)
}

// offer adds the bot's own reaction for each option, so a person chooses
// with one tap; the reactions' transaction ids come from the post's key.
func (a *Adapter) offer(ctx context.Context, roomID id.RoomID, evID id.EventID, opts []option, key string) error {
	for i, o := range opts {
		c := &event.ReactionEventContent{RelatesTo: *(&event.RelatesTo{}).SetAnnotation(evID, o.Key)}
		k := key
		if k == "" {
			k = evID.String()
		}
		if _, err := a.send(ctx, roomID, event.EventReaction, c, txnID(k+"/"+evID.String(), "r", i)); err != nil {
			return fmt.Errorf("matrix: offering option %s on %s: %w", o.Key, evID, err)
		}
	}
	return nil
}

// Update implements bots.Editor: the message becomes m's text (its first
// part; options are shown as text but clicks count only on a message
// posted with them).
func (a *Adapter) Update(ctx context.Context, ref bots.MessageRef, m *bots.Message) error {
	parts, err := a.render(m)
	if err != nil {
		return err
	}
	p := parts[0]
	if p.file != nil {
		p = outgoing{text: m.Text}
	}
	txn := ""
	if m.Key != "" {
		txn = txnID(m.Key+"/"+ref.ID, "u", 0)
	} else {
		txn = txnID("", "", 0)
	}
	if err := a.edit(ctx, id.RoomID(ref.Channel), id.EventID(ref.ID), contentOf(p, event.MsgText), txn); err != nil {
		return fmt.Errorf("matrix: editing %s: %w", ref.ID, err)
	}
	return nil
}

// edit replaces an event's content (m.replace with m.new_content).
func (a *Adapter) edit(ctx context.Context, roomID id.RoomID, target id.EventID, c *message, txn string) error {
	nc := *c.MessageEventContent
	nc.RelatesTo = nil
	body := "* " + c.Body
	outer := map[string]any{
		"msgtype":       c.MsgType,
		"body":          body,
		"m.new_content": &message{MessageEventContent: &nc, Options: c.Options},
		"m.relates_to":  map[string]any{"rel_type": string(event.RelReplace), "event_id": target.String()},
		"m.mentions":    map[string]any{},
	}
	if c.FormattedBody != "" {
		outer["format"] = string(event.FormatHTML)
		outer["formatted_body"] = "* " + c.FormattedBody
	}
	_, err := a.send(ctx, roomID, event.EventMessage, outer, txn)
	return err
}

// redact removes one of the bot's events (a surplus streamed part).
func (a *Adapter) redact(ctx context.Context, roomID id.RoomID, target id.EventID, txn string) error {
	return a.retry(ctx, func() error {
		_, err := a.cli.RedactEvent(ctx, roomID, target, mautrix.ReqRedact{TxnID: txn})
		return err
	})
}

// targetRoom is the room a target names, or the person's direct chat for
// a target with only a user (a reminder) or an ephemeral message in a
// room (Matrix has no ephemeral messages).
func (a *Adapter) targetRoom(ctx context.Context, to bots.Target, ephemeral bool) (id.RoomID, error) {
	if to.Channel != "" && !(ephemeral && to.UserID != "") {
		return id.RoomID(to.Channel), nil
	}
	if to.Channel != "" && a.isDirect(id.RoomID(to.Channel)) {
		return id.RoomID(to.Channel), nil
	}
	if to.UserID == "" {
		return "", bots.Refused("the message has no room and no person", errors.New("matrix: empty target"))
	}
	return a.dmRoom(ctx, id.UserID(to.UserID))
}

// directContent is the m.direct account data: user id -> their direct
// rooms.
type directContent map[id.UserID][]id.RoomID

// dmRoom is the bot's direct chat with a person: the one m.direct names,
// else a new one (then recorded in m.direct).
func (a *Adapter) dmRoom(ctx context.Context, user id.UserID) (id.RoomID, error) {
	a.roomMu.Lock()
	room, ok := a.dms[user]
	a.roomMu.Unlock()
	if ok {
		return room, nil
	}
	a.roomMu.Lock()
	for r, u := range a.directRooms {
		if u == user {
			room = r
			break
		}
	}
	a.roomMu.Unlock()
	if room == "" {
		resp, err := a.cli.CreateRoom(ctx, &mautrix.ReqCreateRoom{Invite: []id.UserID{user}, IsDirect: true, Preset: "trusted_private_chat"})
		if err != nil {
			return "", fmt.Errorf("matrix: opening a direct chat with %s: %w", user, refusal(err))
		}
		room = resp.RoomID
		if err := a.recordDirect(ctx, user, room); err != nil {
			a.log.WarnContext(ctx, "recording a matrix direct chat in m.direct", "room_id", room, "err", err)
		}
	}
	a.roomMu.Lock()
	a.dms[user] = room
	a.roomMu.Unlock()
	return room, nil
}

// SetStatus implements bots.StatusSetter with the typing notification:
// any status shows the bot typing (for up to 30 seconds), "" stops it.
func (a *Adapter) SetStatus(ctx context.Context, to bots.Target, status string) error {
	if to.Channel == "" {
		return nil
	}
	_, err := a.cli.UserTyping(ctx, id.RoomID(to.Channel), status != "", 30*time.Second)
	if err != nil {
		return fmt.Errorf("matrix: setting typing in %s: %w", to.Channel, err)
	}
	return nil
}

// rawContent reads an event's content as JSON.
func rawContent(ev *event.Event) json.RawMessage { return ev.Content.VeryRaw }
