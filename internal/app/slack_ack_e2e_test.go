package app_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
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

// speakerPrefix is the "[name] " before each message of a turn that quotes
// several.
var speakerPrefix = regexp.MustCompile(`^\[[^\]]*\] `)

// TestSlackDeferredAckKeepsThreadOrder: messages of one thread (and of one
// DM) posted back to back, each acknowledged before the next is sent, are
// logged in the order they were sent and answered once each, although the
// deferred ack stores only the event and the rest runs on the workers.
// Messages that land before a turn starts are answered by one reply (the
// scripted model quotes each of them; see core/seen.go), so "once each" is:
// the replies, read in log order, quote every message once, in the order
// sent, and each reply is posted once.
func TestSlackDeferredAckKeepsThreadOrder(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{config: openAccess + "slack:\n  ack: deferred\n"})
		type place struct{ channel, thread string }
		const perPlace = 4
		var places []place
		sent := map[place][]string{}
		for i := range 3 {
			channel, root := fmt.Sprintf("C0ORDER%d", i), fmt.Sprintf("1700000700.%06d", i*100)
			p := place{channel, root}
			places = append(places, p)
			for j := range perPlace {
				text := fmt.Sprintf("thread %d message %d", i, j)
				ts, thread := fmt.Sprintf("1700000700.%06d", i*100+j), root
				if j == 0 {
					thread = "" // the mention that opens the thread
				}
				e.mustPost(newEvent(fmt.Sprintf("EvOrder%d_%d", i, j), mention(channel, ts, thread, alice, text)))
				sent[p] = append(sent[p], text)
			}
		}
		dm := place{"D0ORDER", ""}
		places = append(places, dm)
		for j := range perPlace {
			text := fmt.Sprintf("dm message %d", j)
			e.mustPost(newEvent(fmt.Sprintf("EvOrderDM%d", j), directMessage(dm.channel, fmt.Sprintf("1700000701.%06d", j), alice, text)))
			sent[dm] = append(sent[dm], text)
		}

		e.waitIdle()
		for _, p := range places {
			conv := e.conversation(p.channel, p.thread)
			var logged []string
			for _, en := range e.entries(conv.ID, store.EntryUser) {
				logged = append(logged, decode[core.UserContent](t, en).Text)
			}
			if !slices.Equal(logged, sent[p]) {
				t.Errorf("%s/%s logged %q, want the order they were sent in: %q", p.channel, p.thread, logged, sent[p])
			}
			answers := e.entries(conv.ID, store.EntryAssistant)
			var answered []string // the messages the replies quote, in log order
			for _, en := range answers {
				text := decode[core.AssistantContent](t, en).Text
				quoted, ok := strings.CutPrefix(text, "Hello from the scripted model. You said: ")
				if !ok {
					t.Fatalf("%s/%s: reply %q is not the scripted fallback", p.channel, p.thread, text)
				}
				for _, line := range strings.Split(quoted, "\n") {
					// Several messages in one turn are each shown with their
					// speaker: alice's name, or "someone" while her profile
					// is still being read. Who is named is not this test's.
					answered = append(answered, speakerPrefix.ReplaceAllString(line, ""))
				}
			}
			if !slices.Equal(answered, sent[p]) {
				t.Errorf("%s/%s: the replies quote %q; want each message once, in the order sent: %q", p.channel, p.thread, answered, sent[p])
			}
			if n := len(e.botMessages(p.channel)); n != len(answers) {
				t.Errorf("%d bot messages in %s for %d replies in the log, want each posted once", n, p.channel, len(answers))
			}
		}
	})
}
