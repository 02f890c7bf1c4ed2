package discord

import (
	"context"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/core"
)

// Profile reads a user's name (a core.ProfileFunc): their nickname in the
// guild they were seen in, else their global name, else their username.
// Discord shares no time zone, so TimeZone stays "" (a linked Slack
// identity may give one).
func (a *Adapter) Profile(ctx context.Context, guildID, userID string) (core.Profile, error) {
	if guildID != "" {
		m, err := a.s.GuildMember(guildID, userID, discordgo.WithContext(ctx))
		if err == nil && m.User != nil {
			return core.Profile{DisplayName: firstNonEmpty(m.Nick, m.User.GlobalName, m.User.Username)}, nil
		}
	}
	u, err := a.s.User(userID, discordgo.WithContext(ctx))
	if err != nil {
		return core.Profile{}, fmt.Errorf("reading discord user %s: %w", userID, err)
	}
	return core.Profile{DisplayName: firstNonEmpty(u.GlobalName, u.Username)}, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
