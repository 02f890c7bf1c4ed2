package app_test

import (
	"strings"
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

// TestBudgetRefusesAndExtends: an agent's daily budget of a cent on a
// (fake) Anthropic model at $20 per million output tokens, each answer
// 1,000 tokens ($0.02): the first mention is refused with one line naming
// the budget and its reset, in the thread and in the audit; GET
// /api/budgets shows nothing spent; an operator's extension of $0.10 (POST
// /api/budgets/extend, audited) lets the next mention be answered, and the
// budget then shows its $0.02.
func TestBudgetRefusesAndExtends(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		fake.Default(modeltest.Reply{Text: "The tide turns at noon.", Usage: &modeltest.Usage{OutputTokens: 1000}})
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake), config: openAccess +
			"prices:\n  \"anthropic:claude-sonnet-4-5\": {input: 0, output: 20}\nbudgets:\n  - {agent: switchboard, daily_usd: 0.01}\n"})
		const ch = "C0BUDGET"
		e.mustPost(newEvent("EvBudget1", mention(ch, "1700000600.000100", "", alice, "when does the tide turn?")))
		e.waitIdle()
		var refusal string
		for _, m := range e.botMessages(ch) {
			refusal += m.Text
		}
		if !strings.Contains(refusal, "daily budget of agent switchboard ($0.01; $0.00 spent)") || !strings.Contains(refusal, "resets") {
			t.Fatalf("the thread shows %q; want one line naming the budget and its reset", refusal)
		}
		if n := len(fake.Requests()); n != 0 {
			t.Fatalf("the model was called %d times past the budget", n)
		}
		var list web.BudgetList
		if got := apiJSON(t, e, "GET", "/api/budgets", "", nil, &list); got != 200 || len(list.Budgets) != 1 || list.Budgets[0].SpentUSD != 0 || list.Budgets[0].LimitUSD != 0.01 {
			t.Fatalf("GET /api/budgets = %d %+v", got, list)
		}
		var ext web.BudgetStatus
		if got := apiJSON(t, e, "POST", "/api/budgets/extend", "", map[string]any{"key": "agent:switchboard", "usd": 0.1}, &ext); got != 200 || ext.ExtraUSD != 0.1 {
			t.Fatalf("POST /api/budgets/extend = %d %+v", got, ext)
		}
		if got := apiJSON(t, e, "POST", "/api/budgets/extend", "", map[string]any{"key": "agent:nobody", "usd": 1}, nil); got != 400 {
			t.Errorf("extending a budget no entry declares answered %d, want 400", got)
		}
		e.mustPost(newEvent("EvBudget2", mention(ch, "1700000601.000100", "", alice, "and tomorrow?")))
		e.waitIdle()
		if n := len(fake.Requests()); n != 1 {
			t.Fatalf("model requests after the extension = %d, want 1", n)
		}
		if got := apiJSON(t, e, "GET", "/api/budgets", "", nil, &list); got != 200 || list.Budgets[0].SpentUSD != 0.02 {
			t.Fatalf("GET /api/budgets after the answer = %d %+v; want $0.02 spent", got, list)
		}
		var audit web.AuditPage
		if got := apiJSON(t, e, "GET", "/api/audit", "", nil, &audit); got != 200 {
			t.Fatalf("GET /api/audit = %d", got)
		}
		var actions []string
		for _, r := range audit.Records {
			actions = append(actions, r.Tool+"/"+r.Decision+"/"+string(r.Outcome))
		}
		if got := strings.Join(actions, ","); !strings.Contains(got, "budget_extend/extend/ok") || !strings.Contains(got, "model_call/budget/denied") {
			t.Errorf("the audit holds %s; want the refusal and the extension", got)
		}
	})
}
