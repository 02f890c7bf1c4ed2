package slack

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
)

// MetadataEventType is the message metadata event type of every message
// Switchboard posts for an entry; its payload carries the post's idempotency
// key and the part's index.
const MetadataEventType = "switchboard_post"

// findLimit bounds how far back FindPosted looks: a post that was cut off by
// a crash is among the newest messages of its thread or channel.
const findLimit = 100

// FindPosted implements bots.Finder: it looks through the newest messages of
// the target's thread (or channel) for the parts posted with key, read from
// their metadata, and returns them in order. Slack has no idempotency key on
// chat.postMessage, so this is how a post whose answer was lost (the process
// died between the call and recording its ts) is found instead of repeated.
// One page of at most findLimit messages posted since the intent was
// recorded is read, through the same rate limit handling as every call.
func (a *Adapter) FindPosted(ctx context.Context, to bots.Target, key string, since time.Time) ([]bots.MessageRef, error) {
	if key == "" {
		return nil, nil
	}
	// A minute of slack for clocks that disagree: a tagged post cannot be
	// mistaken for another.
	channel, msgs, err := a.recent(ctx, to, since.Add(-time.Minute))
	if err != nil {
		return nil, fmt.Errorf("looking for slack post %s: %w", key, err)
	}
	type found struct {
		part int
		ts   string
	}
	var hits []found
	for _, m := range msgs {
		if m.Metadata.EventType != MetadataEventType || m.Metadata.EventPayload["key"] != key {
			continue
		}
		part, _ := m.Metadata.EventPayload["part"].(float64)
		hits = append(hits, found{int(part), m.Timestamp})
	}
	slices.SortFunc(hits, func(x, y found) int { return x.part - y.part })
	refs := make([]bots.MessageRef, 0, len(hits))
	for _, h := range hits {
		refs = append(refs, bots.MessageRef{Channel: channel, ID: h.ts})
	}
	return refs, nil
}

// streamClockSlack is how far Slack's clock may lag ours when FindStream
// compares a message's ts with the time the stream was about to start.
const streamClockSlack = time.Second

// FindStream implements bots.StreamFinder: the bot's untagged messages
// (streams carry no metadata) in the target's thread since the stream was
// about to start, oldest first. The conversation runs one turn at a time,
// so nothing else of the bot's is written there meanwhile.
func (a *Adapter) FindStream(ctx context.Context, to bots.Target, since time.Time) ([]bots.MessageRef, error) {
	channel, msgs, err := a.recent(ctx, to, since.Add(-streamClockSlack))
	if err != nil {
		return nil, fmt.Errorf("looking for a slack stream: %w", err)
	}
	w, err := a.workspaceFor(ctx, to.Workspace)
	if err != nil {
		return nil, fmt.Errorf("looking for a slack stream: %w", err)
	}
	var refs []bots.MessageRef
	for _, m := range msgs {
		if !w.mine(m) || m.Metadata.EventType == MetadataEventType || m.Timestamp == to.Thread {
			continue
		}
		refs = append(refs, bots.MessageRef{Channel: channel, ID: m.Timestamp})
	}
	slices.SortFunc(refs, func(x, y bots.MessageRef) int { return strings.Compare(x.ID, y.ID) })
	return refs, nil
}

// recent reads the newest messages of the target's thread (or channel)
// posted since a time: one page of at most findLimit, with their metadata,
// through the same rate limit handling as every call.
func (a *Adapter) recent(ctx context.Context, to bots.Target, since time.Time) (string, []slack.Message, error) {
	w, channel, err := a.target(ctx, to)
	if err != nil {
		return "", nil, err
	}
	oldest := fmt.Sprintf("%d.%06d", since.Unix(), since.Nanosecond()/1000)
	var msgs []slack.Message
	if to.Thread != "" {
		err = a.retry(ctx, "conversations.replies", func(ctx context.Context) error {
			var err error
			msgs, _, _, err = w.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: to.Thread, Limit: findLimit, IncludeAllMetadata: true, Oldest: oldest,
			})
			return err
		})
	} else {
		err = a.retry(ctx, "conversations.history", func(ctx context.Context) error {
			res, err := w.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: channel, Limit: findLimit, IncludeAllMetadata: true, Oldest: oldest,
			})
			if res != nil {
				msgs = res.Messages
			}
			return err
		})
	}
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", channel, err)
	}
	return channel, msgs, nil
}

// mine reports whether the bot posted m.
func (w *workspace) mine(m slack.Message) bool {
	return m.User == w.me.UserID || (m.BotID != "" && m.BotID == w.me.BotID)
}
