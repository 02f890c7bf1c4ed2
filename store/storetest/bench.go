package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// Bench runs the store benchmarks against h's stores. Speed targets are
// ratios against a baseline measured in the same run, so the numbers mean
// the same on a laptop and on CI:
//
//   - append: EntryAppend interleaved with the driver's raw single-row INSERT
//     of an entry-sized row; reports p50_ns/p99_ns of each and
//     append/raw_p50, the cost of the log's bookkeeping (seq allocation,
//     conversation update, notification) over a bare write.
//   - raw_insert: the baseline alone.
//   - claim_complete/workers=N: N workers drain b.N items in batches of 100,
//     completing each; reports items/s.
//   - wake: commit-to-notification latency of TopicWork, p50_ns and p99_ns.
func Bench(b *testing.B, h Harness) {
	if err := h.validate(); err != nil {
		b.Fatal(err)
	}
	b.Run("append", func(b *testing.B) { benchAppend(b, h) })
	b.Run("raw_insert", func(b *testing.B) { benchRawInsert(b, h) })
	b.Run("claim_complete", func(b *testing.B) {
		for _, workers := range []int{1, 8} {
			b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchClaimComplete(b, h, workers) })
		}
	})
	b.Run("wake", func(b *testing.B) { benchWake(b, h) })
}

// entryContent is an entry-sized payload: a paragraph of assistant text.
var entryContent = json.RawMessage(`{"text": "` + strings.Repeat("The quarterly numbers are in and look fine. ", 6) + `"}`)

// latencies collects per-operation durations and reports percentiles.
type latencies []time.Duration

func (l latencies) percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := max(int(math.Ceil(p*float64(len(s))))-1, 0)
	return s[min(i, len(s)-1)]
}

func (l latencies) report(b *testing.B, prefix string) {
	b.ReportMetric(float64(l.percentile(0.50).Nanoseconds()), prefix+"p50_ns")
	b.ReportMetric(float64(l.percentile(0.99).Nanoseconds()), prefix+"p99_ns")
}

func benchAppend(b *testing.B, h Harness) {
	st := h.New(b)
	ctx := b.Context()
	clk := newClock()
	conv := newConversation(b, st, clk)
	var raw func(ctx context.Context) error
	if h.NewRawInserter != nil {
		raw = h.NewRawInserter(b, st)
	} else {
		b.Log("no raw inserter in the harness: the append/raw ratio is not reported")
	}

	appendOne := func() time.Duration {
		start := time.Now()
		_, err := st.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: conv.ID, Kind: store.EntryAssistant, Author: "agent:bench",
			Content: entryContent, Now: clk.Advance(time.Microsecond),
		})
		d := time.Since(start)
		if err != nil {
			b.Fatalf("appending an entry: %v", err)
		}
		return d
	}
	rawOne := func() time.Duration {
		b.StopTimer()
		defer b.StartTimer()
		start := time.Now()
		err := raw(ctx)
		d := time.Since(start)
		if err != nil {
			b.Fatalf("raw insert: %v", err)
		}
		return d
	}

	appends := make(latencies, 0, b.N)
	raws := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		// Alternate which goes first so neither always runs on a warm cache.
		if raw != nil && i%2 == 1 {
			raws = append(raws, rawOne())
		}
		appends = append(appends, appendOne())
		if raw != nil && i%2 == 0 {
			raws = append(raws, rawOne())
		}
	}
	b.StopTimer()
	appends.report(b, "")
	if raw != nil {
		raws.report(b, "raw_")
		if p := raws.percentile(0.5); p > 0 {
			b.ReportMetric(float64(appends.percentile(0.5))/float64(p), "append/raw_p50")
		}
	}
}

func benchRawInsert(b *testing.B, h Harness) {
	if h.NewRawInserter == nil {
		b.Skip("no raw inserter in the harness")
	}
	st := h.New(b)
	ctx := b.Context()
	raw := h.NewRawInserter(b, st)
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := raw(ctx); err != nil {
			b.Fatalf("raw insert: %v", err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	lat.report(b, "")
}

func benchClaimComplete(b *testing.B, h Harness, workers int) {
	if workers > 1 && h.SkipConcurrency != "" {
		b.Skipf("%s: concurrent workers skipped: %s", h.Name, h.SkipConcurrency)
	}
	st := h.New(b)
	ctx := b.Context()
	clk := newClock()
	const enqueueBatch, claimBatch = 500, 100

	for start := 0; start < b.N; start += enqueueBatch {
		err := st.InTx(ctx, func(q store.Queries) error {
			for range min(enqueueBatch, b.N-start) {
				if _, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "bench", Now: clk.Now()}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("enqueueing bench items: %v", err)
		}
	}

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
		errs = make(chan error, workers)
	)
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		name := fmt.Sprintf("bench-%d", w)
		wg.Go(func() {
			n := 0
			defer func() {
				mu.Lock()
				done += n
				mu.Unlock()
			}()
			for {
				items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: name, Limit: claimBatch, LeaseTTL: time.Hour, Now: clk.Now()})
				if err != nil {
					errs <- fmt.Errorf("%s claiming: %w", name, err)
					return
				}
				if len(items) == 0 {
					return
				}
				for _, it := range items {
					if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: name, Now: clk.Now()}); err != nil {
						errs <- fmt.Errorf("%s completing: %w", name, err)
						return
					}
					n++
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Error(err)
	}
	if done != b.N {
		b.Fatalf("workers completed %d items, want %d", done, b.N)
	}
	b.ReportMetric(float64(done)/elapsed.Seconds(), "items/s")
}

func benchWake(b *testing.B, h Harness) {
	st := h.New(b)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	clk := newClock()
	ch, err := st.Subscribe(ctx, store.TopicWork)
	if err != nil {
		b.Fatalf("subscribing to %s: %v", store.TopicWork, err)
	}
	run := uniqueKind("wake")

	lat := make(latencies, 0, b.N)
	lost := 0
	b.ResetTimer()
	for i := range b.N {
		kind := fmt.Sprintf("%s-%d", run, i)
		if _, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind, Now: clk.Now()}); err != nil {
			b.Fatalf("enqueueing: %v", err)
		}
		committed := time.Now()
		if ok, _ := awaitPayload(ch, store.TopicWork, kind, 5*time.Second); !ok {
			lost++
			continue
		}
		lat = append(lat, time.Since(committed))
	}
	b.StopTimer()
	lat.report(b, "")
	b.ReportMetric(float64(lost), "lost")
	if lost > 0 {
		b.Logf("%d of %d notifications did not arrive within 5s (delivery is best effort, but one idle subscriber should get them all)", lost, b.N)
	}
}
