package discord

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/internal/discordtest"
)

// memRunMessages is bots.RunMessages in memory; with saveFails set, a
// save is lost, as when the process dies between the platform's answer
// and recording it.
type memRunMessages struct {
	m         *bots.RunMessage
	saveFails bool
}

func (r *memRunMessages) Load(context.Context) (*bots.RunMessage, error) {
	if r.m == nil {
		return nil, nil
	}
	c := *r.m
	return &c, nil
}

func (r *memRunMessages) Claim(_ context.Context, kind string) (*bots.RunMessage, bool, error) {
	r.m = &bots.RunMessage{Kind: kind}
	c := *r.m
	return &c, true, nil
}

func (r *memRunMessages) Save(_ context.Context, m *bots.RunMessage) error {
	if r.saveFails {
		return errors.New("the process died")
	}
	c := *m
	r.m = &c
	return nil
}

// A run's first embed whose message id was never recorded (the process
// died right after Discord made it) is sent again by the next change with
// the same nonce: Discord gives the first message back, and it is edited
// to show the run as it is now. One message shows the run.
func TestShowRunLostRecordSendsOnce(t *testing.T) {
	a, fake, _ := start(t, nil)
	ctx := context.Background()
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	to := bots.Target{Platform: Platform, Workspace: discordtest.DefaultGuildID, Channel: chanGeneral}
	view := func(status, step string) *bots.RunView {
		return &bots.RunView{ID: "0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Title: "Ship it", Status: status,
			Steps: []bots.RunStepView{{Key: "one", Title: "Part one", Agent: "coder", Status: step}}}
	}
	rec := &memRunMessages{saveFails: true}
	require.Error(t, a.ShowRun(ctx, to, view("running", "working"), rec), "the record of the first send is lost")
	require.Len(t, fake.BotMessages(chanGeneral), 1)
	require.True(t, rec.m.Posting(), "the intent is left without its message")

	rec.saveFails = false
	require.NoError(t, a.ShowRun(ctx, to, view("done", "done"), rec))
	msgs := fake.BotMessages(chanGeneral)
	require.Len(t, msgs, 1, "the resend with the same nonce made no second message")
	require.Equal(t, msgs[0].ID, rec.m.Ref.ID, "the record names the first message")
	body := string(msgs[0].Embeds)
	require.True(t, strings.Contains(body, "✅") && strings.Contains(body, "· done"), "the message shows the run as it is now: %s", body)

	require.NoError(t, a.ShowRun(ctx, to, view("done", "done"), rec))
	require.Len(t, fake.BotMessages(chanGeneral), 1, "a later change edits")
}
