package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// GET /api/usage is the operator's, and shows tokens, cached and cache-write
// tokens, cost and the cache hit rate per agent, per conversation and per
// day, and their total; ?days= counts back from today.
func TestUsageReport(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		clk := newClock()
		keys, err := apikey.New(apikey.Options{Store: st, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "op-token", Keys: keys, Now: clk.Now})
		atlas, err := st.AgentGetByName(ctx, "atlas")
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		conv := c.ID
		yesterday := clk.Now().Add(-24 * time.Hour)
		for _, u := range []*store.Usage{
			{ConversationID: conv, AgentID: &atlas.ID, InputTokens: 100, OutputTokens: 50, CacheWriteTokens: 2000, CostMicroUSD: 8250, CreatedAt: yesterday},
			{ConversationID: conv, AgentID: &atlas.ID, InputTokens: 100, OutputTokens: 50, CachedTokens: 2000, CacheWriteTokens: 150, CostMicroUSD: 2212, CreatedAt: clk.Now()},
		} {
			u.Provider, u.Model = "anthropic", "claude-sonnet-4-5"
			if err := st.UsageRecord(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		pat, err := keys.CreatePersonal(ctx, uuid.New(), nil, "laptop", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, s, http.MethodGet, "/api/usage", pat.Token, "", http.StatusForbidden, "only the operator")

		var report web.UsageReport
		if got, raw := s.call(t, http.MethodGet, "/api/usage", "", bearerHdr("op-token"), &report); got != http.StatusOK {
			t.Fatalf("GET /api/usage = %d %s; want 200", got, raw)
		}
		total := report.Total
		if total.Calls != 2 || total.InputTokens != 200 || total.CachedTokens != 2000 || total.CacheWriteTokens != 2150 || total.CostMicroUSD != 10462 {
			t.Errorf("total = %+v; want 2 calls, 200 input, 2000 cached, 2150 written, 10462 micro-dollars", total)
		}
		if want := 2000.0 / 4350.0; total.CacheHitRate != want || total.CostUSD != 0.010462 {
			t.Errorf("total hit rate %v cost $%v; want %v and $0.010462", total.CacheHitRate, total.CostUSD, want)
		}
		if len(report.Agents) != 1 || report.Agents[0].Key != "atlas" || report.Agents[0].CacheWriteTokens != 2150 {
			t.Errorf("agents = %+v; want atlas with everything", report.Agents)
		}
		if len(report.Conversations) != 1 || report.Conversations[0].Key != conv.String() {
			t.Errorf("conversations = %+v; want %s", report.Conversations, conv)
		}
		if len(report.Days) != 2 || report.Days[0].Key != "2026-11-01" || report.Days[1].Key != "2026-11-02" || report.Days[1].CachedTokens != 2000 {
			t.Errorf("days = %+v; want 2026-11-01 and 2026-11-02, the second with the cache read", report.Days)
		}

		var today web.UsageReport
		if got, raw := s.call(t, http.MethodGet, "/api/usage?days=1", "", bearerHdr("op-token"), &today); got != http.StatusOK {
			t.Fatalf("GET /api/usage?days=1 = %d %s; want 200", got, raw)
		}
		if len(today.Days) != 1 || today.Total.Calls != 1 || today.Since == nil || !today.Since.Equal(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("?days=1 = since %v, %d calls over %d days; want today's call only, since midnight UTC", today.Since, today.Total.Calls, len(today.Days))
		}
		wantStatus(t, s, http.MethodGet, "/api/usage?days=0", "op-token", "", http.StatusBadRequest, "days")
		wantStatus(t, s, http.MethodGet, "/api/usage?since=yesterday", "op-token", "", http.StatusBadRequest, "RFC 3339")
	})
}
