package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) usageTests() []namedTest {
	return []namedTest{
		{"Summary", s.testUsageSummary},
		{"SummaryInvalid", s.testUsageSummaryInvalid},
		{"Voice", s.testUsageVoice},
		{"Feedback", s.testFeedbackSummary},
	}
}

// testUsageSummary records calls of two agents in two conversations over two
// days and reads the report every way it can be cut.
func (s suite) testUsageSummary(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	day1 := clk.Now()
	atlas, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "atlas", Config: json.RawMessage(`{}`), Now: day1})
	noErr(t, err, "creating agent atlas")
	scout, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "scout", Config: json.RawMessage(`{}`), Now: day1})
	noErr(t, err, "creating agent scout")
	c1, c2 := newConversation(t, st, clk), newConversation(t, st, clk)

	record := func(conv uuid.UUID, agent *uuid.UUID, at time.Time, in, out, cached, written, cost int64) {
		t.Helper()
		noErr(t, st.UsageRecord(ctx, &store.Usage{ConversationID: conv, AgentID: agent, Provider: "anthropic", Model: "m",
			InputTokens: in, OutputTokens: out, CachedTokens: cached, CacheWriteTokens: written, CostMicroUSD: cost, CreatedAt: at}),
			"recording usage")
	}
	day2 := day1.Add(24 * time.Hour)
	record(c1.ID, &atlas.ID, day1, 100, 10, 0, 900, 50)
	record(c1.ID, &atlas.ID, day2, 20, 10, 900, 80, 30)
	record(c2.ID, &scout.ID, day2, 5, 1, 0, 0, 400)
	record(c2.ID, nil, day2, 1, 1, 0, 0, 1)

	byAgent, err := st.UsageSummary(ctx, &store.UsageSummaryParams{By: store.UsageByAgent})
	noErr(t, err, "summing usage by agent")
	deepEq(t, totals(byAgent), []store.UsageTotal{
		{Key: "", Calls: 1, InputTokens: 1, OutputTokens: 1, CostMicroUSD: 1},
		{Key: "atlas", Calls: 2, InputTokens: 120, OutputTokens: 20, CachedTokens: 900, CacheWriteTokens: 980, CostMicroUSD: 80},
		{Key: "scout", Calls: 1, InputTokens: 5, OutputTokens: 1, CostMicroUSD: 400},
	}, "usage by agent, in name order")
	eq(t, byAgent[1].CacheHitRate(), 900.0/2000.0, "atlas's cache hit rate (cached over the whole prompt)")

	byConv, err := st.UsageSummary(ctx, &store.UsageSummaryParams{By: store.UsageByConversation})
	noErr(t, err, "summing usage by conversation")
	eq(t, len(byConv), 2, "conversations in the report")
	eq(t, byConv[0].Key, c2.ID.String(), "the costliest conversation comes first")
	eq(t, byConv[0].CostMicroUSD, int64(401), "its cost")
	eq(t, byConv[1].CachedTokens, int64(900), "the other's cached tokens")

	byDay, err := st.UsageSummary(ctx, &store.UsageSummaryParams{By: store.UsageByDay})
	noErr(t, err, "summing usage by day")
	eq(t, len(byDay), 2, "days in the report")
	eq(t, byDay[0].Key, day1.UTC().Format("2006-01-02"), "the first day, as a UTC date")
	eq(t, byDay[1].Key, day2.UTC().Format("2006-01-02"), "the second day")
	eq(t, byDay[1].Calls, int64(3), "calls on the second day")
	eq(t, byDay[1].CacheWriteTokens, int64(80), "cache writes on the second day")

	since, err := st.UsageSummary(ctx, &store.UsageSummaryParams{By: store.UsageByDay, Since: day2})
	noErr(t, err, "summing usage since the second day")
	eq(t, len(since), 1, "days since the second")

	limited, err := st.UsageSummary(ctx, &store.UsageSummaryParams{By: store.UsageByConversation, Limit: 1})
	noErr(t, err, "summing usage by conversation, one row")
	eq(t, len(limited), 1, "rows under Limit 1")
	eq(t, limited[0].Key, c2.ID.String(), "Limit keeps the costliest")
}

// testUsageVoice records a transcription (priced by audio) and a speech
// (by characters) beside a model call: each row keeps its kind and its
// measure, the report sums them, and a model row without a kind reads as
// a model call.
func (s suite) testUsageVoice(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	atlas, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "atlas", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "creating agent atlas")
	c := newConversation(t, st, clk)
	for _, u := range []*store.Usage{
		{ConversationID: c.ID, AgentID: &atlas.ID, Provider: "anthropic", Model: "m", InputTokens: 10, CostMicroUSD: 5},
		{ConversationID: c.ID, AgentID: &atlas.ID, Kind: store.UsageTranscription, Provider: "openai", Model: "whisper-1", AudioMs: 2500, CostMicroUSD: 250},
		{ConversationID: c.ID, AgentID: &atlas.ID, Kind: store.UsageSpeech, Provider: "openai", Model: "tts-1", SpeechChars: 40, CostMicroUSD: 600},
		{ConversationID: c.ID, AgentID: &atlas.ID, Kind: store.UsageTranscription, Provider: "offline", Model: "pocketsphinx", AudioMs: 1000},
	} {
		u.CreatedAt = clk.Now()
		noErr(t, st.UsageRecord(ctx, u), "recording %s usage", u.Kind)
	}
	rows, err := st.UsageList(ctx, c.ID)
	noErr(t, err, "listing usage")
	eq(t, len(rows), 4, "usage rows")
	kinds := map[string]int64{}
	for _, r := range rows {
		kinds[r.Kind] += r.AudioMs + r.SpeechChars
	}
	deepEq(t, kinds, map[string]int64{store.UsageModel: 0, store.UsageTranscription: 3500, store.UsageSpeech: 40}, "measures by kind")
	byAgent, err := st.UsageSummary(ctx, &store.UsageSummaryParams{By: store.UsageByAgent})
	noErr(t, err, "summing usage by agent")
	deepEq(t, totals(byAgent), []store.UsageTotal{
		{Key: "atlas", Calls: 4, InputTokens: 10, CostMicroUSD: 855, AudioMs: 3500, SpeechChars: 40},
	}, "the report sums audio and characters")
	err = st.UsageRecord(ctx, &store.Usage{ConversationID: c.ID, Kind: "video", Provider: "x", Model: "y", CreatedAt: clk.Now()})
	isTrue(t, errors.Is(err, store.ErrInvalid), "an unknown kind: want ErrInvalid, got %v", err)
}

func totals(ts []*store.UsageTotal) []store.UsageTotal {
	out := make([]store.UsageTotal, len(ts))
	for i, t := range ts {
		out[i] = *t
	}
	return out
}

func (s suite) testUsageSummaryInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := context.Background()
	for _, p := range []*store.UsageSummaryParams{nil, {By: "week"}, {By: store.UsageByDay, Limit: -1}} {
		_, err := st.UsageSummary(ctx, p)
		isTrue(t, errors.Is(err, store.ErrInvalid), "summing usage with %+v: want ErrInvalid, got %v", p, err)
	}
}
