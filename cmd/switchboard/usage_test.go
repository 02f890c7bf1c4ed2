package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// TestUsage: `switchboard usage` prints tokens, cached and cache-write
// tokens, cost and the cache hit rate per agent, conversation and day, and
// -json the report GET /api/usage answers. On both stores.
func TestUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + testenv.SQLiteFile(t) }},
		{"postgres", func(t *testing.T) string {
			return testenv.PostgresURL(t) + "&switchboard_schema=" + testenv.PostgresSchema(t)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := tc.db(t)
			st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			ag, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "atlas", Config: json.RawMessage(`{}`), Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			conv, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{AgentID: &ag.ID, Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.UsageRecord(ctx, &store.Usage{ConversationID: conv.ID, AgentID: &ag.ID, Provider: "anthropic", Model: "claude-sonnet-4-5",
				InputTokens: 100, OutputTokens: 40, CachedTokens: 3000, CacheWriteTokens: 900, CostMicroUSD: 5175, CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			// Two 👍 and one 👎 on a reply of atlas's.
			reply, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: store.EntryAssistant,
				Author: store.AgentAuthor("atlas"), Content: json.RawMessage(`{"text":"hi"}`), Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			for _, up := range []bool{true, false, true} {
				content, _ := json.Marshal(map[string]any{"entry_id": reply.Entry.ID, "positive": up, "user_id": "U1", "platform": "slack"})
				if _, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: store.EntryFeedback,
					Author: store.UserAuthor("U1"), Content: content, Now: time.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			usage := func(args ...string) string {
				t.Helper()
				var out, errOut bytes.Buffer
				if err := run(ctx, append([]string{"usage", "-log-level", "error"}, args...), env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut); err != nil {
					t.Fatalf("usage %v: %v (%s)", args, err, errOut.String())
				}
				return out.String()
			}
			out := usage()
			row := regexp.MustCompile(`(?m)^\s*atlas\s+1\s+100\s+3000\s+900\s+40\s+75\.0%\s+0\.0052\s+2\s+1\s*$`)
			if !row.MatchString(out) {
				t.Errorf("usage printed:\n%s\nwant atlas with 1 call, 100 input, 3000 cached, 900 written, 40 output, a 75.0%% hit rate $0.0052, 2 👍 and 1 👎", out)
			}
			for _, want := range []string{conv.ID.String(), time.Now().UTC().Format("2006-01-02"), "TOTAL"} {
				if !strings.Contains(out, want) {
					t.Errorf("usage printed:\n%s\nwant it to show %s", out, want)
				}
			}
			var r web.UsageReport
			if err := json.Unmarshal([]byte(usage("-json", "-days", "7")), &r); err != nil {
				t.Fatal(err)
			}
			if r.Total.CacheWriteTokens != 900 || r.Total.CacheHitRate != 0.75 || len(r.Days) != 1 || r.Since == nil ||
				r.Total.FeedbackUp != 2 || r.Total.FeedbackDown != 1 || len(r.Agents) != 1 || r.Agents[0].FeedbackUp != 2 ||
				len(r.Conversations) != 1 || r.Conversations[0].FeedbackDown != 1 {
				t.Errorf("usage -json -days 7 = %+v; want 900 written, a 0.75 hit rate, one day, since set, and 2 👍 1 👎 on atlas and its conversation", r)
			}
		})
	}
}
