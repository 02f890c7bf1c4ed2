package backups_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

const waitLong = 90 * time.Second

var binary string

func TestMain(m *testing.M) { testenv.MainWithBinary(m, "backups", &binary) }

// baseEnv is the processes' environment without DATABASE_URL: a fake
// model answering every turn.
func baseEnv(t *testing.T) []string {
	model := modeltest.NewAnthropic(t)
	model.Default(modeltest.Reply{Text: "Noted."})
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"SWITCHBOARD_MODEL=anthropic:claude-sonnet-4-5",
		"ANTHROPIC_API_KEY=sk-ant-test",
		"ANTHROPIC_BASE_URL=" + model.URL,
		"SWITCHBOARD_LOG_LEVEL=warn",
	}
}

func with(env []string, kv ...string) []string {
	return append(append([]string(nil), env...), kv...)
}

// serve is a `switchboard serve` process.
type serve struct {
	t    *testing.T
	name string
	addr string
	cmd  *exec.Cmd
	out  *testenv.Buffer
	done chan struct{}
}

func startServe(t *testing.T, name string, env []string) *serve {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &serve{t: t, name: name, addr: addr, out: &testenv.Buffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(binary, "serve")
	s.cmd.Env = with(env, "SWITCHBOARD_ADDR="+addr)
	s.cmd.Dir = t.TempDir()
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, s.out.String())
		}
		s.kill()
	})
	client := &http.Client{Timeout: 5 * time.Second}
	ready := poll(waitLong, func() bool {
		select {
		case <-s.done:
			return true
		default:
		}
		resp, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	select {
	case <-s.done:
		t.Fatalf("%s exited at start:\n%s", name, s.out.String())
	default:
	}
	if !ready {
		t.Fatalf("%s was not ready within %s", name, waitLong)
	}
	return s
}

func (s *serve) kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// switchboard runs the binary to its end and returns what it printed.
func switchboard(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	return true
}

// api is a client of a serve's HTTP API (no token: loopback).
type api struct {
	addr string
	c    *http.Client
}

func (a api) do(method, path string, body any, want int, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+a.addr+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s answered %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func (a api) newConversation(t *testing.T) string {
	t.Helper()
	var c struct {
		ID string `json:"id"`
	}
	if err := a.do(http.MethodPost, "/api/conversations", map[string]any{}, http.StatusCreated, &c); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// log is a conversation's entries as the API gives them: the texts of the
// user messages, and every seq in order.
func (a api) log(t *testing.T, conv string) (texts map[string]bool, seqs []int64) {
	t.Helper()
	var body struct {
		Entries []struct {
			Kind    string          `json:"kind"`
			Seq     *int64          `json:"seq"`
			Content json.RawMessage `json:"content"`
		} `json:"entries"`
	}
	if err := a.do(http.MethodGet, "/api/conversations/"+conv+"/entries", nil, http.StatusOK, &body); err != nil {
		t.Fatal(err)
	}
	texts = map[string]bool{}
	for _, e := range body.Entries {
		if e.Seq != nil {
			seqs = append(seqs, *e.Seq)
		}
		if e.Kind != "user" {
			continue
		}
		var c struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(e.Content, &c); err != nil {
			t.Fatalf("entry content %s: %v", e.Content, err)
		}
		texts[c.Text] = true
	}
	return texts, seqs
}

// message is one POST of the load.
type message struct {
	conv, text  string
	sent, acked time.Time // acked is zero when the request failed
}

// load posts messages into each conversation, one writer each, every few
// milliseconds, until stopped. A message is acknowledged when its POST
// answered 202.
type load struct {
	mu   sync.Mutex
	msgs []*message
	errs []error
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

func startLoad(a api, convs []string) *load {
	l := &load{stop: make(chan struct{})}
	for w, conv := range convs {
		l.wg.Go(func() {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-l.stop:
					return
				case <-tick.C:
				}
				m := &message{conv: conv, text: fmt.Sprintf("writer %d message %d", w, n), sent: time.Now()}
				err := a.do(http.MethodPost, "/api/conversations/"+conv+"/messages", map[string]string{"text": m.text}, http.StatusAccepted, nil)
				if err == nil {
					m.acked = time.Now()
				}
				l.mu.Lock()
				l.msgs = append(l.msgs, m)
				if err != nil {
					l.errs = append(l.errs, err)
				}
				l.mu.Unlock()
			}
		})
	}
	return l
}

func (l *load) end() {
	l.once.Do(func() { close(l.stop) })
	l.wg.Wait()
}

// ackedBy counts the messages acknowledged before t.
func (l *load) ackedBy(t time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if !m.acked.IsZero() && m.acked.Before(t) {
			n++
		}
	}
	return n
}

// stores are where a round trip starts and where it is restored.
type stores struct {
	live, fresh string // DATABASE_URLs
}

func sqliteStores(t *testing.T) stores {
	return stores{
		live:  "sqlite:" + filepath.Join(t.TempDir(), "live.db"),
		fresh: "sqlite:" + filepath.Join(t.TempDir(), "restored", "switchboard.db"),
	}
}

// postgresSchemaStores: the store in a schema of its own, restored into
// the same schema of a new database (a dump goes back into its schema).
func postgresSchemaStores(t *testing.T) stores {
	schema := testenv.PostgresEmptySchema(t)
	fresh := testenv.PostgresDatabase(t)
	return stores{
		live:  withParam(t, testenv.PostgresURL(t), "switchboard_schema", schema),
		fresh: withParam(t, testenv.PostgresDatabaseURL(t, fresh), "switchboard_schema", schema),
	}
}

// postgresDatabaseStores: the store alone in its database (no
// switchboard_schema), dumped whole and restored into a new database.
func postgresDatabaseStores(t *testing.T) stores {
	live, fresh := testenv.PostgresDatabase(t), testenv.PostgresDatabase(t)
	return stores{live: testenv.PostgresDatabaseURL(t, live), fresh: testenv.PostgresDatabaseURL(t, fresh)}
}

func withParam(t *testing.T, raw, k, v string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestBackupUnderLoad is the backup an operator relies on: `switchboard
// backup` runs while `serve` takes messages over its API, the backup is
// restored into a fresh store with `switchboard restore`, and `serve` on
// the restored store shows every message acknowledged before the backup
// began, in conversations whose logs have no gap, and none sent after the
// backup ended.
func TestBackupUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the service and the backup binary")
	}
	t.Run("sqlite", func(t *testing.T) { backupUnderLoad(t, sqliteStores(t)) })
	t.Run("postgres-schema", func(t *testing.T) { backupUnderLoad(t, postgresSchemaStores(t)) })
	t.Run("postgres-database", func(t *testing.T) { backupUnderLoad(t, postgresDatabaseStores(t)) })
}

func backupUnderLoad(t *testing.T, s stores) {
	env := baseEnv(t)
	live := startServe(t, "serve", with(env, "DATABASE_URL="+s.live))
	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	a := api{addr: live.addr, c: client}
	var convs []string
	for range 4 {
		convs = append(convs, a.newConversation(t))
	}

	l := startLoad(a, convs)
	defer l.end()
	// Steady load first: the backup starts amid it, not before it.
	if !poll(waitLong, func() bool { return l.ackedBy(time.Now()) >= 40 }) {
		t.Fatalf("the load did not get 40 messages acknowledged within %s", waitLong)
	}
	path := filepath.Join(t.TempDir(), "switchboard.backup")
	started := time.Now()
	out, err := switchboard(t, with(env, "DATABASE_URL="+s.live), "backup", path)
	ended := time.Now()
	if err != nil {
		t.Fatalf("switchboard backup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "wrote "+path+": ") {
		t.Errorf("backup printed %q, want the file it wrote", out)
	}
	// And on: the load goes on after the backup, as it would.
	after := l.ackedBy(time.Now())
	if !poll(waitLong, func() bool { return l.ackedBy(time.Now()) >= after+20 }) {
		t.Fatalf("the load stalled after the backup")
	}
	l.end()
	if len(l.errs) > 0 {
		t.Errorf("%d messages were refused by the service, the first: %v", len(l.errs), l.errs[0])
	}
	before, during := l.ackedBy(started), l.ackedBy(ended)-l.ackedBy(started)
	if during == 0 {
		t.Errorf("no message was acknowledged while the backup ran (%s): the test did not back up under load", ended.Sub(started))
	}
	t.Logf("backup took %s; %d messages acknowledged before it began, %d while it ran, %d in all; %s", ended.Sub(started).Round(time.Millisecond), before, during, len(l.msgs), strings.TrimSpace(out))

	out, err = switchboard(t, with(env, "DATABASE_URL="+s.fresh), "restore", path)
	if err != nil {
		t.Fatalf("switchboard restore: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(out))

	restored := startServe(t, "serve on the restored store", with(env, "DATABASE_URL="+s.fresh))
	r := api{addr: restored.addr, c: client}
	present := map[string]bool{}
	for _, conv := range convs {
		texts, seqs := r.log(t, conv)
		for i, seq := range seqs {
			if seq != int64(i+1) {
				t.Errorf("conversation %s: the restored log's seqs are %v, want 1, 2, 3, … without a gap", conv, seqs)
				break
			}
		}
		for text := range texts {
			present[text] = true
		}
	}
	var missing, fromAfter []string
	for _, m := range l.msgs {
		switch {
		case !m.acked.IsZero() && m.acked.Before(started) && !present[m.text]:
			missing = append(missing, m.text)
		case m.sent.After(ended) && present[m.text]:
			fromAfter = append(fromAfter, m.text)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of the %d messages acknowledged before the backup began are not in the restored store, e.g. %q", len(missing), before, missing[0])
	}
	if len(fromAfter) > 0 {
		t.Errorf("the restored store holds %d messages sent after the backup ended, e.g. %q: it is not the backup", len(fromAfter), fromAfter[0])
	}
}

// TestRefusals: what backup and restore will not do, each with the setting
// or flag to change named.
func TestRefusals(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the service and the backup binary")
	}
	t.Run("sqlite", func(t *testing.T) {
		env := baseEnv(t)
		db := "sqlite:" + filepath.Join(t.TempDir(), "live.db")
		live := with(env, "DATABASE_URL="+db)
		s := startServe(t, "serve", live)

		// An existing PATH is kept, unless -force.
		path := filepath.Join(t.TempDir(), "taken.backup")
		if err := os.WriteFile(path, []byte("yesterday's backup"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := switchboard(t, live, "backup", path)
		if err == nil || !strings.Contains(out, "exists: pass -force") {
			t.Errorf("backup onto an existing PATH: %v, %q; want a refusal naming -force", err, out)
		}
		if b, _ := os.ReadFile(path); string(b) != "yesterday's backup" {
			t.Errorf("the refused backup changed PATH: %q", b)
		}
		if out, err := switchboard(t, live, "backup", path, "-force"); err != nil {
			t.Fatalf("backup -force: %v\n%s", err, out)
		}
		if b, _ := os.ReadFile(path); !bytes.HasPrefix(b, []byte("SQLite format 3\x00")) {
			t.Errorf("backup -force left PATH holding %.20q, want the SQLite copy", b)
		}

		// The live store holds data: restore refuses it without -force,
		// and with -force while serve holds it (its instance lease).
		out, err = switchboard(t, live, "restore", path)
		if err == nil || !strings.Contains(out, "holds data: pass -force") {
			t.Errorf("restore into a file that holds data: %v, %q; want a refusal naming -force", err, out)
		}
		out, err = switchboard(t, live, "restore", "-force", path)
		if err == nil || !strings.Contains(out, "is in use") || !strings.Contains(out, fmt.Sprintf("pid %d", s.cmd.Process.Pid)) {
			t.Errorf("restore -force under a running serve: %v, %q; want a refusal naming the serve's pid %d", err, out, s.cmd.Process.Pid)
		}
		// Killed (kill -9), the service leaves its lease behind, live for
		// SWITCHBOARD_LEASE_TTL; its pid is gone, so -force replaces the file.
		s.kill()
		if out, err := switchboard(t, live, "restore", "-force", path); err != nil || !strings.Contains(out, "restored "+path) {
			t.Fatalf("restore -force after the service stopped: %v\n%s", err, out)
		}
		startServe(t, "serve on the restored file", live)

		// A SQLite backup does not go into Postgres, nor garbage anywhere.
		junk := filepath.Join(t.TempDir(), "junk")
		if err := os.WriteFile(junk, []byte("not a backup at all"), 0o600); err != nil {
			t.Fatal(err)
		}
		fresh := with(env, "DATABASE_URL=sqlite:"+filepath.Join(t.TempDir(), "new.db"))
		if out, err := switchboard(t, fresh, "restore", junk); err == nil || !strings.Contains(out, "not a switchboard backup") {
			t.Errorf("restore of a file that is no backup: %v, %q", err, out)
		}
	})

	t.Run("postgres", func(t *testing.T) {
		env := baseEnv(t)
		schema := testenv.PostgresEmptySchema(t)
		live := with(env, "DATABASE_URL="+withParam(t, testenv.PostgresURL(t), "switchboard_schema", schema))
		if out, err := switchboard(t, live, "migrate"); err != nil {
			t.Fatalf("migrate: %v\n%s", err, out)
		}
		// pg_dump where the setting says, and nowhere: the error names
		// pg_dump and the setting, and writes nothing.
		path := filepath.Join(t.TempDir(), "pg.backup")
		out, err := switchboard(t, with(live, "SWITCHBOARD_PG_DUMP_PATH=/nonexistent/bin/pg_dump"), "backup", path)
		if err == nil || !strings.Contains(out, "pg_dump not found") || !strings.Contains(out, "SWITCHBOARD_PG_DUMP_PATH") {
			t.Errorf("backup with a pg_dump that is not there: %v, %q; want an error naming pg_dump and SWITCHBOARD_PG_DUMP_PATH", err, out)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the failed backup left %s behind: %v", path, err)
		}
		out, err = switchboard(t, live, "backup", "-pg-dump", "/nonexistent/bin/pg_dump", path)
		if err == nil || !strings.Contains(out, "-pg-dump") {
			t.Errorf("backup -pg-dump with a program that is not there: %v, %q", err, out)
		}
		if out, err := switchboard(t, live, "backup", path); err != nil {
			t.Fatalf("backup: %v\n%s", err, out)
		}
		// Into the schema it came from, which holds the store: refused, by
		// name, and nothing in it changes.
		out, err = switchboard(t, live, "restore", path)
		if err == nil || !strings.Contains(out, "schema "+schema+" of database") || !strings.Contains(out, "is not empty") {
			t.Errorf("restore into a schema that holds a store: %v, %q; want a refusal naming the schema", err, out)
		}
		if out, err := switchboard(t, with(live, "SWITCHBOARD_PG_RESTORE_PATH=/nonexistent/bin/pg_restore"), "restore", path); err == nil || !strings.Contains(out, "pg_restore not found") {
			t.Errorf("restore with a pg_restore that is not there: %v, %q", err, out)
		}
		// Another schema name: the dump's objects carry theirs.
		other := with(env, "DATABASE_URL="+withParam(t, testenv.PostgresURL(t), "switchboard_schema", testenv.PostgresEmptySchema(t)))
		if out, err := switchboard(t, other, "restore", path); err == nil || !strings.Contains(out, "set switchboard_schema="+schema) {
			t.Errorf("restore into another schema name: %v, %q; want the schema to set", err, out)
		}
	})
}
