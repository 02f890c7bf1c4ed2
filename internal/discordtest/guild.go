package discordtest

import (
	"time"

	"github.com/bwmarrin/discordgo"
)

// Guild is a guild the bot is added to (JoinGuild).
type Guild struct {
	ID      string
	Name    string
	OwnerID string // the user id of the guild's owner
}

// JoinGuild plays Discord when the bot is added to a guild: a GUILD_CREATE
// dispatch carrying the guild object with the extra fields Discord sends
// on that event (https://discord.com/developers/docs/events/gateway-events#guild-create):
// id, name, owner_id, joined_at, member_count, and the guild's channels the
// fake knows (AddChannel). It returns the event's sequence number.
func (s *Server) JoinGuild(g Guild) int64 {
	s.mu.Lock()
	channels := []*discordgo.Channel{}
	for _, ch := range s.channels {
		if ch.GuildID == g.ID && !ch.IsThread() {
			c := *ch
			c.GuildID = "" // GUILD_CREATE's channels leave it out
			channels = append(channels, &c)
		}
	}
	joined := s.now().UTC().Format(time.RFC3339Nano)
	s.mu.Unlock()
	return s.Dispatch("GUILD_CREATE", map[string]any{
		"id": g.ID, "name": g.Name, "icon": nil, "owner_id": g.OwnerID,
		"verification_level": 0, "default_message_notifications": 0, "explicit_content_filter": 0,
		"roles": []any{}, "emojis": []any{}, "features": []string{}, "mfa_level": 0, "system_channel_flags": 0,
		"premium_tier": 0, "preferred_locale": "en-US", "nsfw_level": 0, "premium_progress_bar_enabled": false,
		"joined_at": joined, "large": false, "unavailable": false, "member_count": 1,
		"voice_states": []any{}, "members": []any{}, "channels": channels, "threads": []any{},
		"presences": []any{}, "stage_instances": []any{}, "guild_scheduled_events": []any{},
	})
}
