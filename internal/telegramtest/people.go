package telegramtest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
	"unicode/utf16"
)

// Private is the private chat of a user with the bot (its id is the
// user's).
func Private(u User) Chat {
	return Chat{ID: u.ID, Type: "private", First: u.FirstName, Username: u.Username}
}

// Supergroup is a group chat (ids of supergroups start at -100…).
func Supergroup(id int64, title string) Chat { return Chat{ID: id, Type: "supergroup", Title: title} }

// Forum is a supergroup with topics.
func Forum(id int64, title string) Chat {
	return Chat{ID: id, Type: "supergroup", Title: title, IsForum: true}
}

// Send is a person's message to inject.
type Send struct {
	Chat Chat
	From User
	Text string
	// ReplyTo is the message it replies to (0: none); in a supergroup the
	// message joins that message's thread.
	ReplyTo int
	// Topic is the forum topic it is written in (0: none).
	Topic int
	// File, when set, is sent as a document with Text as its caption.
	File *File
}

var mentionPattern = regexp.MustCompile(`@[A-Za-z0-9_]{5,32}`)

// UserMessage injects a person's message as Telegram would deliver it
// (an update with the message, its @mentions as entities, its thread as
// Telegram threads it) and returns it.
func (s *Server) UserMessage(in Send) *Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.chatLocked(in.Chat)
	m := &Message{Chat: st.chat, From: in.From, Date: time.Now(), SentAt: time.Now(), Text: in.Text}
	if in.Topic != 0 {
		m.ThreadID, m.IsTopic = in.Topic, true
	}
	if in.ReplyTo != 0 {
		if to := st.find(in.ReplyTo); to != nil {
			m.ReplyTo = to.ID
			if m.ThreadID == 0 && st.chat.Type == "supergroup" {
				m.ThreadID = to.ThreadID
				if m.ThreadID == 0 {
					m.ThreadID = to.ID
				}
				m.IsTopic = to.IsTopic
			}
		}
	}
	for _, loc := range mentionPattern.FindAllStringIndex(in.Text, -1) {
		off := len(utf16.Encode([]rune(in.Text[:loc[0]])))
		m.Entities = append(m.Entities, Entity{Type: "mention", Offset: off, Length: len(utf16.Encode([]rune(in.Text[loc[0]:loc[1]])))})
	}
	if in.File != nil {
		s.nextFile++
		f := *in.File
		f.ID = "F" + strconv.Itoa(s.nextFile)
		s.files[f.ID] = &f
		m.Document, m.Caption, m.Text = &f, in.Text, ""
	}
	st.nextID++
	m.ID = st.nextID
	st.msgs = append(st.msgs, m)
	js := s.jsonLocked(st, m)
	if m.Caption != "" && len(m.Entities) > 0 {
		js["caption_entities"] = m.Entities
	}
	s.pushLocked("message", js)
	return m
}

// Mention injects a message that starts with the bot's @username.
func (s *Server) Mention(chat Chat, from User, text string) *Message {
	return s.UserMessage(Send{Chat: chat, From: from, Text: "@" + s.Bot.Username + " " + text})
}

// Click injects a press of the button with data under message id in chat,
// by from; it returns the callback query's id.
func (s *Server) Click(chat Chat, id int, from User, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.chatLocked(chat)
	m := st.find(id)
	if m == nil {
		panic(fmt.Sprintf("telegramtest: no message %d in chat %d", id, chat.ID))
	}
	s.nextFile++
	qid := "Q" + strconv.Itoa(s.nextFile)
	s.pushLocked("callback_query", map[string]any{
		"id": qid, "from": from, "chat_instance": strconv.FormatInt(chat.ID, 10), "data": data,
		"message": s.jsonLocked(st, m),
	})
	return qid
}

// Answer is how the bot answered a callback query, and whether it did.
func (s *Server) Answer(queryID string) (text string, alert, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.answered[queryID]
	return a.Text, a.ShowAlert, ok
}

// Messages are the chat's messages that are not deleted, oldest first
// (copies).
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.chats[chatID]
	if st == nil {
		return nil
	}
	var out []Message
	for _, m := range st.msgs {
		if !m.Deleted {
			c := *m
			c.EditTimes = slices.Clone(m.EditTimes)
			out = append(out, c)
		}
	}
	return out
}

// BotMessages are the bot's messages in a chat (copies).
func (s *Server) BotMessages(chatID int64) []Message {
	var out []Message
	for _, m := range s.Messages(chatID) {
		if m.From.ID == s.Bot.ID {
			out = append(out, m)
		}
	}
	return out
}

// Calls are the Bot API requests taken so far, of method ("" for all;
// lower case, as "sendmessage").
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Webhook is the webhook set, if any.
func (s *Server) Webhook() (url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook.url, s.webhook.secret
}

// Wait waits until cond holds, woken by every change; it fails the test
// after 30s.
func (s *Server) Wait(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			tb.Fatalf("telegramtest: timed out after 30s waiting for %s", what)
		}
	}
}
