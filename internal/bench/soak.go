package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/internal/pgbouncer"
	"github.com/switchboardhq/switchboard/store/dial"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// The soak: a team's deployment after months, run for an hour of traffic
// compressed into minutes, measured at the start and at the end. Two
// `switchboard serve` processes (the real binary) share one Postgres
// database through PgBouncer in transaction mode, with their LISTEN
// connection direct (DATABASE_LISTEN_URL), as docs/production.md says to
// run them.

// soakHourTurns is the traffic of a busy team's hour: a turn a second.
const soakHourTurns = 3600

// soakPeople is how many people talk to the service at once in the soak.
const soakPeople = 16

// runSoak fills a database of its own (CREATE DATABASE: a pooler in
// transaction mode cannot pass the schema the other figures use) with
// Options.SoakEntries entries over Options.SoakConversations conversations
// (see fill), starts the two instances, and measures on both, at the start
// and again at the end: a turn with the zero-latency model through the
// HTTP API (message posted to its answer read on the stream), the
// conversation list, a /metrics scrape, the catch-up of a long
// conversation, and each process's RSS. Between the two, Options.SoakDuration
// of traffic: soakPeople at once posting into their conversations (one in
// five a new one), paced at an hour's soakHourTurns over the duration,
// with the list read and both instances scraped every half second and the
// long conversation caught up every ten. Each result is the end's figure
// against the start's: a ratio over 1.5 is growth the service does not
// absorb.
func runSoak(ctx context.Context, e *env) (_ []*Result, err error) {
	skip := func(why string) ([]*Result, error) {
		return []*Result{{Metric: "soak", Skipped: why}}, nil
	}
	if e.dialect != "postgres" {
		return skip("two instances share one Postgres: give -database-url a postgres:// URL")
	}
	if _, err := pgbouncer.Find(); errors.Is(err, pgbouncer.ErrNotInstalled) {
		return skip(err.Error())
	}
	bin, err := e.opts.binary()
	if err != nil {
		return nil, err
	}
	db, err := newSoakDatabase(ctx, e.opts.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer func() {
		if derr := db.drop(); derr != nil && err == nil {
			err = derr
		}
	}()
	pb, err := pgbouncer.Start(ctx, pgbouncer.Options{ServerURL: db.direct, Mode: "transaction"})
	if err != nil {
		return nil, err
	}
	defer pb.Stop()

	settings := map[string]string{
		"DATABASE_URL":        pb.URL(db.name) + "&switchboard_simple_protocol=1",
		"DATABASE_LISTEN_URL": db.direct,
	}
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * soakPeople}}
	defer client.CloseIdleConnections()
	var procs []*serveProcess
	defer func() {
		for _, p := range procs {
			_ = p.stop()
		}
	}()
	// One after the other: the first applies the migrations.
	for range 2 {
		p, err := startServeWith(e, bin, settings)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
		if _, err := p.ready(ctx, client); err != nil {
			return nil, err
		}
	}
	// A failure says what the processes said.
	withOutput := func(err error) error {
		if err == nil {
			return nil
		}
		var b strings.Builder
		for i, p := range procs {
			fmt.Fprintf(&b, "\ninstance %d:\n%s", i+1, p.output.String())
		}
		return fmt.Errorf("%w%s", err, b.String())
	}

	st, err := dial.Open(ctx, dial.Options{DatabaseURL: db.direct, Logger: e.opts.Logger})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var agentID *uuid.UUID
	var id uuid.UUID
	switch err := st.(*postgres.Store).Pool().QueryRow(ctx, "SELECT id FROM agents ORDER BY created_at LIMIT 1").Scan(&id); {
	case err == nil:
		agentID = &id
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, err
	}
	fillStart := time.Now()
	f, err := fill(ctx, st, fillSpec{
		Conversations: e.opts.SoakConversations, Entries: e.opts.SoakEntries, LongEntries: min(2000, e.opts.SoakEntries/4),
		FinishedWork: 2 * e.opts.SoakConversations, AgentID: agentID, Now: time.Now(), Seed: 7,
	})
	if err != nil {
		return nil, err
	}
	fillTime := time.Since(fillStart)

	n := e.opts.size(30, 4)
	if len(f.Sample) < 2*n+soakPeople {
		return nil, fmt.Errorf("the fill left %d conversations to talk in, want at least %d: raise -soak-conversations", len(f.Sample), 2*n+soakPeople)
	}
	s := &soak{client: client, procs: procs, fill: f, rounds: e.opts.size(20, 3)}
	// Warm both processes' connections and caches as the start's reads
	// would, then measure the start.
	if _, err := s.measure(ctx, f.Sample[2*n:2*n+2]); err != nil {
		return nil, withOutput(err)
	}
	start, err := s.measure(ctx, f.Sample[:n])
	if err != nil {
		return nil, withOutput(err)
	}
	traffic, err := s.traffic(ctx, f.Sample[2*n:], e.opts.SoakDuration)
	if err != nil {
		return nil, withOutput(err)
	}
	end, err := s.measure(ctx, f.Sample[n:2*n])
	if err != nil {
		return nil, withOutput(err)
	}

	pair := func(metric, unit string, endV, startV float64) *Result {
		return &Result{Metric: metric + ", end", Value: endV, Unit: unit, Baseline: metric + ", start", BaselineValue: startV}
	}
	out := []*Result{
		pair("turn p50", "ms", ms(Quantile(end.turn, 0.5)), ms(Quantile(start.turn, 0.5))),
		pair("list p50", "ms", ms(Quantile(end.list, 0.5)), ms(Quantile(start.list, 0.5))),
		pair("scrape p50", "ms", ms(Quantile(end.scrape, 0.5)), ms(Quantile(start.scrape, 0.5))),
		pair(fmt.Sprintf("catch-up of %d", f.LongSeqs), "ms", ms(Quantile(end.catchup, 0.5)), ms(Quantile(start.catchup, 0.5))),
	}
	for i := range procs {
		out = append(out, pair(fmt.Sprintf("RSS instance %d", i+1), "MB", end.rss[i].total, start.rss[i].total))
		out[len(out)-1].Extra = map[string]float64{"anon_mb": end.rss[i].anon, "baseline_anon_mb": start.rss[i].anon}
	}
	out[0].Extra = map[string]float64{
		"entries": float64(e.opts.SoakEntries), "conversations": float64(e.opts.SoakConversations), "fill_s": fillTime.Seconds(),
		"traffic_s": traffic.elapsed.Seconds(), "traffic_turns": float64(traffic.turns), "traffic_turns_per_s": float64(traffic.turns) / traffic.elapsed.Seconds(),
		"traffic_new_conversations": float64(traffic.created), "traffic_turn_p50_ms": ms(Quantile(traffic.lat, 0.5)), "traffic_turn_p99_ms": ms(Quantile(traffic.lat, 0.99)),
		"turn_p99_ms": ms(Quantile(end.turn, 0.99)), "baseline_turn_p99_ms": ms(Quantile(start.turn, 0.99)),
	}
	return out, nil
}

// soakDatabase is the soak's own database.
type soakDatabase struct {
	name, direct string
	drop         func() error
}

// newSoakDatabase creates a database beside the one of databaseURL, on the
// same server, and returns its direct URL and a func dropping it.
func newSoakDatabase(ctx context.Context, databaseURL string) (*soakDatabase, error) {
	t, err := dial.Parse(databaseURL)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, t.URL)
	if err != nil {
		return nil, fmt.Errorf("connecting to create the soak's database: %w", err)
	}
	defer conn.Close(ctx)
	name := "switchboard_bench_" + randomSuffix()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("creating the soak's database %s (the user needs CREATEDB): %w", name, err)
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	return &soakDatabase{name: name, direct: u.String(), drop: func() error {
		return dropDatabase(t.URL, name)
	}}, nil
}

// dropDatabase drops the database name, retrying for up to three minutes:
// DROP DATABASE waits for a checkpoint, which a busy server can take tens
// of seconds to finish, and a pooler's last server connection can still be
// closing.
func dropDatabase(serverURL, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stmt := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
	for {
		err := func() error {
			c, err := pgx.Connect(ctx, serverURL)
			if err != nil {
				return err
			}
			defer c.Close(context.Background())
			_, err = c.Exec(ctx, stmt)
			return err
		}()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dropping the soak's database %s (drop it by hand: %s): %w%s", name, stmt, err, waiting(serverURL))
		case <-time.After(time.Second):
		}
	}
}

// waiting lists what the server's sessions wait on, to say why a DROP
// DATABASE did not finish; "" when it cannot be read.
func waiting(serverURL string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return ""
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, `SELECT coalesce(datname, ''), coalesce(backend_type, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), coalesce(left(query, 80), '')
		FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND wait_event_type IS NOT NULL AND wait_event_type NOT IN ('Activity', 'Client')`)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var db, kind, typ, ev, q string
		if rows.Scan(&db, &kind, &typ, &ev, &q) == nil {
			fmt.Fprintf(&b, "\n  %s %s waits on %s/%s: %s", kind, db, typ, ev, q)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "; the server's sessions wait on:" + b.String()
}

// soak is a running soak: its two processes and what was filled.
type soak struct {
	client *http.Client
	procs  []*serveProcess
	fill   *filled
	rounds int
}

// soakFigures are one measurement of the soak.
type soakFigures struct {
	turn, list, scrape, catchup []time.Duration
	rss                         []rss
}

// measure takes the soak's figures once: a turn in each of convs, on the
// instances in turn; then rounds of the list and a scrape on each
// instance; catch-ups of the long conversation; then each process's RSS.
func (s *soak) measure(ctx context.Context, convs []uuid.UUID) (*soakFigures, error) {
	m := &soakFigures{}
	for i, c := range convs {
		d, err := turnVia(ctx, s.client, s.procs[i%len(s.procs)].url, c)
		if err != nil {
			return nil, err
		}
		m.turn = append(m.turn, d)
	}
	for range s.rounds {
		for _, p := range s.procs {
			d, err := timedGet(ctx, s.client, p.url+"/api/conversations?limit=50", checkListPage(50))
			if err != nil {
				return nil, err
			}
			m.list = append(m.list, d)
			if d, err = timedGet(ctx, s.client, p.url+"/metrics", nil); err != nil {
				return nil, err
			}
			m.scrape = append(m.scrape, d)
		}
	}
	for i := range max(2, s.rounds/4) {
		p := s.procs[i%len(s.procs)]
		d, err := catchUp(ctx, s.client, p.url+"/api/conversations/"+s.fill.Long.String()+"/stream?cursor=0", int(s.fill.LongSeqs))
		if err != nil {
			return nil, err
		}
		m.catchup = append(m.catchup, d)
	}
	for _, p := range s.procs {
		r, err := readRSS(p.cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		m.rss = append(m.rss, r)
	}
	return m, nil
}

// soakTraffic is what the traffic did.
type soakTraffic struct {
	turns, created int64
	lat            []time.Duration
	elapsed        time.Duration
}

// traffic runs d of traffic in convs (and new conversations): see runSoak.
func (s *soak) traffic(ctx context.Context, convs []uuid.UUID, d time.Duration) (*soakTraffic, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		out   soakTraffic
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil && ctx.Err() == nil {
			first = err
		}
		cancel()
	}
	start := time.Now()
	deadline := start.Add(d)
	// Turns are let through at the hour's pace.
	tokens := make(chan struct{})
	wg.Go(func() {
		defer close(tokens)
		every := d / soakHourTurns
		tick := time.NewTicker(max(every, time.Millisecond))
		defer tick.Stop()
		for time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			case <-time.After(time.Until(deadline)):
				return
			}
		}
	})
	var turns, created atomic.Int64
	for person := range soakPeople {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(person), 11))
			p := s.procs[person%len(s.procs)]
			var mine []uuid.UUID
			for i := person; i < len(convs); i += soakPeople {
				mine = append(mine, convs[i])
			}
			for range tokens {
				var c uuid.UUID
				if rng.IntN(5) == 0 {
					var err error
					if c, err = createConversation(ctx, s.client, p.url); err != nil {
						fail(err)
						return
					}
					mine = append(mine, c)
					created.Add(1)
				} else {
					c = mine[rng.IntN(len(mine))]
				}
				lat, err := turnVia(ctx, s.client, p.url, c)
				if err != nil {
					fail(err)
					return
				}
				turns.Add(1)
				mu.Lock()
				out.lat = append(out.lat, lat)
				mu.Unlock()
			}
		})
	}
	// The list and the scrapes; the long conversation caught up now and
	// then.
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for i := 0; time.Now().Before(deadline); i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			p := s.procs[i%len(s.procs)]
			if _, err := timedGet(ctx, s.client, p.url+"/api/conversations?limit=50", checkListPage(50)); err != nil {
				fail(err)
				return
			}
			for _, q := range s.procs {
				if _, err := timedGet(ctx, s.client, q.url+"/metrics", nil); err != nil {
					fail(err)
					return
				}
			}
			if i%20 == 0 {
				if _, err := catchUp(ctx, s.client, p.url+"/api/conversations/"+s.fill.Long.String()+"/stream?cursor=0", int(s.fill.LongSeqs)); err != nil {
					fail(err)
					return
				}
			}
		}
	})
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	out.turns, out.created, out.elapsed = turns.Load(), created.Load(), time.Since(start)
	return &out, nil
}

// createConversation creates a conversation through the API and returns
// its id.
func createConversation(ctx context.Context, client *http.Client, base string) (uuid.UUID, error) {
	var conv struct {
		ID uuid.UUID `json:"id"`
	}
	if err := postJSON(ctx, client, base+"/api/conversations", `{}`, http.StatusCreated, &conv); err != nil {
		return uuid.Nil, err
	}
	return conv.ID, nil
}

// postJSON POSTs body to url and decodes the answer, which must have status
// want, into out.
func postJSON(ctx context.Context, client *http.Client, url, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s answered %d, want %d: %.300s", url, resp.StatusCode, want, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("POST %s: reading the answer: %w", url, err)
	}
	return nil
}

// turnVia posts a message to conversation conv through the API at base and
// reads its stream from the message on until the answer's entry arrives:
// a turn as an API caller sees it, from the POST to the answer.
func turnVia(ctx context.Context, client *http.Client, base string, conv uuid.UUID) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	var posted struct {
		Seq int64 `json:"seq"`
	}
	convURL := base + "/api/conversations/" + conv.String()
	if err := postJSON(ctx, client, convURL+"/messages", `{"text":"How did the deploy go today?"}`, http.StatusAccepted, &posted); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, convURL+"/stream?cursor="+strconv.FormatInt(posted.Seq, 10), nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("waiting for the answer in %s: %w", conv, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s/stream answered %d", convURL, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	entry := false
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.Equal(line, []byte("event: entry")):
			entry = true
		case entry && bytes.HasPrefix(line, []byte("data: ")):
			if bytes.Contains(line, []byte(`"kind":"assistant"`)) {
				return time.Since(start), nil
			}
			entry = false
		}
	}
	return 0, fmt.Errorf("the stream of %s ended before the answer to seq %d: %v", conv, posted.Seq, sc.Err())
}
