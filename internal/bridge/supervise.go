package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"
)

// Hosts is hosts.yaml, the bridges `switchboard bridge supervise` runs on
// one host: one bridge per agent, each in its own working folder.
//
//	url: https://switchboard.example.com
//	token_env: SWITCHBOARD_BRIDGE_TOKEN   # where the host token is
//	bridges:
//	  - agent: coder
//	    dir: /srv/switchboard/coder
//	    user: coder                       # optional: run as this OS user
//	  - agent: writer
//	    dir: /srv/switchboard/writer
type Hosts struct {
	// URL is the service's base URL.
	URL string `yaml:"url"`
	// TokenEnv names the environment variable holding the host token
	// (default SWITCHBOARD_BRIDGE_TOKEN); the bridges get it in theirs.
	TokenEnv string `yaml:"token_env,omitempty"`
	// ReadyTimeout bounds the wait for a started bridge to connect before
	// the next one is restarted (default 1m).
	ReadyTimeout time.Duration `yaml:"ready_timeout,omitempty"`
	Bridges      []HostBridge  `yaml:"bridges"`
}

// HostBridge is one bridge of a host.
type HostBridge struct {
	// Agent is the agent it serves.
	Agent string `yaml:"agent"`
	// Dir is its working folder (created when missing); the agent's CLI
	// works in Dir/agents/AGENT/work.
	Dir string `yaml:"dir"`
	// User, when set, is the OS user it runs as (the supervisor must run
	// as root to switch).
	User string `yaml:"user,omitempty"`
	// Env are extra environment variables of its process.
	Env map[string]string `yaml:"env,omitempty"`
}

// LoadHosts reads and checks hosts.yaml.
func LoadHosts(path string) (*Hosts, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var h Hosts
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if h.TokenEnv == "" {
		h.TokenEnv = "SWITCHBOARD_BRIDGE_TOKEN"
	}
	if h.ReadyTimeout == 0 {
		h.ReadyTimeout = time.Minute
	}
	switch {
	case h.URL == "":
		return nil, fmt.Errorf("%s: url (the service's address) is required", path)
	case len(h.Bridges) == 0:
		return nil, fmt.Errorf("%s: bridges lists none", path)
	}
	seen := map[string]bool{}
	for i, b := range h.Bridges {
		switch {
		case b.Agent == "":
			return nil, fmt.Errorf("%s: bridges[%d].agent is required", path, i)
		case b.Dir == "":
			return nil, fmt.Errorf("%s: bridges[%d].dir (its working folder) is required", path, i)
		case seen[b.Agent]:
			return nil, fmt.Errorf("%s: bridges[%d]: agent %s has two bridges", path, i, b.Agent)
		}
		seen[b.Agent] = true
	}
	return &h, nil
}

// SuperviseOptions configures a supervisor.
type SuperviseOptions struct {
	Hosts *Hosts
	// Program is the switchboard binary the bridges run (default this
	// process's own).
	Program string
	Env     []string // the supervisor's environment; the bridges inherit it
	Logger  *slog.Logger
	// Restart is told to restart every bridge, one at a time (SIGHUP).
	Restart <-chan struct{}
}

// ReadyLine is what a bridge prints on its standard output once every
// agent's stream is connected: the supervisor's readiness signal.
const ReadyLine = "bridge ready"

// Supervise runs one bridge per agent until ctx ends: a bridge that exits
// is started again (after a pause that doubles up to a minute), one at a
// time; a restart (SIGHUP) stops and starts each in turn, waiting for one
// to be ready before the next, since they share one CLI login.
func Supervise(ctx context.Context, o SuperviseOptions) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Program == "" {
		p, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this binary: %w", err)
		}
		o.Program = p
	}
	s := &supervisor{o: o, log: o.Logger}
	for _, hb := range o.Hosts.Bridges {
		if err := os.MkdirAll(hb.Dir, 0o700); err != nil {
			return fmt.Errorf("bridge of %s: making its folder: %w", hb.Agent, err)
		}
		s.kids = append(s.kids, &child{hb: hb})
	}
	// The first start, one at a time with a readiness wait.
	for _, c := range s.kids {
		if err := s.start(ctx, c); err != nil {
			s.log.ErrorContext(ctx, "bridge did not start", "agent", c.hb.Agent, "error", err)
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for _, c := range s.kids {
				s.stop(c)
			}
			return nil
		case <-o.Restart:
			s.log.InfoContext(ctx, "restarting the bridges one at a time")
			for _, c := range s.kids {
				s.stop(c)
				if err := s.start(ctx, c); err != nil {
					s.log.ErrorContext(ctx, "bridge did not come back", "agent", c.hb.Agent, "error", err)
				}
			}
		case <-tick.C:
			for _, c := range s.kids {
				if c.exited() && time.Now().After(c.retryAt) {
					c.backoff = min(max(c.backoff*2, time.Second), time.Minute)
					c.retryAt = time.Now().Add(c.backoff)
					s.log.WarnContext(ctx, "bridge exited; starting it again", "agent", c.hb.Agent, "error", c.err, "next_pause", c.backoff)
					if err := s.start(ctx, c); err != nil {
						s.log.ErrorContext(ctx, "bridge did not start", "agent", c.hb.Agent, "error", err)
					} else {
						c.backoff = 0
					}
				}
			}
		}
	}
}

type supervisor struct {
	o    SuperviseOptions
	log  *slog.Logger
	kids []*child
}

type child struct {
	hb      HostBridge
	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	backoff time.Duration
	retryAt time.Time
}

func (c *child) exited() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		return true
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// start starts the bridge and waits until it is ready (ReadyLine), it
// exits, or the ready timeout passes.
func (s *supervisor) start(ctx context.Context, c *child) error {
	h := s.o.Hosts
	cmd := exec.Command(s.o.Program, "bridge", "-url", h.URL, "-agent", c.hb.Agent, "-dir", c.hb.Dir)
	cmd.Dir = c.hb.Dir
	cmd.Env = append([]string{}, s.o.Env...)
	for k, v := range c.hb.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if h.TokenEnv != "SWITCHBOARD_BRIDGE_TOKEN" {
		cmd.Env = append(cmd.Env, "SWITCHBOARD_BRIDGE_TOKEN="+envValue(s.o.Env, h.TokenEnv))
	}
	if err := runAs(cmd, c.hb.User); err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the bridge of %s: %w", c.hb.Agent, err)
	}
	done := make(chan struct{})
	ready := make(chan struct{})
	c.mu.Lock()
	c.cmd, c.done, c.err = cmd, done, nil
	c.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == ReadyLine {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, out)
		err := cmd.Wait()
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(done)
	}()
	s.log.InfoContext(ctx, "bridge started", "agent", c.hb.Agent, "pid", cmd.Process.Pid, "dir", c.hb.Dir)
	select {
	case <-ready:
		s.log.InfoContext(ctx, "bridge ready", "agent", c.hb.Agent, "pid", cmd.Process.Pid)
		return nil
	case <-done:
		return fmt.Errorf("the bridge of %s exited before it was ready: %v", c.hb.Agent, c.err)
	case <-time.After(h.ReadyTimeout):
		return fmt.Errorf("the bridge of %s was not ready within %s (ready_timeout)", c.hb.Agent, h.ReadyTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop asks the bridge to stop (SIGTERM) and kills it after 30s.
func (s *supervisor) stop(c *child) {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	s.log.Info("bridge stopped", "agent", c.hb.Agent)
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// ErrUserSwitch is runAs's refusal where the host cannot switch users.
var ErrUserSwitch = errors.New("running a bridge as another user needs a Unix host and a supervisor run as root")
