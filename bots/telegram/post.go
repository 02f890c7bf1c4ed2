package telegram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboardhq/switchboard/bots"
)

// Where a message goes. A Target's Channel is the chat id; its Thread is
// "" for the chat itself, "topic:<id>" for a forum topic (sent with
// message_thread_id), or "<message id>" for a reply thread in a group: the
// first message of the thread, which the bot's posts reply to
// (reply_parameters), so that Telegram keeps them in the thread.

// topicPrefix marks a Thread that is a forum topic.
const topicPrefix = "topic:"

// place is a resolved target.
type place struct {
	chat    string
	chatID  int64
	topic   int // message_thread_id
	replyTo int // reply_parameters.message_id
}

// placeOf resolves a target: a target with no channel is the user's
// private chat, whose id is the user's.
func (a *Adapter) placeOf(to bots.Target) (place, error) {
	chat := to.Channel
	if chat == "" {
		chat = to.UserID
	}
	if chat == "" {
		return place{}, bots.Refused("the target names no chat", errors.New("telegram: empty target"))
	}
	id, err := chatID(chat)
	if err != nil {
		return place{}, bots.Refused("the target is not a Telegram chat", err)
	}
	p := place{chat: chat, chatID: id}
	switch t := to.Thread; {
	case t == "":
	case strings.HasPrefix(t, topicPrefix):
		n, err := strconv.Atoi(strings.TrimPrefix(t, topicPrefix))
		if err != nil {
			return place{}, bots.Refused("the target's topic is not a Telegram topic", err)
		}
		p.topic = n
	default:
		n, err := strconv.Atoi(t)
		if err != nil {
			return place{}, bots.Refused("the target's thread is not a Telegram message", err)
		}
		p.replyTo = n
		if last, ok := a.replyTo.Load(threadKey(chat, t)); ok {
			p.replyTo = last
		}
	}
	return p, nil
}

func threadKey(chat, thread string) string { return chat + "/" + thread }

func (p place) reply() *models.ReplyParameters {
	if p.replyTo == 0 {
		return nil
	}
	return &models.ReplyParameters{MessageID: p.replyTo, AllowSendingWithoutReply: true}
}

// Post implements bots.Adapter: the text, converted to Telegram HTML and
// split at 4,096 characters, then the files; buttons (and a card's)
// go under the last text message as an inline keyboard. A card is shown
// as its text. Ephemeral messages (Telegram has none) go to the person's
// private chat with the bot.
func (a *Adapter) Post(ctx context.Context, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	if m.Ephemeral && to.UserID != "" {
		to = bots.Target{Platform: to.Platform, Channel: to.UserID}
	}
	p, err := a.placeOf(to)
	if err != nil {
		return nil, err
	}
	btns := m.Buttons
	if m.Card != nil {
		btns = append(cardButtons(m.Card), btns...)
	}
	kb, err := keyboard(btns)
	if err != nil {
		return nil, bots.Refused("its buttons do not fit Telegram's limits", err)
	}
	text := messageText(m)
	var refs []bots.MessageRef
	if strings.TrimSpace(text) != "" || len(m.Files) == 0 {
		if strings.TrimSpace(text) == "" {
			text = "…"
		}
		parts := split(text, MaxMessageChars)
		for i, part := range parts {
			var markup models.ReplyMarkup
			if i == len(parts)-1 && kb != nil {
				markup = kb
			}
			msg, err := a.send(ctx, p, part, markup)
			if err != nil {
				return refs, fmt.Errorf("telegram: posting to chat %s: %w", p.chat, refusal(err))
			}
			refs = append(refs, bots.MessageRef{Channel: p.chat, ID: strconv.Itoa(msg.ID)})
		}
	}
	for _, f := range m.Files {
		msg, err := a.sendFile(ctx, p, f)
		if err != nil {
			return refs, fmt.Errorf("telegram: posting file %q to chat %s: %w", f.Name, p.chat, refusal(err))
		}
		refs = append(refs, bots.MessageRef{Channel: p.chat, ID: strconv.Itoa(msg.ID)})
	}
	return refs, nil
}

// messageText is what a message shows as text: a card's plain text (its
// Text) with the card's outcome, or the text.
func messageText(m *bots.Message) string {
	text := m.Text
	if m.Card != nil && m.Card.Stamped != nil && m.Card.Stamped.Outcome != "" && !strings.Contains(text, m.Card.Stamped.Outcome) {
		text = strings.TrimRight(text, "\n") + "\n\n" + m.Card.Stamped.Outcome
	}
	return text
}

// send sends one part of Markdown as HTML; should Telegram not read the
// HTML ("can't parse entities"), the part goes again as plain text, so a
// message is never lost to its formatting.
func (a *Adapter) send(ctx context.Context, p place, md string, markup models.ReplyMarkup) (*models.Message, error) {
	params := &tgbot.SendMessageParams{
		ChatID: p.chatID, MessageThreadID: p.topic, Text: toHTML(md), ParseMode: models.ParseModeHTML,
		ReplyParameters: p.reply(), ReplyMarkup: markup,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: tgbot.True()},
	}
	var msg *models.Message
	err := a.call(ctx, p.chat, func() (err error) {
		msg, err = a.api.SendMessage(ctx, params)
		return err
	})
	if cantParse(err) {
		a.log.WarnContext(ctx, "telegram could not parse the HTML of a message; sending it as plain text", "chat_id", p.chat, "error", err)
		params.Text, params.ParseMode = md, ""
		err = a.call(ctx, p.chat, func() (err error) {
			msg, err = a.api.SendMessage(ctx, params)
			return err
		})
	}
	return msg, err
}

// edit replaces one message's text (and keyboard) with md; an edit that
// changes nothing is no error.
func (a *Adapter) edit(ctx context.Context, ref bots.MessageRef, md string, markup models.ReplyMarkup) error {
	chat, err := chatID(ref.Channel)
	if err != nil {
		return bots.Refused("the message is not a Telegram message", err)
	}
	id, err := strconv.Atoi(ref.ID)
	if err != nil {
		return bots.Refused("the message is not a Telegram message", fmt.Errorf("telegram: message id %q: %w", ref.ID, err))
	}
	if strings.TrimSpace(md) == "" {
		md = "…"
	}
	params := &tgbot.EditMessageTextParams{
		ChatID: chat, MessageID: id, Text: toHTML(md), ParseMode: models.ParseModeHTML, ReplyMarkup: markup,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: tgbot.True()},
	}
	err = a.call(ctx, ref.Channel, func() error {
		_, err := a.api.EditMessageText(ctx, params)
		return err
	})
	if cantParse(err) {
		params.Text, params.ParseMode = md, ""
		err = a.call(ctx, ref.Channel, func() error {
			_, err := a.api.EditMessageText(ctx, params)
			return err
		})
	}
	if notModified(err) {
		return nil
	}
	return err
}

// Update implements bots.Editor: the message shows m's text (its first
// 4,096 characters) and buttons.
func (a *Adapter) Update(ctx context.Context, ref bots.MessageRef, m *bots.Message) error {
	btns := m.Buttons
	if m.Card != nil {
		btns = append(cardButtons(m.Card), btns...)
	}
	kb, err := keyboard(btns)
	if err != nil {
		return bots.Refused("its buttons do not fit Telegram's limits", err)
	}
	var markup models.ReplyMarkup = &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
	if kb != nil {
		markup = kb
	}
	parts := split(messageText(m), MaxMessageChars)
	if err := a.edit(ctx, ref, parts[0], markup); err != nil {
		return fmt.Errorf("telegram: editing message %s: %w", ref.ID, refusal(err))
	}
	return nil
}

// deleteMessage deletes a message the bot posted; one already gone is no
// error.
func (a *Adapter) deleteMessage(ctx context.Context, ref bots.MessageRef) error {
	chat, err := chatID(ref.Channel)
	if err != nil {
		return err
	}
	id, err := strconv.Atoi(ref.ID)
	if err != nil {
		return fmt.Errorf("telegram: message id %q: %w", ref.ID, err)
	}
	err = a.call(ctx, "", func() error {
		_, err := a.api.DeleteMessage(ctx, &tgbot.DeleteMessageParams{ChatID: chat, MessageID: id})
		return err
	})
	if errors.Is(err, tgbot.ErrorBadRequest) && strings.Contains(err.Error(), "not found") {
		return nil
	}
	return err
}

// sendFile uploads a file: an image as a photo (shown inline), anything
// else as a document, with its caption (or title) as the caption.
func (a *Adapter) sendFile(ctx context.Context, p place, f bots.File) (*models.Message, error) {
	caption := f.Caption
	if caption == "" {
		caption = f.Title
	}
	if utf16Len(caption) > MaxCaptionChars {
		caption = split(caption, MaxCaptionChars)[0]
	}
	name := f.Name
	if name == "" {
		name = "file"
	}
	var msg *models.Message
	send := func(html bool) error {
		return a.call(ctx, p.chat, func() (err error) {
			text, mode := caption, models.ParseMode("")
			if html && caption != "" {
				text, mode = toHTML(caption), models.ParseModeHTML
			}
			upload := &models.InputFileUpload{Filename: name, Data: bytes.NewReader(f.Data)}
			if isPhoto(f) {
				msg, err = a.api.SendPhoto(ctx, &tgbot.SendPhotoParams{
					ChatID: p.chatID, MessageThreadID: p.topic, Photo: upload, Caption: text, ParseMode: mode, ReplyParameters: p.reply(),
				})
				return err
			}
			msg, err = a.api.SendDocument(ctx, &tgbot.SendDocumentParams{
				ChatID: p.chatID, MessageThreadID: p.topic, Document: upload, Caption: text, ParseMode: mode, ReplyParameters: p.reply(),
			})
			return err
		})
	}
	err := send(true)
	if cantParse(err) {
		err = send(false)
	}
	return msg, err
}

// isPhoto reports a file Telegram shows as a photo: a PNG, JPEG or WebP
// within the 10 MB photos may have.
func isPhoto(f bots.File) bool {
	switch f.MimeType {
	case "image/png", "image/jpeg", "image/webp":
		return len(f.Data) <= 10<<20
	}
	return false
}
