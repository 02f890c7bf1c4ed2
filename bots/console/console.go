// Package console is the terminal chat: a person types, the agent answers
// through the same engine and store as every other platform, with the reply
// streamed as it is written and questions asked as numbered prompts.
package console

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

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/store"
)

// Options configures a chat session.
type Options struct {
	Service *core.Service
	Agent   string // "" for the default agent
	User    string // who is typing
	In      io.Reader
	Out     io.Writer
	// FileDir is where charts and other files are saved (default: a temp dir).
	FileDir string
}

// Run chats until the input ends or ctx is cancelled. A worker must be
// running on the same service for turns to happen.
func Run(ctx context.Context, opts Options) error {
	if opts.Service == nil || opts.In == nil || opts.Out == nil {
		return errors.New("console: Service, In and Out are required")
	}
	if opts.User == "" {
		opts.User = "you"
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
	conv, err := svc.CreateConversation(ctx, ag.Name, "terminal", opts.User)
	if err != nil {
		return err
	}
	events, unsubscribe := svc.Hub().Subscribe(conv.ID, 4096)
	defer unsubscribe()

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
	s := &session{opts: opts, svc: svc, conv: conv.ID, events: events, lines: lines, out: out}
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
		if _, err := svc.PostMessage(ctx, conv.ID, opts.User, line); err != nil {
			return err
		}
		if err := s.follow(ctx); err != nil {
			return err
		}
	}
}

type session struct {
	opts   Options
	svc    *core.Service
	conv   uuid.UUID
	events <-chan core.Event
	lines  <-chan string
	out    io.Writer
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
func (s *session) follow(ctx context.Context) error {
	streamed := false
	for {
		var ev core.Event
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev = <-s.events:
		}
		switch ev.Kind {
		case core.EventDelta:
			if !streamed {
				fmt.Fprintf(s.out, "\n%s: ", ev.Agent)
				streamed = true
			}
			fmt.Fprint(s.out, ev.Text)
		case core.EventRestart:
			fmt.Fprint(s.out, "\n(retrying…)\n")
			streamed = false
		case core.EventStatus:
			if strings.HasPrefix(ev.Text, "is running") {
				fmt.Fprintf(s.out, "\n[%s %s]", ev.Agent, ev.Text)
			}
		case core.EventEntry:
			if err := s.show(ev, &streamed); err != nil {
				return err
			}
		case core.EventTurnEnd:
			fmt.Fprintln(s.out)
			asked, err := s.askPending(ctx)
			if err != nil || !asked {
				return err
			}
			streamed = false
		}
	}
}

func (s *session) show(ev core.Event, streamed *bool) error {
	e := ev.Entry
	switch e.Kind {
	case store.EntryAssistant:
		if !*streamed {
			c, err := core.Decode[core.AssistantContent](e)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "\n%s: %s", ev.Agent, c.Text)
		}
		*streamed = false
	case store.EntryToolResult:
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
	case store.EntryCard:
		c, err := core.Decode[core.CardContent](e)
		if err != nil {
			return err
		}
		var st cards.Stamped
		if err := json.Unmarshal(c.Card, &st); err != nil {
			return fmt.Errorf("decoding card: %w", err)
		}
		fmt.Fprintf(s.out, "\n%s\n", st.PlainText())
	case store.EntryError:
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
		if p.WaitingFor != "person" {
			continue
		}
		ap, err := s.svc.Store().ApprovalFindByCall(ctx, s.conv, p.CallID)
		if err != nil {
			return false, err
		}
		if ap.Status != store.ApprovalPending {
			continue
		}
		msg, err := bots.PromptMessage(ap)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(s.out, "\n%s\n", msg.Text)
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
			if res.Refused {
				fmt.Fprintln(s.out, res.Reason)
			}
			answered = true
			break
		}
	}
	return answered, nil
}
