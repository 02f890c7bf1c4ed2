package app_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/store"
)

// TestDiscordGuildJoinBindsATeamWorkspace: when the bot is added to a guild
// (GUILD_CREATE), the guild gets a team workspace named after it, owned by
// the guild owner's person (named from the guild member) and bound to the
// guild; a GUILD_CREATE again (as after every reconnect) keeps that one
// workspace; an unavailable guild (an outage) binds nothing; and a mention
// in the guild's channel belongs to the guild's workspace.
func TestDiscordGuildJoinBindsATeamWorkspace(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		ctx := context.Background()
		e := discordStart(t, db, 0)
		const guild, owner, channel = "1000000000000000077", "2000000000000000077", "3000000000000000077"
		const outage = "1000000000000000088"
		e.fake.SetMember(guild, discordgo.Member{Nick: "Olga", User: &discordgo.User{ID: owner, Username: "olga"}})
		e.fake.AddChannel(discordgo.Channel{ID: channel, GuildID: guild, Type: discordgo.ChannelTypeGuildText, Name: "owls"})

		e.fake.Dispatch("GUILD_CREATE", map[string]any{"id": outage, "unavailable": true})
		e.fake.JoinGuild(discordtest.Guild{ID: guild, Name: "Night Owls", OwnerID: owner})

		var bound *store.WorkspaceBinding
		discordPoll(t, "guild "+guild+" bound to a workspace", func() (bool, string) {
			b, err := e.store.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: "discord", ExternalID: guild})
			bound = b
			return err == nil, fmt.Sprint(err)
		})
		ws, err := e.store.WorkspaceGet(ctx, bound.WorkspaceID)
		if err != nil || ws.Kind != store.WorkspaceTeam || ws.Name != "Night Owls" {
			t.Fatalf("the guild's workspace = %+v, %v; want a team workspace named Night Owls", ws, err)
		}
		person, err := e.store.PersonFind(ctx, &store.PersonFindParams{Identity: store.Identity{Platform: "discord", UserID: owner}})
		if err != nil {
			t.Fatalf("the guild owner's person: %v", err)
		}
		if ws.OwnerPersonID != person.ID || person.DisplayName != "Olga" {
			t.Fatalf("workspace owner %s, owner's person %+v; want the guild owner's person, named Olga from the guild member", ws.OwnerPersonID, person)
		}
		if m, err := e.store.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: person.ID}); err != nil || m.Role != store.RoleOwner {
			t.Fatalf("the guild owner in the workspace: %+v, %v; want the owner role", m, err)
		}
		if _, err := e.store.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: "discord", ExternalID: outage}); !errorsIsNotFound(err) {
			t.Fatalf("an unavailable guild: binding %v; want none", err)
		}

		// GUILD_CREATE again: the same workspace, no second one.
		e.fake.JoinGuild(discordtest.Guild{ID: guild, Name: "Night Owls renamed", OwnerID: owner})
		// A mention in the guild's channel lands in the guild's workspace.
		e.mention(channel, discordAlice, "hello owls")
		e.waitBotMessage(channel, "hello owls")
		teams := 0
		mine, err := e.store.WorkspaceListByPerson(ctx, person.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mine {
			if m.Workspace.Kind == store.WorkspaceTeam {
				teams++
				if m.Workspace.ID != ws.ID {
					t.Fatalf("the guild owner is in team workspace %+v besides the guild's", m.Workspace)
				}
			}
		}
		if teams != 1 {
			t.Fatalf("the guild owner is in %d team workspaces; want the guild's one", teams)
		}
		if b, err := e.store.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: "discord", ExternalID: guild}); err != nil || b.WorkspaceID != ws.ID {
			t.Fatalf("after a second GUILD_CREATE the guild is bound to %+v, %v; want %s still", b, err, ws.ID)
		}
		conv, err := e.store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("discord", guild, channel, "")})
		if err != nil {
			t.Fatalf("the conversation of the mention in %s: %v", channel, err)
		}
		if got, err := e.store.ConversationWorkspace(ctx, conv.ConversationID); err != nil || got == nil || *got != ws.ID {
			t.Fatalf("the conversation of a mention in the guild belongs to %v, %v; want the guild's workspace %s", got, err, ws.ID)
		}
	})
}
