package model

// The CLI backends run a coding agent's own command-line program for each
// model call: the Claude Code CLI (claude -p, see claudecode.go) or the
// Codex CLI (codex exec --json, see codex.go). The CLI runs its whole agent
// loop, its own tools included, and reports what it does as JSON lines on
// stdout; the backend turns those lines into Events and one Response whose
// only parts are the final text, so the engine has no tool call of its own
// to run. The CLI's session id comes back in Response.Session and the next
// turn resumes it (Request.Session), sending only what was said since.
//
// What happens on failure:
//   - the program is missing: a non-retryable *Error of Type
//     ErrorTypeUnreachable that names the setting to fix;
//   - the CLI is not logged in: a non-retryable *Error of Type
//     ErrorTypeNeedsAuth, whose message tells people how to log it in;
//   - it exits, or is killed, before its final event (a crash mid-stream):
//     a retryable *Error wrapping ErrStreamIncomplete, with the end of its
//     stderr (redacted), so the shared retry loop runs it again;
//   - it prints nothing for CLIOptions.IdleTimeout (a hang): its process
//     group is killed and the attempt fails with ErrStreamStalled, retryable;
//   - the caller's ctx ends: the process group is killed at once
//     (SIGKILL), and the error keeps context.Canceled in its chain;
//   - the session to resume is gone (another host, a wiped directory): the
//     call runs again at once in a new session with the whole history.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Error types of the CLI backends (Error.Type).
const (
	// ErrorTypeNeedsAuth: the CLI is installed but not logged in.
	ErrorTypeNeedsAuth = "needs_auth"
	// ErrorTypeUnreachable: the CLI program cannot be run (not installed).
	ErrorTypeUnreachable = "unreachable"
)

// CLI defaults.
const (
	// DefaultCLIIdleTimeout is how long a CLI may print nothing. It is longer
	// than the HTTP backends' because a CLI prints nothing while one of its
	// own tools runs (a build, a test suite).
	DefaultCLIIdleTimeout = 10 * time.Minute
	// DefaultCLITimeout bounds one CLI call as a whole.
	DefaultCLITimeout = 30 * time.Minute
	// cliKillGrace is how long Wait waits for the output pipes after the
	// process group was killed.
	cliKillGrace = 2 * time.Second
	// stderrKeep is how much of the end of stderr an error quotes.
	stderrKeep = 4 << 10
)

// CLIOptions configure a CLI backend for one agent.
type CLIOptions struct {
	// Path is the program: "claude" or "codex" on PATH when empty
	// (SWITCHBOARD_CLAUDE_CODE_PATH, SWITCHBOARD_CODEX_PATH).
	Path string
	// Dir is the agent's private working directory; the CLI runs there
	// and its file tools work there. Required.
	Dir string
	// Env is the CLI's whole environment ("KEY=value"). The service's own
	// environment is never passed on whole: it holds the platform tokens
	// and the secret key, and the CLI runs shell commands a model chose.
	Env []string
	// Args are extra arguments put before the prompt (a permission mode,
	// allowed tools, a sandbox setting).
	Args []string
	// MCP, when set, is Switchboard's own MCP endpoint, given to the CLI
	// as an MCP server: the agents it may ask reach it as tools.
	MCP *CLIMCP
	// IdleTimeout kills a CLI that prints nothing for this long
	// (DefaultCLIIdleTimeout).
	IdleTimeout time.Duration
	// Timeout bounds one call (DefaultCLITimeout).
	Timeout time.Duration
}

// CLIMCP is an MCP server over streamable HTTP given to a CLI.
type CLIMCP struct {
	// Name is the server's name in the CLI ("switchboard"): Claude Code
	// calls its tools mcp__<Name>__<tool>.
	Name string
	URL  string
	// Token is sent as a bearer token. It reaches the CLI through the
	// environment variable TokenEnv, never on its command line.
	Token    string
	TokenEnv string
	// Exclude are tools the CLI must not call (the agent itself, so that it
	// does not ask itself in a loop).
	Exclude []string
}

func (o CLIOptions) withDefaults() CLIOptions {
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultCLIIdleTimeout
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultCLITimeout
	}
	if o.MCP != nil {
		m := *o.MCP
		if m.Name == "" {
			m.Name = "switchboard"
		}
		if m.TokenEnv == "" {
			m.TokenEnv = "SWITCHBOARD_MCP_TOKEN"
		}
		o.MCP = &m
	}
	return o
}

func (o CLIOptions) validate() error {
	switch {
	case o.IdleTimeout < 0:
		return fmt.Errorf("CLI.IdleTimeout must not be negative, got %s", o.IdleTimeout)
	case o.Timeout < 0:
		return fmt.Errorf("CLI.Timeout must not be negative, got %s", o.Timeout)
	case o.MCP != nil && !strings.HasPrefix(o.MCP.URL, "http://") && !strings.HasPrefix(o.MCP.URL, "https://"):
		return fmt.Errorf("CLI.MCP.URL must start with http:// or https://, got %q", o.MCP.URL)
	}
	return nil
}

// cliDialect is what differs between two CLIs: how a call is spelled and
// how its output reads.
type cliDialect interface {
	// program is the default program name.
	program() string
	// invocation is the arguments and stdin of one call. prompt is the
	// text to send; session, when not empty, is the session to resume.
	invocation(b *cliBackend, req *Request, prompt, session string) (args []string, stdin []byte, err error)
	// newParser reads one call's output; resumed is the session the call
	// resumes, or nil.
	newParser(b *cliBackend, emit func(Event), resumed *Session) cliParser
}

// cliParser reads a CLI's stdout, one JSON line at a time.
type cliParser interface {
	// line handles one line. A returned error ends the call.
	line(raw []byte) error
	// complete reports whether the final event (a result, a finished turn)
	// was read.
	complete() bool
	// finish is called when stdout ended and the process exited (err is
	// its exit error, or nil): it returns the response, or why there is
	// none.
	finish(exit error, stderr string) (*Response, error)
}

// cliBackend runs one agent's CLI.
type cliBackend struct {
	provider string
	model    string // "" for the CLI's default
	opts     CLIOptions
	dialect  cliDialect
	call     caller
}

func newCLI(spec Spec, o Options) (*cliBackend, error) {
	b := &cliBackend{provider: spec.Provider, opts: o.CLI}
	switch spec.Provider {
	case ProviderClaudeCode:
		b.dialect = claudeCode{}
	case ProviderCodex:
		b.dialect = codex{}
	default:
		return nil, fmt.Errorf("creating CLI backend: %q is not a CLI provider", spec.Provider)
	}
	if !strings.EqualFold(spec.Model, "default") {
		b.model = spec.Model
	}
	if b.opts.Path == "" {
		b.opts.Path = b.dialect.program()
	}
	if b.opts.Dir == "" {
		return nil, fmt.Errorf("creating %s backend: no working directory (CLI.Dir)", spec.Provider)
	}
	b.call = newCaller(spec.Provider, o, func(ctx context.Context, err error) *Error {
		return classifyTransport(ctx, spec.Provider, err)
	})
	return b, nil
}

func (b *cliBackend) Provider() string { return b.provider }

// errCLITimeout is the cause of a call cut off at CLIOptions.Timeout.
var errCLITimeout = errors.New("CLI call timed out")

// errSessionGone marks a call that failed because the session it resumed
// no longer exists; Generate runs it again in a new session.
var errSessionGone = errors.New("CLI session not found")

func (b *cliBackend) Generate(ctx context.Context, req *Request, emit func(Event)) (*Response, error) {
	var session *Session
	if s := req.Session; s != nil && s.Provider == b.provider && s.ID != "" && s.Seen <= len(req.Messages) {
		session = s
	}
	return b.call.do(ctx, emit, func(ctx context.Context, emit func(Event)) (*Response, error) {
		if session != nil {
			resp, err := b.once(ctx, req, cliPrompt(req, session.Seen), session, emit)
			if !errors.Is(err, errSessionGone) {
				return resp, err
			}
			b.call.log.WarnContext(ctx, "CLI session to resume is gone; starting a new one with the whole history",
				"provider", b.provider, "session", session.ID)
			// This attempt printed nothing people saw; the retry in a
			// new session is part of it.
			session = nil
		}
		return b.once(ctx, req, cliPrompt(req, 0), nil, emit)
	})
}

// once runs the CLI for one attempt, resuming session when it is not nil.
func (b *cliBackend) once(ctx context.Context, req *Request, prompt string, session *Session, emit func(Event)) (*Response, error) {
	id := ""
	if session != nil {
		id = session.ID
	}
	args, stdin, err := b.dialect.invocation(b, req, prompt, id)
	if err != nil {
		return nil, newError(b.provider, 0, false, "", fmt.Errorf("building the command: %w", err))
	}
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, b.opts.Timeout, errCLITimeout)
	defer cancel()

	// The process is not tied to ctx by exec.CommandContext: its Cancel
	// kills only the leader, and a CLI's children (a shell, a build) would
	// outlive it holding the pipes. killGroup kills them all.
	cmd := exec.Command(b.opts.Path, args...)
	cmd.Dir = b.opts.Dir
	if req.Dir != "" {
		cmd.Dir = req.Dir
	}
	cmd.Env = b.env()
	cmd.Stdin = bytes.NewReader(stdin)
	setProcessGroup(cmd)
	cmd.WaitDelay = cliKillGrace
	stderr := &tailBuffer{max: stderrKeep}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, newError(b.provider, 0, false, "", fmt.Errorf("opening stdout: %w", err))
	}
	if err := cmd.Start(); err != nil {
		return nil, b.startError(err)
	}
	var killOnce sync.Once
	kill := func() { killOnce.Do(func() { killGroup(cmd) }) }
	defer kill() // whatever happened, nothing of this call outlives it

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					readErr <- ctx.Err()
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr <- err
				}
				return
			}
		}
	}()

	p := b.dialect.newParser(b, emit, session)
	idle := time.NewTimer(b.opts.IdleTimeout)
	defer idle.Stop()
	var failed error
read:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				break read
			}
			idle.Reset(b.opts.IdleTimeout)
			if err := p.line(line); err != nil {
				failed = err
				break read
			}
		case <-idle.C:
			failed = fmt.Errorf("%w: %s printed nothing for %s", ErrStreamStalled, b.provider, b.opts.IdleTimeout)
			break read
		case <-ctx.Done():
			failed = context.Cause(ctx)
			break read
		}
	}
	waited := make(chan error, 1)
	if failed == nil {
		// stdout is closed; the process should be gone or going. One that
		// lingers is given the idle timeout, then killed.
		go func() { waited <- cmd.Wait() }()
		idle.Reset(b.opts.IdleTimeout) // since Go 1.23, Reset also drains
		select {
		case exit := <-waited:
			waited <- exit
		case <-idle.C:
			if !p.complete() {
				failed = fmt.Errorf("%w: %s closed its output but did not exit for %s", ErrStreamStalled, b.provider, b.opts.IdleTimeout)
				break
			}
			// It answered in full: the answer stands, the process goes.
			kill()
		case <-ctx.Done():
			failed = context.Cause(ctx)
		}
	} else {
		go func() { waited <- cmd.Wait() }()
	}
	if failed != nil {
		kill()
		<-waited
		switch {
		case parent.Err() != nil:
			return nil, parent.Err()
		case errors.Is(failed, errCLITimeout):
			// Not worth retrying: the next attempt would run as long.
			return nil, newError(b.provider, 0, false, fmt.Sprintf("%s ran longer than its %s limit and was stopped", b.provider, b.opts.Timeout), context.DeadlineExceeded)
		}
		return nil, failed
	}
	exit := <-waited
	select {
	case err := <-readErr:
		if exit == nil {
			exit = err
		}
	default:
	}
	return p.finish(exit, stderr.String())
}

// startError explains why the program could not be started.
func (b *cliBackend) startError(err error) *Error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		e := newError(b.provider, 0, false, fmt.Sprintf("the %s CLI is not installed here: cannot run %q (%v); install it (%s) or set %s",
			b.provider, b.opts.Path, err, installHint(b.provider), pathSetting(b.provider)), err)
		e.Type = ErrorTypeUnreachable
		return e
	}
	return newError(b.provider, 0, false, fmt.Sprintf("starting %s: %v", b.opts.Path, err), err)
}

// env is the CLI's environment, with the MCP token when there is one.
func (b *cliBackend) env() []string {
	env := append([]string(nil), b.opts.Env...)
	if m := b.opts.MCP; m != nil && m.Token != "" {
		env = append(env, m.TokenEnv+"="+m.Token)
	}
	return env
}

// crashed is the error of a CLI that ended before its final event.
func (b *cliBackend) crashed(exit error, stderr string) *Error {
	msg := b.provider + " exited before it finished"
	if exit != nil {
		msg += " (" + exit.Error() + ")"
	}
	if tail := lastLines(stderr, 5); tail != "" {
		msg += ": " + tail
	}
	return newError(b.provider, 0, true, msg, ErrStreamIncomplete)
}

// needsAuth is the error of a CLI that is not logged in; its message is
// meant for the people in the chat and the operator alike.
func (b *cliBackend) needsAuth(detail string) *Error {
	msg := fmt.Sprintf("the %s CLI on the Switchboard server is not logged in: %s", b.provider, loginHint(b.provider))
	if detail = strings.TrimSpace(detail); detail != "" {
		msg += " (it said: " + truncate(detail, 300) + ")"
	}
	e := newError(b.provider, 401, false, msg, errors.New(detail))
	e.Type = ErrorTypeNeedsAuth
	return e
}

func installHint(provider string) string {
	if provider == ProviderCodex {
		return "npm install -g @openai/codex"
	}
	return "npm install -g @anthropic-ai/claude-code"
}

func loginHint(provider string) string {
	if provider == ProviderCodex {
		return "run `codex login` (or `printenv OPENAI_API_KEY | codex login --with-api-key`) as the user Switchboard runs as"
	}
	return "run `claude auth login` as the user Switchboard runs as, or give it ANTHROPIC_API_KEY"
}

func pathSetting(provider string) string {
	if provider == ProviderCodex {
		return "SWITCHBOARD_CODEX_PATH"
	}
	return "SWITCHBOARD_CLAUDE_CODE_PATH"
}

// cliPrompt is the text sent to the CLI: the messages its session has not
// seen, then the per-turn block. A new session gets the whole history as a
// transcript, since the CLI cannot take it as messages.
func cliPrompt(req *Request, seen int) string {
	msgs := req.Messages[seen:]
	var b strings.Builder
	if len(msgs) > 1 || (len(msgs) == 1 && msgs[0].Role != RoleUser) {
		last := len(msgs) - 1
		if msgs[last].Role != RoleUser {
			last = len(msgs)
		}
		if last > 0 {
			if seen == 0 {
				b.WriteString("The conversation so far:\n\n")
			} else {
				b.WriteString("Since your last answer:\n\n")
			}
			for _, m := range msgs[:last] {
				writeMessage(&b, m, true)
			}
			msgs = msgs[last:]
			if len(msgs) > 0 {
				b.WriteString("The latest message:\n\n")
			}
		}
	}
	for _, m := range msgs {
		writeMessage(&b, m, false)
	}
	if t := strings.TrimSpace(req.Turn); t != "" {
		b.WriteString(t)
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String())
}

// writeMessage renders one message as text.
func writeMessage(b *strings.Builder, m Message, label bool) {
	var parts []string
	for _, p := range m.Parts {
		switch p.Kind {
		case PartText:
			if t := strings.TrimSpace(p.Text); t != "" {
				parts = append(parts, t)
			}
		case PartToolCall:
			parts = append(parts, fmt.Sprintf("(called the tool %s with %s)", p.ToolName, compactInput(p.Input)))
		case PartToolResult:
			what := "returned"
			if p.IsError {
				what = "failed"
			}
			parts = append(parts, fmt.Sprintf("(the tool %s: %s)", what, truncate(strings.TrimSpace(p.Output), 2000)))
		}
	}
	if len(parts) == 0 {
		return
	}
	if label {
		fmt.Fprintf(b, "%s: ", m.Role)
	}
	b.WriteString(strings.Join(parts, "\n"))
	b.WriteString("\n\n")
}

func compactInput(in json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, in) != nil {
		return truncate(string(in), 500)
	}
	return truncate(buf.String(), 500)
}

// systemText joins the system blocks for a CLI's system prompt option.
func systemText(req *Request) string {
	var parts []string
	for _, s := range req.System {
		if t := strings.TrimSpace(s.Text); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastLines is the last n non-empty lines of s, joined by " | ".
func lastLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return truncate(strings.Join(out, " | "), 1000)
}
