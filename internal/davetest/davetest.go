// Package davetest runs @snazzah/davey, the DAVE implementation discord.js
// uses (Rust and OpenMLS, prebuilt for Node), as the other party of the
// Discord voice encryption tests (bots/discord/dave). It is installed
// with npm into a cache folder when missing. Where node or npm is absent
// a test is skipped, except in CI (CI=true), where it fails.
package davetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/mcptest"
)

// Package is the pinned npm package.
const Package = "@snazzah/davey@0.1.12"

var installMu sync.Mutex

// Dir is the folder davey is installed into: davey under the folder of the
// npm programs the tests use (mcptest.Dir).
func Dir() (string, error) {
	d, err := mcptest.Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "davey"), nil
}

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (in CI a skip is a failure)", msg)
	}
	t.Skip(msg)
}

func installed(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "@snazzah", "davey", "package.json"))
	if err != nil {
		return false
	}
	var p struct{ Version string }
	at := strings.LastIndex(Package, "@")
	return json.Unmarshal(b, &p) == nil && p.Version == Package[at+1:]
}

// Install installs the pinned package into dir; .ci/run calls it through
// `go run ./internal/davetest/install`.
func Install(dir string) error {
	if installed(dir) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// No --ignore-scripts concern: the binary is an optional dependency
	// (@snazzah/davey-linux-x64-gnu and the like), not a build step.
	args := []string{"install", "--save-exact", "--no-audit", "--no-fund", "--ignore-scripts", Package}
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	if !installed(dir) {
		return fmt.Errorf("npm installed %s but it is not in %s", Package, dir)
	}
	return nil
}

// Davey is a running node process driving davey sessions, one JSON
// request and one JSON reply a line.
type Davey struct {
	t   testing.TB
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// Start runs script (a node program reading requests on stdin) with davey
// installed, and stops it when the test ends.
func Start(t testing.TB, script string) *Davey {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not on PATH: cannot run %s", Package)
	}
	dir, err := Dir()
	if err != nil {
		unavailable(t, "%v", err)
	}
	installMu.Lock()
	if !installed(dir) {
		if _, err := exec.LookPath("npm"); err != nil {
			installMu.Unlock()
			unavailable(t, "npm is not on PATH: cannot install %s", Package)
		}
		if err := Install(dir); err != nil {
			installMu.Unlock()
			unavailable(t, "installing %s: %v", Package, err)
		}
	}
	installMu.Unlock()

	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "DAVEY_DIR="+dir)
	cmd.Stderr = testWriter{t}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node %s: %v", script, err)
	}
	d := &Davey{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	d.out.Buffer(make([]byte, 1<<20), 1<<24)
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return d
}

// Call sends one request and decodes its reply into out (if not nil). A
// reply with an "error" field is returned as an error.
func (d *Davey) Call(req any, out any) error {
	d.t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := d.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing to davey: %w", err)
	}
	if !d.out.Scan() {
		return fmt.Errorf("davey exited: %v", d.out.Err())
	}
	line := d.out.Bytes()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("davey reply %q: %w", line, err)
	}
	if e.Error != "" {
		return fmt.Errorf("davey: %s", e.Error)
	}
	if out != nil {
		return json.Unmarshal(line, out)
	}
	return nil
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("davey: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
