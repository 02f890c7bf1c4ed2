package instances_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// TestRollingUpgrade upgrades a running service from the previous release
// to this source the way a rolling deploy does, on Postgres, while people
// keep mentioning the bot:
//
//  1. The previous release (the last git tag before HEAD, else HEAD's first
//     parent) is built from `git archive` and serves a fresh schema.
//  2. A steady stream of mentions starts, over Socket Mode and over HTTP
//     events through a "load balancer" that retries on the other instance
//     when one refuses, as Slack retries.
//  3. This source's binary starts beside it under an instance id of its
//     own and migrates the schema while traffic flows.
//  4. The old instance gets SIGTERM, as a deploy sends it, and must exit 0.
//  5. Mentions go on a little against the new instance alone.
//
// Then it counts what the users see: every mention answered exactly once,
// whole (0 lost, 0 doubled, 0 cut). Without git history it skips, except
// with CI=true, where it fails: CI must run it.
//
// Run it alone with:
//
//	TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run TestRollingUpgrade -v ./internal/instances/
func TestRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and starts two service processes")
	}
	prev := buildPreviousRelease(t)
	w := newWorld(t, false)
	w.model.Default(modeltest.Reply{Text: reply, Delay: 20 * time.Millisecond})

	old := startBinary(t, prev.binary, "old-release", w.env)
	w.openStore()
	if err := w.slack.WaitConnections(1, waitLong); err != nil {
		t.Fatalf("the previous release opened no Socket Mode connection: %v", err)
	}
	lb := &balancer{w: w, http: &http.Client{Timeout: 5 * time.Second}}
	lb.set(old.addr)
	stream := lb.stream(100 * time.Millisecond)

	stream.waitSent(t, 15)
	started := time.Now()
	upgraded := start(t, "new-release", w.env)
	t.Logf("the new binary was ready %s after it started, beside the previous release", time.Since(started).Round(time.Millisecond))
	if err := w.slack.WaitConnections(2, waitLong); err != nil {
		t.Fatalf("the new binary opened no Socket Mode connection: %v", err)
	}
	lb.set(old.addr, upgraded.addr)
	stream.waitSent(t, stream.count()+15)

	// The deploy takes the old pod out of the balancer as it sends SIGTERM.
	lb.set(upgraded.addr)
	stopping := time.Now()
	if err := syscall.Kill(old.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-old.done:
		old.cmd = nil
		if err != nil {
			t.Errorf("the previous release exited with %v after SIGTERM; want a clean stop (0)", err)
		}
	case <-time.After(waitLong):
		t.Fatalf("the previous release did not stop within %s of SIGTERM", waitLong)
	}
	t.Logf("the previous release stopped %s after SIGTERM", time.Since(stopping).Round(time.Millisecond))
	stream.waitSent(t, stream.count()+10)
	chs := stream.stop(t)

	// What users see.
	if !poll(waitLong, func() bool {
		for _, ch := range chs {
			if r := w.replies(ch); len(r) == 0 || strings.HasSuffix(r[0], "(still streaming)") {
				return false
			}
		}
		return true
	}) {
		t.Logf("not every mention was answered within %s", waitLong)
	}
	w.waitIdle()
	var lost, doubled, cut int
	for _, ch := range chs {
		r := w.replies(ch)
		switch {
		case len(r) == 0:
			lost++
			t.Errorf("%s: no reply", ch)
		case len(r) > 1:
			doubled++
			t.Errorf("%s: %d replies %q; want one", ch, len(r), r)
		case r[0] != reply:
			cut++
			t.Errorf("%s: the reply is %q; want it whole", ch, r[0])
		}
	}
	split := w.turnsBy()
	t.Logf("rolling upgrade from %s (%s): %d mentions, lost %d, doubled %d, cut %d; turns by instance %v",
		prev.ref, prev.commit, len(chs), lost, doubled, cut, split)
	if split["old-release"] == 0 || split["new-release"] == 0 {
		t.Errorf("turns by instance: %v; want both releases to have answered some", split)
	}
	if code, body := readyzAt(upgraded.addr); code != http.StatusOK {
		t.Errorf("the new binary after the upgrade: /readyz %d %q", code, body)
	}
}

// previousRelease is the binary of the release before this source.
type previousRelease struct {
	ref, commit string // the tag or HEAD~1, and the commit it names
	binary      string
}

// buildPreviousRelease builds the previous release: the last tag reachable
// from HEAD's first parent, else that parent itself.
func buildPreviousRelease(t *testing.T) previousRelease {
	t.Helper()
	noHistory := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI=true: the upgrade test must run there (clone with full history)", msg)
		}
		t.Skipf("%s: skipping the upgrade from the previous release", msg)
	}
	git := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		cmd := exec.Command("git", args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
		}
		return strings.TrimSpace(out.String()), nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		noHistory("git is not installed")
	}
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		noHistory("not a git checkout (%v)", err)
	}
	ref := "HEAD~1"
	if tag, err := git("-C", root, "describe", "--tags", "--abbrev=0", "HEAD~1"); err == nil && tag != "" {
		ref = tag
	}
	commit, err := git("-C", root, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		noHistory("no previous release to upgrade from (%v)", err)
	}

	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", commit)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	var archiveErr, untarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	if err := untar.Start(); err != nil {
		t.Fatalf("starting tar: %v", err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v: %s", commit, err, archiveErr.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("unpacking the previous release: %v: %s", err, untarErr.String())
	}

	// -trimpath keeps the package directory out of the build cache's keys,
	// so a temporary source tree compiles from the cache what is unchanged
	// since the last run; the module cache is the one this test uses.
	bin := filepath.Join(dir, "switchboard-previous")
	began := time.Now()
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-X main.version="+ref+" -X main.commit="+commit, "-o", bin, "./cmd/switchboard")
	build.Dir = src
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		t.Fatalf("building the previous release (%s, %s): %v\n%s", ref, commit, err, out.String())
	}
	t.Logf("built the previous release %s (%s) in %s", ref, commit, time.Since(began).Round(time.Millisecond))
	return previousRelease{ref: ref, commit: commit, binary: bin}
}

// balancer sends Slack events the way users and Slack do during a deploy:
// every other event over Socket Mode (the fake spreads them over the live
// connections and re-delivers what a closed one left unacknowledged), the
// rest over HTTP to the instances behind it, moving to the next when one
// refuses, as Slack retries an event.
type balancer struct {
	w    *world
	http *http.Client

	mu    sync.Mutex
	addrs []string
	next  int
}

func (b *balancer) set(addrs ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addrs = addrs
}

func (b *balancer) targets() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	out := make([]string, 0, len(b.addrs))
	for i := range b.addrs {
		out = append(out, b.addrs[(b.next+i)%len(b.addrs)])
	}
	return out
}

// post delivers one HTTP event, trying each instance in turn; Slack retries
// an event for a while, so this does too.
func (b *balancer) post(body []byte) error {
	var last error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, addr := range b.targets() {
			req := slacktest.NewSignedRequest("http://"+addr+"/slack/events", "application/json", secret, time.Now(), body)
			resp, err := b.http.Do(req)
			if err != nil {
				last = err
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("POST %s/slack/events: %s", addr, resp.Status)
		}
		time.Sleep(50 * time.Millisecond) // as Slack backs off between retries
	}
	return last
}

// mentionStream sends one mention every pace until stopped.
type mentionStream struct {
	mu   sync.Mutex
	chs  []string
	errs []error
	quit chan struct{}
	done chan struct{}
}

func (b *balancer) stream(pace time.Duration) *mentionStream {
	s := &mentionStream{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(pace)
		defer tick.Stop()
		var posts sync.WaitGroup
		defer posts.Wait()
		for n := 0; ; n++ {
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
			ch, ts := fmt.Sprintf("C0UPG%04d", n), fmt.Sprintf("1700006000.%06d", n)
			body := slacktest.EventCallback(team, fmt.Sprintf("EvUpg%05d", n), map[string]any{
				"type": "app_mention", "user": alice, "text": fmt.Sprintf("<@%s> question %d during the upgrade", botUser, n),
				"ts": ts, "channel": ch, "team": team, "event_ts": ts,
			})
			s.mu.Lock()
			s.chs = append(s.chs, ch)
			s.mu.Unlock()
			if n%2 == 0 {
				b.w.slack.SendEvent(body)
				continue
			}
			posts.Go(func() {
				if err := b.post(slacktest.MustJSON(body)); err != nil {
					s.mu.Lock()
					s.errs = append(s.errs, fmt.Errorf("mention %d over HTTP: %w", n, err))
					s.mu.Unlock()
				}
			})
		}
	}()
	return s
}

func (s *mentionStream) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.chs)
}

func (s *mentionStream) waitSent(t *testing.T, n int) {
	t.Helper()
	if !poll(waitLong, func() bool { return s.count() >= n }) {
		t.Fatalf("the stream sent %d mentions within %s, want %d", s.count(), waitLong, n)
	}
}

// stop ends the stream once the events in flight are delivered, and returns
// the channels mentioned.
func (s *mentionStream) stop(t *testing.T) []string {
	t.Helper()
	close(s.quit)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := errors.Join(s.errs...); err != nil {
		t.Errorf("events that no instance took: %v", err)
	}
	return s.chs
}
