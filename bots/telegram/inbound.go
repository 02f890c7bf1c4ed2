package telegram

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
)

// WebhookPath is where Telegram posts updates in webhook mode.
const WebhookPath = "/telegram/webhook"

// SecretHeader carries the webhook's secret_token.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// Routes mounts the webhook endpoint (webhook mode only).
func (a *Adapter) Routes(mux *http.ServeMux) {
	if a.opts.WebhookURL == "" {
		return
	}
	mux.HandleFunc("POST "+WebhookPath, a.serveWebhook)
}

// serveWebhook takes one update. The secret is compared in constant time;
// an update is answered 200 once it is handled (Submit deduplicates a
// redelivery by update_id), and 500 when it could not be, so Telegram
// sends it again.
func (a *Adapter) serveWebhook(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get(SecretHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(a.opts.WebhookSecret)) != 1 {
		http.Error(w, "bad secret token", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "reading the update", http.StatusBadRequest)
		return
	}
	var upd models.Update
	if err := json.Unmarshal(body, &upd); err != nil || upd.ID == 0 {
		http.Error(w, "not an update", http.StatusBadRequest)
		return
	}
	if a.bot() == nil || !a.enter() {
		http.Error(w, "not started", http.StatusServiceUnavailable)
		return
	}
	defer a.leave()
	if err := a.handle(r.Context(), &upd); err != nil {
		a.log.ErrorContext(r.Context(), "handling a telegram update", "update_id", upd.ID, "error", err)
		http.Error(w, "try again", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// leadRetry is how long an instance that does not hold the poll lease
// waits before it asks again.
const leadRetry = 2 * time.Second

// pollLoop long-polls getUpdates while this instance holds the poll lease.
// Updates are handled in order, one by one, and the offset moves past an
// update only once it is handled; Telegram forgets updates only when a
// getUpdates asks past them, so a crash or a takeover repeats at most the
// updates being handled (deduplicated by update_id in core) and loses
// none.
func (a *Adapter) pollLoop() {
	defer a.wg.Done()
	ctx := a.ctx
	var (
		offset  int64
		leading bool
		backoff time.Duration
	)
	defer func() {
		if leading && a.opts.Poller != nil {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := a.opts.Poller.Release(rctx); err != nil {
				a.log.WarnContext(rctx, "releasing the telegram poll lease", "error", err)
			}
		}
	}()
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for ctx.Err() == nil {
		if p := a.opts.Poller; p != nil {
			ok, err := p.Lead(ctx)
			if err != nil || !ok {
				if err != nil && ctx.Err() == nil {
					a.log.WarnContext(ctx, "taking the telegram poll lease", "error", err)
				}
				if leading {
					a.log.InfoContext(ctx, "this instance no longer polls telegram")
				}
				leading = false
				if !sleep(leadRetry) {
					return
				}
				continue
			}
			if !leading {
				// Telegram's first unconfirmed update: whatever the last
				// poller did not ask past.
				offset = 0
				a.log.InfoContext(ctx, "this instance polls telegram")
				leading = true
				a.dropWebhook(ctx)
			}
		} else if !leading {
			leading = true
			a.dropWebhook(ctx)
		}
		updates, err := a.getUpdates(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(backoff*2, 250*time.Millisecond), 10*time.Second)
			if errors.Is(err, tgbot.ErrorConflict) {
				a.log.WarnContext(ctx, "telegram answered 409 Conflict to getUpdates: another process polls with this token, or a webhook is set", "error", err)
			} else {
				a.log.WarnContext(ctx, "telegram getUpdates", "error", err)
			}
			if !sleep(backoff) {
				return
			}
			continue
		}
		backoff = 0
		for _, upd := range updates {
			if int64(upd.ID) < offset {
				continue
			}
			if err := a.handleWithRetry(ctx, upd); err != nil {
				return // stopping: the update is handled again by the next poller
			}
			offset = int64(upd.ID) + 1
		}
	}
}

// handleWithRetry handles one update, retrying what may pass (the store
// briefly unreachable); an update that keeps failing is logged and
// passed after three attempts, so one bad update never stops the bot. It
// returns an error only when the adapter stops.
func (a *Adapter) handleWithRetry(ctx context.Context, upd *models.Update) error {
	for attempt := 1; ; attempt++ {
		err := a.handle(ctx, upd)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt >= 3 {
			a.log.ErrorContext(ctx, "handling a telegram update failed; passing it", "update_id", upd.ID, "error", err)
			return nil
		}
		a.log.WarnContext(ctx, "handling a telegram update failed; trying again", "update_id", upd.ID, "attempt", attempt, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
}

// dropWebhook removes a webhook, which would make getUpdates answer 409.
func (a *Adapter) dropWebhook(ctx context.Context) {
	if _, err := a.api.DeleteWebhook(ctx, &tgbot.DeleteWebhookParams{}); err != nil && ctx.Err() == nil {
		a.log.WarnContext(ctx, "telegram deleteWebhook before polling", "error", redactToken(err.Error(), a.opts.Token))
	}
}

// getUpdates is one long poll (https://core.telegram.org/bots/api#getupdates).
func (a *Adapter) getUpdates(ctx context.Context, offset int64) ([]*models.Update, error) {
	body, _ := json.Marshal(map[string]any{
		"offset": offset, "timeout": int(a.opts.PollTimeout / time.Second), "allowed_updates": allowedUpdates,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.opts.APIURL+"/bot"+a.opts.Token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.poll.Do(req)
	if err != nil {
		return nil, errors.New(redactToken(err.Error(), a.opts.Token))
	}
	defer resp.Body.Close()
	var r struct {
		OK          bool             `json:"ok"`
		Result      []*models.Update `json:"result"`
		ErrorCode   int              `json:"error_code"`
		Description string           `json:"description"`
		Parameters  *struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&r); err != nil {
		return nil, fmt.Errorf("decoding getUpdates (%s): %w", resp.Status, err)
	}
	if !r.OK {
		switch r.ErrorCode {
		case http.StatusConflict:
			return nil, fmt.Errorf("%w, %s", tgbot.ErrorConflict, r.Description)
		case http.StatusUnauthorized:
			return nil, fmt.Errorf("%w, %s", tgbot.ErrorUnauthorized, r.Description)
		case http.StatusTooManyRequests:
			ra := 1
			if r.Parameters != nil {
				ra = r.Parameters.RetryAfter
			}
			return nil, &tgbot.TooManyRequestsError{Message: r.Description, RetryAfter: ra}
		}
		return nil, fmt.Errorf("getUpdates: %d %s", r.ErrorCode, r.Description)
	}
	return r.Result, nil
}

// handle hands one update to core.
func (a *Adapter) handle(ctx context.Context, upd *models.Update) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout+a.opts.HTTPClient.Timeout)
	defer cancel()
	switch {
	case upd.Message != nil:
		return a.onMessage(ctx, upd.ID, upd.Message)
	case upd.CallbackQuery != nil:
		a.onCallback(ctx, upd.CallbackQuery)
	}
	return nil
}

// eventID is the dedupe key of an update: update_id, unique per bot.
func eventID(updateID int64) string { return "update:" + strconv.FormatInt(updateID, 10) }

func (a *Adapter) onMessage(ctx context.Context, updateID int64, m *models.Message) error {
	in, ok := a.normalize(ctx, updateID, m)
	if !ok {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	res, err := a.opts.Submitter.Submit(sctx, in)
	cancel()
	if err != nil {
		return fmt.Errorf("submitting telegram message %s in chat %s: %w", in.MessageID, in.Channel, err)
	}
	a.log.DebugContext(ctx, "telegram message submitted", "message_id", in.MessageID, "chat_id", in.Channel,
		"conversation_id", res.ConversationID, "duplicate", res.Duplicate, "ignored", res.Ignored, "refused", res.Refused)
	if !res.Duplicate && !res.Ignored && !res.Refused && in.Thread != "" && !strings.HasPrefix(in.Thread, topicPrefix) {
		// The bot's next post in this reply thread answers this message.
		a.replyTo.Store(threadKey(in.Channel, in.Thread), m.ID)
	}
	if res.Refused && res.Notice != "" {
		// No ephemeral messages: a refusal in a group goes to the
		// sender's private chat (Telegram refuses it unless they started
		// the bot; then nothing is said), one in a private chat stays.
		to := bots.Target{Platform: Platform, Channel: in.Channel, UserID: in.UserID}
		if _, err := a.Post(ctx, to, &bots.Message{Text: res.Notice, Ephemeral: !in.IsDM}); err != nil {
			a.log.WarnContext(ctx, "telling a refused telegram user failed", "user_id", in.UserID, "chat_id", in.Channel, "error", err)
		}
	}
	return nil
}

// normalize turns a message into an Inbound, or reports false for one the
// bot must not see (its own, other bots', service messages).
//
// Places: Channel is the chat id. In a private chat there is no Thread.
// In a forum topic the Thread is "topic:<message_thread_id>". In a group,
// a message addressed to the bot starts a reply thread, "<its message
// id>", unless it is a reply in one already (a supergroup gives the
// thread's first message as message_thread_id; a basic group has no
// threads, and its chat is the conversation).
//
// Addressing: Mentioned is true in a private chat, for a mention of the
// bot (@username, or a text mention of its user), for a command sent to
// it (/ask@bot), and for a reply to one of its messages.
func (a *Adapter) normalize(ctx context.Context, updateID int64, m *models.Message) (*core.Inbound, bool) {
	me := a.bot()
	if m.From == nil || me == nil || m.From.ID == me.ID || m.From.IsBot {
		return nil, false
	}
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	files := attachments(m)
	if text == "" && len(files) == 0 {
		return nil, false // a service message, sticker, poll, …
	}
	chat := strconv.FormatInt(m.Chat.ID, 10)
	in := &core.Inbound{
		Platform:  Platform,
		EventID:   eventID(updateID),
		Channel:   chat,
		MessageID: strconv.Itoa(m.ID),
		UserID:    strconv.FormatInt(m.From.ID, 10),
		UserName:  displayName(m.From),
		IsDM:      m.Chat.Type == models.ChatTypePrivate,
		At:        time.Unix(int64(m.Date), 0).UTC(),
	}
	if m.Date == 0 {
		in.At = a.opts.Now()
	}
	a.names.Store(in.UserID, in.UserName)
	mentioned := mentions(text, entities, me)
	repliesToBot := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == me.ID
	in.Mentioned = in.IsDM || mentioned || repliesToBot
	in.Text = stripMention(text, me.Username)
	if !in.IsDM {
		switch {
		case m.IsTopicMessage && m.MessageThreadID != 0:
			in.Thread = topicPrefix + strconv.Itoa(m.MessageThreadID)
		case m.MessageThreadID != 0:
			in.Thread = strconv.Itoa(m.MessageThreadID)
		case m.Chat.Type == models.ChatTypeSupergroup && m.ReplyToMessage != nil:
			in.Thread = strconv.Itoa(m.ReplyToMessage.ID)
		case m.Chat.Type == models.ChatTypeSupergroup && in.Mentioned:
			in.Thread = strconv.Itoa(m.ID)
		}
	}
	in.Files = a.readFiles(ctx, files, in.Mentioned)
	for _, f := range in.Files {
		if f.Note != "" || len(f.Data) == 0 {
			line := "[attachment: " + f.Name + "]"
			if in.Text == "" {
				in.Text = line
			} else {
				in.Text += "\n" + line
			}
		}
	}
	return in, true
}

// mentions reports whether text's entities mention the bot: @username,
// a text mention of its user, or a command addressed to it.
func mentions(text string, entities []models.MessageEntity, me *models.User) bool {
	u := utf16Units(text)
	for _, e := range entities {
		switch e.Type {
		case models.MessageEntityTypeTextMention:
			if e.User != nil && e.User.ID == me.ID {
				return true
			}
		case models.MessageEntityTypeMention, models.MessageEntityTypeBotCommand:
			if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > len(u) {
				continue
			}
			s := string(utf16Decode(u[e.Offset : e.Offset+e.Length]))
			if e.Type == models.MessageEntityTypeBotCommand {
				_, s, _ = strings.Cut(s, "@")
				s = "@" + s
			}
			if me.Username != "" && strings.EqualFold(s, "@"+me.Username) {
				return true
			}
		}
	}
	return false
}

// stripMention removes the bot's @username from text.
func stripMention(text, username string) string {
	if username == "" {
		return strings.TrimSpace(text)
	}
	at := "@" + username
	lower, lat := strings.ToLower(text), strings.ToLower(at)
	var b strings.Builder
	for {
		i := strings.Index(lower, lat)
		if i < 0 {
			b.WriteString(text)
			break
		}
		b.WriteString(text[:i])
		text, lower = text[i+len(at):], lower[i+len(at):]
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func displayName(u *models.User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = u.Username
	}
	return name
}

// onCallback hands a button click to core, answers the callback query
// (which stops the button's spinner, with a short note when the click was
// refused), and shows the choice in place of the keyboard.
func (a *Adapter) onCallback(ctx context.Context, q *models.CallbackQuery) {
	actionID, value := decodeCallback(q.Data)
	res, err := func() (*core.ActionResult, error) {
		actx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
		defer cancel()
		return a.opts.Submitter.Act(actx, &core.Action{
			Platform: Platform, EventID: "callback:" + q.ID, ActionID: actionID, Value: value,
			UserID: strconv.FormatInt(q.From.ID, 10), UserName: displayName(&q.From), At: a.opts.Now(),
		})
	}()
	answer := func(text string) {
		if _, err := a.api.AnswerCallbackQuery(ctx, &tgbot.AnswerCallbackQueryParams{CallbackQueryID: q.ID, Text: shorten(text, 200), ShowAlert: text != ""}); err != nil {
			a.log.WarnContext(ctx, "answering a telegram callback query", "callback_query_id", q.ID, "error", err)
		}
	}
	switch {
	case errors.Is(err, core.ErrNotPending):
		answer("This was already decided.")
		return
	case errors.Is(err, core.ErrInvalid):
		a.log.WarnContext(ctx, "telegram button refused by core", "action_id", actionID, "error", err)
		answer("This button no longer works.")
		return
	case err != nil:
		a.log.ErrorContext(ctx, "handing a telegram click to core", "action_id", actionID, "error", err)
		answer("Something went wrong; your choice was not recorded. Please try again.")
		return
	case res.Refused:
		answer(cmpOr(res.Reason, "You can't make this choice."))
		return
	case res.Duplicate && res.Settled != nil:
		answer(settledText(res.Settled))
		return
	case res.Duplicate:
		answer("This was already decided.")
		return
	}
	answer("")
	m := q.Message.Message
	if m == nil {
		return
	}
	label := value
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				if b.CallbackData == q.Data {
					label = b.Text
				}
			}
		}
	}
	// The question stays, with its formatting (its entities, whose
	// offsets an appended line does not move); the keyboard goes.
	note := "✅ " + label + " — chosen by " + displayName(&q.From)
	text := m.Text
	if text == "" {
		text = note
	} else {
		text += "\n\n" + note
	}
	if utf16Len(text) > MaxMessageChars {
		text = note
		m.Entities = nil
	}
	err = a.call(ctx, strconv.FormatInt(m.Chat.ID, 10), func() error {
		_, err := a.api.EditMessageText(ctx, &tgbot.EditMessageTextParams{
			ChatID: m.Chat.ID, MessageID: m.ID, Text: text, Entities: m.Entities,
			ReplyMarkup: &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}},
		})
		return err
	})
	if err != nil && !notModified(err) {
		a.log.WarnContext(ctx, "showing a telegram choice", "chat_id", m.Chat.ID, "message_id", m.ID, "error", err)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// settledText tells a late clicker how the buttons were settled.
func settledText(st *core.Settled) string {
	if st.Expired {
		return "This approval expired at " + st.At.UTC().Format("Jan 2 15:04 MST") + "; ask again."
	}
	who := cmpOr(st.By, "someone else")
	text := "Already chosen by " + who
	if st.Choice != "" {
		text += ": " + shorten(st.Choice, 100)
	}
	return text + "."
}
