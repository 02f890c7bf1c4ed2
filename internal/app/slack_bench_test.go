package app_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

const (
	benchBurst   = 1000 // signed events per burst
	benchSenders = 64   // requests in flight at once
	benchTTFT    = 100  // events per iteration of the first-token benchmark
	// benchDrain bounds the wait for a burst's 1,000 turns to be answered.
	benchDrain = 5 * time.Minute
)

// benchLogger passes warnings and errors to the benchmark's log (shown on
// failure or with -v): a benchmark that quietly measured failures would
// measure nothing.
func benchLogger(b *testing.B) *slog.Logger {
	return slog.New(slog.NewTextHandler(benchWriter{b}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type benchWriter struct{ b *testing.B }

func (w benchWriter) Write(p []byte) (int, error) {
	w.b.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// burstPost sends every request, benchSenders at a time, with the sender
// `switchboard bench ack` uses, and returns each one's latency, sorted.
func burstPost(b *testing.B, client *http.Client, reqs []func() *http.Request) []time.Duration {
	lat, err := bench.BurstPost(client, benchSenders, reqs)
	if err != nil {
		b.Error(err)
	}
	slices.Sort(lat)
	return lat
}

// quantileMS is the q-quantile of sorted latencies, in milliseconds.
func quantileMS(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(float64(len(sorted)-1)*q)].Microseconds()) / 1000
}

// BenchmarkSlackEventsAck measures how fast the real service acknowledges a
// burst of 1,000 signed app_mention events, each a new conversation (its own
// channel and thread), on SQLite and on Postgres, with the workers answering them meanwhile
// as they would in production. The baseline, in the same run and over the
// same client, is a handler that only reads the body and answers 200: the
// ratio is what verifying, storing and queueing cost on top of HTTP.
// Each store runs with slack.ack: deferred (the default: the event alone
// stored before the ack) and inline (the whole message).
func BenchmarkSlackEventsAck(b *testing.B) {
	for _, mode := range []string{"deferred", "inline"} {
		b.Run("sqlite/"+mode, func(b *testing.B) { benchEventsAck(b, sqliteDatabase(b), mode) })
		b.Run("postgres/"+mode, func(b *testing.B) { benchEventsAck(b, postgresDatabase(b), mode) })
	}
}

func benchEventsAck(b *testing.B, db, mode string) {
	e := startSlack(b, db, envOptions{logger: benchLogger(b), config: openAccess + "slack:\n  ack: " + mode + "\n"})
	baseline := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	defer baseline.Close()

	round := 0
	burst := func() ([]func() *http.Request, []func() *http.Request) {
		round++
		events := make([]func() *http.Request, benchBurst)
		base := make([]func() *http.Request, benchBurst)
		for i := range benchBurst {
			channel, ts := fmt.Sprintf("C%03dB%04d", round, i), fmt.Sprintf("1700001%03d.%06d", round, i)
			body := slacktest.MustJSON(slacktest.EventCallback(e2eTeam, fmt.Sprintf("EvBench%03d_%04d", round, i),
				mention(channel, ts, "", alice, "summarise the incident please")))
			events[i] = func() *http.Request {
				// Signed when sent, as Slack does.
				return slacktest.NewSignedRequest(e.base+"/slack/events", "application/json", e2eSecret, time.Now(), body)
			}
			base[i] = func() *http.Request {
				r, _ := http.NewRequest(http.MethodPost, baseline.URL, bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				return r
			}
		}
		return events, base
	}
	// Warm both servers' connections and the store's first writes.
	warmEvents, warmBase := burst()
	burstPost(b, e.http, warmBase[:benchSenders])
	burstPost(b, e.http, warmEvents[:benchSenders])
	e.waitIdleFor(benchDrain, 100*time.Millisecond)

	var all, base []time.Duration
	var drain time.Duration
	for b.Loop() {
		b.StopTimer()
		events, baseReqs := burst()
		b.StartTimer()
		base = append(base, burstPost(b, e.http, baseReqs)...)
		start := time.Now()
		all = append(all, burstPost(b, e.http, events)...)
		// The next burst starts on a quiet service. Draining is measured as
		// well: it is how long the last of the burst waits for its answer.
		e.waitIdleFor(benchDrain, 100*time.Millisecond)
		drain += time.Since(start)
	}
	slices.Sort(all)
	slices.Sort(base)
	b.ReportMetric(quantileMS(all, 0.50), "ack_p50_ms")
	b.ReportMetric(quantileMS(all, 0.99), "ack_p99_ms")
	b.ReportMetric(quantileMS(base, 0.50), "baseline_p50_ms")
	b.ReportMetric(quantileMS(base, 0.99), "baseline_p99_ms")
	b.ReportMetric(quantileMS(all, 0.50)/max(quantileMS(base, 0.50), 0.001), "p50_ratio")
	b.ReportMetric(quantileMS(all, 0.99)/max(quantileMS(base, 0.99), 0.001), "p99_ratio")
	b.ReportMetric(float64(len(all))/drain.Seconds(), "answered_per_s")
}

// BenchmarkSlackFirstToken measures the time from a signed app_mention
// reaching POST /slack/events to Slack receiving the reply's first text (the
// chat.startStream call, which carries the first streamed words), with the
// zero-latency scripted model, one event at a time. The baseline in the same
// run is the event's own acknowledgement (signature check, store, queue):
// the ratio is what claiming the turn, running it and delivering the first
// words add to it.
func BenchmarkSlackFirstToken(b *testing.B) {
	e := startSlack(b, sqliteDatabase(b), envOptions{logger: benchLogger(b)})
	sent := 0
	send := func() (ack, first time.Duration) {
		channel, ts := fmt.Sprintf("C0FIRST%05d", sent), fmt.Sprintf("1700002000.%06d", sent)
		body := slacktest.MustJSON(slacktest.EventCallback(e2eTeam, fmt.Sprintf("EvFirst%05d", sent),
			mention(channel, ts, "", alice, "what is the status")))
		sent++
		start := time.Now()
		e.mustPost(signedEvent{body: body, secret: e2eSecret, signedAt: start})
		ack = time.Since(start)
		calls, err := e.slack.WaitCalls("chat.startStream", sent, waitLong)
		first = time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if c := calls[sent-1]; c.Params.Get("channel") != channel || c.Params.Get("markdown_text") == "" {
			b.Fatalf("chat.startStream #%d = %v, want the first words of the reply in %s", sent, c.Params, channel)
		}
		// One at a time: the next event starts once this reply is finished.
		if _, err := e.slack.WaitCalls("chat.stopStream", sent, waitLong); err != nil {
			b.Fatal(err)
		}
		return ack, first
	}
	for range 5 { // warm up
		send()
	}
	e.waitIdle()

	var acks, firsts []time.Duration
	for b.Loop() {
		for range benchTTFT {
			ack, first := send()
			acks = append(acks, ack)
			firsts = append(firsts, first)
		}
	}
	slices.Sort(acks)
	slices.Sort(firsts)
	b.ReportMetric(quantileMS(firsts, 0.50), "first_token_p50_ms")
	b.ReportMetric(quantileMS(firsts, 0.99), "first_token_p99_ms")
	b.ReportMetric(quantileMS(acks, 0.50), "ack_p50_ms")
	b.ReportMetric(quantileMS(acks, 0.99), "ack_p99_ms")
	b.ReportMetric(quantileMS(firsts, 0.50)/max(quantileMS(acks, 0.50), 0.001), "p50_ratio_to_ack")
}
