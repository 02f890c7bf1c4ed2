package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The figures that start the real binary as a process of its own: start-to-
// ready and idle RSS are what an operator sees of `switchboard serve`, not
// of a service started inside this process (whose heap and runtime already
// hold everything the other figures left).

// binary is the switchboard binary the process figures start.
func (o *Options) binary() (string, error) {
	if o.Binary != "" {
		return o.Binary, nil
	}
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the switchboard binary to start (Options.Binary): %w", err)
	}
	return p, nil
}

// childEnv is the environment of a child on e's store: this process's own
// minus the settings the child gets from e, so an operator's DATABASE_URL or
// platform tokens do not reach it.
func childEnv(e *env, extra map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "DATABASE_URL" || strings.HasPrefix(k, "SWITCHBOARD_") || strings.HasPrefix(k, "SLACK_") || strings.HasPrefix(k, "DISCORD_") {
			continue
		}
		out = append(out, kv)
	}
	if _, ok := extra["DATABASE_URL"]; !ok {
		out = append(out, "DATABASE_URL="+e.url)
	}
	out = append(out, "SWITCHBOARD_LOG_LEVEL=error")
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	// Kept for a child that is this package's test binary standing in for
	// switchboard (see Options.Binary).
	if v := os.Getenv(TestBinaryEnv); v != "" {
		out = append(out, TestBinaryEnv+"="+v)
	}
	return out
}

// TestBinaryEnv, set to 1 in a test binary's environment, tells its TestMain
// to run as switchboard: the tests of `switchboard bench` start their own
// binary as the service.
const TestBinaryEnv = "SWITCHBOARD_BENCH_AS_BINARY"

// serveProcess is `switchboard serve` started as a child on e's store.
type serveProcess struct {
	cmd     *exec.Cmd
	url     string // http://host:port
	output  *lockedBuffer
	start   time.Time
	exited  chan struct{} // closed when the process ended; then waitErr is set
	waitErr error
}

// startServe starts `switchboard serve` on e's store, on a free loopback
// port, with the zero-latency model and no platform.
func startServe(e *env) (*serveProcess, error) {
	bin, err := e.opts.binary()
	if err != nil {
		return nil, err
	}
	return startServeAs(e, bin)
}

// privateBinary copies the switchboard binary into e's folder and syncs
// it, for a figure that needs the service to be the only process mapping
// its executable, as in a deployment: this process runs the same file, and
// pages both map would blur whose they are.
func privateBinary(e *env) (string, error) {
	bin, err := e.opts.binary()
	if err != nil {
		return "", err
	}
	src, err := os.Open(bin)
	if err != nil {
		return "", fmt.Errorf("copying the binary: %w", err)
	}
	defer src.Close()
	dst := filepath.Join(e.dir, "switchboard-"+randomSuffix())
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return "", fmt.Errorf("copying the binary: %w", err)
	}
	_, err = io.Copy(f, src)
	if err == nil {
		// Written back, its pages are clean: the page cache can drop them.
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copying the binary to %s: %w", dst, err)
	}
	return dst, nil
}

// startServeAs is startServe with the binary bin.
func startServeAs(e *env, bin string) (*serveProcess, error) {
	return startServeWith(e, bin, nil)
}

// startServeWith is startServeAs with settings of its own (a DATABASE_URL
// other than e's) over the defaults.
func startServeWith(e *env, bin string, settings map[string]string) (*serveProcess, error) {
	script, err := WriteScript(e.dir)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(e.dir, "switchboard.yaml")
	if err := os.WriteFile(cfgPath, []byte("access:\n  dm_policy: open\n"), 0o600); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &serveProcess{url: "http://" + addr, output: &lockedBuffer{}, exited: make(chan struct{})}
	env := map[string]string{
		"SWITCHBOARD_ADDR": addr, "SWITCHBOARD_CONFIG": cfgPath, "SWITCHBOARD_MODEL": "scripted:" + script,
		"SWITCHBOARD_INSTANCE_ID": "bench-" + randomSuffix(),
	}
	maps.Copy(env, settings)
	// A private binary was just written by this process: a child forked by
	// another goroutine while the file was open for writing holds it open
	// until that child execs, and the kernel refuses to run a file open for
	// writing (ETXTBSY, golang.org/issue/22315). That window is short; try
	// again, as cmd/go does for the test binaries it writes.
	for attempt := 1; ; attempt++ {
		p.cmd = exec.Command(bin, "serve")
		p.cmd.Env = childEnv(e, env)
		p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
		p.start = time.Now()
		err := p.cmd.Start()
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ETXTBSY) || attempt == 20 {
			return nil, fmt.Errorf("starting %s serve: %w", bin, err)
		}
		time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop ends the service with SIGTERM, as an operator would, and waits.
func (p *serveProcess) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("switchboard serve did not stop within 30s of SIGTERM:\n%s", p.output.String())
	}
	if p.waitErr != nil {
		return fmt.Errorf("switchboard serve ended with %w:\n%s", p.waitErr, p.output.String())
	}
	return nil
}

// ready waits for GET /readyz to answer 200 and returns the time since the
// process started.
func (p *serveProcess) ready(ctx context.Context, client *http.Client) (time.Duration, error) {
	err := waitReadyOr(ctx, client, p.url+"/readyz", p.exited)
	d := time.Since(p.start)
	if err != nil {
		return 0, fmt.Errorf("%w\n%s", err, p.output.String())
	}
	return d, nil
}

// lockedBuffer is a child's output, read while the child may still write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// rss is a process's resident set from /proc/PID/status, in MB: VmRSS,
// and its parts, anonymous memory (heap, stacks, runtime) and pages of files
// (the executable).
type rss struct{ total, anon, file float64 }

func readRSS(pid int) (rss, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return rss{}, fmt.Errorf("reading the resident set size (Linux /proc only): %w", err)
	}
	return parseRSS(string(b))
}

func parseRSS(status string) (rss, error) {
	var r rss
	fields := map[string]*float64{"VmRSS:": &r.total, "RssAnon:": &r.anon, "RssFile:": &r.file}
	found := false
	for _, line := range strings.Split(status, "\n") {
		for name, dst := range fields {
			rest, ok := strings.CutPrefix(line, name)
			if !ok {
				continue
			}
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return rss{}, fmt.Errorf("parsing %s %q: %w", name, rest, err)
			}
			*dst = kb / 1024
			found = found || name == "VmRSS:"
		}
	}
	if !found {
		return rss{}, errors.New("no VmRSS in /proc status")
	}
	return r, nil
}

// runMigrate runs `switchboard migrate` on e's store (migrated already, so
// it opens the store, reads the schema version and exits) and returns how
// long it took and its peak RSS in MB: the binary, its runtime and an open
// store, which any command pays.
func runMigrate(e *env) (time.Duration, float64, error) {
	bin, err := e.opts.binary()
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(bin, "migrate")
	cmd.Env = childEnv(e, nil)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s migrate: %w\n%s", bin, err, out.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, errors.New("no resource usage of the migrate process (Linux only)")
	}
	return d, float64(ru.Maxrss) / 1024, nil // Maxrss is in kB on Linux
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}
