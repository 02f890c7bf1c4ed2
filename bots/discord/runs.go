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
// an embed listing the steps, edited in place as they move. Which message
// shows a run is kept in this process: after a restart the next change
// posts a new one.

type runEmbeds struct {
	mu    sync.Mutex
	byKey map[string]bots.MessageRef
}

var _ bots.RunShower = (*Adapter)(nil)

// ShowRun implements bots.RunShower.
func (a *Adapter) ShowRun(ctx context.Context, to bots.Target, v *bots.RunView) error {
	p := outgoing{embeds: []*discordgo.MessageEmbed{runEmbed(v)}}
	channelID, err := a.targetChannel(ctx, to, false)
	if err != nil {
		return fmt.Errorf("discord: showing a run: %w", err)
	}
	key := v.ID + "/" + channelID
	a.runs.mu.Lock()
	defer a.runs.mu.Unlock()
	if a.runs.byKey == nil {
		a.runs.byKey = map[string]bots.MessageRef{}
	}
	if ref, ok := a.runs.byKey[key]; ok {
		if err := a.edit(ctx, ref, p); err != nil {
			return fmt.Errorf("discord: editing the progress of run %s: %w", v.ID, err)
		}
		return nil
	}
	msg, err := a.sendMessage(ctx, channelID, p)
	if err != nil {
		return fmt.Errorf("discord: posting the progress of run %s: %w", v.ID, err)
	}
	a.runs.byKey[key] = bots.MessageRef{Channel: channelID, ID: msg.ID}
	return nil
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
