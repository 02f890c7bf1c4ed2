package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/store"
)

// TestDiscordApprovalPromptAlwaysAllow: on Discord a call the policy asks
// about shows the four buttons within Discord's limits; a stranger's click
// on Always allow gets an ephemeral refusal and changes nothing; the
// starter's click through the fake's interaction path runs the call and
// makes the grant, so the same call then runs without asking.
func TestDiscordApprovalPromptAlwaysAllow(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartWith(t, db, 0, openAccess+"policy:\n  tools: {routine_list: confirm}\n")
		ctx := context.Background()
		const channel = "3000000000000000042"

		e.mention(channel, discordAlice, discordGuardKeyword)
		prompt := e.waitBotMessage(channel, "Approval needed")
		btns := prompt.Buttons()
		var labels []string
		ids := map[string]string{}
		for _, b := range btns {
			labels = append(labels, b.Label)
			ids[b.Label] = b.CustomID
			if n := utf8.RuneCountInString(b.CustomID); n == 0 || n > discordtest.MaxCustomIDLen {
				t.Errorf("button %q has a custom_id of %d characters; Discord allows 1 to %d", b.Label, n, discordtest.MaxCustomIDLen)
			}
			if n := utf8.RuneCountInString(b.Label); n > discordtest.MaxLabelLen {
				t.Errorf("button label %q has %d characters; Discord allows %d", b.Label, n, discordtest.MaxLabelLen)
			}
			if b.Row != 0 {
				t.Errorf("button %q is in row %d; the four fit in one action row of %d", b.Label, b.Row, discordtest.MaxRowButtons)
			}
		}
		if want := []string{"Allow once", "Always allow", "Always allow these arguments", "Deny"}; !slices.Equal(labels, want) {
			t.Fatalf("prompt buttons = %q, want %q", labels, want)
		}
		conv := e.settle(channel)
		aps, err := e.store.ApprovalListPending(ctx, conv)
		if err != nil || len(aps) != 1 {
			t.Fatalf("pending approvals = %v, %v; want one", aps, err)
		}

		// A stranger's click: an ephemeral refusal (flags 64), nothing else.
		in := e.fake.ClickButton(prompt.ID, ids["Always allow"], discordMallory)
		var refusal *discordtest.Message
		e.fake.Wait(t, "a follow-up to mallory's click", func() bool {
			got := e.fake.Interaction(in.ID)
			if got == nil || len(got.Followups) == 0 {
				return false
			}
			refusal = e.fake.Message(got.Followups[0])
			return refusal != nil
		})
		if !refusal.Ephemeral() || !strings.Contains(refusal.Content, "yours") {
			t.Errorf("refusal = %q (flags %d); want an ephemeral (64) note that it is not theirs to decide", refusal.Content, refusal.Flags)
		}
		if gs, err := e.store.GrantList(ctx, &store.GrantListParams{}); err != nil || len(gs) != 0 {
			t.Fatalf("grants after a stranger's Always allow = %v, %v; want none", gs, err)
		}
		if ap, _ := e.store.ApprovalGet(ctx, aps[0].ID); ap.Status != store.ApprovalPending {
			t.Errorf("approval is %s after a stranger's click, want pending", ap.Status)
		}
		if rs := e.entries(conv, store.EntryToolResult); len(rs) != 0 {
			t.Fatalf("%d tool results after a stranger's click, want none", len(rs))
		}

		// The starter's Always allow: the call runs and the grant is made.
		e.fake.ClickButton(prompt.ID, ids["Always allow"], discordAlice)
		e.waitBotMessage(channel, "Listed:")
		e.settle(channel)
		gs, err := e.store.GrantList(ctx, &store.GrantListParams{})
		if err != nil || len(gs) != 1 {
			t.Fatalf("grants after Always allow = %v, %v; want one", gs, err)
		}
		if g := gs[0]; g.Tool != "routine_list" || g.Workspace != discordGuild || g.GrantedBy != discordAlice.ID || g.ArgsHash != "" {
			t.Errorf("grant = %+v; want routine_list in guild %s by %s for any arguments", g, discordGuild, discordAlice.ID)
		}

		// The same call again: no prompt, it runs.
		const other = "3000000000000000043"
		e.mention(other, discordAlice, discordGuardKeyword)
		e.waitBotMessage(other, "Listed:")
		e.settle(other)
		for _, m := range e.fake.BotMessages(other) {
			if len(m.Buttons()) > 0 {
				t.Fatalf("the granted call asked again: %q", m.Content)
			}
		}
	})
}
