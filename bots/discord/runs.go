package discord

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/discord/discordcard"
)

// A run's progress in the channel or thread it came from: one message with
// an embed listing the steps, edited in place as they move, to the end and
// through a retry. Which message shows a run is recorded through
// bots.RunMessages (deliver keeps it in the store): after a restart, or on
// another instance, the next change edits the same message.
//
// The record is claimed before the first send, and the send carries a
// nonce made from the run and the channel with enforce_nonce: if the
// process dies between Discord making the message and the record naming
// it, the next attempt after the intent has aged past a post's time (see
// bots.RunMessages.Claim) sends again with the same nonce and Discord
// answers with the message it made, so the run still shows once. Discord keeps a
// nonce for a few minutes; a retry later than that posts a second
// message, the first one left showing the steps as they stood.

// runEmbeds serialises the run views this process shows.
type runEmbeds struct {
	mu sync.Mutex
}

var _ bots.RunShower = (*Adapter)(nil)

// runKindEmbed is the record's kind of a run's embed message.
const runKindEmbed = "embed"

// ShowRun implements bots.RunShower.
func (a *Adapter) ShowRun(ctx context.Context, to bots.Target, v *bots.RunView, rec bots.RunMessages) error {
	p := outgoing{embeds: []*discordgo.MessageEmbed{runEmbed(v)}}
	channelID, err := a.targetChannel(ctx, to, false)
	if err != nil {
		return fmt.Errorf("discord: showing a run: %w", err)
	}
	a.runs.mu.Lock()
	defer a.runs.mu.Unlock()
	m, err := rec.Load(ctx)
	if err != nil {
		return fmt.Errorf("discord: showing run %s: %w", v.ID, err)
	}
	if m == nil || m.Posting() {
		var won bool
		if m, won, err = rec.Claim(ctx, runKindEmbed); err != nil {
			return fmt.Errorf("discord: showing run %s: %w", v.ID, err)
		} else if !won {
			return fmt.Errorf("discord: showing run %s: another process is posting its message", v.ID)
		}
	}
	if !m.Posting() {
		if err := a.edit(ctx, m.Ref, p); err != nil {
			return fmt.Errorf("discord: editing the progress of run %s: %w", v.ID, err)
		}
		if m.Ended == v.Final() {
			return nil
		}
		return rec.Save(ctx, &bots.RunMessage{Ref: m.Ref, Kind: runKindEmbed, Ended: v.Final()})
	}
	p.nonce = nonceFor("run-progress:"+v.ID+":"+channelID, 0)
	msg, err := a.sendMessage(ctx, channelID, p)
	if err != nil {
		return fmt.Errorf("discord: posting the progress of run %s: %w", v.ID, err)
	}
	ref := bots.MessageRef{Channel: channelID, ID: msg.ID}
	if err := rec.Save(ctx, &bots.RunMessage{Ref: ref, Kind: runKindEmbed, Ended: v.Final()}); err != nil {
		return err
	}
	if !sameRunEmbed(msg.Embeds, p.embeds[0]) {
		// The nonce gave back the message an earlier attempt made, as
		// it showed the run then: show it as it is now.
		if err := a.edit(ctx, ref, p); err != nil {
			return fmt.Errorf("discord: editing the progress of run %s: %w", v.ID, err)
		}
	}
	return nil
}

// sameRunEmbed reports whether a sent message's embeds show what e shows.
func sameRunEmbed(got []*discordgo.MessageEmbed, e *discordgo.MessageEmbed) bool {
	return len(got) == 1 && got[0].Description == e.Description && got[0].Footer != nil && got[0].Footer.Text == e.Footer.Text
}

// Embed colours by the run's status.
const (
	colorRunning = 0x5865F2
	colorDone    = 0x57F287
	colorFailed  = 0xED4245
)

func runEmbed(v *bots.RunView) *discordgo.MessageEmbed {
	e := &discordgo.MessageEmbed{Title: truncate(v.Title, discordcard.MaxTitle), Color: colorRunning}
	switch v.Status {
	case "done":
		e.Color = colorDone
	case "failed", "cancelled":
		e.Color = colorFailed
	}
	var b strings.Builder
	for _, s := range v.Steps {
		line := fmt.Sprintf("%s **%s** %s (%s)", stepMark(s.Status), s.Key, s.Title, s.Agent)
		if s.Detail != "" {
			line += " · " + s.Detail
		}
		b.WriteString(truncate(line, 300) + "\n")
	}
	e.Description = truncate(b.String(), discordcard.MaxDescription)
	e.Footer = &discordgo.MessageEmbedFooter{Text: "Run " + shortRunID(v.ID) + " · " + v.Status}
	return e
}

func stepMark(status string) string {
	switch status {
	case "working":
		return "⏳"
	case "done":
		return "✅"
	case "failed":
		return "❌"
	case "cancelled":
		return "⏹"
	}
	return "▫️"
}

func shortRunID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
