package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
)

// historyTokens is the history a request to the (fake) Anthropic model
// carries, estimated as the service estimates its context: its messages
// and the summary block after the first system block (the stable block of
// a turn, the instructions of a summary request), a quarter of the
// characters each, plus the framing of every message.
func historyTokens(tb testing.TB, r modeltest.Request) int {
	tb.Helper()
	var body struct {
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Content []struct {
				Type    string          `json:"type"`
				Text    string          `json:"text"`
				Input   json.RawMessage `json:"input"`
				Content json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := r.Decode(&body); err != nil {
		tb.Fatalf("decoding a model request: %v", err)
	}
	n := 0
	for i, s := range body.System {
		if i > 0 {
			n += core.EstimateTokens(s.Text) + core.TokensPerEntry
		}
	}
	for _, m := range body.Messages {
		n += core.TokensPerEntry
		for _, b := range m.Content {
			n += core.EstimateTokens(b.Text) + core.EstimateTokens(string(b.Input)) + core.EstimateTokens(string(b.Content))
		}
	}
	return n
}

// TestSummariesKeepUpWithSteadyMessages: 1,500 messages at 30 ms
// intervals into one conversation, faster than its turns run, so the
// summary item queued behind them never gets a turn of its own. Each turn
// summarises before its model call once the history passes the budget and
// a fifth: no request to the model carries more than 120 % of the budget,
// and at most one summary item is ever queued for the conversation.
func TestSummariesKeepUpWithSteadyMessages(t *testing.T) {
	t.Parallel()
	const (
		budget, keep = 1500, 300
		messages     = keepUpMessages // 1,500; fewer under the race detector
		every        = 30 * time.Millisecond
	)
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		// Both the turns and the summaries get this answer.
		fake.Default(modeltest.Reply{Text: "Noted."})
		cfg := openAccess + fmt.Sprintf("context:\n  summarize_at: %d\n  keep_recent: %d\n", budget, keep)
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake), config: cfg})
		var conv struct {
			ID string `json:"id"`
		}
		e.apiJSON(t, http.MethodPost, "/api/conversations", map[string]string{}, http.StatusCreated, &conv)
		convID, err := uuid.Parse(conv.ID)
		if err != nil {
			t.Fatalf("POST /api/conversations answered id %q: %v", conv.ID, err)
		}

		// Sample the conversation's queued summary items while the
		// messages come in and until the queue drains.
		var (
			mu                sync.Mutex
			maxQueued, sample int
			sampleErr         error
		)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				items, err := e.store.WorkList(ctx, &store.WorkListParams{
					States: []store.WorkState{store.WorkAvailable}, Kind: core.WorkSummarize, ConversationID: &convID,
				})
				mu.Lock()
				if err != nil && ctx.Err() == nil {
					sampleErr = err
				}
				sample++
				maxQueued = max(maxQueued, len(items))
				mu.Unlock()
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()

		start := time.Now()
		tick := time.NewTicker(every)
		for i := 1; i <= messages; i++ {
			text := fmt.Sprintf("Message %04d: the tide gauge read 3.%d m at 06:%02d and the wind came from the south-west.", i, i%10, i%60)
			e.apiJSON(t, http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"text": text}, http.StatusAccepted, nil)
			<-tick.C
		}
		tick.Stop()
		posted := time.Since(start)
		// Each message is a turn; on a loaded machine they fall behind the
		// messages, so wait for as long as the queue keeps draining.
		e.waitDrainedWhileMoving(time.Minute, 100*time.Millisecond)
		stop()
		<-done
		t.Logf("posted %d messages in %s, all answered after %s", messages, posted.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

		mu.Lock()
		defer mu.Unlock()
		if sampleErr != nil {
			t.Fatalf("counting the queued summary items: %v", sampleErr)
		}
		if maxQueued > 1 {
			t.Errorf("up to %d summary items were queued at once for the conversation (in %d samples); want at most one", maxQueued, sample)
		}
		limit := budget + budget/5
		var summaryRequests, turnRequests, largest int
		for i, r := range fake.Requests() {
			n := historyTokens(t, r)
			largest = max(largest, n)
			if isSummaryRequest(r) {
				summaryRequests++
			} else {
				turnRequests++
			}
			if n > limit {
				t.Errorf("request %d (summary: %v) carries %d tokens of history; want at most %d (the %d budget and 20 %%)", i+1, isSummaryRequest(r), n, limit, budget)
			}
		}
		summaries := e.entries(convID, store.EntrySummary)
		t.Logf("%d turn requests, %d summary requests, %d summary entries; the largest request carried %d tokens of history (budget %d); at most %d summary items queued at once in %d samples",
			turnRequests, summaryRequests, len(summaries), largest, budget, maxQueued, sample)
		// Turns that find their message answered by an earlier reply (which
		// saw it) make no call; the last message is answered. A summary may
		// still follow the last reply when the machine is slow enough that
		// the summary item queued behind the messages gets its turn once
		// they are all answered (it folds history the next turn would fold
		// anyway); the last turn and the last reply are what people see.
		var last modeltest.Request
		for _, r := range fake.Requests() {
			if !isSummaryRequest(r) {
				last = r
			}
		}
		if !strings.Contains(string(last.Body), fmt.Sprintf("Message %04d:", messages)) {
			t.Errorf("the last turn's request does not carry message %d: %.300s", messages, last.Body)
		}
		all := e.entries(convID, "")
		for len(all) > 0 && all[len(all)-1].Kind == store.EntrySummary {
			all = all[:len(all)-1]
		}
		if len(all) == 0 || all[len(all)-1].Kind != store.EntryAssistant {
			t.Errorf("the log's last entry but summaries is not the reply to the last message: %+v", all[len(all)-1:])
		}
		if len(summaries) == 0 {
			t.Error("no summary entry; want the conversation summarised as it grew")
		}
	})
}
