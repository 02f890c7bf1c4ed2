package instances_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// These tests run several processes on one SQLite file, as the README
// invites (switchboard chat beside switchboard serve), all under the
// default instance id (the host and the database): one live process per
// instance id.

// proc is a switchboard process whose output the test reads.
type proc struct {
	t    *testing.T
	name string
	addr string
	cmd  *exec.Cmd
	out  *syncBuffer // stdout and stderr
	in   io.WriteCloser
	done chan struct{}
	err  error // the exit, once done is closed
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// launch starts `switchboard args...` with env, without waiting for it.
// Its output goes to a pipe (never a file: the readiness test limits the
// size of the files the process may write).
func launch(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	p := &proc{t: t, name: name, addr: addr, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Env = append(append([]string(nil), env...), "SWITCHBOARD_ADDR="+addr, "HOME="+dir)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, tail(p.out.String(), 60))
		}
		p.kill()
	})
	return p
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// readyz is the status and body of GET /readyz.
func (p *proc) readyz() (int, string) { return readyzAt(p.addr) }

// readyzAt is the status and body of GET /readyz at addr.
func readyzAt(addr string) (int, string) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (p *proc) waitReady() {
	p.t.Helper()
	if !poll(waitLong, func() bool { code, _ := p.readyz(); return code == http.StatusOK || p.exited() }) || p.exited() {
		p.t.Fatalf("%s was not ready within %s (exited: %v)", p.name, waitLong, p.exited())
	}
}

// sqliteWorld is the fakes and the settings of processes sharing one
// SQLite file.
type sqliteWorld struct {
	*world
	db string
}

func newSQLiteWorld(t *testing.T, leaseTTL time.Duration) *sqliteWorld {
	db := "sqlite:" + filepath.Join(t.TempDir(), "switchboard.db")
	w := newWorldOn(t, worldOptions{db: db, leaseTTL: leaseTTL})
	return &sqliteWorld{world: w, db: db}
}

func (w *sqliteWorld) openStore() {
	st, err := dial.Open(context.Background(), dial.Options{DatabaseURL: w.db})
	if err != nil {
		w.t.Fatalf("opening the processes' store: %v", err)
	}
	w.t.Cleanup(func() { st.Close() })
	w.st = st
}

func (w *sqliteWorld) running() int {
	items, err := w.st.WorkList(context.Background(), &store.WorkListParams{States: []store.WorkState{store.WorkRunning}, Kind: "turn"})
	if err != nil {
		return -1
	}
	return len(items)
}

// modelCalls counts the model requests that carry text.
func (w *sqliteWorld) modelCalls(text string) int {
	n := 0
	for _, r := range w.model.Requests() {
		if bytes.Contains(r.Body, []byte(text)) {
			n++
		}
	}
	return n
}

// TestChatBesideServeTakesNoTurns: `switchboard chat` started beside a
// running `switchboard serve` on the same SQLite file, while three slow
// turns run there, takes none of them over: each turn's model is called
// once. (Before, chat got the same default instance id and took the turns
// back as "left by a previous run", so each model was called twice.)
func TestChatBesideServeTakesNoTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two service processes")
	}
	w := newSQLiteWorld(t, 3*time.Second)
	block := make(chan struct{})
	w.model.Default(modeltest.Reply{Text: reply, Block: block})
	serve := launch(t, "serve", w.env, "serve")
	serve.waitReady()
	w.openStore()

	var chs []string
	for i := range 3 {
		chs = append(chs, w.mention(serve.addr, fmt.Sprintf("slow question %d", i)))
	}
	if !poll(waitLong, func() bool { return w.running() == 3 && w.modelCalls("slow question") == 3 }) {
		t.Fatalf("the three turns did not all reach the model (running %d, model calls %d)", w.running(), w.modelCalls("slow question"))
	}

	chat := launch(t, "chat", w.env, "chat")
	if !poll(waitLong, func() bool { return strings.Contains(chat.out.String(), "Ctrl-D quits") || chat.exited() }) || chat.exited() {
		t.Fatalf("chat did not start (exited: %v)", chat.exited())
	}
	// Chat's worker started before its prompt: whatever it took back is
	// running or queued now. Let the turns finish.
	close(block)
	w.waitIdle()
	for _, ch := range chs {
		if !poll(waitLong, func() bool { return len(w.replies(ch)) > 0 }) {
			t.Errorf("%s: no reply", ch)
		}
	}
	for i := range 3 {
		if n := w.modelCalls(fmt.Sprintf("slow question %d", i)); n != 1 {
			t.Errorf("slow question %d: the model was called %d times, want once", i, n)
		}
	}
	// Log lines, not the migration names (0030_tool_execution_interrupted).
	if out := serve.out.String(); strings.Contains(out, "lease lost") || strings.Contains(out, "msg=\"interrupted") ||
		strings.Contains(out, "took back work") {
		t.Errorf("serve's log tells of lost leases or interrupted turns:\n%s", tail(out, 40))
	}
	if out := chat.out.String(); !strings.Contains(out, "own_id=") {
		t.Errorf("chat's log does not say it runs under an id of its own:\n%s", tail(out, 40))
	}
	_ = chat.in.Close()
}

// TestSecondServeRefusedThenRestartAfterKill: a second `switchboard serve`
// on the same SQLite file and the same (default) instance id refuses to
// start, naming SWITCHBOARD_INSTANCE_ID and the process that holds it.
// After a kill -9 of the holder, a restart starts at once: it proves the
// old process gone rather than wait out a lease TTL (60s here).
func TestSecondServeRefusedThenRestartAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts service processes")
	}
	w := newSQLiteWorld(t, 60*time.Second)
	w.model.Default(modeltest.Reply{Text: reply})
	first := launch(t, "first", w.env, "serve")
	first.waitReady()

	second := launch(t, "second", w.env, "serve")
	select {
	case <-second.done:
	case <-time.After(waitLong):
		t.Fatalf("the second serve did not stop within %s", waitLong)
	}
	if second.err == nil {
		t.Fatalf("the second serve exited 0; want a refusal")
	}
	out := second.out.String()
	for _, want := range []string{"SWITCHBOARD_INSTANCE_ID", "held by another process", fmt.Sprintf("pid %d", first.cmd.Process.Pid), "started "} {
		if !strings.Contains(out, want) {
			t.Errorf("the second serve's error lacks %q:\n%s", want, tail(out, 20))
		}
	}
	if code, body := first.readyz(); code != http.StatusOK {
		t.Errorf("the first serve after the refusal: /readyz %d %s", code, body)
	}

	first.kill()
	restarted := launch(t, "restarted", w.env, "serve")
	restarted.waitReady()
	if out := restarted.out.String(); !strings.Contains(out, "took over the instance id from a process that is gone") {
		t.Errorf("the restart did not say it took the id over from the killed process:\n%s", tail(out, 30))
	}
}
