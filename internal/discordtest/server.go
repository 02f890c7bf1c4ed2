package discordtest

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Defaults the fake answers with. Tests pass DefaultToken to the adapter.
const (
	DefaultToken   = "test-token"
	DefaultGuildID = "1000000000000000001"
	BotUserID      = "1000000000000000900"
	// AppID is the application id; for a modern Discord app it equals the
	// bot user's id.
	AppID = BotUserID
)

// Discord limits the fake enforces on every message it accepts.
const (
	MaxContentChars = 2000
	MaxActionRows   = 5
	MaxRowButtons   = 5
	MaxCustomIDLen  = 100
	MaxLabelLen     = 80
	MaxEmbeds       = 10
)

// Call is one REST request the fake received.
type Call struct {
	// Route is the matched pattern without the /api/v9 prefix, such as
	// "POST /channels/{channel}/messages"; "" for an unknown route.
	Route  string
	Method string
	Path   string // without the /api/v9 prefix
	Query  url.Values
	Header http.Header
	// Body is the JSON body, or the payload_json part of a multipart body.
	Body   []byte
	Files  []Attachment
	Status int
	At     time.Time
}

// Decode unmarshals the call's JSON body into v.
func (c Call) Decode(v any) error {
	if err := json.Unmarshal(c.Body, v); err != nil {
		return fmt.Errorf("decoding body of %s: %w", c.Route, err)
	}
	return nil
}

// Attachment is a file uploaded with a message.
type Attachment struct {
	Field       string // the multipart field name: files[0], files[1], ...
	Filename    string
	ContentType string
	Data        []byte
	// URL is where a person's attachment (UserMessageFiles) is served, on
	// the fake's own host in place of Discord's CDN.
	URL string
	// DurationSecs and Waveform (base64) are a voice message's audio
	// metadata (see voice.go); zero and "" otherwise.
	DurationSecs float64
	Waveform     string
}

// Message is a message as the fake stores it.
type Message struct {
	ID        string
	ChannelID string
	GuildID   string
	Author    discordgo.User
	Content   string
	Flags     int
	// Embeds, Components and AllowedMentions are kept as the client sent
	// them, so tests can compare wire payloads.
	Embeds          json.RawMessage
	Components      json.RawMessage
	AllowedMentions json.RawMessage
	Reference       *discordgo.MessageReference
	Attachments     []Attachment
	Mentions        []discordgo.User
	Timestamp       time.Time
	// Edits counts the PATCHes applied to the message.
	Edits int
	// InteractionID is set on messages made by an interaction response or
	// follow-up.
	InteractionID string
	// Nonce is the nonce the message was sent with ("" for none).
	Nonce string
	// WebhookID is the webhook that posted the message ("" for none); the
	// author is then the name and avatar the execution gave.
	WebhookID string
	AvatarURL string
	// Reactions are the emoji the bot added to the message.
	Reactions []string
}

// Ephemeral reports whether the message was sent with flags 64.
func (m *Message) Ephemeral() bool { return m.Flags&int(discordgo.MessageFlagsEphemeral) != 0 }

// Button is one button of a stored message's components.
type Button struct {
	Row      int
	CustomID string
	Label    string
	Style    int
	Disabled bool
}

// Buttons decodes the message's buttons, row by row, wherever they sit
// (top-level rows, or rows inside a Components V2 container).
func (m *Message) Buttons() []Button {
	var top []json.RawMessage
	if len(m.Components) == 0 || json.Unmarshal(m.Components, &top) != nil {
		return nil
	}
	var out []Button
	row := 0
	var walk func(raw json.RawMessage)
	walk = func(raw json.RawMessage) {
		var c component
		if json.Unmarshal(raw, &c) != nil {
			return
		}
		switch c.Type {
		case int(discordgo.ActionsRowComponent):
			for _, b := range c.Components {
				var btn component
				if json.Unmarshal(b, &btn) == nil && btn.Type == int(discordgo.ButtonComponent) {
					out = append(out, Button{Row: row, CustomID: btn.CustomID, Label: btn.Label, Style: btn.Style, Disabled: btn.Disabled})
				}
			}
			row++
		case int(discordgo.ContainerComponent):
			for _, cc := range c.Components {
				walk(cc)
			}
		}
	}
	for _, r := range top {
		walk(r)
	}
	return out
}

// TextDisplays returns the text display contents of a Components V2
// message, in order, nested ones included.
func (m *Message) TextDisplays() []string {
	var top []json.RawMessage
	if len(m.Components) == 0 || json.Unmarshal(m.Components, &top) != nil {
		return nil
	}
	var out []string
	var walk func(raw json.RawMessage)
	walk = func(raw json.RawMessage) {
		var c component
		if json.Unmarshal(raw, &c) != nil {
			return
		}
		if c.Type == int(discordgo.TextDisplayComponent) && c.Content != nil {
			out = append(out, *c.Content)
		}
		for _, cc := range c.Components {
			walk(cc)
		}
	}
	for _, r := range top {
		walk(r)
	}
	return out
}

// ComponentsV2 reports whether the message carries the IS_COMPONENTS_V2 flag.
func (m *Message) ComponentsV2() bool { return m.Flags&FlagComponentsV2 != 0 }

// wire renders the message as Discord's API returns it.
func (m *Message) wire() map[string]any {
	w := map[string]any{
		"id":         m.ID,
		"channel_id": m.ChannelID,
		"content":    m.Content,
		"author":     m.Author,
		"timestamp":  m.Timestamp.Format(time.RFC3339Nano),
		"flags":      m.Flags,
		"type":       0,
		"tts":        false,
		"pinned":     false,
	}
	if m.GuildID != "" {
		w["guild_id"] = m.GuildID
	}
	if m.WebhookID != "" {
		w["webhook_id"] = m.WebhookID
		w["application_id"] = AppID
	}
	mentions := m.Mentions
	if mentions == nil {
		mentions = []discordgo.User{}
	}
	w["mentions"] = mentions
	w["embeds"] = rawOr(m.Embeds, "[]")
	w["components"] = rawOr(m.Components, "[]")
	atts := make([]map[string]any, 0, len(m.Attachments))
	for i, a := range m.Attachments {
		att := map[string]any{
			"id": m.ID + strconv.Itoa(i), "filename": a.Filename,
			"content_type": a.ContentType, "size": len(a.Data),
			"url": cmpOr(a.URL, "https://cdn.discordapp.com/attachments/"+m.ChannelID+"/"+m.ID+"/"+a.Filename),
		}
		if a.DurationSecs > 0 {
			att["duration_secs"], att["waveform"] = a.DurationSecs, a.Waveform
		}
		atts = append(atts, att)
	}
	w["attachments"] = atts
	if m.Reference != nil {
		w["message_reference"] = m.Reference
		w["type"] = int(discordgo.MessageTypeReply)
	}
	if m.Edits > 0 {
		w["edited_timestamp"] = m.Timestamp.Format(time.RFC3339Nano)
	}
	return w
}

func rawOr(r json.RawMessage, def string) json.RawMessage {
	if len(r) == 0 || string(r) == "null" {
		return json.RawMessage(def)
	}
	return r
}

func (m *Message) clone() *Message {
	c := *m
	c.Reactions = slices.Clone(m.Reactions)
	c.Attachments = slices.Clone(m.Attachments)
	c.Mentions = slices.Clone(m.Mentions)
	return &c
}

// Interaction is what the fake knows about one interaction it issued.
type Interaction struct {
	ID        string
	Token     string
	Type      discordgo.InteractionType
	ChannelID string
	GuildID   string
	// MessageID is the message a clicked component sits on.
	MessageID string
	// ResponseType is the type of the initial response, 0 until there is one.
	ResponseType discordgo.InteractionResponseType
	// OriginalID is the message that "@original" refers to once responded.
	OriginalID string
	Followups  []string
	// Choices are the autocomplete choices the app answered with (type 8).
	Choices []discordgo.ApplicationCommandOptionChoice
	// Modal is the modal the app answered with (type 9), as sent.
	Modal *Modal

	// httpAnswered is closed once PostInteraction applied the endpoint's
	// answer; follow-ups that race ahead of it wait, as Discord orders them.
	httpAnswered chan struct{}
}

type rateLimit struct {
	route      string
	retryAfter time.Duration
	global     bool
}

// Server is the fake Discord. Its zero value is not usable; call NewServer.
type Server struct {
	// URL is the origin to give the adapter as its API URL
	// (http://127.0.0.1:port); REST lives under URL+"/api/v9/".
	URL string
	// Token is the bot token the fake accepts (without "Bot ").
	Token string
	// Bot is the bot user the fake reports in READY and GET /users/@me.
	Bot discordgo.User
	// AppFlags are the application's flags, GET /oauth2/applications/@me;
	// by default the Message Content intent is granted
	// (GATEWAY_MESSAGE_CONTENT, 1<<19).
	AppFlags int

	srv *httptest.Server
	mux *http.ServeMux

	mu           sync.Mutex
	changed      chan struct{}
	calls        []Call
	messages     map[string]*Message
	channels     map[string]*discordgo.Channel
	interactions map[string]*Interaction // by id
	byToken      map[string]*Interaction
	commands     map[string]json.RawMessage // "" for global, else guild id
	limits       []rateLimit
	nextID       uint64
	now          func() time.Time
	users        map[string]discordgo.User   // GET /users/{user}
	members      map[string]discordgo.Member // "guild/user": GET /guilds/{guild}/members/{user}
	webhooks     map[string]*Webhook         // by id
	noWebhooks   map[string]bool             // channels where the bot lacks Manage Webhooks

	gw gateway
}

// SetUser makes GET /users/{id} answer u.
func (s *Server) SetUser(u discordgo.User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == nil {
		s.users = map[string]discordgo.User{}
	}
	s.users[u.ID] = u
}

// SetMember makes GET /guilds/{guild}/members/{user} answer m (and GET
// /users/{user} answer m.User when no SetUser said otherwise).
func (s *Server) SetMember(guildID string, m discordgo.Member) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.members == nil {
		s.members = map[string]discordgo.Member{}
	}
	s.members[guildID+"/"+m.User.ID] = m
}

// getUser answers a user object (https://discord.com/developers/docs/resources/user#get-user).
func (s *Server) getUser(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	id := r.PathValue("user")
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[id]; ok {
		return http.StatusOK, u
	}
	for k, m := range s.members {
		if strings.HasSuffix(k, "/"+id) {
			return http.StatusOK, m.User
		}
	}
	return http.StatusNotFound, errBody(10013, "Unknown User")
}

// getMember answers a guild member (https://discord.com/developers/docs/resources/guild#get-guild-member).
func (s *Server) getMember(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.members[r.PathValue("guild")+"/"+r.PathValue("user")]
	if !ok {
		return http.StatusNotFound, errBody(10007, "Unknown Member")
	}
	m.GuildID = ""
	return http.StatusOK, m
}

// NewServer starts a fake Discord and closes it when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		Token:        DefaultToken,
		Bot:          discordgo.User{ID: BotUserID, Username: "switchboard", Bot: true},
		AppFlags:     1 << 19,
		changed:      make(chan struct{}),
		messages:     map[string]*Message{},
		channels:     map[string]*discordgo.Channel{},
		interactions: map[string]*Interaction{},
		byToken:      map[string]*Interaction{},
		commands:     map[string]json.RawMessage{},
		nextID:       1100000000000000000,
		now:          time.Now,
	}
	s.gw.heartbeatInterval = 41250 * time.Millisecond
	s.routes()
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close drops the gateway connection and stops the server.
func (s *Server) Close() {
	s.gw.closeAll()
	s.srv.Close()
}

// GatewayURL is the WebSocket URL GET /gateway returns.
func (s *Server) GatewayURL() string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + "/gateway"
}

func (s *Server) id() string {
	s.nextID++
	return strconv.FormatUint(s.nextID, 10)
}

// notifyLocked wakes everything waiting in Wait. Callers hold s.mu.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) notify() {
	s.mu.Lock()
	s.notifyLocked()
	s.mu.Unlock()
}

// Wait blocks until cond holds, re-checking it whenever the fake records a
// call, stores a message or changes gateway state. It fails the test after
// 10 seconds, naming what it waited for.
func (s *Server) Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
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
			t.Fatalf("discordtest: timed out after 30s waiting for %s", what)
		}
	}
}

// WaitCalls waits until at least n calls to route have been recorded and
// returns them all.
func (s *Server) WaitCalls(t testing.TB, route string, n int) []Call {
	t.Helper()
	var got []Call
	s.Wait(t, fmt.Sprintf("%d call(s) to %q", n, route), func() bool {
		got = s.CallsTo(route)
		return len(got) >= n
	})
	return got
}

// Calls returns every REST call received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallsTo returns the calls to one route, such as
// "POST /channels/{channel}/messages".
func (s *Server) CallsTo(route string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if c.Route == route {
			out = append(out, c)
		}
	}
	return out
}

// RateLimit makes the next request to route answer 429 with retry_after and
// the X-RateLimit headers Discord sends; later requests go through. Global
// makes it a global limit (X-RateLimit-Global).
func (s *Server) RateLimit(route string, retryAfter time.Duration, global bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = append(s.limits, rateLimit{route: route, retryAfter: retryAfter, global: global})
}

// AddChannel registers a channel (a guild text channel, a thread, a DM).
func (s *Server) AddChannel(ch discordgo.Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := ch
	s.channels[ch.ID] = &c
	s.notifyLocked()
}

// Channel returns a registered channel, or nil.
func (s *Server) Channel(id string) *discordgo.Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.channels[id]; ok {
		cc := *c
		return &cc
	}
	return nil
}

// DMChannel returns the id of the DM channel between the bot and a user,
// creating it when needed.
func (s *Server) DMChannel(user discordgo.User) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dmChannelLocked(user).ID
}

func (s *Server) dmChannelLocked(user discordgo.User) *discordgo.Channel {
	for _, c := range s.channels {
		if c.Type == discordgo.ChannelTypeDM && len(c.Recipients) == 1 && c.Recipients[0].ID == user.ID {
			return c
		}
	}
	u := user
	c := &discordgo.Channel{ID: s.id(), Type: discordgo.ChannelTypeDM, Recipients: []*discordgo.User{&u}}
	s.channels[c.ID] = c
	return c
}

// Message returns a copy of a stored message, or nil.
func (s *Server) Message(id string) *Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.messages[id]; ok {
		return m.clone()
	}
	return nil
}

// Messages returns copies of the messages in a channel written by author
// ("" for any), oldest first.
func (s *Server) Messages(channelID, authorID string) []*Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Message
	for _, m := range s.messages {
		if m.ChannelID == channelID && (authorID == "" || m.Author.ID == authorID) {
			out = append(out, m.clone())
		}
	}
	slices.SortFunc(out, func(a, b *Message) int { return compareIDs(a.ID, b.ID) })
	return out
}

// BotMessages returns the messages the bot posted in a channel, oldest first.
func (s *Server) BotMessages(channelID string) []*Message { return s.Messages(channelID, s.Bot.ID) }

func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// Interaction returns what the fake knows about an interaction, or nil.
func (s *Server) Interaction(id string) *Interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in, ok := s.interactions[id]; ok {
		c := *in
		c.Followups = slices.Clone(in.Followups)
		return &c
	}
	return nil
}

// Commands returns the application commands last written with a bulk
// overwrite, globally (guildID "") or for one guild.
func (s *Server) Commands(guildID string) []discordgo.ApplicationCommand {
	s.mu.Lock()
	raw := s.commands[guildID]
	s.mu.Unlock()
	var out []discordgo.ApplicationCommand
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out)
	}
	return out
}

var mentionRE = regexp.MustCompile(`<@!?(\d+)>`)

// UserMessage stores a message written by author in a channel and sends
// MESSAGE_CREATE on the gateway. An unknown channel is registered as a text
// channel of DefaultGuildID. Mentions are parsed from <@id> in content, as
// Discord does.
func (s *Server) UserMessage(channelID string, author discordgo.User, content string) *Message {
	return s.UserMessageFiles(channelID, author, content)
}

// UserMessageFiles is UserMessage with files attached. Each is served at
// its attachment url on the fake's host (GET /attachments/...), as Discord's
// CDN serves them, without a token.
func (s *Server) UserMessageFiles(channelID string, author discordgo.User, content string, files ...Attachment) *Message {
	return s.userMessage(channelID, author, content, 0, files...)
}

func (s *Server) userMessage(channelID string, author discordgo.User, content string, flags int, files ...Attachment) *Message {
	s.mu.Lock()
	ch, ok := s.channels[channelID]
	if !ok {
		ch = &discordgo.Channel{ID: channelID, GuildID: DefaultGuildID, Type: discordgo.ChannelTypeGuildText, Name: "channel-" + channelID}
		s.channels[channelID] = ch
	}
	m := &Message{
		ID: s.id(), ChannelID: channelID, GuildID: ch.GuildID, Author: author,
		Content: content, Timestamp: s.now().UTC(), Flags: flags,
	}
	for _, f := range files {
		f.URL = s.URL + "/attachments/" + channelID + "/" + m.ID + "/" + url.PathEscape(f.Filename)
		m.Attachments = append(m.Attachments, f)
	}
	for _, sub := range mentionRE.FindAllStringSubmatch(content, -1) {
		u := discordgo.User{ID: sub[1], Username: "user" + sub[1]}
		if sub[1] == s.Bot.ID {
			u = s.Bot
		}
		m.Mentions = append(m.Mentions, u)
	}
	s.messages[m.ID] = m
	s.notifyLocked()
	w := m.wire()
	if m.GuildID != "" {
		w["member"] = map[string]any{"nick": nil, "roles": []string{}}
	}
	out := m.clone()
	s.mu.Unlock()
	s.Dispatch("MESSAGE_CREATE", w)
	return out
}

// UserEdit changes the text of a person's message and sends MESSAGE_UPDATE
// (with edited_timestamp), as Discord does when its author edits it.
func (s *Server) UserEdit(messageID, content string) {
	s.mu.Lock()
	m, ok := s.messages[messageID]
	if !ok {
		s.mu.Unlock()
		panic("discordtest: UserEdit of unknown message " + messageID)
	}
	m.Content = content
	m.Edits++
	s.notifyLocked()
	w := m.wire()
	if m.GuildID != "" {
		w["member"] = map[string]any{"nick": nil, "roles": []string{}}
	}
	s.mu.Unlock()
	s.Dispatch("MESSAGE_UPDATE", w)
}

// UserDelete marks a person's message deleted and sends MESSAGE_DELETE,
// which carries only the ids.
func (s *Server) UserDelete(messageID string) {
	s.mu.Lock()
	m, ok := s.messages[messageID]
	if !ok {
		s.mu.Unlock()
		panic("discordtest: UserDelete of unknown message " + messageID)
	}
	delete(s.messages, m.ID)
	s.notifyLocked()
	w := map[string]any{"id": m.ID, "channel_id": m.ChannelID}
	if m.GuildID != "" {
		w["guild_id"] = m.GuildID
	}
	s.mu.Unlock()
	s.Dispatch("MESSAGE_DELETE", w)
}

// ButtonInteraction registers a click on a button of a stored message and
// returns the INTERACTION_CREATE payload without sending it, for tests of
// the HTTP interactions endpoint. ClickButton also sends it on the gateway.
func (s *Server) ButtonInteraction(messageID, customID string, user discordgo.User) (*Interaction, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[messageID]
	if !ok {
		panic("discordtest: ButtonInteraction on unknown message " + messageID)
	}
	in := s.newInteractionLocked(discordgo.InteractionMessageComponent, m.ChannelID, m.GuildID)
	in.MessageID = m.ID
	payload := s.interactionPayloadLocked(in, user, map[string]any{
		"custom_id": customID, "component_type": int(discordgo.ButtonComponent),
	})
	payload["message"] = m.wire()
	b, _ := json.Marshal(payload)
	c := *in
	return &c, b
}

// ClickButton sends INTERACTION_CREATE for a click on a button.
func (s *Server) ClickButton(messageID, customID string, user discordgo.User) *Interaction {
	in, payload := s.ButtonInteraction(messageID, customID, user)
	s.Dispatch("INTERACTION_CREATE", json.RawMessage(payload))
	return in
}

// SlashCommandInteraction registers a chat-input command and returns its
// INTERACTION_CREATE payload without sending it. Options are string options.
func (s *Server) SlashCommandInteraction(channelID, name string, options map[string]string, user discordgo.User) (*Interaction, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	guild := DefaultGuildID
	if ch, ok := s.channels[channelID]; ok {
		guild = ch.GuildID
	} else {
		s.channels[channelID] = &discordgo.Channel{ID: channelID, GuildID: guild, Type: discordgo.ChannelTypeGuildText}
	}
	in := s.newInteractionLocked(discordgo.InteractionApplicationCommand, channelID, guild)
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	opts := make([]map[string]any, 0, len(options))
	for _, k := range keys {
		opts = append(opts, map[string]any{"name": k, "type": int(discordgo.ApplicationCommandOptionString), "value": options[k]})
	}
	payload := s.interactionPayloadLocked(in, user, map[string]any{
		"id": "cmd-" + name, "name": name, "type": int(discordgo.ChatApplicationCommand), "options": opts,
	})
	b, _ := json.Marshal(payload)
	c := *in
	return &c, b
}

// SlashCommand sends INTERACTION_CREATE for a chat-input command.
func (s *Server) SlashCommand(channelID, name string, options map[string]string, user discordgo.User) *Interaction {
	in, payload := s.SlashCommandInteraction(channelID, name, options, user)
	s.Dispatch("INTERACTION_CREATE", json.RawMessage(payload))
	return in
}

// PingPayload returns the body of an interactions-endpoint PING.
func PingPayload() []byte {
	return []byte(`{"id":"1","application_id":"` + AppID + `","type":1,"token":"ping-token","version":1}`)
}

func (s *Server) newInteractionLocked(typ discordgo.InteractionType, channelID, guildID string) *Interaction {
	in := &Interaction{ID: s.id(), Type: typ, ChannelID: channelID, GuildID: guildID}
	in.Token = "itoken-" + in.ID
	s.interactions[in.ID] = in
	s.byToken[in.Token] = in
	return in
}

func (s *Server) interactionPayloadLocked(in *Interaction, user discordgo.User, data map[string]any) map[string]any {
	p := map[string]any{
		"id": in.ID, "application_id": AppID, "type": int(in.Type), "data": data,
		"channel_id": in.ChannelID, "token": in.Token, "version": 1, "locale": "en-US",
		"context":                        int(discordgo.InteractionContextGuild),
		"authorizing_integration_owners": map[string]string{"0": in.GuildID},
	}
	if in.GuildID == "" {
		p["context"] = int(discordgo.InteractionContextBotDM)
		p["authorizing_integration_owners"] = map[string]string{"1": user.ID}
	}
	if in.GuildID != "" {
		p["guild_id"] = in.GuildID
		p["member"] = map[string]any{"user": user, "roles": []string{}, "permissions": "0"}
	} else {
		p["user"] = user
	}
	return p
}

// serveAttachment answers a person's attachment's url
// (/attachments/{channel}/{message}/{name}) with its bytes.
func (s *Server) serveAttachment(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/attachments/"), "/", 3)
	if len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	r.SetPathValue("channel", parts[0])
	r.SetPathValue("message", parts[1])
	r.SetPathValue("name", parts[2])
	s.mu.Lock()
	var data []byte
	found := false
	if m, ok := s.messages[r.PathValue("message")]; ok && m.ChannelID == r.PathValue("channel") {
		for _, a := range m.Attachments {
			if a.Filename == r.PathValue("name") {
				data, found = a.Data, true
			}
		}
	}
	s.mu.Unlock()
	if !found {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(data)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ---- HTTP plumbing ----

const apiPrefix = "/api/v9"

type handler func(w http.ResponseWriter, r *http.Request, c *Call) (status int, body any)

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	add := func(pattern string, h handler) {
		method, path, _ := strings.Cut(pattern, " ")
		s.mux.Handle(method+" "+apiPrefix+path, handlerAdapter(h))
	}
	add("GET /gateway", s.getGateway)
	add("GET /gateway/bot", s.getGateway)
	add("GET /users/@me", s.getMe)
	add("GET /oauth2/applications/@me", s.getApplication)
	add("GET /users/{user}", s.getUser)
	add("GET /guilds/{guild}/members/{user}", s.getMember)
	add("POST /users/@me/channels", s.createDM)
	add("GET /channels/{channel}", s.getChannel)
	add("PATCH /channels/{channel}", s.modifyThread)
	add("GET /channels/{channel}/messages/{message}", s.getMessage)
	add("POST /channels/{channel}/messages", s.createMessage)
	add("PATCH /channels/{channel}/messages/{message}", s.editMessage)
	add("DELETE /channels/{channel}/messages/{message}", s.deleteMessage)
	add("POST /channels/{channel}/typing", s.typing)
	add("POST /channels/{channel}/messages/{message}/threads", s.startThread)
	add("POST /interactions/{interaction}/{token}/callback", s.interactionCallback)
	add("POST /webhooks/{app}/{token}", s.followup)
	add("PATCH /webhooks/{app}/{token}/messages/{message}", s.editWebhookMessage)
	add("DELETE /webhooks/{app}/{token}/messages/{message}", s.deleteByWebhook)
	add("POST /channels/{channel}/webhooks", s.createWebhook)
	add("PUT /channels/{channel}/messages/{message}/reactions/{emoji}/@me", s.addReaction)
	add("DELETE /channels/{channel}/messages/{message}/reactions/{emoji}/@me", s.removeReaction)
	add("GET /channels/{channel}/webhooks", s.listWebhooks)
	add("PUT /applications/{app}/commands", s.bulkOverwrite)
	add("PUT /applications/{app}/guilds/{guild}/commands", s.bulkOverwrite)
}

// handlerAdapter lets routes be registered on a ServeMux; serveHTTP calls
// the handler itself so it can record the call around it.
type handlerAdapter handler

func (h handlerAdapter) ServeHTTP(http.ResponseWriter, *http.Request) {}

type apiError struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
}

func errBody(code int, msg string) apiError { return apiError{Message: msg, Code: code} }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/attachments/") {
		s.serveAttachment(w, r) // the CDN's, outside the API
		return
	}
	if r.URL.Path == "/gateway" || strings.HasPrefix(r.URL.Path, "/gateway/") {
		s.serveGateway(w, r)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 26<<20))
	if err != nil {
		http.Error(w, "reading body", http.StatusBadRequest)
		return
	}
	c := Call{
		Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, apiPrefix),
		Query: r.URL.Query(), Header: r.Header.Clone(), Body: raw, At: s.now(),
	}
	status, body := s.dispatchHTTP(w, r, raw, &c)
	c.Status = status

	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.notifyLocked()
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	if status != http.StatusTooManyRequests {
		bucket := fmt.Sprintf("%x", len(c.Route)*7919)
		w.Header().Set("X-RateLimit-Limit", "50")
		w.Header().Set("X-RateLimit-Remaining", "49")
		w.Header().Set("X-RateLimit-Reset-After", "1.000")
		w.Header().Set("X-RateLimit-Bucket", bucket)
	}
	if body == nil {
		w.WriteHeader(status)
		return
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) dispatchHTTP(w http.ResponseWriter, r *http.Request, raw []byte, c *Call) (int, any) {
	h, pattern := s.mux.Handler(r)
	ha, ok := h.(handlerAdapter)
	if !ok || pattern == "" {
		return http.StatusNotFound, errBody(0, "404: Not Found")
	}
	method, path, _ := strings.Cut(pattern, " ")
	c.Route = method + " " + strings.TrimPrefix(path, apiPrefix)
	// ServeMux.Handler does not fill PathValue; match again to get them.
	r2 := r.Clone(r.Context())
	pathValues(r2, path)

	if !strings.HasPrefix(c.Route, "POST /interactions/") && !strings.Contains(c.Route, "/webhooks/") {
		if r.Header.Get("Authorization") != "Bot "+s.Token {
			return http.StatusUnauthorized, errBody(0, "401: Unauthorized")
		}
	}
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") {
		if err := parseMultipart(ct, raw, c); err != nil {
			return http.StatusBadRequest, errBody(50035, "Invalid Form Body: "+err.Error())
		}
	}
	if lim, ok := s.takeLimit(c.Route); ok {
		secs := strconv.FormatFloat(lim.retryAfter.Seconds(), 'f', 3, 64)
		w.Header().Set("Retry-After", strconv.Itoa(int(lim.retryAfter.Seconds()+0.999)))
		w.Header().Set("X-RateLimit-Limit", "5")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", secs)
		w.Header().Set("X-RateLimit-Bucket", "fake-bucket")
		w.Header().Set("X-RateLimit-Scope", "user")
		if lim.global {
			w.Header().Set("X-RateLimit-Global", "true")
			w.Header().Set("X-RateLimit-Scope", "global")
		}
		return http.StatusTooManyRequests, map[string]any{
			"message": "You are being rate limited.", "retry_after": lim.retryAfter.Seconds(), "global": lim.global,
		}
	}
	return ha(w, r2, c)
}

// pathValues fills r's path values from a pattern such as
// /api/v9/channels/{channel}/messages.
func pathValues(r *http.Request, pattern string) {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	vs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i, p := range ps {
		if strings.HasPrefix(p, "{") && i < len(vs) {
			r.SetPathValue(strings.Trim(p, "{}"), vs[i])
		}
	}
}

func (s *Server) takeLimit(route string) (rateLimit, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range s.limits {
		if l.route == route {
			s.limits = slices.Delete(s.limits, i, i+1)
			return l, true
		}
	}
	return rateLimit{}, false
}

func parseMultipart(ct string, raw []byte, c *Call) error {
	_, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return err
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	c.Body = nil
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return err
		}
		if p.FormName() == "payload_json" {
			c.Body = data
			continue
		}
		c.Files = append(c.Files, Attachment{
			Field: p.FormName(), Filename: p.FileName(),
			ContentType: p.Header.Get("Content-Type"), Data: data,
		})
	}
	if c.Body == nil {
		return fmt.Errorf("no payload_json part")
	}
	return nil
}

// ---- REST handlers ----

func (s *Server) getGateway(_ http.ResponseWriter, _ *http.Request, _ *Call) (int, any) {
	return http.StatusOK, map[string]any{
		"url": s.GatewayURL(), "shards": 1,
		"session_start_limit": map[string]int{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1},
	}
}

func (s *Server) getMe(_ http.ResponseWriter, _ *http.Request, _ *Call) (int, any) {
	return http.StatusOK, s.Bot
}

func (s *Server) getApplication(_ http.ResponseWriter, _ *http.Request, _ *Call) (int, any) {
	return http.StatusOK, map[string]any{"id": AppID, "name": s.Bot.Username, "flags": s.AppFlags, "bot_public": true}
}

func (s *Server) createDM(_ http.ResponseWriter, _ *http.Request, c *Call) (int, any) {
	var req struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.Unmarshal(c.Body, &req); err != nil || req.RecipientID == "" {
		return http.StatusBadRequest, errBody(50035, "Invalid Form Body: recipient_id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.dmChannelLocked(discordgo.User{ID: req.RecipientID, Username: "user" + req.RecipientID})
	return http.StatusOK, ch
}

func (s *Server) getChannel(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[r.PathValue("channel")]
	if !ok {
		return http.StatusNotFound, errBody(10003, "Unknown Channel")
	}
	return http.StatusOK, ch
}

// getMessage is Get Channel Message: a process that restarted reads a
// message it sent before to learn how to edit it.
func (s *Server) getMessage(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") {
		return http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	return http.StatusOK, m.wire()
}

// messagePayload is a create or edit body; pointer and raw fields tell
// "absent" from "empty", as a PATCH needs.
type messagePayload struct {
	Content         *string                     `json:"content"`
	Embeds          json.RawMessage             `json:"embeds"`
	Components      json.RawMessage             `json:"components"`
	AllowedMentions json.RawMessage             `json:"allowed_mentions"`
	Reference       *discordgo.MessageReference `json:"message_reference"`
	Flags           *int                        `json:"flags"`
	Attachments     json.RawMessage             `json:"attachments"`
	StickerIDs      json.RawMessage             `json:"sticker_ids"`
	Nonce           json.RawMessage             `json:"nonce"`
	EnforceNonce    bool                        `json:"enforce_nonce"`
	// Webhook executions name who the message appears from.
	Username  string `json:"username"`
	AvatarURL string `json:"avatar_url"`
	// nulled are the fields sent as JSON null, which an edit clears.
	nulled map[string]bool
}

// NonceWindow is how long Discord remembers a nonce for enforce_nonce ("a
// few minutes" in its documentation).
const NonceWindow = 5 * time.Minute

// nonce reads the nonce, a string of at most 25 characters or an integer.
func (p *messagePayload) nonce() (string, string) {
	if !present(p.Nonce) {
		return "", ""
	}
	var str string
	if err := json.Unmarshal(p.Nonce, &str); err == nil {
		if len(str) > 25 {
			return "", "Must be 25 or fewer in length."
		}
		return str, ""
	}
	var n json.Number
	if err := json.Unmarshal(p.Nonce, &n); err == nil {
		return n.String(), ""
	}
	return "", "Must be a string or an integer."
}

func present(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }

func (p *messagePayload) hasStickers() bool {
	return present(p.StickerIDs) && string(p.StickerIDs) != "[]"
}

func (p *messagePayload) voice() bool { return p.Flags != nil && *p.Flags&FlagVoiceMessage != 0 }

// validate checks the payload against Discord's limits: content, embeds
// (each field and 6,000 in all) and components (legacy rows of buttons, or
// Components V2 when the payload's flags say so).
func (p *messagePayload) validate() *formError {
	v2 := p.Flags != nil && *p.Flags&FlagComponentsV2 != 0
	if p.Content != nil && runes(*p.Content) > MaxContentChars {
		return tooLong("content", MaxContentChars)
	}
	if v2 && p.Content != nil && *p.Content != "" {
		return invalid("content", "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2", "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2")
	}
	if present(p.Embeds) {
		if e := checkEmbeds(p.Embeds); e != nil {
			return e
		}
		if v2 && string(p.Embeds) != "[]" {
			return invalid("embeds", "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2", "The 'embeds' field cannot be used when using MessageFlags.IS_COMPONENTS_V2")
		}
	}
	if present(p.Components) {
		if e := checkComponents(p.Components, v2); e != nil {
			return e
		}
	}
	return nil
}

func (p *messagePayload) empty(files int) bool {
	noEmbeds := !present(p.Embeds) || string(p.Embeds) == "[]"
	noComponents := !present(p.Components) || string(p.Components) == "[]"
	v2 := p.Flags != nil && *p.Flags&FlagComponentsV2 != 0
	return (p.Content == nil || *p.Content == "") && noEmbeds && files == 0 && (!v2 || noComponents)
}

func (p *messagePayload) applyTo(m *Message, files []Attachment) {
	if p.Content != nil {
		m.Content = *p.Content
	} else if p.nulled["content"] {
		m.Content = ""
	}
	if present(p.Embeds) {
		m.Embeds = p.Embeds
	} else if p.nulled["embeds"] {
		m.Embeds = nil
	}
	if present(p.Components) {
		m.Components = p.Components
	}
	if present(p.AllowedMentions) {
		m.AllowedMentions = p.AllowedMentions
	}
	if p.Flags != nil {
		m.Flags = *p.Flags
	}
	m.Attachments = append(m.Attachments, files...)
}

func decodePayload(c *Call) (*messagePayload, any) {
	p, e := parsePayload(c)
	if e != nil {
		return nil, e
	}
	if fe := p.validate(); fe != nil {
		return nil, fe.body()
	}
	return p, nil
}

// parsePayload reads a create or edit body without checking it (an edit is
// checked against the message it changes).
func parsePayload(c *Call) (*messagePayload, any) {
	var p messagePayload
	if err := json.Unmarshal(c.Body, &p); err != nil {
		return nil, errBody(50109, "The request body contains invalid JSON.")
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(c.Body, &fields)
	p.nulled = map[string]bool{}
	for k, v := range fields {
		if string(v) == "null" {
			p.nulled[k] = true
		}
	}
	return &p, nil
}

func (s *Server) createMessage(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	p, e := decodePayload(c)
	if e != nil {
		return http.StatusBadRequest, e
	}
	if p.empty(len(c.Files)) {
		return http.StatusBadRequest, errBody(50006, "Cannot send an empty message")
	}
	if p.voice() {
		if status, e := voiceMessage(p, c.Files); e != nil {
			return status, e
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[r.PathValue("channel")]
	if !ok {
		return http.StatusNotFound, errBody(10003, "Unknown Channel")
	}
	if p.Reference != nil {
		if _, ok := s.messages[p.Reference.MessageID]; !ok {
			return http.StatusBadRequest, errBody(50035, "Invalid Form Body: message_reference: Unknown message")
		}
	}
	nonce, bad := p.nonce()
	if bad != "" {
		return http.StatusBadRequest, errBody(50035, "Invalid Form Body: nonce: "+bad)
	}
	// With enforce_nonce, a nonce the same author used within the last few
	// minutes returns that message and creates nothing (Discord's
	// documented idempotency).
	if nonce != "" && p.EnforceNonce {
		for _, old := range s.messages {
			if old.Nonce == nonce && old.ChannelID == ch.ID && old.Author.ID == s.Bot.ID && s.now().Sub(old.Timestamp) < NonceWindow {
				return http.StatusOK, old.wire()
			}
		}
	}
	m := &Message{ID: s.id(), ChannelID: ch.ID, GuildID: ch.GuildID, Author: s.Bot, Timestamp: s.now().UTC(), Reference: p.Reference, Nonce: nonce}
	p.applyTo(m, c.Files)
	s.messages[m.ID] = m
	return http.StatusOK, m.wire()
}

func (s *Server) editMessage(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	p, e := parsePayload(c)
	if e != nil {
		return http.StatusBadRequest, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") {
		return http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	if m.Author.ID != s.Bot.ID {
		return http.StatusForbidden, errBody(50005, "Cannot edit a message authored by another user")
	}
	if m.VoiceMessage() {
		return http.StatusBadRequest, errBody(50162, "Voice messages cannot be edited.")
	}
	if fe := applyEdit(m, p, c.Files); fe != nil {
		return http.StatusBadRequest, fe.body()
	}
	return http.StatusOK, m.wire()
}

// applyEdit applies a PATCH to m as Discord does: fields left out stay,
// fields sent as null are cleared, and the whole edited message must still
// be valid. IS_COMPONENTS_V2 can be set by an edit (content and embeds
// then cleared) but never removed.
func applyEdit(m *Message, p *messagePayload, files []Attachment) *formError {
	wasV2 := m.Flags&FlagComponentsV2 != 0
	if p.Flags == nil {
		f := m.Flags
		p.Flags = &f
	}
	if e := p.validate(); e != nil {
		return e
	}
	next := m.clone()
	p.applyTo(next, files)
	v2 := next.Flags&FlagComponentsV2 != 0
	if wasV2 && !v2 {
		return invalid("flags", "MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG", "The IS_COMPONENTS_V2 flag cannot be removed from a message")
	}
	if v2 && next.Content != "" {
		return invalid("content", "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2", "The message's content must be cleared (null) to use MessageFlags.IS_COMPONENTS_V2")
	}
	if v2 && present(next.Embeds) && string(next.Embeds) != "[]" {
		return invalid("embeds", "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2", "The message's embeds must be cleared to use MessageFlags.IS_COMPONENTS_V2")
	}
	next.Edits++
	*m = *next
	return nil
}

func (s *Server) deleteMessage(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") {
		return http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	delete(s.messages, m.ID)
	return http.StatusNoContent, nil
}

func (s *Server) typing(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.channels[r.PathValue("channel")]; !ok {
		return http.StatusNotFound, errBody(10003, "Unknown Channel")
	}
	return http.StatusNoContent, nil
}

func (s *Server) startThread(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	var req struct {
		Name                string `json:"name"`
		AutoArchiveDuration int    `json:"auto_archive_duration"`
	}
	if err := json.Unmarshal(c.Body, &req); err != nil || req.Name == "" || len([]rune(req.Name)) > 100 {
		return http.StatusBadRequest, errBody(50035, "Invalid Form Body: name: Must be between 1 and 100 in length")
	}
	s.mu.Lock()
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") {
		s.mu.Unlock()
		return http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	if _, exists := s.channels[m.ID]; exists {
		s.mu.Unlock()
		return http.StatusBadRequest, errBody(160004, "A thread has already been created for this message")
	}
	// Discord gives a thread started from a message the message's id.
	th := &discordgo.Channel{
		ID: m.ID, GuildID: m.GuildID, ParentID: m.ChannelID, Name: req.Name,
		Type: discordgo.ChannelTypeGuildPublicThread, OwnerID: s.Bot.ID,
	}
	s.channels[th.ID] = th
	s.notifyLocked()
	out := *th
	s.mu.Unlock()
	s.Dispatch("THREAD_CREATE", out)
	return http.StatusCreated, out
}

func (s *Server) interactionCallback(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	var resp struct {
		Type discordgo.InteractionResponseType `json:"type"`
		Data *messagePayload                   `json:"data"`
	}
	if err := json.Unmarshal(c.Body, &resp); err != nil {
		return http.StatusBadRequest, errBody(50109, "The request body contains invalid JSON.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.interactions[r.PathValue("interaction")]
	if !ok || in.Token != r.PathValue("token") {
		return http.StatusNotFound, errBody(10062, "Unknown interaction")
	}
	if in.ResponseType != 0 {
		return http.StatusBadRequest, errBody(40060, "Interaction has already been acknowledged.")
	}
	if resp.Type == discordgo.InteractionApplicationCommandAutocompleteResult || in.Type == discordgo.InteractionApplicationCommandAutocomplete {
		return s.autocompleteResultLocked(in, resp.Type, c.Body)
	}
	if resp.Type == discordgo.InteractionResponseModal {
		return s.modalResultLocked(in, c.Body) // modals.go
	}
	if resp.Data != nil {
		if e := resp.Data.validate(); e != nil {
			return http.StatusBadRequest, e.body()
		}
	}
	newMessage := func() *Message {
		m := &Message{ID: s.id(), ChannelID: in.ChannelID, GuildID: in.GuildID, Author: s.Bot, Timestamp: s.now().UTC(), InteractionID: in.ID}
		if resp.Data != nil {
			resp.Data.applyTo(m, c.Files)
		}
		s.messages[m.ID] = m
		return m
	}
	switch resp.Type {
	case discordgo.InteractionResponseChannelMessageWithSource:
		if resp.Data == nil || resp.Data.empty(len(c.Files)) {
			return http.StatusBadRequest, errBody(50006, "Cannot send an empty message")
		}
		in.OriginalID = newMessage().ID
	case discordgo.InteractionResponseDeferredChannelMessageWithSource:
		m := newMessage()
		m.Content = ""
		in.OriginalID = m.ID
	case discordgo.InteractionResponseDeferredMessageUpdate, discordgo.InteractionResponseUpdateMessage:
		if in.MessageID == "" {
			return http.StatusBadRequest, errBody(50035, "Invalid Form Body: type: only valid for component interactions")
		}
		in.OriginalID = in.MessageID
		if resp.Type == discordgo.InteractionResponseUpdateMessage && resp.Data != nil {
			m := s.messages[in.MessageID]
			resp.Data.applyTo(m, c.Files)
			m.Edits++
		}
	default:
		return http.StatusBadRequest, errBody(50035, fmt.Sprintf("Invalid Form Body: type: unsupported response type %d", resp.Type))
	}
	in.ResponseType = resp.Type
	return http.StatusNoContent, nil
}

// awaitHTTPAnswer lets a follow-up that raced ahead of an HTTP-endpoint
// answer wait for it (at most 3 seconds, Discord's deadline).
func (s *Server) awaitHTTPAnswer(token string) {
	s.mu.Lock()
	var ch chan struct{}
	if in, ok := s.byToken[token]; ok && in.ResponseType == 0 {
		ch = in.httpAnswered
	}
	s.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-time.After(3 * time.Second):
		}
	}
}

func (s *Server) interactionByToken(app, token string) (*Interaction, any) {
	in, ok := s.byToken[token]
	if !ok || app != AppID {
		return nil, errBody(10015, "Unknown Webhook")
	}
	if in.ResponseType == 0 {
		return nil, errBody(10015, "Unknown Webhook: the interaction has no initial response yet")
	}
	return in, nil
}

func (s *Server) followup(w http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	if s.isWebhook(r.PathValue("app")) {
		return s.executeWebhook(w, r, c)
	}
	p, e := decodePayload(c)
	if e != nil {
		return http.StatusBadRequest, e
	}
	if p.empty(len(c.Files)) {
		return http.StatusBadRequest, errBody(50006, "Cannot send an empty message")
	}
	s.awaitHTTPAnswer(r.PathValue("token"))
	s.mu.Lock()
	defer s.mu.Unlock()
	in, e := s.interactionByToken(r.PathValue("app"), r.PathValue("token"))
	if e != nil {
		return http.StatusNotFound, e
	}
	m := &Message{ID: s.id(), ChannelID: in.ChannelID, GuildID: in.GuildID, Author: s.Bot, Timestamp: s.now().UTC(), InteractionID: in.ID}
	p.applyTo(m, c.Files)
	s.messages[m.ID] = m
	in.Followups = append(in.Followups, m.ID)
	if c.Query.Get("wait") != "true" {
		return http.StatusNoContent, nil
	}
	return http.StatusOK, m.wire()
}

func (s *Server) editWebhookMessage(w http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	if s.isWebhook(r.PathValue("app")) {
		return s.editByWebhook(w, r, c)
	}
	p, e := parsePayload(c)
	if e != nil {
		return http.StatusBadRequest, e
	}
	s.awaitHTTPAnswer(r.PathValue("token"))
	s.mu.Lock()
	defer s.mu.Unlock()
	in, e := s.interactionByToken(r.PathValue("app"), r.PathValue("token"))
	if e != nil {
		return http.StatusNotFound, e
	}
	id := r.PathValue("message")
	if id == "@original" {
		id = in.OriginalID
	} else if !slices.Contains(in.Followups, id) {
		return http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	m, ok := s.messages[id]
	if !ok {
		return http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	if m.VoiceMessage() {
		return http.StatusBadRequest, errBody(50162, "Voice messages cannot be edited.")
	}
	if fe := applyEdit(m, p, c.Files); fe != nil {
		return http.StatusBadRequest, fe.body()
	}
	return http.StatusOK, m.wire()
}

func (s *Server) bulkOverwrite(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	if r.PathValue("app") != AppID {
		return http.StatusForbidden, errBody(50001, "Missing Access")
	}
	var cmds []map[string]any
	if err := json.Unmarshal(c.Body, &cmds); err != nil {
		return http.StatusBadRequest, errBody(50035, "Invalid Form Body: must be an array of commands")
	}
	nameRE := regexp.MustCompile(`^[-_\p{L}\p{N}]{1,32}$`)
	s.mu.Lock()
	defer s.mu.Unlock()
	perType := map[int]int{}
	for i, cmd := range cmds {
		name, _ := cmd["name"].(string)
		desc, _ := cmd["description"].(string)
		typ := 1 // CHAT_INPUT when absent
		if t, ok := cmd["type"].(float64); ok {
			typ = int(t)
		}
		perType[typ]++
		if e := checkCommandShape(i, typ, name, desc, cmd, nameRE, perType[typ]); e != nil {
			return http.StatusBadRequest, e
		}
		cmd["type"] = typ // Discord's answer names the type it defaulted
		if e := checkInstallContexts(i, cmd); e != nil {
			return http.StatusBadRequest, e.body()
		}
		cmd["id"] = s.id()
		cmd["application_id"] = AppID
		cmd["version"] = "1"
	}
	out, _ := json.Marshal(cmds)
	s.commands[r.PathValue("guild")] = out
	return http.StatusOK, json.RawMessage(out)
}

// PostInteraction delivers an interaction to an HTTP interactions endpoint
// as Discord does: it signs timestamp+payload with key, POSTs it, and takes a
// 200 answer as the interaction's initial response, so follow-ups and
// "@original" edits work afterwards. It returns the status and body.
func (s *Server) PostInteraction(endpoint string, key ed25519.PrivateKey, payload []byte) (int, []byte, error) {
	var head struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	_ = json.Unmarshal(payload, &head)
	s.mu.Lock()
	if in, ok := s.interactions[head.ID]; ok && in.httpAnswered == nil {
		in.httpAnswered = make(chan struct{})
	}
	s.mu.Unlock()
	ts := strconv.FormatInt(s.now().Unix(), 10)
	sig := ed25519.Sign(key, append([]byte(ts), payload...))
	req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, fmt.Errorf("building interaction request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature-Ed25519", hex.EncodeToString(sig))
	req.Header.Set("X-Signature-Timestamp", ts)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("posting interaction: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading interaction response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, body, nil
	}
	s.mu.Lock()
	in, known := s.interactions[head.ID]
	var answered chan struct{}
	if known {
		answered = in.httpAnswered
	}
	s.mu.Unlock()
	if answered != nil {
		defer close(answered)
	}
	if known {
		// Apply the answer through the callback route so it is validated and
		// recorded like a gateway-mode response.
		cb, err := http.NewRequest(http.MethodPost, s.URL+apiPrefix+"/interactions/"+head.ID+"/"+head.Token+"/callback", bytes.NewReader(body))
		if err != nil {
			return resp.StatusCode, body, fmt.Errorf("building callback: %w", err)
		}
		cb.Header.Set("Content-Type", "application/json")
		cbResp, err := http.DefaultClient.Do(cb)
		if err != nil {
			return resp.StatusCode, body, fmt.Errorf("applying interaction response: %w", err)
		}
		cbResp.Body.Close()
		if cbResp.StatusCode >= 300 {
			return resp.StatusCode, body, fmt.Errorf("interaction response rejected by the fake: HTTP %d", cbResp.StatusCode)
		}
	}
	return resp.StatusCode, body, nil
}
