package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

// Filling a store with months of data. The rows are written in bulk (COPY
// on Postgres, prepared INSERTs in large transactions on SQLite): the fill
// is the setup of a figure, not what it measures. They are shaped as the
// service writes them, so that the planner sees what it would see after
// months of traffic: conversations spread over 90 days in a team workspace
// and personal ones, most bound to a Slack thread, a few archived, deleted
// or filed; each log a run of user and assistant entries with its last_seq;
// finished work items of the kinds a turn leaves (its inbound event, keyed,
// the turn, the delivery), spread over the week the work retention keeps,
// a few of them failed.

// fillSpec says how much to write.
type fillSpec struct {
	Conversations int
	// Entries are spread over the conversations, but for LongEntries of
	// them that go to one recent conversation more (filled.Long), for a
	// catch-up read of a long log.
	Entries     int
	LongEntries int
	// FinishedWork is the number of done and failed work items.
	FinishedWork int
	// AgentID is the agent the conversations belong to (nil: none).
	AgentID *uuid.UUID
	Now     time.Time
	// Seed makes the fill repeatable.
	Seed uint64
}

// filled is what a fill wrote that a figure reads afterwards.
type filled struct {
	Team     uuid.UUID   // the team workspace
	Long     uuid.UUID   // the conversation with LongEntries more (zero if none)
	LongSeqs int64       // its last seq
	Sample   []uuid.UUID // a few conversations, for traffic to continue
}

// fillContent is a short paragraph, the size of a typical chat message.
var fillContent = `{"text":"` + strings.Repeat("Could you look at the deploy numbers again? ", 3) + `"}`

// fill writes spec's rows into st, then vacuums and analyzes the tables
// as autovacuum would have after such growth (Postgres; SQLite keeps no
// statistics, as the service never runs ANALYZE there).
func fill(ctx context.Context, st store.Store, spec fillSpec) (*filled, error) {
	w, err := newTableWriter(st)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x5eed))
	now := spec.Now.UTC().Truncate(time.Microsecond)
	out := &filled{Team: uuid.New()}

	// Workspaces: the team's, and a personal one for each of 20 people.
	personal := make([]uuid.UUID, 20)
	wsRows := [][]any{{out.Team, "Team", "team", uuid.New(), w.ts(now.Add(-120 * 24 * time.Hour))}}
	for i := range personal {
		personal[i] = uuid.New()
		wsRows = append(wsRows, []any{personal[i], fmt.Sprintf("Person %d", i), "personal", uuid.New(), w.ts(now.Add(-100 * 24 * time.Hour))})
	}
	if err := w.copy(ctx, "workspaces", []string{"id", "name", "kind", "owner_person_id", "created_at"}, rowsOf(wsRows)); err != nil {
		return nil, err
	}
	folders := make([]uuid.UUID, 5)
	var folderRows [][]any
	for i := range folders {
		folders[i] = uuid.New()
		folderRows = append(folderRows, []any{folders[i], out.Team, fmt.Sprintf("Folder %d", i), "", w.ts(now.Add(-90 * 24 * time.Hour)), w.ts(now.Add(-90 * 24 * time.Hour))})
	}
	if err := w.copy(ctx, "folders", []string{"id", "workspace_id", "name", "color", "created_at", "updated_at"}, rowsOf(folderRows)); err != nil {
		return nil, err
	}

	// Conversations, oldest first, created over 90 days; each was last
	// active up to a day after it started.
	n := spec.Conversations
	perConv := 0
	if n > 0 {
		perConv = max(0, spec.Entries-spec.LongEntries) / n
	}
	type conv struct {
		id               uuid.UUID
		created, updated time.Time
		seqs             int64
		bound            bool // to a Slack thread
		filed            int  // 0 not, 1 in a folder, 2 archived, 3 deleted
	}
	convs := make([]conv, n)
	span := 90 * 24 * time.Hour
	for i := range convs {
		created := now.Add(-span + time.Duration(float64(span)*float64(i)/float64(max(n, 1))))
		updated := created.Add(time.Duration(rng.Int64N(int64(24 * time.Hour))))
		if updated.After(now) {
			updated = now
		}
		// Six in ten are bound to a Slack thread; the others were started
		// in the API or the console.
		// A few are filed: 3% in a folder, 5% archived, 1% deleted.
		c := conv{id: uuid.New(), created: created, updated: updated, seqs: int64(perConv), bound: rng.IntN(10) < 6}
		switch r := rng.IntN(100); {
		case r < 3:
			c.filed = 1
		case r < 8:
			c.filed = 2
		case r < 9:
			c.filed = 3
		}
		convs[i] = c
	}
	if n > 0 && spec.LongEntries > 0 {
		// The long one is recent, so that it is on the list's first page.
		convs[n-1].seqs += int64(spec.LongEntries)
		convs[n-1].bound, convs[n-1].filed = false, 0
		out.Long, out.LongSeqs = convs[n-1].id, convs[n-1].seqs
	}
	// The sample is of unbound conversations: traffic through the API
	// answers them without a platform to deliver to.
	for i := 0; i < n-1 && len(out.Sample) < 1000; i += max(1, n/2000) {
		if !convs[i].bound && convs[i].filed == 0 {
			out.Sample = append(out.Sample, convs[i].id)
		}
	}
	var agent any
	if spec.AgentID != nil {
		agent = *spec.AgentID
	}
	i := 0
	err = w.copy(ctx, "conversations", []string{"id", "root_id", "agent_id", "title", "title_auto", "status", "metadata", "last_seq", "created_at", "updated_at", "workspace_id"},
		func() ([]any, bool) {
			if i == n {
				return nil, false
			}
			c := convs[i]
			i++
			ws := out.Team
			if rng.IntN(10) < 3 {
				ws = personal[rng.IntN(len(personal))]
			}
			return []any{c.id, c.id, agent, fmt.Sprintf("Deploy numbers for week %d", i%52+1), w.bool(true), "idle", "{}", c.seqs, w.ts(c.created), w.ts(c.updated), ws}, true
		})
	if err != nil {
		return nil, err
	}

	i = 0
	err = w.copy(ctx, "bindings", []string{"id", "conversation_id", "platform", "workspace", "channel", "thread", "delivered_seq", "created_at", "updated_at"},
		func() ([]any, bool) {
			for i < n {
				c := convs[i]
				i++
				if c.bound {
					return []any{uuid.New(), c.id, "slack", benchTeam, fmt.Sprintf("C%04d", i%200), fmt.Sprintf("%d.%06d", c.created.Unix(), i), c.seqs, w.ts(c.created), w.ts(c.updated)}, true
				}
			}
			return nil, false
		})
	if err != nil {
		return nil, err
	}

	i = 0
	err = w.copy(ctx, "conversation_filing", []string{"conversation_id", "folder_id", "archived_at", "deleted_at", "updated_at"},
		func() ([]any, bool) {
			for i < n {
				c := convs[i]
				i++
				switch c.filed {
				case 1:
					return []any{c.id, folders[rng.IntN(len(folders))], nil, nil, w.ts(c.updated)}, true
				case 2:
					return []any{c.id, nil, w.ts(c.updated), nil, w.ts(c.updated)}, true
				case 3:
					return []any{c.id, nil, nil, w.ts(c.updated), w.ts(c.updated)}, true
				}
			}
			return nil, false
		})
	if err != nil {
		return nil, err
	}

	// Each log: user and assistant entries in turn, a few seconds apart.
	ci, seq := 0, int64(0)
	err = w.copy(ctx, "entries", []string{"id", "conversation_id", "seq", "after_seq", "kind", "author", "content", "turn_id", "created_at"},
		func() ([]any, bool) {
			for ci < n && seq >= convs[ci].seqs {
				ci, seq = ci+1, 0
			}
			if ci == n {
				return nil, false
			}
			c := convs[ci]
			seq++
			at := c.created.Add(time.Duration(seq) * 3 * time.Second)
			if seq%2 == 1 {
				return []any{uuid.New(), c.id, seq, seq - 1, "user", "user:" + benchUser, fillContent, nil, w.ts(at)}, true
			}
			return []any{uuid.New(), c.id, seq, seq - 1, "assistant", "agent:bench", fillContent, uuid.New(), w.ts(at)}, true
		})
	if err != nil {
		return nil, err
	}

	// Finished work over the last week: per turn its inbound event
	// (keyed, as Slack events are), the turn and its delivery; one in 200
	// failed after its attempts.
	week := 7 * 24 * time.Hour
	k := 0
	err = w.copy(ctx, "work", []string{"id", "kind", "payload", "conversation_id", "run_at", "priority", "attempts", "max_attempts", "unique_key", "state", "claimed_by", "last_error", "created_at", "updated_at", "finished_at"},
		func() ([]any, bool) {
			if k == spec.FinishedWork || n == 0 {
				return nil, false
			}
			k++
			finished := now.Add(-week + time.Duration(float64(week)*float64(k)/float64(spec.FinishedWork)))
			created := finished.Add(-time.Duration(50+rng.IntN(2000)) * time.Millisecond)
			c := convs[n-1-rng.IntN(min(n, max(1, n/10)))].id // the recent tenth
			state, attempts, lastErr := "done", 1, ""
			if rng.IntN(200) == 0 {
				state, attempts, lastErr = "failed", 3, "model: 529 overloaded"
			}
			var kind, payload string
			var key any
			switch k % 3 {
			case 0:
				kind, payload, key = "inbound", `{"admitted":true,"inbound":{"platform":"slack","event_id":"Ev`+fmt.Sprint(k)+`"}}`, fmt.Sprintf("inbound/slack/Ev%d", k)
			case 1:
				kind, payload = "turn", `{"trigger_seq":2,"reason":"message"}`
			default:
				kind, payload = "deliver", `{}`
			}
			return []any{uuid.New(), kind, payload, c, w.ts(created), 0, attempts, 3, key, state, "instance-a", lastErr, w.ts(created), w.ts(finished), w.ts(finished)}, true
		})
	if err != nil {
		return nil, err
	}
	return out, w.analyze(ctx)
}

// tableWriter writes rows in bulk to one store's tables.
type tableWriter interface {
	// copy writes the rows next yields until it says no more.
	copy(ctx context.Context, table string, cols []string, next func() ([]any, bool)) error
	// ts and bool are a timestamp and a boolean as the table stores them.
	ts(t time.Time) any
	bool(b bool) any
	analyze(ctx context.Context) error
}

func newTableWriter(st store.Store) (tableWriter, error) {
	switch s := st.(type) {
	case *postgres.Store:
		return pgWriter{s.Pool()}, nil
	case *sqlite.Store:
		return liteWriter{s.DB()}, nil
	}
	return nil, fmt.Errorf("no bulk writer for a %T store", st)
}

// rowsOf yields rows one at a time, for tableWriter.copy.
func rowsOf(rows [][]any) func() ([]any, bool) {
	i := 0
	return func() ([]any, bool) {
		if i == len(rows) {
			return nil, false
		}
		i++
		return rows[i-1], true
	}
}

// pgWriter COPYs into the store's schema (the pool's search_path).
type pgWriter struct{ pool *pgxpool.Pool }

// pgTable maps the table names the fill uses to Postgres's.
func pgTable(t string) string {
	if t == "work" {
		return "work_items"
	}
	return t
}

func (w pgWriter) copy(ctx context.Context, table string, cols []string, next func() ([]any, bool)) error {
	_, err := w.pool.CopyFrom(ctx, pgx.Identifier{pgTable(table)}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		r, ok := next()
		if !ok {
			return nil, nil
		}
		return r, nil
	}))
	if err != nil {
		return fmt.Errorf("filling %s: %w", table, err)
	}
	return nil
}

func (pgWriter) ts(t time.Time) any { return t }
func (pgWriter) bool(b bool) any    { return b }

// analyze does what autovacuum does after that many inserts: VACUUM (which
// sets the visibility map that index-only scans read) and ANALYZE.
func (w pgWriter) analyze(ctx context.Context) error {
	for _, t := range []string{"workspaces", "folders", "conversations", "bindings", "conversation_filing", "entries", "work_items"} {
		if _, err := w.pool.Exec(ctx, "VACUUM ANALYZE "+t); err != nil {
			return fmt.Errorf("vacuuming %s: %w", t, err)
		}
	}
	return nil
}

// liteWriter INSERTs through the store's writer connection, 5,000 rows a
// transaction.
type liteWriter struct{ db *sql.DB }

func (w liteWriter) copy(ctx context.Context, table string, cols []string, next func() ([]any, bool)) error {
	q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	for done := false; !done; {
		err := func() error {
			tx, err := w.db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			stmt, err := tx.PrepareContext(ctx, q)
			if err != nil {
				return err
			}
			defer stmt.Close()
			for range 5000 {
				r, ok := next()
				if !ok {
					done = true
					break
				}
				if _, err := stmt.ExecContext(ctx, r...); err != nil {
					return err
				}
			}
			return tx.Commit()
		}()
		if err != nil {
			return fmt.Errorf("filling %s: %w", table, err)
		}
	}
	return nil
}

func (liteWriter) ts(t time.Time) any { return t.UnixMicro() }
func (liteWriter) bool(b bool) any {
	if b {
		return 1
	}
	return 0
}

// analyze does nothing: the service never runs ANALYZE on SQLite, so its
// planner works without statistics, and so does the bench's.
func (liteWriter) analyze(context.Context) error { return nil }
