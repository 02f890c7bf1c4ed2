package app_test

import (
	"context"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// TestSlackAckModes: by default (slack.ack: deferred) the ack stores the
// event alone and the conversation is bound right after; with slack.ack:
// inline the whole message is stored before the ack returns, and no inbound
// work item is made. Either way the mention is answered once.
func TestSlackAckModes(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		ctx := context.Background()
		for _, mode := range []string{"deferred", "inline"} {
			t.Run(mode, func(t *testing.T) {
				e := startSlack(t, db(t), envOptions{config: openAccess + "slack:\n  ack: " + mode + "\n"})
				const channel, ts = "C0ACKMODE", "1700000499.000001"
				e.mustPost(newEvent("EvAck"+mode, mention(channel, ts, "", alice, "let me in")))
				items, err := e.store.WorkList(ctx, &store.WorkListParams{Kind: core.WorkInbound, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				_, bindErr := e.store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", e2eTeam, channel, ts)})
				switch mode {
				case "deferred":
					if len(items) != 1 {
						t.Fatalf("deferred ack: %d inbound items at the ack, want the event's one", len(items))
					}
				case "inline":
					if len(items) != 0 || bindErr != nil {
						t.Fatalf("inline ack: %d inbound items, binding error %v at the ack; want none and the conversation bound", len(items), bindErr)
					}
				}
				e.waitReply(channel, fallbackReply("let me in"))
				e.waitIdle()
				if n := len(e.slack.Messages(channel)); n != 1 {
					t.Fatalf("%d messages in the channel, want the one reply", n)
				}
			})
		}
	})
}
