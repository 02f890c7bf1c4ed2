package slack

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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
	channel, err := a.channelFor(ctx, to)
	if err != nil {
		return nil, err
	}
	// A minute of slack for clocks that disagree.
	oldest := strconv.FormatInt(since.Add(-time.Minute).Unix(), 10) + ".000000"
	var msgs []slack.Message
	if to.Thread != "" {
		err = a.retry(ctx, "conversations.replies", func(ctx context.Context) error {
			var err error
			msgs, _, _, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: to.Thread, Limit: findLimit, IncludeAllMetadata: true, Oldest: oldest,
			})
			return err
		})
	} else {
		err = a.retry(ctx, "conversations.history", func(ctx context.Context) error {
			res, err := a.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: channel, Limit: findLimit, IncludeAllMetadata: true, Oldest: oldest,
			})
			if res != nil {
				msgs = res.Messages
			}
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("looking for slack post %s in %s: %w", key, channel, err)
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
