package slack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// nopSubmitter stores nothing; the lead re-runs the benchmark with core.
type nopSubmitter struct{}

func (nopSubmitter) Submit(context.Context, *core.Inbound) (*core.SubmitResult, error) {
	return &core.SubmitResult{}, nil
}

func (nopSubmitter) Act(context.Context, *core.Action) (*core.ActionResult, error) {
	return &core.ActionResult{}, nil
}

const (
	burstSize    = 1000
	burstWorkers = 64
)

// burst sends every request through workers at once and returns each
// request's latency, sorted.
func burst(b *testing.B, client *http.Client, reqs []func() *http.Request) []time.Duration {
	lat := make([]time.Duration, len(reqs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range burstWorkers {
		wg.Go(func() {
			for i := range next {
				req := reqs[i]()
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(start)
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d, want 200", resp.StatusCode)
				}
			}
		})
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	slices.Sort(lat)
	return lat
}

func pct(lat []time.Duration, p float64) float64 {
	return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000
}

// BenchmarkEventsAck measures how fast POST /slack/events answers a burst of
// 1,000 signed app_mention events, against a baseline in the same run: the
// same burst to a handler that only reads the body and answers 200.
func BenchmarkEventsAck(b *testing.B) {
	srv := slacktest.NewServer(slacktest.Options{})
	defer srv.Close()
	now := time.Now()
	a, err := New(Options{
		BotToken: "xoxb-bench", SigningSecret: testSecret, APIURL: srv.APIURL(), Submitter: nopSubmitter{},
		Now: func() time.Time { return now },
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer a.Stop()
	mux := http.NewServeMux()
	a.Routes(mux)
	mux.HandleFunc("POST /baseline", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: burstWorkers}}

	bodies := make([][]byte, burstSize)
	for i := range bodies {
		ev := mention("<@U0BOT> summarise the incident please", fmt.Sprintf("1700000000.%06d", i), "")
		bodies[i] = slacktest.MustJSON(slacktest.EventCallback("T0FAKE", fmt.Sprintf("Ev%06d", i), ev))
	}
	events := make([]func() *http.Request, burstSize)
	baseline := make([]func() *http.Request, burstSize)
	for i, body := range bodies {
		events[i] = func() *http.Request {
			return slacktest.NewSignedRequest(hs.URL+"/slack/events", "application/json", testSecret, now, body)
		}
		baseline[i] = func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, hs.URL+"/baseline", bytes.NewReader(body))
			return r
		}
	}
	burst(b, client, baseline) // warm the connections

	var all, base []time.Duration
	b.ResetTimer()
	for b.Loop() {
		base = append(base, burst(b, client, baseline)...)
		all = append(all, burst(b, client, events)...)
	}
	b.StopTimer()
	slices.Sort(all)
	slices.Sort(base)
	b.ReportMetric(pct(all, 0.50), "p50_ms")
	b.ReportMetric(pct(all, 0.99), "p99_ms")
	b.ReportMetric(pct(base, 0.50), "baseline_p50_ms")
	b.ReportMetric(pct(base, 0.99), "baseline_p99_ms")
	b.ReportMetric(pct(all, 0.99)/max(pct(base, 0.99), 0.001), "p99_ratio")
}
