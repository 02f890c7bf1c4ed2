package discord

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/core/redact"
)

// WorkspaceBinder binds a guild to a Switchboard workspace: a team workspace
// named after the guild and owned by the person behind owner (the guild
// owner's user id). A guild already bound keeps its workspace.
type WorkspaceBinder interface {
	BindWorkspace(ctx context.Context, platform, externalID, name, owner string) error
}

// onGuildCreate binds a guild the bot is in to its workspace. Discord sends
// GUILD_CREATE when the bot joins a guild and, after every IDENTIFY, for
// each guild it is already in; the binder leaves a bound guild as it is, so
// a reconnect changes nothing. An unavailable guild (an outage) carries no
// name or owner and is skipped: it comes again when it is back.
func (a *Adapter) onGuildCreate(_ *discordgo.Session, g *discordgo.GuildCreate) {
	if a.opts.Binder == nil || g.Guild == nil || g.Unavailable || g.ID == "" {
		return
	}
	id, name, owner := g.ID, g.Name, g.OwnerID
	// Handlers run on the gateway's read goroutine: the binding (database,
	// a member lookup for the owner's name) runs beside it.
	a.goTracked(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, a.opts.BindTimeout)
		defer cancel()
		if err := a.opts.Binder.BindWorkspace(ctx, Platform, id, name, owner); err != nil {
			a.log.ErrorContext(ctx, "binding a discord guild to a workspace", "guild_id", id, "owner_id", owner, "error", redact.String(err.Error()))
			return
		}
		a.log.DebugContext(ctx, "discord guild bound to a workspace", "guild_id", id, "guild", name, "owner_id", owner)
	})
}
