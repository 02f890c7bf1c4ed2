package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWriteGateOrder: waiting writers get the writer oldest first, with
// group commits ahead of the others, and a writer that gives up waiting
// leaves the queue without holding anyone up.
func TestWriteGateOrder(t *testing.T) {
	t.Parallel()
	var g writeGate
	ctx := t.Context()
	if err := g.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	queued := 0
	start := func(name string, urgent bool) {
		go func() {
			if err := g.acquire(ctx, urgent); err != nil {
				got <- "error " + name
				return
			}
			got <- name
			g.release()
		}()
		// Queued before the next one starts.
		queued++
		waitQueued(t, &g, queued)
	}
	start("normal 1", false)
	start("normal 2", false)
	start("group 1", true)
	start("group 2", true)

	gone, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- g.acquire(gone, true) }()
	waitQueued(t, &g, queued+1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait returned %v, want context.Canceled", err)
	}
	waitQueued(t, &g, queued)

	g.release()
	want := []string{"group 1", "group 2", "normal 1", "normal 2"}
	for _, w := range want {
		select {
		case name := <-got:
			if name != w {
				t.Fatalf("the writer went to %q, want %q (order %v)", name, w, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("nobody got the writer; want %q", w)
		}
	}
	// All released: the gate is free again.
	if err := g.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	g.release()
}

// waitQueued waits until n writers wait at the gate.
func waitQueued(t *testing.T, g *writeGate, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		m := len(g.urgent) + len(g.normal)
		g.mu.Unlock()
		if m == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writers wait at the gate, want %d", m, n)
		}
		time.Sleep(time.Millisecond)
	}
}
