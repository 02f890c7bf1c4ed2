//go:build unix

package bench

import (
	"cmp"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// BenchmarkCatchUp repeats the catchup figure's two reads on one store of
// 10,000 entries (SQLite, or Postgres when TEST_DATABASE_URL is set): the
// stream's catch-up over HTTP and one EntryList of them. Besides the time
// it reports the process's CPU time per read, which a loaded machine
// disturbs less than the time.
func BenchmarkCatchUp(b *testing.B) {
	url := cmp.Or(os.Getenv("TEST_DATABASE_URL"), "sqlite:"+filepath.Join(b.TempDir(), "sb.db"))
	ctx := b.Context()
	opts := &Options{DatabaseURL: url}
	opts.defaults()
	e, err := newEnv(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	a, err := openApp(ctx, e, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Stop(ctx)
	conv, err := a.Service.CreateConversation(ctx, "", "api", "bench")
	if err != nil {
		b.Fatal(err)
	}
	const n, batch = 10000, 500
	for start := 0; start < n; start += batch {
		err := e.st.InTx(ctx, func(q store.Queries) error {
			for range batch {
				if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: store.EntryAssistant,
					Author: "agent:bench", Content: entryContent, Now: time.Now()}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("appending: %v", err)
		}
	}
	client := &http.Client{}
	defer client.CloseIdleConnections()
	b.Run("stream", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := catchUp(ctx, client, "http://"+a.Addr()+"/api/conversations/"+conv.ID.String()+"/stream?cursor=0", n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("entrylist", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			es, err := e.st.EntryList(ctx, &store.EntryListParams{ConversationID: conv.ID})
			if err != nil || len(es) != n {
				b.Fatalf("EntryList read %d entries, want %d: %v", len(es), n, err)
			}
		}
	})
}

// reportCPU reports the process's user and system time per iteration
// from now until the returned func is called.
func reportCPU(b *testing.B) func() {
	var before syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		b.Fatal(err)
	}
	return func() {
		var after syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
			b.Fatal(err)
		}
		cpu := after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano()
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkCatchUpTail measures a stream opened with ?tail=100 on a
// conversation of 50,000 entries against the same on one of 100, in the
// same run (SQLite, or Postgres when TEST_DATABASE_URL is set): the tail
// read is a range of the newest seqs, so the ratio is the cost of the
// log's length alone (the goal is about 1x).
func BenchmarkCatchUpTail(b *testing.B) {
	url := cmp.Or(os.Getenv("TEST_DATABASE_URL"), "sqlite:"+filepath.Join(b.TempDir(), "sb.db"))
	ctx := b.Context()
	opts := &Options{DatabaseURL: url}
	opts.defaults()
	e, err := newEnv(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	a, err := openApp(ctx, e, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Stop(ctx)
	const n, tail = 50000, 100
	long, err := a.Service.CreateConversation(ctx, "", "api", "bench")
	if err != nil {
		b.Fatal(err)
	}
	short, err := a.Service.CreateConversation(ctx, "", "api", "bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := LongLog(ctx, e.st, long.ID, n); err != nil {
		b.Fatal(err)
	}
	if err := LongLog(ctx, e.st, short.ID, tail); err != nil {
		b.Fatal(err)
	}
	client := &http.Client{}
	defer client.CloseIdleConnections()
	b.ResetTimer()
	longs, shorts, err := TailCatchUps(ctx, client, "http://"+a.Addr(), long.ID, short.ID, tail, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	pl, ps := Quantile(longs, 0.5), Quantile(shorts, 0.5)
	b.ReportMetric(ms(pl), "tail_of_50000_p50_ms")
	b.ReportMetric(ms(ps), "tail_of_100_p50_ms")
	b.ReportMetric(float64(pl)/float64(max(1, ps)), "long/short_p50")
}
