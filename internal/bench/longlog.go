package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

// The figures of a long log: a first turn before the first summary, and a
// stream's ?tail.

// LongLog appends n entries to conv, a person's message and the agent's
// short answer in turn, in transactions of a thousand, as an import or a
// channel's history fills a log: no turn runs.
func LongLog(ctx context.Context, st store.Store, conv uuid.UUID, n int) error {
	const batch = 1000
	for done := 0; done < n; done += batch {
		err := st.InTx(ctx, func(q store.Queries) error {
			for i := done + 1; i <= min(done+batch, n); i++ {
				kind, author, content := store.EntryUser, store.UserAuthor("u"), any(core.UserContent{Text: fmt.Sprintf("Message %d: the harbour gauge read 3.%d m this morning.", i, i%10), UserID: "u"})
				if i%2 == 0 {
					kind, author, content = store.EntryAssistant, store.AgentAuthor("bench"), core.AssistantContent{Text: fmt.Sprintf("Reply %d: noted.", i)}
				}
				raw, err := json.Marshal(content)
				if err != nil {
					return err
				}
				if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: kind, Author: author, Content: raw, Now: time.Now()}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("appending entries %d to %d of %s: %w", done+1, min(done+batch, n), conv, err)
		}
	}
	return nil
}

// LongLogContext is the agent context of the first-turn figure: the
// smallest budget the settings allow, so that a window of the log is a few
// dozen entries.
var LongLogContext = config.ContextSettings{SummarizeAt: config.MinSummarizeAt, KeepRecent: 200}

// TurnIn posts a message to conv and runs the turn it queues as a worker
// would (claim, the handler, complete), returning the handler's time.
func TurnIn(ctx context.Context, svc *core.Service, hs *core.Handlers, conv uuid.UUID) (time.Duration, error) {
	st := svc.Store()
	if _, err := svc.PostMessage(ctx, conv, "u", "hello"); err != nil {
		return 0, err
	}
	items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "bench", Kinds: []string{core.WorkTurn}, Limit: 1, LeaseTTL: time.Minute, Now: time.Now()})
	if err != nil {
		return 0, err
	}
	if len(items) != 1 {
		return 0, fmt.Errorf("claimed %d turns, want 1", len(items))
	}
	start := time.Now()
	if err := hs.Run(ctx, items[0]); err != nil {
		return 0, fmt.Errorf("running the turn of %s: %w", conv, err)
	}
	took := time.Since(start)
	if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "bench", Now: time.Now()}); err != nil {
		return 0, err
	}
	return took, nil
}

// FirstTurns measures rounds turns of long, a conversation whose log has
// no summary (its summary item never runs here, so each turn comes before
// the first summary), each against a turn of a new conversation of 10
// entries in the same round. Every conversation had a turn before the one
// measured (the agent has joined it, it has a title).
func FirstTurns(ctx context.Context, svc *core.Service, long uuid.UUID, rounds int) (shorts, longs []time.Duration, err error) {
	hs := core.NewHandlers()
	core.AddHandler(hs, svc.RunTurn)
	if _, err := TurnIn(ctx, svc, hs, long); err != nil {
		return nil, nil, err
	}
	for range rounds {
		c, err := svc.CreateConversation(ctx, "", "api", "u")
		if err != nil {
			return nil, nil, err
		}
		if err := LongLog(ctx, svc.Store(), c.ID, 8); err != nil {
			return nil, nil, err
		}
		if _, err := TurnIn(ctx, svc, hs, c.ID); err != nil {
			return nil, nil, err
		}
		s, err := TurnIn(ctx, svc, hs, c.ID)
		if err != nil {
			return nil, nil, err
		}
		l, err := TurnIn(ctx, svc, hs, long)
		if err != nil {
			return nil, nil, err
		}
		shorts, longs = append(shorts, s), append(longs, l)
	}
	return shorts, longs, nil
}

// runFirstTurn measures the first turn of a conversation of 50,000 entries
// that has no summary yet against a turn of one of 10 (p50).
func runFirstTurn(ctx context.Context, e *env) (*Result, error) {
	n := e.opts.size(50000, 2000)
	script, err := WriteScript(e.dir)
	if err != nil {
		return nil, err
	}
	svc, err := TurnService(ctx, e.st, script, func(a *config.Agent) { a.Context = LongLogContext })
	if err != nil {
		return nil, err
	}
	long, err := svc.CreateConversation(ctx, "", "api", "u")
	if err != nil {
		return nil, err
	}
	if err := LongLog(ctx, e.st, long.ID, n); err != nil {
		return nil, err
	}
	shorts, longs, err := FirstTurns(ctx, svc, long.ID, e.opts.size(50, 3))
	if err != nil {
		return nil, err
	}
	return &Result{
		Metric: fmt.Sprintf("turn at %d entries, no summary, p50", n), Value: ms(Quantile(longs, 0.5)), Unit: "ms",
		Baseline: "turn at 10 entries p50", BaselineValue: ms(Quantile(shorts, 0.5)),
		Extra: map[string]float64{"entries": float64(n), "rounds": float64(len(longs)), "long_p99_ms": ms(Quantile(longs, 0.99))},
	}, nil
}

// TailCatchUps opens GET /api/conversations/{id}/stream?tail=tail of long
// and of short, rounds times each in turn, on the API at base, and returns
// how long each took to send its tail entries.
func TailCatchUps(ctx context.Context, client *http.Client, base string, long, short uuid.UUID, tail, rounds int) (longs, shorts []time.Duration, err error) {
	url := func(c uuid.UUID) string { return fmt.Sprintf("%s/api/conversations/%s/stream?tail=%d", base, c, tail) }
	for range rounds {
		l, err := catchUp(ctx, client, url(long), tail)
		if err != nil {
			return nil, nil, err
		}
		s, err := catchUp(ctx, client, url(short), tail)
		if err != nil {
			return nil, nil, err
		}
		longs, shorts = append(longs, l), append(shorts, s)
	}
	return longs, shorts, nil
}

// runTail measures a stream opened with ?tail=100 on a conversation of
// 50,000 entries against the same on one of 100 (median).
func runTail(ctx context.Context, e *env) (*Result, error) {
	n := e.opts.size(50000, 2000)
	const tail = 100
	a, err := openApp(ctx, e, nil)
	if err != nil {
		return nil, err
	}
	defer a.Stop(context.WithoutCancel(ctx))
	long, err := a.Service.CreateConversation(ctx, "", "api", "bench")
	if err != nil {
		return nil, err
	}
	short, err := a.Service.CreateConversation(ctx, "", "api", "bench")
	if err != nil {
		return nil, err
	}
	if err := LongLog(ctx, e.st, long.ID, n); err != nil {
		return nil, err
	}
	if err := LongLog(ctx, e.st, short.ID, tail); err != nil {
		return nil, err
	}
	client := &http.Client{}
	defer client.CloseIdleConnections()
	longs, shorts, err := TailCatchUps(ctx, client, "http://"+a.Addr(), long.ID, short.ID, tail, e.opts.size(30, 3))
	if err != nil {
		return nil, err
	}
	return &Result{
		Metric: fmt.Sprintf("?tail=%d of %d entries, median", tail, n), Value: ms(Quantile(longs, 0.5)), Unit: "ms",
		Baseline: fmt.Sprintf("?tail=%d of %d entries, median", tail, tail), BaselineValue: ms(Quantile(shorts, 0.5)),
		Extra: map[string]float64{"entries": float64(n), "rounds": float64(len(longs))},
	}, nil
}
