package bridge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/bridge"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// fakeBridge stands in for `switchboard bridge`: it records its start, its
// readiness and its stop in $LOG.
const fakeBridge = `#!/bin/sh
agent="$5"
echo "start $agent $(pwd)" >> "$LOG"
trap 'echo "stop $agent" >> "$LOG"; exit 0' TERM
sleep 0.2
echo "ready $agent" >> "$LOG"
echo "bridge ready"
while true; do sleep 0.05; done
`

func readLog(t *testing.T, path string) []string {
	t.Helper()
	raw, _ := os.ReadFile(path)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if l != "" {
			out = append(out, strings.Fields(l)[0]+" "+strings.Fields(l)[1])
		}
	}
	return out
}

func waitLog(t *testing.T, path string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(readLog(t, path)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the log has %q, want %d lines", readLog(t, path), n)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
	return readLog(t, path)
}

// TestSupervise: the supervisor starts one bridge per agent, each in its
// own folder, the next only once the previous is ready; a restart stops
// and starts them one at a time, each ready before the next stops; the end
// stops them all.
func TestSupervise(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "switchboard")
	if err := os.WriteFile(prog, []byte(fakeBridge), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "log")
	hosts := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(hosts, []byte(`url: http://127.0.0.1:1
ready_timeout: 10s
bridges:
  - agent: a
    dir: `+filepath.Join(dir, "a")+`
    env: {LOG: `+log+`}
  - agent: b
    dir: `+filepath.Join(dir, "b")+`
    env: {LOG: `+log+`}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := bridge.LoadHosts(hosts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	restart := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- bridge.Supervise(ctx, bridge.SuperviseOptions{Hosts: h, Program: prog, Env: []string{"PATH=" + os.Getenv("PATH")}, Logger: testenv.Logger(t), Restart: restart})
	}()
	if got := strings.Join(waitLog(t, log, 4), ", "); got != "start a, ready a, start b, ready b" {
		t.Fatalf("first start: %s; want one at a time, each ready before the next", got)
	}
	raw, _ := os.ReadFile(log)
	if !strings.Contains(string(raw), "start a "+filepath.Join(dir, "a")) {
		t.Errorf("bridge a did not run in its own folder: %s", raw)
	}
	restart <- struct{}{}
	if got := strings.Join(waitLog(t, log, 10)[4:], ", "); got != "stop a, start a, ready a, stop b, start b, ready b" {
		t.Fatalf("restart: %s; want one at a time, each ready before the next stops", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(readLog(t, log)[10:], ", "); got != "stop a, stop b" {
		t.Errorf("the end: %s; want both stopped", got)
	}
}

func TestLoadHostsNamesTheField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts.yaml")
	for body, want := range map[string]string{
		"bridges: [{agent: a, dir: /x}]\n":                                               "url",
		"url: http://127.0.0.1:1\nbridges: [{agent: a}]\n":                               "bridges[0].dir",
		"url: http://127.0.0.1:1\nbridges: [{dir: /x}]\n":                                "bridges[0].agent",
		"url: http://127.0.0.1:1\nbridges: [{agent: a, dir: /x}, {agent: a, dir: /y}]\n": "two bridges",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := bridge.LoadHosts(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", body, err, want)
		}
	}
}
