package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

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
