package deliver_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/deliver"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

type deliveryCounts struct {
	mu              sync.Mutex
	failed, retried int
	gone            int
	platforms       []string
}

func (c *deliveryCounts) DeliveryFailed(_ context.Context, platform string, gone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.platforms = append(c.platforms, platform)
	if gone {
		c.gone++
	} else {
		c.failed++
	}
}

func (c *deliveryCounts) DeliveryRetried(context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retried++
}

// TestObserverCountsFailuresAndRetries: a post that fails is reported once
// per failed delivery, with its platform; a deliver item on its second
// attempt is reported as a retry; a delivery that works reports nothing.
func TestObserverCountsFailuresAndRetries(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	rec := &recorder{lost: true}
	obs := &deliveryCounts{}
	d, err := deliver.New(deliver.Options{Store: st, Adapters: []bots.Adapter{rec}, Observer: obs})
	require.NoError(t, err)
	b := bind(t, st, "C1", "1.1")
	appendEntry(t, st, b.ConversationID, store.EntryAssistant, core.AssistantContent{Text: "once"})

	require.Error(t, d.HandleDeliver(ctx, &store.WorkItem{ConversationID: &b.ConversationID, Attempts: 1}, core.DeliverArgs{}))
	require.Equal(t, 1, obs.failed, "one failed delivery")
	require.Equal(t, []string{"chat"}, obs.platforms, "reported with its platform")
	require.Equal(t, 0, obs.retried, "a first attempt is no retry")

	rec.mu.Lock()
	rec.lost = false
	rec.mu.Unlock()
	require.NoError(t, d.HandleDeliver(ctx, &store.WorkItem{ConversationID: &b.ConversationID, Attempts: 2}, core.DeliverArgs{}))
	require.Equal(t, 1, obs.retried, "the second attempt is a retry")
	require.Equal(t, 1, obs.failed, "the delivery that worked reports no failure")
	require.Equal(t, 0, obs.gone)
}
