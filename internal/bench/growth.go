package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
)

// The growth figure: what months of data do to the two reads an operator
// makes all day, the conversation list and a /metrics scrape.

// growthSize is one store of the growth figure.
type growthSize struct {
	conversations, work int
}

// runGrowth fills two fresh stores, one as a team's after months (50,000
// conversations, 200,000 finished work items) and one as on its first day
// (100 conversations, 400 items), each in the same shape (see fill), and
// starts the service on each. It then reads, through each service's HTTP
// handler, the conversation list's first page (GET
// /api/conversations?limit=50, as the operator) and a /metrics scrape, in
// interleaved rounds whose order alternates, so that both sizes see the
// same machine. Two results: the list and the scrape, each the p50 on the
// big store against the p50 on the small one.
func runGrowth(ctx context.Context, e *env) ([]*Result, error) {
	small := growthSize{conversations: 100, work: 400}
	big := growthSize{conversations: e.opts.size(50_000, 1_000), work: e.opts.size(200_000, 4_000)}
	bigEnv, err := newEnv(ctx, e.opts)
	if err != nil {
		return nil, err
	}
	defer bigEnv.close()

	type side struct {
		size         growthSize
		app          *app.App
		list, scrape []time.Duration
	}
	sides := []*side{{size: small}, {size: big}}
	for i, en := range []*env{e, bigEnv} {
		s := sides[i]
		a, err := openApp(ctx, en, nil)
		if err != nil {
			return nil, err
		}
		defer a.Stop(context.WithoutCancel(ctx))
		s.app = a
		var agentID *uuid.UUID
		if ag, err := en.st.AgentGetByName(ctx, a.Service.Agents().Default().Name); err == nil {
			agentID = &ag.ID
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if _, err := fill(ctx, en.st, fillSpec{
			Conversations: s.size.conversations, Entries: 4 * s.size.conversations, FinishedWork: s.size.work,
			AgentID: agentID, Now: time.Now(), Seed: uint64(i + 1),
		}); err != nil {
			return nil, fmt.Errorf("filling %d conversations: %w", s.size.conversations, err)
		}
	}

	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	warm, rounds := e.opts.size(20, 2), e.opts.size(300, 10)
	for r := range warm + rounds {
		order := sides
		if r%2 == 1 {
			order = []*side{sides[1], sides[0]}
		}
		for _, s := range order {
			base := "http://" + s.app.Addr()
			dl, err := timedGet(ctx, client, base+"/api/conversations?limit=50", checkListPage(50))
			if err != nil {
				return nil, fmt.Errorf("the list at %d conversations: %w", s.size.conversations, err)
			}
			ds, err := timedGet(ctx, client, base+"/metrics", nil)
			if err != nil {
				return nil, fmt.Errorf("a scrape at %d work items: %w", s.size.work, err)
			}
			if r >= warm {
				s.list, s.scrape = append(s.list, dl), append(s.scrape, ds)
			}
		}
	}
	lo, hi := sides[0], sides[1]
	extra := func(a, b []time.Duration) map[string]float64 {
		return map[string]float64{
			"p99_ms": ms(Quantile(a, 0.99)), "baseline_p99_ms": ms(Quantile(b, 0.99)), "rounds": float64(rounds),
			"conversations": float64(hi.size.conversations), "baseline_conversations": float64(lo.size.conversations),
			"finished_work": float64(hi.size.work), "baseline_finished_work": float64(lo.size.work),
		}
	}
	return []*Result{{
		Metric: fmt.Sprintf("list p50, %d convs", hi.size.conversations), Value: ms(Quantile(hi.list, 0.5)), Unit: "ms",
		Baseline: fmt.Sprintf("list p50, %d convs", lo.size.conversations), BaselineValue: ms(Quantile(lo.list, 0.5)),
		Extra: extra(hi.list, lo.list),
	}, {
		Metric: fmt.Sprintf("scrape p50, %d done items", hi.size.work), Value: ms(Quantile(hi.scrape, 0.5)), Unit: "ms",
		Baseline: fmt.Sprintf("scrape p50, %d done items", lo.size.work), BaselineValue: ms(Quantile(lo.scrape, 0.5)),
		Extra: extra(hi.scrape, lo.scrape),
	}}, nil
}

// timedGet GETs url and reads the whole answer, which must be 200 and pass
// check (when given); it returns the time to the last byte.
func timedGet(ctx context.Context, client *http.Client, url string, check func([]byte) error) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s answered %d: %.200s", url, resp.StatusCode, body)
	}
	if check != nil {
		if err := check(body); err != nil {
			return 0, fmt.Errorf("GET %s: %w", url, err)
		}
	}
	return d, nil
}

// checkListPage checks that a list answer holds a full page of n.
func checkListPage(n int) func([]byte) error {
	return func(body []byte) error {
		var page struct {
			Conversations []json.RawMessage `json:"conversations"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return fmt.Errorf("reading the list: %w", err)
		}
		if len(page.Conversations) != n {
			return fmt.Errorf("the list held %d conversations, want a full page of %d", len(page.Conversations), n)
		}
		return nil
	}
}
