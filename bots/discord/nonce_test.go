package discord

import (
	"context"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/internal/discordtest"
)

// Posting the same key twice makes one message: the second send carries
// the same nonce with enforce_nonce, and Discord returns the first message.
func TestPostWithKeyIsIdempotent(t *testing.T) {
	a, fake, _ := start(t, nil)
	ctx := context.Background()
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	ch := chanGeneral
	to := bots.Target{Platform: Platform, Workspace: discordtest.DefaultGuildID, Channel: ch}
	first, err := a.Post(ctx, to, &bots.Message{Text: "once", Key: "7c9e6679-7425-40de-944b-e07fc1f90ae7"})
	require.NoError(t, err)
	again, err := a.Post(ctx, to, &bots.Message{Text: "once", Key: "7c9e6679-7425-40de-944b-e07fc1f90ae7"})
	require.NoError(t, err)
	require.Equal(t, first, again, "the repost returns the first message")
	require.Len(t, fake.BotMessages(ch), 1)
	require.LessOrEqual(t, len(fake.BotMessages(ch)[0].Nonce), 25, "Discord's nonce limit")
	other, err := a.Post(ctx, to, &bots.Message{Text: "twice", Key: "another"})
	require.NoError(t, err)
	require.NotEqual(t, first, other)
}

func TestNonceFits(t *testing.T) {
	require.Empty(t, nonceFor("", 0))
	for _, k := range []string{"7c9e6679-7425-40de-944b-e07fc1f90ae7", "not a uuid at all, quite long indeed"} {
		for _, part := range []int{0, 9, 99, 12345} {
			n := nonceFor(k, part)
			require.NotEmpty(t, n)
			require.LessOrEqual(t, len(n), maxNonceLen)
		}
		require.NotEqual(t, nonceFor(k, 0), nonceFor(k, 1), "parts get their own nonce")
	}
}

// A stream started again with the same key (its first message was made but
// never recorded) gets that message back and edits it: no second message.
func TestKeyedStreamTakesItsMessageBack(t *testing.T) {
	a, fake, _ := start(t, nil)
	ctx := context.Background()
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	to := bots.Target{Platform: Platform, Workspace: discordtest.DefaultGuildID, Channel: chanGeneral}
	dead, err := a.StartStream(ctx, to, nil)
	require.NoError(t, err)
	dead.(bots.StreamKeyer).SetKey("stream-of-turn-1")
	require.NoError(t, dead.Append(ctx, "Here"))
	require.Len(t, fake.BotMessages(chanGeneral), 1)

	again, err := a.StartStream(ctx, to, nil)
	require.NoError(t, err)
	again.(bots.StreamKeyer).SetKey("stream-of-turn-1")
	refs, err := again.Finish(ctx, &bots.Message{Text: "Here is the whole reply."})
	require.NoError(t, err)
	msgs := fake.BotMessages(chanGeneral)
	require.Len(t, msgs, 1, "the same message, taken back by its nonce")
	require.Equal(t, msgs[0].ID, refs[0].ID)
	require.Equal(t, "Here is the whole reply.", msgs[0].Content)
}
