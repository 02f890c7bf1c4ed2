package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// holScript: "busy" threads think for 30s, the "hang" thread's model says
// nothing for 60s, everything else answers at once.
const holScript = `name: head-of-line
chunk_delay: 0s
turns:
  - when_last_user_contains: "hang forever"
    delay: 60s
    text: "Sorry, that took a while."
  - when_last_user_contains: "busy work"
    delay: 30s
    text: "Done with the long job."
fallback:
  text: "A quick answer."
`

const (
	holBusy    = 50 // threads whose turns run long
	holSamples = 20 // new threads measured per iteration
)

// BenchmarkHeadOfLine measures the time from a new thread's mention to its
// first status ("is thinking…", set when its turn starts) while 50 other
// threads have long turns running and one thread's model hangs for 60s. The
// baseline, in the same run, is the same measurement on the idle service
// before the load: the ratio is how much the busy and hung threads hold up
// a new one. Each sample is a mention in a new thread, one at a time.
func BenchmarkHeadOfLine(b *testing.B) {
	dir := b.TempDir()
	script := filepath.Join(dir, "hol.yaml")
	if err := os.WriteFile(script, []byte(holScript), 0o600); err != nil {
		b.Fatal(err)
	}
	e := startSlack(b, postgresDatabase(b), envOptions{logger: benchLogger(b), env: map[string]string{
		"SWITCHBOARD_MODEL": "scripted:" + script,
		// The hung model must not be cut off as idle while it is measured.
		"SWITCHBOARD_MODEL_IDLE_TIMEOUT": "5m",
	}})

	sent := 0
	post := func(channel, text string) time.Time {
		sent++
		ts := fmt.Sprintf("1700003000.%06d", sent)
		body := slacktest.MustJSON(slacktest.EventCallback(e2eTeam, fmt.Sprintf("EvHol%05d", sent),
			mention(channel, ts, "", alice, text)))
		start := time.Now()
		e.mustPost(signedEvent{body: body, secret: e2eSecret, signedAt: start})
		return start
	}
	// firstStatus waits for the first status set in channel and returns when
	// Slack received it.
	firstStatus := func(channel string) time.Time {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			for _, c := range e.slack.Calls("assistant.threads.setStatus") {
				if c.Params.Get("channel_id") == channel || c.Params.Get("channel") == channel {
					return c.At
				}
			}
			time.Sleep(2 * time.Millisecond) // polling the fake, with a deadline
		}
		b.Fatalf("no status was set in %s within 2 minutes", channel)
		return time.Time{}
	}
	measure := func(prefix string) []time.Duration {
		var out []time.Duration
		for i := range holSamples {
			channel := fmt.Sprintf("C%s%04d", prefix, i)
			start := post(channel, "a quick question")
			out = append(out, firstStatus(channel).Sub(start))
		}
		return out
	}

	base := measure("HOLBASE")
	e.waitIdle()
	post("CHOLHANG", "please hang forever")
	for i := range holBusy {
		post(fmt.Sprintf("CHOLBUSY%02d", i), "some busy work")
	}
	// Every long turn has started before anything is measured.
	firstStatus("CHOLHANG")
	for i := range holBusy {
		firstStatus(fmt.Sprintf("CHOLBUSY%02d", i))
	}

	var loaded []time.Duration
	round := 0
	for b.Loop() {
		loaded = append(loaded, measure(fmt.Sprintf("HOL%03d", round))...)
		round++
	}
	slices.Sort(base)
	slices.Sort(loaded)
	b.ReportMetric(quantileMS(loaded, 0.50), "first_status_p50_ms")
	b.ReportMetric(quantileMS(loaded, 0.99), "first_status_p99_ms")
	b.ReportMetric(quantileMS(base, 0.50), "idle_p50_ms")
	b.ReportMetric(quantileMS(base, 0.99), "idle_p99_ms")
	b.ReportMetric(quantileMS(loaded, 0.99)/max(quantileMS(base, 0.99), 0.001), "p99_ratio_to_idle")
	if p99 := quantileMS(loaded, 0.99); p99 >= 1000 {
		b.Errorf("first status p99 under load is %.0f ms, want < 1000 ms", p99)
	}
}
