package discordtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// Context-menu commands as Discord documents them
// (https://discord.com/developers/docs/interactions/application-commands):
// USER (type 2) and MESSAGE (type 3) commands have a name of 1 to 32
// characters that may be mixed case and hold spaces, an empty description
// and no options; an app has at most 100 CHAT_INPUT commands and at most 15
// of each context-menu type. Using one sends an APPLICATION_COMMAND
// interaction whose data names the command's type, the target_id and the
// resolved user (and member, in a guild) or message.

// Most commands of each type an app may register.
const (
	maxChatInputCommands = 100
	maxMenuCommands      = 15
)

// checkCommandShape applies those rules to command i of a bulk overwrite;
// n is how many of its type came so far, itself included.
func checkCommandShape(i, typ int, name, desc string, cmd map[string]any, chatName *regexp.Regexp, n int) any {
	bad := func(field, msg string) any {
		return errBody(50035, fmt.Sprintf("Invalid Form Body: %d.%s: %s", i, field, msg))
	}
	switch typ {
	case int(discordgo.ChatApplicationCommand):
		if n > maxChatInputCommands {
			return bad("type", "Maximum number of application commands reached (100)")
		}
		if !chatName.MatchString(name) || strings.ToLower(name) != name {
			return bad("name", fmt.Sprintf("invalid command name %q", name))
		}
		if desc == "" || utf8.RuneCountInString(desc) > 100 {
			return bad("description", "Must be between 1 and 100 in length")
		}
	case int(discordgo.UserApplicationCommand), int(discordgo.MessageApplicationCommand):
		if n > maxMenuCommands {
			return bad("type", fmt.Sprintf("Maximum number of context menu commands of type %d reached (%d)", typ, maxMenuCommands))
		}
		if c := utf8.RuneCountInString(name); c < 1 || c > 32 || strings.TrimSpace(name) != name {
			return bad("name", "Must be between 1 and 32 in length")
		}
		if desc != "" {
			return bad("description", "Context menu commands cannot have description")
		}
		if opts, ok := cmd["options"].([]any); ok && len(opts) > 0 {
			return bad("options", "Context menu commands cannot have options")
		}
	default:
		return bad("type", fmt.Sprintf("Value %d is not a valid enum value", typ))
	}
	return nil
}

// MessageCommandInteraction registers the use of the message command name
// on a stored message by user and returns its INTERACTION_CREATE payload
// without sending it; MessageCommand also sends it.
func (s *Server) MessageCommandInteraction(messageID, name string, user discordgo.User) (*Interaction, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[messageID]
	if !ok {
		panic("discordtest: MessageCommandInteraction on unknown message " + messageID)
	}
	in := s.newInteractionLocked(discordgo.InteractionApplicationCommand, m.ChannelID, m.GuildID)
	payload := s.interactionPayloadLocked(in, user, map[string]any{
		"id": "cmd-" + name, "name": name, "type": int(discordgo.MessageApplicationCommand),
		"target_id": m.ID,
		"resolved":  map[string]any{"messages": map[string]any{m.ID: m.wire()}},
	})
	b, _ := json.Marshal(payload)
	c := *in
	return &c, b
}

// MessageCommand sends INTERACTION_CREATE for a message command.
func (s *Server) MessageCommand(messageID, name string, user discordgo.User) *Interaction {
	in, payload := s.MessageCommandInteraction(messageID, name, user)
	s.Dispatch("INTERACTION_CREATE", json.RawMessage(payload))
	return in
}

// UserCommandInteraction registers the use of the user command name on
// target by user in channelID and returns its INTERACTION_CREATE payload
// without sending it; UserCommand also sends it. In a guild the target's
// member (SetMember, else a bare one) is resolved beside the user, without
// its user, as Discord does.
func (s *Server) UserCommandInteraction(channelID, name string, target, user discordgo.User) (*Interaction, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	guild := DefaultGuildID
	if ch, ok := s.channels[channelID]; ok {
		guild = ch.GuildID
	} else {
		s.channels[channelID] = &discordgo.Channel{ID: channelID, GuildID: guild, Type: discordgo.ChannelTypeGuildText}
	}
	in := s.newInteractionLocked(discordgo.InteractionApplicationCommand, channelID, guild)
	resolved := map[string]any{"users": map[string]any{target.ID: target}}
	if guild != "" {
		member := map[string]any{"roles": []string{}, "joined_at": "2024-01-02T03:04:05.000000+00:00", "nick": nil}
		if mb, ok := s.members[guild+"/"+target.ID]; ok {
			member["roles"] = mb.Roles
			if mb.Nick != "" {
				member["nick"] = mb.Nick
			}
			if !mb.JoinedAt.IsZero() {
				member["joined_at"] = mb.JoinedAt
			}
		}
		resolved["members"] = map[string]any{target.ID: member}
	}
	payload := s.interactionPayloadLocked(in, user, map[string]any{
		"id": "cmd-" + name, "name": name, "type": int(discordgo.UserApplicationCommand),
		"target_id": target.ID, "resolved": resolved,
	})
	b, _ := json.Marshal(payload)
	c := *in
	return &c, b
}

// UserCommand sends INTERACTION_CREATE for a user command.
func (s *Server) UserCommand(channelID, name string, target, user discordgo.User) *Interaction {
	in, payload := s.UserCommandInteraction(channelID, name, target, user)
	s.Dispatch("INTERACTION_CREATE", json.RawMessage(payload))
	return in
}
