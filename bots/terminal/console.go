// Package terminal is the terminal chat: a person types, the agent answers
// through the same engine and store as every other platform, with the reply
// streamed as it is written and questions asked as numbered prompts.
package terminal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/deliver"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
)

// Conversations is what the terminal chat needs of core: the agents to
// chat with, a conversation to post into, what waits for an answer, the
// clicks that give it, and the log, its wake-ups and live events to print,
// and whether a turn is over. *core.Service implements it; tests can fake
// it.
type Conversations interface {
	Hub() *core.Hub
	Agents() *config.Config
	CreateConversation(ctx context.Context, agentName string, contextName tool.ContextName, starter string) (*core.Conversation, error)
	PostMessage(ctx context.Context, conv uuid.UUID, userID, text string) (int64, error)
	PendingCalls(ctx context.Context, conv uuid.UUID) ([]core.PendingCall, error)
	Act(ctx context.Context, a *core.Action) (*core.ActionResult, error)
	EntryWakeups(ctx context.Context, conv uuid.UUID) (<-chan struct{}, error)
	Cursor(conv uuid.UUID, after int64) *core.Cursor
	TurnsOver(ctx context.Context, conv uuid.UUID) (bool, error)
}

var _ Conversations = (*core.Service)(nil)

// Options configures a chat session.
type Options struct {
	// Service runs the chat's conversation; required.
	Service Conversations
	Agent   string // "" for the default agent
	User    string // who is typing
	In      io.Reader
	Out     io.Writer
	// FileDir is where charts and other files are saved (default: a temp dir).
	FileDir string
	// PollInterval bounds how long the chat waits for a turn run by another
	// instance's worker when a wake-up is lost (default 1s). Turns run here
	// are followed live and never wait for it.
	PollInterval time.Duration
	// CommandFunc, when set, answers a line that starts with "!" (`!remind
	// in 2h -- …`, `!login`) as the platforms' typed commands are, in a
	// chat only the person at the terminal reads; nil: such a line goes to
	// the agent like any other.
	CommandFunc core.CommandFunc
}

// TerminalPlatform names the terminal as a platform to the commands.
const TerminalPlatform = "terminal"

// Run chats until the input ends (Ctrl-D, nil) or ctx is cancelled. A
// worker must be running on the same store for turns to happen: in this
// process, whose turns are streamed word by word, or in another instance,
// whose replies show whole as they are stored.
func Run(ctx context.Context, opts Options) error {
	if opts.Service == nil || opts.In == nil || opts.Out == nil {
		return errors.New("console: Service, In and Out are required")
	}
	if opts.User == "" {
		opts.User = "you"
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	svc := opts.Service
	ag := svc.Agents().Default()
	if opts.Agent != "" {
		a, ok := svc.Agents().Find(opts.Agent)
		if !ok {
			return fmt.Errorf("no agent named %q", opts.Agent)
		}
		ag = a
	}
	out := opts.Out
	if core.IsDemo(ag) {
		fmt.Fprintf(out, "Chatting with %s on the offline demo model (scripted replies, not a real model). Set ANTHROPIC_API_KEY or OPENAI_API_KEY to use a real one. Ctrl-D quits.\n", ag.Name)
	} else {
		fmt.Fprintf(out, "Chatting with %s (%s). Ctrl-D quits.\n", ag.Name, ag.Model)
	}
	conv, err := svc.CreateConversation(ctx, ag.Name, tool.ContextTerminal, opts.User)
	if err != nil {
		return fmt.Errorf("starting the chat: %w", err)
	}
	// Live events (deltas, statuses) exist only in the process running the
	// turn; with a shared Postgres that may be another instance. What the
	// chat prints comes from the log, so a turn run anywhere shows in full,
	// and is streamed when it runs here.
	events, unsubscribe := svc.Hub().Subscribe(conv.ID, 4096)
	defer unsubscribe()
	wakeCtx, stopWake := context.WithCancel(ctx)
	defer stopWake()
	wake, err := svc.EntryWakeups(wakeCtx, conv.ID)
	if err != nil {
		return fmt.Errorf("following the conversation: %w", err)
	}

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(opts.In)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	s := &session{opts: opts, svc: svc, conv: conv.ID, events: events, wake: wake, lines: lines, out: out, cur: svc.Cursor(conv.ID, 0)}
	for {
		fmt.Fprint(out, "\n> ")
		line, ok := s.read(ctx)
		if !ok {
			fmt.Fprintln(out)
			return nil
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if text, ok := strings.CutPrefix(strings.TrimSpace(line), core.CommandPrefix); ok && opts.CommandFunc != nil {
			in := &core.Inbound{Platform: TerminalPlatform, UserID: opts.User, UserName: opts.User, Text: line, IsDM: true, Mentioned: true}
			reply, err := opts.CommandFunc(ctx, in, &core.Command{Text: strings.TrimSpace(text), ConversationID: conv.ID, Private: true})
			if err != nil {
				reply = "⚠️ That command failed: " + err.Error()
			}
			fmt.Fprintln(out, reply)
			continue
		}
		seq, err := svc.PostMessage(ctx, conv.ID, opts.User, line)
		if err != nil {
			return fmt.Errorf("sending your message: %w", err)
		}
		// The message is on screen already (typed); show what follows it.
		s.cur.SkipTo(seq)
		if err := s.follow(ctx); err != nil {
			return err
		}
	}
}

type session struct {
	opts   Options
	svc    Conversations
	conv   uuid.UUID
	events <-chan core.Event
	wake   <-chan struct{}
	lines  <-chan string
	out    io.Writer

	cur        *core.Cursor // what of the log is shown
	streamed   bool         // the reply being written was streamed as deltas
	lastStatus string       // the status line printed last, to print each once
	localTurn  bool         // a turn of this process runs: follow its events
}

func (s *session) read(ctx context.Context) (string, bool) {
	select {
	case l, ok := <-s.lines:
		return l, ok
	case <-ctx.Done():
		return "", false
	}
}

// follow prints the turn as it happens until it ends with nothing waiting
// for the person at the keyboard.
//
// A turn run in this process is followed through its live events, in the
// order it published them: deltas, then the entry they add up to (read from
// the log when its event arrives), so a streamed reply is printed once.
// Reading the log on any other signal while such a turn runs could print an
// entry ahead of its deltas. A turn run by another instance publishes
// nothing here: its entries are read from the log on wake-ups and polls, and
// its end is seen in the store.
func (s *session) follow(ctx context.Context) error {
	s.streamed, s.lastStatus = false, ""
	poll := time.NewTicker(s.opts.PollInterval)
	defer poll.Stop()
	for {
		ended := false
		var err error
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-s.events:
			if !ok {
				return errors.New("the live event feed closed")
			}
			ended, err = s.live(ctx, ev)
		case _, ok := <-s.wake:
			if !ok {
				return errors.New("the store stopped sending wake-ups")
			}
			// A turn here published its turn_start before it wrote anything
			// that wakes us: handle what is queued first.
			if ended, err = s.drain(ctx); err == nil && !ended && !s.localTurn {
				_, err = s.catchUp(ctx, 0)
			}
		case <-poll.C:
			ended, err = s.pollEnd(ctx)
		}
		if err != nil {
			return err
		}
		if !ended {
			continue
		}
		fmt.Fprintln(s.out)
		asked, err := s.askPending(ctx)
		if err != nil || !asked {
			return err
		}
		s.streamed, s.lastStatus = false, ""
	}
}

// pollEnd is the safety net for lost wake-ups and events: it reports the
// turn over once the store says so, after printing all it left.
func (s *session) pollEnd(ctx context.Context) (bool, error) {
	// No turn runs or waits to run in the conversation: how a turn run by
	// another instance is seen to end.
	over, err := s.svc.TurnsOver(ctx, s.conv)
	if err != nil || !over {
		return false, err
	}
	// A turn run here published its last events before its work item
	// completed: handle them in order (its turn_end included, so that it
	// cannot end the next turn early), then whatever the log holds beyond.
	if _, err := s.drain(ctx); err != nil {
		return false, err
	}
	s.localTurn = false
	return s.catchUp(ctx, 0)
}

// drain handles the live events already queued and reports whether one
// ended the turn.
func (s *session) drain(ctx context.Context) (bool, error) {
	ended := false
	for {
		select {
		case ev := <-s.events:
			e, err := s.live(ctx, ev)
			if err != nil {
				return ended, err
			}
			ended = ended || e
		default:
			return ended, nil
		}
	}
}

// live prints a live event and reports whether it ends the turn.
func (s *session) live(ctx context.Context, ev core.Event) (bool, error) {
	switch ev.Kind {
	case core.EventTurnStart:
		s.localTurn = true
	case core.EventDelta:
		s.localTurn = true
		if !s.streamed {
			fmt.Fprintf(s.out, "\n%s: ", ev.Agent)
			s.streamed = true
		}
		s.lastStatus = ""
		fmt.Fprint(s.out, ev.Text)
	case core.EventRestart:
		s.localTurn = true
		fmt.Fprint(s.out, "\n(retrying…)\n")
		s.streamed, s.lastStatus = false, ""
	case core.EventStatus:
		s.localTurn = true
		// A call is announced while the model writes it and again as it
		// runs: one line is enough.
		if strings.HasPrefix(ev.Text, "is running") && ev.Text != s.lastStatus {
			fmt.Fprintf(s.out, "\n[%s %s]", ev.Agent, ev.Text)
			s.lastStatus = ev.Text
		}
	case core.EventEntry:
		// Print the log up to this entry, not past it: a later entry's
		// deltas may still be queued behind this event.
		_, err := s.catchUp(ctx, core.EntryBound(ev.Entry))
		return false, err
	case core.EventTurnEnd:
		s.localTurn = false
		_, err := s.catchUp(ctx, 0)
		return true, err
	}
	return false, nil
}

// catchUp prints the entries past the cursor, up to the seq upTo, and
// reports whether it did.
//
// upTo 0 reads the whole log, for a signal other than this process's live
// events. If live events were queued while it read, it prints nothing more
// and reports false: a turn of this process may have written entries whose
// deltas are among them, and those events bring the entries, in order. The
// log is read a page at a time (core.CursorPage), each printed before the
// next is read.
func (s *session) catchUp(ctx context.Context, upTo int64) (bool, error) {
	for {
		list, last, err := s.cur.FetchPage(ctx, upTo)
		if err != nil {
			return false, fmt.Errorf("reading the conversation: %w", err)
		}
		if upTo == 0 && len(s.events) > 0 {
			return false, nil
		}
		for _, e := range s.cur.Advance(list) {
			if err := s.show(e); err != nil {
				return false, err
			}
		}
		if last {
			return true, nil
		}
	}
}

func (s *session) show(e *core.Entry) error {
	agentName := s.svc.Agents().Default().Name
	if name, ok := e.Author.Agent(); ok {
		agentName = name
	}
	switch e.Kind {
	case core.EntryAssistant:
		c, err := core.Decode[core.AssistantContent](e)
		if err != nil {
			return err
		}
		if !s.streamed && c.Text != "" {
			if c.Agent != "" {
				agentName = c.Agent
			}
			fmt.Fprintf(s.out, "\n%s: %s", agentName, c.Text)
			s.lastStatus = ""
		}
		s.streamed = false
	case core.EntryToolResult:
		c, err := core.Decode[core.ToolResultContent](e)
		if err != nil {
			return err
		}
		for _, a := range c.Attachments {
			path, err := s.save(a)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "\n[%s saved to %s]", a.Name, path)
		}
	case core.EntryCard:
		c, err := core.Decode[core.CardContent](e)
		if err != nil {
			return err
		}
		var st cards.Stamped
		if err := json.Unmarshal(c.Card, &st); err != nil {
			return fmt.Errorf("decoding card: %w", err)
		}
		// The terminal has no forms: their questions are asked in text.
		fmt.Fprintf(s.out, "\n%s\n", st.WithoutForms().PlainText())
	case core.EntryError:
		c, err := core.Decode[core.ErrorContent](e)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "\n[error] %s\n", c.Message)
	}
	return nil
}

func (s *session) save(a core.Attachment) (string, error) {
	dir := s.opts.FileDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "switchboard-chat")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	name := filepath.Base(a.Name)
	if name == "." || name == "/" || name == "" {
		name = "file"
	}
	path := filepath.Join(dir, uuid.NewString()[:8]+"-"+name)
	if err := os.WriteFile(path, a.Data, 0o644); err != nil {
		return "", fmt.Errorf("saving %s: %w", name, err)
	}
	return path, nil
}

// askPending asks the person each question or approval the turn left
// waiting, as a numbered prompt, and reports whether it answered any (then a
// new turn follows).
func (s *session) askPending(ctx context.Context) (bool, error) {
	pending, err := s.svc.PendingCalls(ctx, s.conv)
	if err != nil {
		return false, err
	}
	answered := false
	for _, p := range pending {
		if p.WaitingFor != core.WaitingForPerson || p.Approval == nil {
			continue
		}
		msg, err := deliver.PromptMessage(p.Approval)
		if err != nil {
			return false, err
		}
		// The prompt is written for chat platforms; a terminal shows no
		// markdown.
		fmt.Fprintf(s.out, "\n%s\n", strings.NewReplacer("**", "", "`", "").Replace(msg.Text))
		for i, b := range msg.Buttons {
			fmt.Fprintf(s.out, "  %d) %s\n", i+1, b.Label)
		}
		for {
			fmt.Fprintf(s.out, "choose 1-%d: ", len(msg.Buttons))
			line, ok := s.read(ctx)
			if !ok {
				return false, nil
			}
			n, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || n < 1 || n > len(msg.Buttons) {
				fmt.Fprintln(s.out, "please type one of the numbers")
				continue
			}
			b := msg.Buttons[n-1]
			res, err := s.svc.Act(ctx, &core.Action{Platform: "terminal", ActionID: b.ActionID, Value: b.Value, UserID: s.opts.User, UserName: s.opts.User})
			if err != nil {
				return false, err
			}
			switch {
			case res.Refused:
				fmt.Fprintln(s.out, res.Reason)
			case res.Duplicate:
				// Decided elsewhere meanwhile: whatever that caused is in the log.
				fmt.Fprintln(s.out, "(already answered)")
				answered = true
			default:
				answered = true
			}
			break
		}
	}
	return answered, nil
}
