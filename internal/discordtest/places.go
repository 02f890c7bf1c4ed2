package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/bwmarrin/discordgo"
)

// ForumPost plays a person opening a post in a forum channel: the thread
// (a public thread under the forum, named title) is created and announced
// with THREAD_CREATE (newly_created), then its starter message, whose id
// is the thread's id as on Discord, arrives with MESSAGE_CREATE. The forum
// must be registered (AddChannel with ChannelTypeGuildForum).
func (s *Server) ForumPost(forumID string, author discordgo.User, title, content string) (*discordgo.Channel, *Message) {
	s.mu.Lock()
	forum, ok := s.channels[forumID]
	if !ok || (forum.Type != discordgo.ChannelTypeGuildForum && forum.Type != discordgo.ChannelTypeGuildMedia) {
		s.mu.Unlock()
		panic("discordtest: ForumPost in " + forumID + ", which is not a registered forum channel")
	}
	th := &discordgo.Channel{
		ID: s.id(), GuildID: forum.GuildID, ParentID: forum.ID, Name: title,
		Type: discordgo.ChannelTypeGuildPublicThread, OwnerID: author.ID,
	}
	s.channels[th.ID] = th
	created := *th
	s.notifyLocked()
	s.mu.Unlock()
	s.Dispatch("THREAD_CREATE", struct {
		discordgo.Channel
		NewlyCreated bool `json:"newly_created"`
	}{created, true})

	s.mu.Lock()
	m := &Message{ID: th.ID, ChannelID: th.ID, GuildID: th.GuildID, Author: author, Content: content, Timestamp: s.now().UTC()}
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
	w["member"] = map[string]any{"nick": nil, "roles": []string{}}
	out := m.clone()
	s.mu.Unlock()
	s.Dispatch("MESSAGE_CREATE", w)
	return &created, out
}

// Autocomplete sends an APPLICATION_COMMAND_AUTOCOMPLETE interaction for a
// chat-input command while the user types: options are what is filled in
// so far, and focused names the option being typed. The app must answer
// with type 8 (its choices are kept in Interaction.Choices).
func (s *Server) Autocomplete(channelID, name string, options map[string]string, focused string, user discordgo.User) *Interaction {
	s.mu.Lock()
	guild := DefaultGuildID
	if ch, ok := s.channels[channelID]; ok {
		guild = ch.GuildID
	}
	in := s.newInteractionLocked(discordgo.InteractionApplicationCommandAutocomplete, channelID, guild)
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	opts := make([]map[string]any, 0, len(options))
	for _, k := range keys {
		o := map[string]any{"name": k, "type": int(discordgo.ApplicationCommandOptionString), "value": options[k]}
		if k == focused {
			o["focused"] = true
		}
		opts = append(opts, o)
	}
	payload := s.interactionPayloadLocked(in, user, map[string]any{
		"id": "cmd-" + name, "name": name, "type": int(discordgo.ChatApplicationCommand), "options": opts,
	})
	c := *in
	s.mu.Unlock()
	s.Dispatch("INTERACTION_CREATE", payload)
	return &c
}

// autocompleteResultLocked applies an answer to an autocomplete
// interaction: only type 8 is allowed, with at most 25 choices whose names
// and values are 1 to 100 characters.
func (s *Server) autocompleteResultLocked(in *Interaction, typ discordgo.InteractionResponseType, body []byte) (int, any) {
	if in.Type != discordgo.InteractionApplicationCommandAutocomplete || typ != discordgo.InteractionApplicationCommandAutocompleteResult {
		return http.StatusBadRequest, invalid("type", "INTERACTION_RESPONSE_TYPE_INVALID", "Autocomplete interactions take response type 8, and only they do").body()
	}
	var resp struct {
		Data struct {
			Choices []discordgo.ApplicationCommandOptionChoice `json:"choices"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return http.StatusBadRequest, errBody(50109, "The request body contains invalid JSON.")
	}
	if len(resp.Data.Choices) > 25 {
		return http.StatusBadRequest, tooLong("data.choices", 25).body()
	}
	for i, ch := range resp.Data.Choices {
		v, _ := ch.Value.(string)
		if runes(ch.Name) < 1 || runes(ch.Name) > 100 || runes(v) < 1 || runes(v) > 100 {
			return http.StatusBadRequest, invalid(fmt.Sprintf("data.choices.%d", i), "BASE_TYPE_BAD_LENGTH", "name and value must be between 1 and 100 in length.").body()
		}
	}
	in.ResponseType = typ
	in.Choices = resp.Data.Choices
	return http.StatusNoContent, nil
}

// UserInstallCommand sends a chat-input command used where only the user
// installed the app (context 1 is the bot's DM, 2 a group DM or a guild
// the bot is not in): no member, the user at the top level, and
// authorizing_integration_owners naming only the user install ("1").
// guildID is the guild the channel sits in, "" for a group DM.
func (s *Server) UserInstallCommand(channelID, guildID, name string, options map[string]string, user discordgo.User) *Interaction {
	s.mu.Lock()
	in := s.newInteractionLocked(discordgo.InteractionApplicationCommand, channelID, guildID)
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	opts := make([]map[string]any, 0, len(options))
	for _, k := range keys {
		opts = append(opts, map[string]any{"name": k, "type": int(discordgo.ApplicationCommandOptionString), "value": options[k]})
	}
	p := map[string]any{
		"id": in.ID, "application_id": AppID, "type": int(in.Type), "token": in.Token, "version": 1, "locale": "en-US",
		"channel_id": channelID, "user": user,
		"data":                           map[string]any{"id": "cmd-" + name, "name": name, "type": int(discordgo.ChatApplicationCommand), "options": opts},
		"context":                        int(discordgo.InteractionContextPrivateChannel),
		"authorizing_integration_owners": map[string]string{"1": user.ID},
	}
	if guildID != "" {
		p["guild_id"] = guildID
		p["context"] = int(discordgo.InteractionContextGuild)
		p["member"] = map[string]any{"user": user, "roles": []string{}, "permissions": "0"}
		delete(p, "user")
	}
	c := *in
	s.mu.Unlock()
	s.Dispatch("INTERACTION_CREATE", p)
	return &c
}

// checkInstallContexts holds a command's integration_types (0 guild
// install, 1 user install) and contexts (0 guild, 1 bot DM, 2 private
// channel) to the values Discord knows, and an autocomplete option to
// having no fixed choices.
func checkInstallContexts(i int, cmd map[string]any) *formError {
	check := func(field string, max float64) *formError {
		raw, ok := cmd[field]
		if !ok || raw == nil {
			return nil
		}
		vs, ok := raw.([]any)
		if !ok || len(vs) == 0 {
			return invalid(fmt.Sprintf("%d.%s", i, field), "BASE_TYPE_ARRAY", "Must be a non-empty array.")
		}
		for j, v := range vs {
			if n, ok := v.(float64); !ok || n < 0 || n > max || n != float64(int(n)) {
				return invalid(fmt.Sprintf("%d.%s.%d", i, field, j), "BASE_TYPE_CHOICES", "Value must be one of 0 to %v.", max)
			}
		}
		return nil
	}
	if e := check("integration_types", 1); e != nil {
		return e
	}
	if e := check("contexts", 2); e != nil {
		return e
	}
	opts, _ := cmd["options"].([]any)
	for j, o := range opts {
		om, _ := o.(map[string]any)
		if ac, _ := om["autocomplete"].(bool); ac {
			if chs, _ := om["choices"].([]any); len(chs) > 0 {
				return invalid(fmt.Sprintf("%d.options.%d.autocomplete", i, j), "APPLICATION_COMMAND_OPTION_AUTOCOMPLETE_CHOICES", "Autocomplete cannot be used with choices")
			}
		}
	}
	return nil
}

// removeReaction takes the bot's reaction off a message
// (https://discord.com/developers/docs/resources/message#delete-own-reaction);
// a reaction it does not have is no error, as on Discord.
func (s *Server) removeReaction(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") {
		return http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	m.Reactions = slices.DeleteFunc(m.Reactions, func(e string) bool { return e == r.PathValue("emoji") })
	return http.StatusNoContent, nil
}

// addReaction records the bot's reaction on a message
// (https://discord.com/developers/docs/resources/message#create-reaction).
func (s *Server) addReaction(_ http.ResponseWriter, r *http.Request, _ *Call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") {
		return http.StatusNotFound, errBody(10008, "Unknown Message")
	}
	emoji := r.PathValue("emoji")
	if emoji == "" {
		return http.StatusBadRequest, errBody(10014, "Unknown Emoji")
	}
	if !slices.Contains(m.Reactions, emoji) {
		m.Reactions = append(m.Reactions, emoji)
	}
	return http.StatusNoContent, nil
}
