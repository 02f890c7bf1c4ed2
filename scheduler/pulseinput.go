package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// A checklist item with a tool watches what a read-only tool returns: any
// tool of the registry declared low risk, built in or from an MCP server
// (github__list_pull_requests, gmail__search). The pulse calls it with the
// item's args on the agent's behalf, outside any conversation, and hashes
// its output like any input: unchanged output, no model call. Only low
// risk is allowed because nobody is there to confirm a call, and a pulse
// must never change anything to find out whether something changed.

// toolInput runs the item's tool and returns its output as the input's
// content. A failing call is content too ("the tool failed: ..."), so the
// same failure again does not call the model again.
func (s *Scheduler) toolInput(ctx context.Context, sc *store.Schedule, it ChecklistItem) (string, error) {
	if s.opts.Registry == nil {
		return "", fmt.Errorf("tool %s: this scheduler has no tool registry", it.Tool)
	}
	tl, ok := s.opts.Registry.Get(it.Tool)
	if !ok {
		// An MCP server that is down withdraws its tools: the pulse fails
		// and the next one tries again, rather than hashing an absence.
		return "", fmt.Errorf("tool %s is not available (unknown, or its MCP server is disconnected)", it.Tool)
	}
	if tl.Risk() != tool.RiskLow {
		return "", fmt.Errorf("tool %s is declared %s risk: a pulse only reads, through low-risk tools (set its risk to low in mcp-servers.json if it only reads)", it.Tool, tl.Risk())
	}
	if tl.Tier() != tool.TierServer {
		return "", fmt.Errorf("tool %s needs a live client; a pulse has none", it.Tool)
	}
	if !tl.Audience().Allows(sc.Agent, sc.Place.Workspace, "") {
		return "", fmt.Errorf("tool %s is not offered to agent %s", it.Tool, sc.Agent)
	}
	args, err := json.Marshal(it.Args)
	if err != nil {
		return "", fmt.Errorf("encoding the args of tool %s: %w", it.Tool, err)
	}
	if it.Args == nil {
		args = []byte("{}")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res := tl.Call(ctx, &tool.Request{CallID: "pulse_" + sc.ID.String(), Agent: sc.Agent, Context: tool.ContextScheduler, Starter: sc.Owner}, args)
	switch {
	case res.Pause != nil:
		return "", fmt.Errorf("tool %s paused for %s; a pulse cannot wait", it.Tool, res.Pause.Kind)
	case res.IsError:
		return "the tool failed: " + string(res.Output), nil
	}
	return string(res.Output), nil
}

// approvalsInput is the built-in source "approvals": the agent's calls
// that wait for a person's decision, one line each.
func (s *Scheduler) approvalsInput(ctx context.Context, in InputRequest) (string, error) {
	rows, err := s.st.AuditList(ctx, &store.AuditListParams{
		Agent: in.Schedule.Agent, Outcome: store.AuditPending, Decision: string(tool.DecisionConfirm), Limit: store.MaxAuditLimit,
	})
	if err != nil {
		return "", fmt.Errorf("listing the open approvals of %s: %w", in.Schedule.Agent, err)
	}
	if len(rows) == 0 {
		return "no approvals wait for a person", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d approvals wait for a person:\n", len(rows))
	for _, r := range rows {
		conv := "-"
		if r.ConversationID != nil {
			conv = r.ConversationID.String()
		}
		fmt.Fprintf(&b, "- %s (risk %s) asked %s in conversation %s\n", r.Action, r.Risk, r.CreatedAt.In(in.Location).Format("2006-01-02 15:04"), conv)
	}
	return b.String(), nil
}

// channelMessages is how many of its channel's newest messages the
// "channel" source shows when the item's arg does not say.
const channelMessages = 20

// channelInput is the built-in source "channel": the newest messages
// (people's and agents', every thread) of the channel the pulse belongs
// to, oldest first, `arg` of them (default 20). It is a function of the
// channel alone, so it changes exactly when someone writes there: a quiet
// channel costs no model call, a new message one.
func (s *Scheduler) channelInput(ctx context.Context, in InputRequest) (string, error) {
	place := in.Schedule.Place
	if place.Channel == "" {
		return "", fmt.Errorf("source channel: pulse %s has no channel (it was made in a DM); give it one", in.Schedule.Name)
	}
	limit := channelMessages
	if a := strings.TrimSpace(in.Item.Arg); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 || n > 200 {
			return "", fmt.Errorf("source channel: arg %q is not a number of messages between 1 and 200", a)
		}
		limit = n
	}
	rows, err := s.st.EntryListInChannel(ctx, &store.EntryListInChannelParams{Place: place, Limit: limit})
	if err != nil {
		return "", fmt.Errorf("reading channel %s: %w", place.Channel, err)
	}
	if len(rows) == 0 {
		return fmt.Sprintf("no messages in channel %s", place.Channel), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the newest %d messages in channel %s, oldest first:\n", len(rows), place.Channel)
	for i := len(rows) - 1; i >= 0; i-- {
		e := rows[i]
		who, text := string(e.Author), ""
		switch e.Kind {
		case store.EntryUser:
			if c, err := core.Decode[core.UserContent](e); err == nil {
				text = c.Text
				if c.UserName != "" {
					who = c.UserName
				}
			}
		case store.EntryAssistant:
			if c, err := core.Decode[core.AssistantContent](e); err == nil {
				text = c.Text
				if c.Agent != "" {
					who = "agent " + c.Agent
				}
			}
		}
		fmt.Fprintf(&b, "- %s %s: %s\n", e.CreatedAt.In(in.Location).Format("2006-01-02 15:04"), who, strings.ReplaceAll(text, "\n", " "))
	}
	return b.String(), nil
}
