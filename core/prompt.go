package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// StablePartFunc adds a section to an agent's stable prompt block: its
// personality, the conversation's rulebook, an index of its skills. It is
// called once per turn, and the sections follow the house rules in the order
// Options.StableParts lists them; an empty string adds nothing. What it
// returns must stay byte-identical from turn to turn until what it describes
// changes, or the prompt cache misses from there on.
type StablePartFunc func(ctx context.Context, conv *store.Conversation, a *config.Agent) (string, error)

// stableParts is the conversation's rulebook, then the StableParts, for
// one turn.
// The rulebook and side thread are the turn's context's (tc), read with
// the conversation before the model.
func (s *Service) stableParts(ctx context.Context, tc *store.TurnContext, a *config.Agent) ([]string, error) {
	var out []string
	conv := tc.Conversation
	if rules := rulebookPart(tc.Rulebook); rules != "" {
		out = append(out, rules)
	}
	if side := s.sideThreadPart(tc.SideThread, tc.Bindings, a.Name); side != "" {
		out = append(out, side)
	}
	for i, f := range s.opts.StableParts {
		text, err := f(ctx, conv, a)
		if err != nil {
			return nil, fmt.Errorf("building stable prompt part %d: %w", i, err)
		}
		if text = strings.TrimSpace(text); text != "" {
			out = append(out, text)
		}
	}
	return out, nil
}

// stableBlock is the part of the prompt that stays byte-identical from turn
// to turn, so the provider's prompt cache hits: persona (the personality
// document) and house rules, then the conversation's rulebook and the parts
// other features add (see StablePartFunc); the skill index is appended at
// its end (withSkillIndex). The tool schemas,
// sent before it in a stable order, belong to the same cached prefix.
// Nothing here may depend on time, the speaker or the log.
func stableBlock(a *config.Agent, contextName tool.ContextName, parts []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your name is %s.\n\n%s\n\n", a.Name, strings.TrimSpace(a.Persona))
	b.WriteString("How you work:\n")
	b.WriteString("- You are talking in a shared chat; several people may speak. User messages start with the speaker's name in brackets.\n")
	b.WriteString("- Write Markdown. Keep answers short unless asked for detail.\n")
	b.WriteString("- When a tool can answer, call it rather than guessing. When you need a choice from a person, use ask_user.\n")
	b.WriteString("- A structured set of results (hotels, flights, quotes, a briefing) goes out with post_result, not as prose.\n")
	fmt.Fprintf(&b, "- You are reached through %s.\n", contextName)
	for _, p := range parts {
		b.WriteString("\n")
		b.WriteString(p)
		b.WriteString("\n")
	}
	return b.String()
}

// summaryBlock introduces the latest summary to the model.
func summaryBlock(s *SummaryContent) string {
	return fmt.Sprintf("Summary of this conversation before the messages below (messages 1 to %d, which you no longer see one by one):\n\n%s",
		s.ThroughSeq, strings.TrimSpace(s.Text))
}

// turnBlock changes every turn: the time and who is speaking. It is sent
// after the history (model.Request.Turn), and the time is to the minute, so
// the steps of one turn usually send it unchanged too.
func turnBlock(now time.Time, speaker string) string {
	s := "Current time: " + now.UTC().Truncate(time.Minute).Format("Mon, 02 Jan 2006 15:04 MST") + "."
	if speaker != "" {
		s += " The latest message is from " + speaker + "."
	}
	return s
}

// buildRequest turns the log into a model request. Tool results are placed
// right after the assistant message that made the calls, wherever they sit
// in the log (a person may have spoken between a call and its result), as
// every provider requires.
//
// names holds the display names of the people speaking (see
// Directory.speakerNames): a person's message is shown under their name,
// never their platform id.
func buildRequest(a *config.Agent, contextName tool.ContextName, stable []string, tools []*tool.Tool, summary *SummaryContent, entries []*store.Entry, names map[store.Identity]string, now time.Time) (*model.Request, error) {
	spec, err := model.ParseSpec(a.Model)
	if err != nil {
		return nil, err
	}
	req := &model.Request{
		Model:       spec.Model,
		MaxTokens:   a.MaxTokens,
		Temperature: a.Temperature,
		Thinking:    a.Thinking,
	}
	for _, t := range tools {
		req.Tools = append(req.Tools, model.Tool{Name: t.Name(), Description: t.Description(), InputSchema: t.Schema()})
	}

	results := map[string]*store.Entry{}
	for _, e := range entries {
		if e.Kind == store.EntryToolResult {
			c, err := Decode[ToolResultContent](e)
			if err != nil {
				return nil, err
			}
			results[c.CallID] = e
		}
	}
	var msgs []model.Message
	add := func(role model.Role, p model.Part) {
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Parts = append(msgs[n-1].Parts, p)
			return
		}
		msgs = append(msgs, model.Message{Role: role, Parts: []model.Part{p}})
	}
	var speaker, pageContext string
	placed := map[string]bool{}
	me := store.AgentAuthor(a.Name)
	// lastSaid is each agent's latest text: the user entry that hands an
	// agent's reply on repeats it, and is left out.
	lastSaid := map[store.Author]string{}
	for i, e := range entries {
		if other := otherAgent(e, me); other && (e.Kind == store.EntryToolCall || e.Kind == store.EntryToolResult) {
			continue // another agent's calls are its own
		}
		switch e.Kind {
		case store.EntryUser:
			c, err := Decode[UserContent](e)
			if err != nil {
				return nil, err
			}
			if agentName, ok := e.Author.Agent(); ok {
				if said, ok := lastSaid[e.Author]; ok && said == c.Text {
					continue // the same words as its reply, just before
				}
				if e.Author == me {
					add(model.RoleAssistant, model.Part{Kind: model.PartText, Text: c.Text})
					continue
				}
				speaker = agentName
				add(model.RoleUser, model.Part{Kind: model.PartText, Text: "[" + agentName + "] " + c.Text})
				continue
			}
			name := speakerName(c, names)
			speaker = name
			pageContext = c.PageContext
			text := c.Text
			if name != "" {
				text = "[" + name + "] " + text
			}
			add(model.RoleUser, model.Part{Kind: model.PartText, Text: text})
			for _, p := range fileParts(c.modelFiles()) {
				add(model.RoleUser, p)
			}
		case store.EntryAssistant:
			c, err := Decode[AssistantContent](e)
			if err != nil {
				return nil, err
			}
			lastSaid[e.Author] = c.Text
			if otherAgent(e, me) {
				// Another agent's reply is something said in the room.
				if c.Text != "" {
					name, _ := e.Author.Agent()
					speaker = name
					add(model.RoleUser, model.Part{Kind: model.PartText, Text: "[" + name + "] " + c.Text})
				}
				continue
			}
			for _, th := range c.Thinking {
				add(model.RoleAssistant, model.Part{Kind: model.PartThinking, Text: th.Text, Signature: th.Signature, Redacted: th.Redacted})
			}
			if text := withDMs(c); text != "" {
				add(model.RoleAssistant, model.Part{Kind: model.PartText, Text: text})
			}
			if c.Session != nil {
				// A CLI's session holds everything up to this reply: the
				// next call resumes it with only what comes after.
				req.Session = &model.Session{Provider: c.Session.Provider, ID: c.Session.ID, Seen: len(msgs), Totals: c.Session.Totals}
			}
		case store.EntryToolCall:
			c, err := Decode[ToolCallContent](e)
			if err != nil {
				return nil, err
			}
			add(model.RoleAssistant, model.Part{Kind: model.PartToolCall, CallID: c.CallID, ToolName: c.Name, Input: c.Input})
			// Close the assistant message's calls with their results once the
			// last consecutive call is placed.
			if next := i + 1; next < len(entries) && entries[next].Kind == store.EntryToolCall && !otherAgent(entries[next], me) {
				continue
			}
			for j := i; j >= 0 && entries[j].Kind == store.EntryToolCall && !otherAgent(entries[j], me); j-- {
				cc, _ := Decode[ToolCallContent](entries[j])
				r, ok := results[cc.CallID]
				if !ok {
					// A call still waiting for a person (an approval) with
					// something after it: the person moved on. Providers
					// want every call answered, so it is answered with
					// where it stands; the real result takes its place
					// once the person decides.
					if i < len(entries)-1 {
						add(model.RoleUser, model.Part{Kind: model.PartToolResult, CallID: cc.CallID, Output: stillWaiting, IsError: true})
					}
					continue
				}
				rc, err := Decode[ToolResultContent](r)
				if err != nil {
					return nil, err
				}
				placed[cc.CallID] = true
				add(model.RoleUser, model.Part{Kind: model.PartToolResult, CallID: rc.CallID, Output: string(rc.Output), IsError: rc.IsError})
			}
		case store.EntryToolResult:
			// Placed with its call above; a result whose call is missing
			// (never expected) is dropped rather than sent unpaired.
		case store.EntryAction:
			c, err := Decode[ActionContent](e)
			if err != nil {
				return nil, err
			}
			name := c.UserName
			if name == "" {
				name = c.UserID
			}
			speaker = name
			text := fmt.Sprintf("[%s] clicked the button %q (value %q) on your card.", name, c.ActionID, c.Value)
			if len(c.Values) > 0 {
				text = fmt.Sprintf("[%s] filled in the form of the button %q on your card: %s", name, c.ActionID, c.Values)
			}
			add(model.RoleUser, model.Part{Kind: model.PartText, Text: text})
		case store.EntrySystem:
			c, err := Decode[SystemContent](e)
			if err != nil {
				return nil, err
			}
			if c.Notice {
				continue // for people; the model has the call and its result
			}
			add(model.RoleUser, model.Part{Kind: model.PartText, Text: "[system] " + c.Text})
		case store.EntryCard:
			// The card's data reached the model as the post_result call; the
			// stamped layout is for people.
		case store.EntrySummary:
			// Sent once, before the history (see summaryBlock), not where
			// it was written.
		case store.EntrySideThread:
			c, err := Decode[SideThreadContent](e)
			if err != nil {
				return nil, err
			}
			if text := sideThreadNote(c); text != "" {
				add(model.RoleUser, model.Part{Kind: model.PartText, Text: "[system] " + text})
			}
		case store.EntryDeleted:
			// The message stays in the log; the model learns it was taken back.
			c, err := Decode[DeletedContent](e)
			if err != nil {
				return nil, err
			}
			add(model.RoleUser, model.Part{Kind: model.PartText, Text: fmt.Sprintf("[system] The person deleted their message above (log seq %d); treat it as withdrawn.", c.Seq)})
		}
	}
	// Providers require the results' order to match the calls' and each
	// result to answer a call; reorder within each user message is not
	// needed because results were emitted in call order above.
	req.Messages = msgs
	req.System = []model.SystemBlock{{Text: stableBlock(a, contextName, stable), Cache: true}}
	if summary != nil {
		// After the stable block and before the history: it changes only
		// when a new summary is written, and the breakpoint at the end of
		// the history caches it with the history.
		req.System = append(req.System, model.SystemBlock{Text: summaryBlock(summary)})
	}
	req.Turn = turnBlock(now, speaker)
	if pageContext != "" {
		// Only the latest person's message counts: what they look at now.
		req.Turn += "\nIn the web console they are looking at: " + pageContext
	}
	return req, nil
}

// withDMs is an agent's own reply as it wrote it: the text, then the
// <dm> tags taken out of it.
func withDMs(c AssistantContent) string {
	parts := []string{}
	if c.Text != "" {
		parts = append(parts, c.Text)
	}
	for _, d := range c.DMs {
		parts = append(parts, d.tag())
	}
	return strings.Join(parts, "\n\n")
}

// sideThreadNote is how a side_thread entry reads to a model: the opening
// is in the opener's own reply, so only the end is told.
func sideThreadNote(c SideThreadContent) string {
	switch c.Event {
	case SideThreadResolved:
		return fmt.Sprintf("The side thread between %s and %s was resolved by %s. Summary: %s", c.Opener, c.Peer, c.By, c.Summary)
	case SideThreadAbandoned:
		return fmt.Sprintf("The side thread between %s and %s was abandoned: nothing happened in it for too long.", c.Opener, c.Peer)
	}
	return ""
}

// otherAgent reports whether an agent other than me wrote e.
func otherAgent(e *store.Entry, me store.Author) bool {
	_, isAgent := e.Author.Agent()
	return isAgent && e.Author != me
}

// speakerName is how a message's author is shown to the model: a known
// person's display name, else the name the platform gave with the message;
// a person's platform id never ("someone" when no name is known). Authors
// who are not platform people (the API's principal, the terminal) keep
// their id, which is a name there.
func speakerName(c UserContent, names map[store.Identity]string) string {
	n, person := names[IdentityOf(c.Platform, c.Workspace, c.UserID)]
	if !person {
		if c.UserName != "" {
			return c.UserName
		}
		return c.UserID
	}
	switch {
	case n != "" && n != c.UserID:
		return n
	case c.UserName != "" && c.UserName != c.UserID:
		return c.UserName
	}
	return "someone"
}

// stillWaiting answers, for the model, a call that waits for a person's
// approval while the conversation goes on.
const stillWaiting = `{"status":"waiting for a person's approval: not run yet. Tell the person it is still waiting."}`

// movedOnResult closes a question or a frontend call that a person answered
// with a new message instead.
var movedOnResult = mustJSON(map[string]string{"error": "The person sent a new message instead of answering, so this call was closed. Answer their new message."})

// pendingCall is a tool call without a result yet.
type pendingCall struct {
	ToolCallContent
	Seq    int64
	Author store.Author // the agent that made the call
}

// pendingCalls finds the calls in the log that have no result, in log order.
func pendingCalls(entries []*store.Entry) map[string]pendingCall {
	out := map[string]pendingCall{}
	for _, e := range entries {
		switch e.Kind {
		case store.EntryToolCall:
			c, err := Decode[ToolCallContent](e)
			if err == nil {
				out[c.CallID] = pendingCall{ToolCallContent: c, Seq: e.SeqValue(), Author: e.Author}
			}
		case store.EntryToolResult:
			c, err := Decode[ToolResultContent](e)
			if err == nil {
				delete(out, c.CallID)
			}
		}
	}
	return out
}

// needsResponse reports whether the log ends with something the agent has
// not answered: a message (a person's or another agent's), a click or tool
// results. The agent's own words handed on to others are not new to it.
func needsResponse(entries []*store.Entry, agentName string) bool {
	me := store.AgentAuthor(agentName)
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		switch e.Kind {
		case store.EntryUser:
			if e.Author == me {
				continue
			}
			return true
		case store.EntryAction, store.EntryToolResult, store.EntrySystem:
			return true
		case store.EntryAssistant:
			return otherAgent(e, me)
		case store.EntryToolCall:
			if otherAgent(e, me) {
				continue
			}
			return false // pending calls are resolved before this is asked
		}
	}
	return false
}
