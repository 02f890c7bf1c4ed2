package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/memory"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// sleepySource sleeps 5 s whatever its context says: a search stuck on a
// slow database.
type sleepySource struct{}

func (sleepySource) Name() string { return "sleepy" }

func (sleepySource) Fetch(context.Context, *memory.Query) ([]memory.Snippet, error) {
	time.Sleep(5 * time.Second)
	return nil, nil
}

// BenchmarkMemoryBudget: a turn's memory on SQLite with 200 notes, with the
// default sources (the baseline) and with a source that sleeps 5 s added.
// It reports the milliseconds per turn of each, their ratio, and the
// slowest turn with the sleeper, and fails if any such turn took longer
// than the budget plus 150 ms of scheduling slack: the sleeper delays a
// turn by the budget at most, never by its 5 s.
//
//	go test ./memory -run '^$' -bench MemoryBudget -benchtime 20x
func BenchmarkMemoryBudget(b *testing.B) {
	st := testenv.SQLite(b)
	conv := newConversation(b, st)
	for i := range 200 {
		note(b, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent,
			Text: fmt.Sprintf("Note %d about the Lisbon offsite, item %d.", i, i%17), Pinned: i%50 == 0})
	}
	q := &core.MemoryQuery{Agent: "atlas", AgentID: conv.AgentID, ConversationID: conv.ID, Latest: "What about the Lisbon offsite?"}
	base := newMemory(b, st, memory.Options{Logger: testenv.Logger(b)})
	slow := newMemory(b, st, memory.Options{Logger: testenv.Logger(b), Sources: []memory.Source{
		memory.NoteSource{Store: st}, memory.SummarySource{Store: st}, sleepySource{},
	}})
	ctx := context.Background()
	var baseTotal, slowTotal, slowMax time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := base.ForTurn(ctx, q); err != nil {
			b.Fatal(err)
		}
		baseTotal += time.Since(start)
		start = time.Now()
		if _, err := slow.ForTurn(ctx, q); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		slowTotal += d
		slowMax = max(slowMax, d)
	}
	b.StopTimer()
	if limit := memory.DefaultBudget + 150*time.Millisecond; slowMax > limit {
		b.Fatalf("a turn with the 5 s source took %s; the budget is %s (bound %s)", slowMax, memory.DefaultBudget, limit)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(baseTotal), "base-ms/turn")
	b.ReportMetric(ms(slowTotal), "sleeper-ms/turn")
	b.ReportMetric(float64(slowMax)/float64(time.Millisecond), "sleeper-max-ms")
	b.ReportMetric(float64(slowTotal)/float64(max(baseTotal, 1)), "sleeper/base")
}
