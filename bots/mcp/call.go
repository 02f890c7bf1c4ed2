package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
)

// call runs one agent tool call: a conversation of its own, the message,
// progress while the turn runs, and its outcome as the result.
func (s *Server) call(ctx context.Context, req *mcp.CallToolRequest, agentName string) (*mcp.CallToolResult, error) {
	var in callInput
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return errorResult("arguments must be {\"message\": \"...\"}: " + err.Error()), nil
	}
	if strings.TrimSpace(in.Message) == "" {
		return errorResult("message is empty: say what you want the agent to do"), nil
	}
	var p *web.Principal
	if req.Extra != nil {
		p = principal(req.Extra.TokenInfo)
	} else {
		p = principal(nil)
	}
	// The session was built for this principal, but rights change: check
	// again at every call.
	allowed, err := s.agentsFor(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("checking which agents %s may use: %w", p.Name(), err)
	}
	if !slices.Contains(allowed, agentName) {
		return errorResult(fmt.Sprintf("%s may not use agent %s", p.Name(), agentName)), nil
	}
	ws, err := s.opts.Auth.WorkspaceFor(ctx, p, in.Workspace)
	if err != nil {
		return errorResult("workspace: " + err.Error()), nil
	}
	conv, err := s.opts.Service.CreateConversationWith(ctx, &core.CreateConversationParams{
		Agent: agentName, Context: tool.ContextMCP, Starter: p.Name(), WorkspaceID: ws,
	})
	if err != nil {
		return nil, fmt.Errorf("opening a conversation with %s: %w", agentName, err)
	}
	// Subscribed before the message is posted: no event of the turn is
	// missed.
	events, unsubscribe := s.opts.Service.Hub().Subscribe(conv.ID, 256)
	defer unsubscribe()
	seq, err := s.opts.Service.PostMessage(ctx, conv.ID, p.Name(), in.Message)
	if err != nil {
		return nil, fmt.Errorf("posting to %s: %w", agentName, err)
	}
	log := s.log.With("conversation_id", conv.ID, "agent", agentName, "principal", p.Name())
	log.InfoContext(ctx, "MCP call started a turn")

	pr := &progress{s: s, req: req, token: req.Params.GetProgressToken()}
	poll := time.NewTicker(s.opts.PollInterval)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			log.InfoContext(ctx, "MCP call cancelled; interrupting its turn")
			go s.interrupt(conv.ID, p.Name())
			return nil, ctx.Err()
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			pr.event(ctx, ev)
			if ev.Kind != core.EventTurnEnd {
				continue
			}
		case <-poll.C:
		}
		res, done, err := s.outcome(ctx, conv.ID, seq)
		if err != nil {
			return nil, err
		}
		if done {
			// What the turn streamed and this loop has not read yet.
			for drained := false; !drained; {
				select {
				case ev, ok := <-events:
					if !ok {
						drained = true
					} else {
						pr.event(ctx, ev)
					}
				default:
					drained = true
				}
			}
			pr.flush(ctx)
			log.InfoContext(ctx, "MCP call answered")
			return res, nil
		}
	}
}

// interrupt cuts off the turn of a cancelled call: here when it runs here,
// else through a stop request that the instance running it acts on (the
// stop button's path). A turn not claimed yet is waited for a little, so
// that a cancel that came first still stops it.
func (s *Server) interrupt(conv uuid.UUID, who string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if s.opts.InterruptFunc(conv) > 0 {
			return
		}
		turns, err := s.opts.Service.TurnQueue(ctx, conv)
		if err != nil || turns.Empty() {
			return
		}
		if s.opts.StopFunc != nil && turns.Running {
			// Claimed, and not here (or not yet registered here: the stop
			// entry reaches it on its next heartbeat all the same).
			if _, err := s.opts.StopFunc(ctx, conv, who+" (MCP call cancelled)"); err != nil {
				s.log.Warn("asking another instance to stop a cancelled MCP call's turn", "conversation_id", conv, "error", err)
			}
			return
		}
		select {
		case <-ctx.Done():
			s.log.Warn("a cancelled MCP call's turn did not start in time; it runs to its end", "conversation_id", conv)
			return
		case <-t.C:
		}
	}
}

// outcome reads the store: done once no turn of the conversation waits or
// runs; then the result is the last answer after the message at seq, or an
// approval pause.
func (s *Server) outcome(ctx context.Context, conv uuid.UUID, seq int64) (*mcp.CallToolResult, bool, error) {
	turns, err := s.opts.Service.TurnQueue(ctx, conv)
	if err != nil {
		return nil, false, fmt.Errorf("checking the turn of %s: %w", conv, err)
	}
	if !turns.Empty() {
		return nil, false, nil
	}
	pending, err := s.opts.Service.PendingCalls(ctx, conv)
	if err != nil {
		return nil, false, err
	}
	if i := slices.IndexFunc(pending, func(p core.PendingCall) bool { return p.WaitingFor == core.WaitingForPerson }); i >= 0 {
		return s.paused(conv, pending[i]), true, nil
	}
	a, err := s.opts.Service.AnswerAfter(ctx, conv, seq)
	if err != nil {
		return nil, false, err
	}
	return answer(a, conv), true, nil
}

// answer is the agent's last word: a card (with structuredContent) or its
// text; the error people were shown when the turn failed.
func answer(a *core.Answer, conv uuid.UUID) *mcp.CallToolResult {
	meta := mcp.Meta{"switchboard/conversation_id": conv.String()}
	if len(a.Texts) == 0 && a.Card == nil {
		r := errorResult(cmpOr(a.Failure, "the agent ended its turn without an answer"))
		r.Meta = meta
		return r
	}
	res := &mcp.CallToolResult{Meta: meta}
	text := strings.Join(a.Texts, "\n\n")
	if a.Card != nil {
		res.StructuredContent = a.Card
		if text == "" {
			text = string(a.Card)
		}
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	return res
}

// paused is the result of a turn waiting for a person's approval: what
// waits, and where to decide it: the approvals API (POST
// /api/approvals/{id}, open to whoever may decide it: the caller that
// asked, the operator) besides the platforms that show the prompt.
func (s *Server) paused(conv uuid.UUID, p core.PendingCall) *mcp.CallToolResult {
	base := strings.TrimSuffix(s.opts.PublicURL, "/")
	meta := mcp.Meta{"switchboard/conversation_id": conv.String(), "switchboard/waiting_for": "approval", "switchboard/tool": p.Name}
	where := "where the conversation's approvals are delivered (the approvers of switchboard.yaml)"
	if ap := p.Approval; ap != nil {
		decide := fmt.Sprintf("%s/api/approvals/%s", base, ap.ID)
		where = fmt.Sprintf("approval %s, open until %s; decide it with POST %s and {\"choice\": \"approve\"} or {\"choice\": \"deny\"}",
			ap.ID, ap.ExpiresAt.UTC().Format(time.RFC3339), decide)
		meta["switchboard/approval_id"] = ap.ID.String()
		meta["switchboard/decide_url"] = decide
	}
	url := fmt.Sprintf("%s/api/conversations/%s", base, conv)
	text := fmt.Sprintf("The agent paused: its call of %s waits for a person's approval (%s). "+
		"Once a person decides, the agent goes on in conversation %s (%s); call again to ask for the outcome.", p.Name, where, conv, url)
	return &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// progress sends the turn's status lines and text as progress
// notifications, at most one per ProgressInterval.
type progress struct {
	s     *Server
	req   *mcp.CallToolRequest
	token any

	n       float64
	status  string
	text    strings.Builder
	last    time.Time
	pending bool
}

func (p *progress) event(ctx context.Context, ev core.Event) {
	if p.token == nil {
		return
	}
	switch ev.Kind {
	case core.EventStatus:
		p.status = ev.Text
	case core.EventDelta:
		p.text.WriteString(ev.Text)
	case core.EventRestart:
		p.text.Reset()
	case core.EventEntry:
		if ev.Entry != nil && ev.Entry.Kind == core.EntryToolCall {
			if c, err := core.Decode[core.ToolCallContent](ev.Entry); err == nil {
				p.status = "running " + c.Name
			}
		}
	default:
		return
	}
	p.pending = true
	if time.Since(p.last) >= p.s.opts.ProgressInterval {
		p.flush(ctx)
	}
}

// flush sends what changed since the last notification.
func (p *progress) flush(ctx context.Context) {
	if p.token == nil || !p.pending {
		return
	}
	p.pending, p.last = false, time.Now()
	p.n++
	msg := p.status
	if t := p.text.String(); t != "" {
		if r := []rune(t); len(r) > 500 {
			t = "…" + string(r[len(r)-500:])
		}
		if msg != "" {
			msg += ": "
		}
		msg += t
	}
	if err := p.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg}); err != nil && !errors.Is(err, context.Canceled) {
		p.s.log.DebugContext(ctx, "sending MCP progress", "error", err)
	}
}
