package discordtest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// Webhook is a channel webhook the bot made
// (https://discord.com/developers/docs/resources/webhook).
type Webhook struct {
	ID        string
	Token     string
	ChannelID string
	GuildID   string
	Name      string
}

func (h *Webhook) wire() map[string]any {
	return map[string]any{
		"id": h.ID, "type": 1, "token": h.Token, "channel_id": h.ChannelID, "guild_id": h.GuildID,
		"name": h.Name, "application_id": AppID, "avatar": nil,
	}
}

// DenyWebhooks takes Manage Webhooks away from the bot in a channel:
// creating or listing its webhooks answers 403 Missing Permissions (50013).
func (s *Server) DenyWebhooks(channelID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noWebhooks == nil {
		s.noWebhooks = map[string]bool{}
	}
	s.noWebhooks[channelID] = true
}

// Webhooks returns the webhooks made in a channel.
func (s *Server) Webhooks(channelID string) []Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Webhook
	for _, h := range s.webhooks {
		if h.ChannelID == channelID {
			out = append(out, *h)
		}
	}
	return out
}

func (s *Server) isWebhook(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.webhooks[id]
	return ok
}

var forbiddenWebhookName = regexp.MustCompile(`(?i)clyde|discord`)

// webhookChannelLocked checks that the bot may manage webhooks in a
// channel that can have them (a guild text, announcement or forum channel;
// not a thread, not a DM).
func (s *Server) webhookChannelLocked(id string) (*discordgo.Channel, int, any) {
	ch, ok := s.channels[id]
	if !ok {
		return nil, http.StatusNotFound, errBody(10003, "Unknown Channel")
	}
	if s.noWebhooks[id] {
		return nil, http.StatusForbidden, errBody(50013, "Missing Permissions")
	}
	switch ch.Type {
	case discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildNews, discordgo.ChannelTypeGuildForum, discordgo.ChannelTypeGuildMedia:
		return ch, 0, nil
	default:
		return nil, http.StatusBadRequest, errBody(50024, "Cannot execute action on this channel type")
	}
}

func (s *Server) createWebhook(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	var req struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(c.Body, &req); err != nil || req.Name == "" || runes(req.Name) > 80 {
		return http.StatusBadRequest, invalid("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 80 in length.").body()
	}
	if forbiddenWebhookName.MatchString(req.Name) {
		return http.StatusBadRequest, invalid("name", "WEBHOOK_INVALID_USERNAME", "Username cannot contain \"clyde\" or \"discord\"").body()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, status, e := s.webhookChannelLocked(r.PathValue("channel"))
	if e != nil {
		return status, e
	}
	if s.webhooks == nil {
		s.webhooks = map[string]*Webhook{}
	}
	h := &Webhook{ID: s.id(), ChannelID: ch.ID, GuildID: ch.GuildID, Name: req.Name}
	h.Token = "wtoken-" + h.ID
	s.webhooks[h.ID] = h
	return http.StatusOK, h.wire()
}

func (s *Server) listWebhooks(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, status, e := s.webhookChannelLocked(r.PathValue("channel"))
	if e != nil {
		return status, e
	}
	out := []map[string]any{}
	for _, h := range s.webhooks {
		if h.ChannelID == ch.ID {
			out = append(out, h.wire())
		}
	}
	return http.StatusOK, out
}

// webhookTargetLocked finds the webhook named by the path and the channel
// a message of it lands in: the webhook's channel, or the thread under it
// named by ?thread_id (required in a forum).
func (s *Server) webhookTargetLocked(r *http.Request) (*Webhook, *discordgo.Channel, int, any) {
	h, ok := s.webhooks[r.PathValue("app")]
	if !ok || h.Token != r.PathValue("token") {
		return nil, nil, http.StatusNotFound, errBody(10015, "Unknown Webhook")
	}
	ch := s.channels[h.ChannelID]
	if tid := r.URL.Query().Get("thread_id"); tid != "" {
		th, ok := s.channels[tid]
		if !ok || th.ParentID != h.ChannelID {
			return nil, nil, http.StatusBadRequest, errBody(10003, "Unknown Channel")
		}
		return h, th, 0, nil
	}
	if ch != nil && (ch.Type == discordgo.ChannelTypeGuildForum || ch.Type == discordgo.ChannelTypeGuildMedia) {
		return nil, nil, http.StatusBadRequest, errBody(220001, "Webhooks posted to forum channels must have a thread_name or thread_id")
	}
	return h, ch, 0, nil
}

// executeWebhook posts a message as the webhook, under the name and
// avatar the request gives (https://discord.com/developers/docs/resources/webhook#execute-webhook),
// and sends MESSAGE_CREATE for it as Discord does. Components are kept only
// with the with_components=true query parameter: "If you are sending
// components as part of a webhook you'll need to use the
// ?with_components=true query param otherwise they'll be ignored"
// (https://docs.discord.com/developers/components/using-message-components).
func (s *Server) executeWebhook(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	p, e := decodePayload(c)
	if e != nil {
		return http.StatusBadRequest, e
	}
	if c.Query.Get("with_components") != "true" {
		p.Components = nil
	}
	if p.empty(len(c.Files)) {
		return http.StatusBadRequest, errBody(50006, "Cannot send an empty message")
	}
	if p.voice() {
		if status, e := voiceMessage(p, c.Files); e != nil {
			return status, e
		}
	}
	if p.Username != "" && (runes(p.Username) > 80 || forbiddenWebhookName.MatchString(p.Username)) {
		return http.StatusBadRequest, invalid("username", "WEBHOOK_INVALID_USERNAME", "Must be between 1 and 80 in length and not contain \"clyde\" or \"discord\"").body()
	}
	s.mu.Lock()
	h, ch, status, e := s.webhookTargetLocked(r)
	if e != nil {
		s.mu.Unlock()
		return status, e
	}
	name := p.Username
	if name == "" {
		name = h.Name
	}
	m := &Message{
		ID: s.id(), ChannelID: ch.ID, GuildID: h.GuildID, Timestamp: s.now().UTC(),
		Author: discordgo.User{ID: h.ID, Username: name, Bot: true}, WebhookID: h.ID, AvatarURL: p.AvatarURL,
	}
	p.applyTo(m, c.Files)
	s.messages[m.ID] = m
	w := m.wire()
	s.mu.Unlock()
	s.Dispatch("MESSAGE_CREATE", w)
	if c.Query.Get("wait") != "true" {
		return http.StatusNoContent, nil
	}
	return http.StatusOK, w
}

// webhookMessageLocked finds a message the webhook posted.
func (s *Server) webhookMessageLocked(r *http.Request) (*Message, int, any) {
	h, ch, status, e := s.webhookTargetLocked(r)
	if e != nil {
		return nil, status, e
	}
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.WebhookID != h.ID || m.ChannelID != ch.ID {
		return nil, http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	return m, 0, nil
}

func (s *Server) editByWebhook(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	p, e := parsePayload(c)
	if e != nil {
		return http.StatusBadRequest, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, status, e := s.webhookMessageLocked(r)
	if e != nil {
		return status, e
	}
	if m.VoiceMessage() {
		return http.StatusBadRequest, errBody(50162, "Voice messages cannot be edited.")
	}
	if fe := applyEdit(m, p, c.Files); fe != nil {
		return http.StatusBadRequest, fe.body()
	}
	return http.StatusOK, m.wire()
}

func (s *Server) deleteByWebhook(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !strings.HasPrefix(r.PathValue("token"), "wtoken-") {
		return http.StatusNotFound, errBody(10015, "Unknown Webhook")
	}
	m, status, e := s.webhookMessageLocked(r)
	if e != nil {
		return status, e
	}
	delete(s.messages, m.ID)
	return http.StatusNoContent, nil
}
