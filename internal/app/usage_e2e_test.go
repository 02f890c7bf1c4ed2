package app_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// TestSlackTurnsReadTheirHistoryFromTheCache: two mentions in one Slack
// thread on a (fake) Anthropic model. The second turn reads the first's
// prompt from the provider's cache, and GET /api/usage shows the cache
// writes, the cache reads, their cost and the hit rate for the agent.
func TestSlackTurnsReadTheirHistoryFromTheCache(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		fake.Push(modeltest.Reply{Text: "High tide is at noon."}, modeltest.Reply{Text: "Low tide is at six."})
		env := anthropicEnv(fake)
		e := startSlack(t, db(t), envOptions{env: env})
		const ch, ts = "C0TIDES", "1700000500.000100"
		e.mustPost(newEvent("EvTide1", mention(ch, ts, "", alice, "when is high tide?")))
		e.waitIdle()
		e.mustPost(newEvent("EvTide2", mention(ch, "1700000501.000100", ts, alice, "and low tide?")))
		e.waitIdle()
		if n := len(fake.Requests()); n != 2 {
			t.Fatalf("model requests = %d; want one per mention", n)
		}

		var r web.UsageReport
		if got := apiJSON(t, e, "GET", "/api/usage", "", nil, &r); got != 200 {
			t.Fatalf("GET /api/usage = %d; want 200", got)
		}
		total := r.Total
		// The first turn writes its whole prompt; the second reads it back
		// and writes only what it adds: so most of what was written was read.
		if total.Calls != 2 || total.CachedTokens == 0 || 2*total.CachedTokens <= total.CacheWriteTokens || total.CacheHitRate <= 0.4 || total.CostMicroUSD == 0 {
			t.Errorf("usage total = %+v; want 2 calls, the first turn's prompt written to the cache and read back by the second, and a cost", total)
		}
		if len(r.Agents) != 1 || r.Agents[0].Key == "" || r.Agents[0].Calls != 2 {
			t.Errorf("usage agents = %+v; want the default agent's two calls", r.Agents)
		}
		if len(r.Conversations) != 1 || len(r.Days) != 1 {
			t.Errorf("usage has %d conversations and %d days; want the thread's one, today", len(r.Conversations), len(r.Days))
		}
	})
}
