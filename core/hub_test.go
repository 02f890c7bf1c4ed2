package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// twoInstances opens two stores on one Postgres schema, each with a shared
// hub, as two instances of the service would.
func twoInstances(tb testing.TB) (a, b store.Store, ha, hb *core.Hub) {
	tb.Helper()
	schema := testenv.PostgresSchema(tb)
	a, b = testenv.Postgres(tb, schema), testenv.Postgres(tb, schema)
	hub := func(st store.Store, name string) *core.Hub {
		h, err := core.NewSharedHub(core.HubOptions{Store: st, Instance: name, Logger: testenv.Logger(tb)})
		if err != nil {
			tb.Fatal(err)
		}
		if err := h.Start(context.Background()); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = h.Stop(context.Background()) })
		return h
	}
	return a, b, hub(a, "instance-a"), hub(b, "instance-b")
}

func next(tb testing.TB, ch <-chan core.Event, what string) core.Event {
	tb.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			tb.Fatalf("%s: the subscription closed", what)
		}
		return ev
	case <-time.After(10 * time.Second):
		tb.Fatalf("%s: nothing arrived within 10s", what)
	}
	return core.Event{}
}

// TestSharedHubAcrossInstances: a viewer on instance B sees, in order, the
// events of a turn run on instance A: its deltas (one longer than a
// notification can carry arrives whole), the entry it wrote (read from the
// log), its end. A's own viewer sees each event once.
func TestSharedHubAcrossInstances(t *testing.T) {
	t.Parallel()
	stA, _, ha, hb := twoInstances(t)
	ctx := t.Context()
	conv, err := stA.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "relay"})
	if err != nil {
		t.Fatal(err)
	}
	remote, stopRemote := hb.Subscribe(conv.ID, 4096)
	defer stopRemote()
	local, stopLocal := ha.Subscribe(conv.ID, 4096)
	defer stopLocal()
	other, stopOther := hb.Subscribe(uuid.New(), 16)
	defer stopOther()

	long := strings.Repeat("é long words ", 1500) // ~20 KB: more than one notification
	deltas := []string{"Hello", ", ", "world", long}
	ha.Publish(core.Event{ConversationID: conv.ID, Kind: core.EventTurnStart, Agent: "helper"})
	for _, d := range deltas {
		ha.Publish(core.Event{ConversationID: conv.ID, Kind: core.EventDelta, Text: d, Agent: "helper"})
	}
	res, err := stA.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: conv.ID, Kind: store.EntryAssistant, Author: "agent:helper",
		Content: json.RawMessage(`{"text": "Hello, world"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	ha.Publish(core.Event{ConversationID: conv.ID, Kind: core.EventEntry, Entry: res.Entry, Agent: "helper"})
	ha.Publish(core.Event{ConversationID: conv.ID, Kind: core.EventTurnEnd, Agent: "helper"})

	for _, sub := range []struct {
		name string
		ch   <-chan core.Event
	}{{"instance B's viewer", remote}, {"instance A's own viewer", local}} {
		ev := next(t, sub.ch, sub.name+": the turn's start")
		if ev.Kind != core.EventTurnStart || ev.Agent != "helper" {
			t.Fatalf("%s: first event = %+v, want the turn's start by helper", sub.name, ev)
		}
		var text strings.Builder
		for text.Len() < len(strings.Join(deltas, "")) {
			ev := next(t, sub.ch, sub.name+": the deltas")
			if ev.Kind != core.EventDelta {
				t.Fatalf("%s: got %s after %d bytes of deltas, want the rest of the deltas", sub.name, ev.Kind, text.Len())
			}
			text.WriteString(ev.Text)
		}
		if got, want := text.String(), strings.Join(deltas, ""); got != want {
			t.Fatalf("%s: the deltas add up to %d bytes, want the %d published, in order", sub.name, len(got), len(want))
		}
		ev = next(t, sub.ch, sub.name+": the entry")
		if ev.Kind != core.EventEntry || ev.Entry == nil || ev.Entry.ID != res.Entry.ID || string(ev.Entry.Content) != string(res.Entry.Content) {
			t.Fatalf("%s: got %+v, want the entry %s with its content read from the log", sub.name, ev, res.Entry.ID)
		}
		if ev := next(t, sub.ch, sub.name+": the turn's end"); ev.Kind != core.EventTurnEnd {
			t.Fatalf("%s: got %s, want the turn's end", sub.name, ev.Kind)
		}
	}
	// Nothing more: A's viewer does not get its own events back from the
	// relay, and B's viewer of another conversation gets none.
	ha.Publish(core.Event{ConversationID: conv.ID, Kind: core.EventStatus, Text: "marker"})
	if ev := next(t, local, "A's marker"); ev.Kind != core.EventStatus || ev.Text != "marker" {
		t.Fatalf("instance A's viewer got %+v after the turn, want only the marker (no relayed copies)", ev)
	}
	if ev := next(t, remote, "B's marker"); ev.Kind != core.EventStatus || ev.Text != "marker" {
		t.Fatalf("instance B's viewer got %+v after the turn, want the marker", ev)
	}
	select {
	case ev := <-other:
		t.Fatalf("a viewer of another conversation got %+v", ev)
	case ev := <-local:
		t.Fatalf("instance A's viewer got a second copy: %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
}

// BenchmarkCrossInstanceDelta measures how long a token delta published on
// instance A takes to reach a viewer on instance B (Postgres, one schema,
// two stores), with 20 conversations streaming at once, a delta every
// millisecond in each. The baseline in the same run is the store's own
// wake-up latency (a work item's commit to its TopicWork notification on
// the other store): the ratio is what batching and relaying add to NOTIFY.
func BenchmarkCrossInstanceDelta(b *testing.B) {
	stA, stB, ha, hb := twoInstances(b)
	ctx := b.Context()
	const convs = 20
	ids := make([]uuid.UUID, convs)
	recv := make(chan time.Duration, 1<<16)
	for i := range ids {
		c, err := stA.ConversationCreate(ctx, &store.ConversationCreateParams{Title: fmt.Sprint("stream ", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = c.ID
		ch, stop := hb.Subscribe(c.ID, 1<<14)
		b.Cleanup(stop)
		go func() {
			for ev := range ch {
				if ns, err := strconv.ParseInt(ev.Text, 10, 64); err == nil {
					recv <- time.Since(time.Unix(0, ns))
				}
			}
		}()
	}
	// The baseline: commit-to-wake-up across the two stores.
	wake, err := stB.Subscribe(ctx, store.TopicWork)
	if err != nil {
		b.Fatal(err)
	}
	var base []time.Duration
	for i := range 200 {
		kind := fmt.Sprint("wake-", i)
		if _, err := stA.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind}); err != nil {
			b.Fatal(err)
		}
		sent := time.Now()
		for n := range wake {
			if n.Payload == kind {
				break
			}
		}
		base = append(base, time.Since(sent))
	}

	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		for _, c := range ids {
			ha.Publish(core.Event{ConversationID: c, Kind: core.EventDelta, Text: strconv.FormatInt(time.Now().UnixNano(), 10)})
		}
		time.Sleep(time.Millisecond) // a stream's pace

		for len(recv) > 0 {
			lat = append(lat, <-recv)
		}
	}
	deadline := time.After(10 * time.Second)
	for len(lat) < b.N*convs {
		select {
		case d := <-recv:
			lat = append(lat, d)
		case <-deadline:
			b.Fatalf("received %d of %d deltas within 10s of the last", len(lat), b.N*convs)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(bench.Quantile(lat, 0.50).Microseconds())/1000, "delta_p50_ms")
	b.ReportMetric(float64(bench.Quantile(lat, 0.99).Microseconds())/1000, "delta_p99_ms")
	b.ReportMetric(float64(bench.Quantile(base, 0.99).Microseconds())/1000, "wake_p99_ms")
	b.ReportMetric(float64(bench.Quantile(lat, 0.99))/float64(max(bench.Quantile(base, 0.99), 1)), "p99_ratio_to_wake")
}
