package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// ErrInvalid marks bad input from a caller; the message says what is wrong.
var ErrInvalid = errors.New("invalid input")

// ErrNotPending is returned for a result or decision on a tool call that is
// not waiting for one.
var ErrNotPending = errors.New("tool call is not pending")

// ErrNeedsPerson is returned for a result posted to a call that waits for a
// person's decision (an approval row: a confirmation or a question). Only
// that person's answer on the platform (Act) settles it; a posted result
// would stand in for the decision and skip the tool.
var ErrNeedsPerson = errors.New("tool call waits for a person's decision")

// ErrNotForClient is returned for a result posted to a call that no client
// is asked to answer: a server tool's call (running, or about to run on the
// server), or a call of a tool that is not a frontend tool in the
// conversation's context. Only the server records such a call's result.
var ErrNotForClient = errors.New("tool call is not waiting for a client")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Submit stores an inbound message and queues the turn that answers it, in
// one transaction with the dedupe record, so a redelivered event changes
// nothing. It never runs the turn itself: platforms want an answer in three
// seconds.
func (s *Service) Submit(ctx context.Context, in *Inbound) (*SubmitResult, error) {
	return s.submit(ctx, in, false)
}

// submit is Submit; admitted says the access gate has let in already (by
// Accept, on the ack).
func (s *Service) submit(ctx context.Context, in *Inbound, admitted bool) (*SubmitResult, error) {
	if in == nil || in.Platform == "" || in.Channel == "" {
		return nil, invalid("inbound needs a platform and a channel")
	}
	if strings.TrimSpace(in.Text) == "" && len(in.Files) == 0 {
		return &SubmitResult{Ignored: true}, nil
	}
	if !admitted {
		var refused *SubmitResult
		var err error
		if in, refused, err = s.admitInbound(ctx, in); err != nil || refused != nil {
			return refused, err
		}
	}

	// Which agent: the one addressed, else the channel's, else the default.
	ag := s.agents().Default()
	channelAgent, inChannel := s.agents().ForChannel(in.Channel)
	if inChannel {
		ag = channelAgent
	}
	if in.Agent != "" {
		a, ok := s.agents().Find(in.Agent)
		if !ok {
			return nil, invalid("no agent named %q", in.Agent)
		}
		ag = a
	}

	cmd, isCmd := commandText(in.Text)
	isCmd = isCmd && s.opts.CommandFunc != nil
	// What the log keeps of the message: a command that carries a secret
	// is stored without it (and names no conversation: only a person's
	// message does, see admit).
	logged := in
	if hidden := HideLinkCode(in.Text); isCmd && hidden != in.Text {
		c := *in
		c.Text = hidden
		logged = &c
	}
	var res SubmitResult
	var bound *store.Binding
	// Group commit: concurrent Submits share one transaction and commit,
	// and each returns (the platform is acknowledged) only after the
	// commit that holds its message.
	err := s.st.InTxGroup(ctx, func(q store.Queries) error {
		res = SubmitResult{}
		b, created, err := s.bindInbound(ctx, q, logged, ag, inChannel, &res)
		if err != nil || b == nil {
			bound = b
			return err
		}
		bound = b
		if isCmd {
			return s.queueCommand(ctx, q, in, logged, b, cmd, &res)
		}
		// User entries are never delivered back (render skips them), so the
		// delivered cursor is left where it is.
		sp := &speech{conv: b.ConversationID, author: store.UserAuthor(in.UserID), content: userContent(in), channel: in.Channel, named: in.Agent}
		if created {
			sp.starter = ag.Name
		}
		seq, err := s.admit(ctx, q, sp)
		if err != nil {
			return err
		}
		res.ConversationID, res.Seq = b.ConversationID, seq
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("submitting %s message: %w", in.Platform, err)
	}
	if res.Refused {
		// Pinned away: nothing of the message was stored; the person hears
		// so once a day.
		if r, ok := s.opts.Gate.(Refuser); ok {
			adm, err := r.Refuse(ctx, in, RefusalPinnedAway)
			if err != nil {
				return nil, fmt.Errorf("refusing %s user %s: %w", in.Platform, in.UserID, err)
			}
			res.Notice = adm.Notice
		}
		return &res, nil
	}
	if in.Spoken != nil && bound != nil && res.ConversationID != uuid.Nil {
		// Once, with the message: a redelivered event is a Duplicate and
		// never gets here.
		s.recordHeard(ctx, ag.Name, res.ConversationID, in.Spoken)
	}
	if bound != nil && s.opts.People != nil && s.opts.People.Keeps(in.Platform) && in.UserID != "" {
		// The person is found or made here, from the store alone; their
		// profile is read from the platform on the turn, never on the ack.
		// A failure is not the message's: the turn tries again.
		if err := s.opts.People.EnsureKnown(ctx, in.Platform, in.Workspace, in.UserID, in.UserName); err != nil {
			s.log.WarnContext(ctx, "finding the person behind a message", "platform", in.Platform, "user_id", in.UserID, "error", err)
		}
	}
	return &res, nil
}

// admitInbound asks the access gate about in: a refusal comes back as a
// result, an admission as in, marked Mentioned when the rule addresses
// the bot in that place (the caller's Inbound is left as it came).
func (s *Service) admitInbound(ctx context.Context, in *Inbound) (*Inbound, *SubmitResult, error) {
	if s.opts.Gate == nil {
		return in, nil, nil
	}
	adm, err := s.opts.Gate.Admit(ctx, in)
	if err != nil {
		return nil, nil, fmt.Errorf("checking access of %s user %s: %w", in.Platform, in.UserID, err)
	}
	if adm.Refused {
		return nil, &SubmitResult{Refused: true, Notice: adm.Notice}, nil
	}
	if adm.Addressed && !in.Mentioned {
		c := *in
		c.Mentioned = true
		in = &c
	}
	return in, nil, nil
}

// bindInbound dedupes an inbound message and finds or creates the
// conversation bound to its place. It returns nil, with res marked, when the
// message is not for the bot or was seen before: then nothing is stored,
// not even the dedupe row for a message that is not for the bot. created
// says the conversation is new.
func (s *Service) bindInbound(ctx context.Context, q store.Queries, in *Inbound, ag *config.Agent, inChannel bool, res *SubmitResult) (*store.Binding, bool, error) {
	now := s.now()
	b, err := q.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns(in.Platform, in.Workspace, in.Channel, in.Thread)})
	engaged := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, false, fmt.Errorf("finding binding: %w", err)
	}
	if !engaged && !in.Mentioned && !in.IsDM && !inChannel {
		res.Ignored = true
		return nil, false, nil
	}
	if away, err := s.pinnedAway(ctx, q, in, b, s.agentID(ag.Name)); err != nil || away {
		res.Refused = away
		return nil, false, err
	}
	if in.EventID != "" {
		fresh, err := q.InboundRecord(ctx, &store.InboundRecordParams{Platform: in.Platform, EventID: in.EventID, Now: now})
		if err != nil {
			return nil, false, fmt.Errorf("recording inbound event: %w", err)
		}
		if !fresh {
			res.Duplicate = true
			return nil, false, nil
		}
	}
	if b != nil {
		return b, false, nil
	}
	// A platform's conversations run in the context named after it.
	meta := ConversationMeta{Context: tool.ContextName(in.Platform), Starter: in.UserID, DM: in.IsDM}.Encode()
	ens, err := q.BindingEnsure(ctx, &store.BindingEnsureParams{
		Place: store.Place{Platform: in.Platform, Workspace: in.Workspace, Channel: in.Channel, Thread: in.Thread},
		Conversation: store.ConversationCreateParams{
			// Untitled: the first message names it (admit), in this transaction.
			AgentID: s.agentID(ag.Name), Metadata: meta, Now: now,
		},
		Now: now,
	})
	if err != nil {
		return nil, false, fmt.Errorf("binding conversation: %w", err)
	}
	return ens.Binding, ens.Created, nil
}

func userContent(in *Inbound) UserContent {
	return UserContent{Text: in.Text, UserID: in.UserID, UserName: in.UserName, Platform: in.Platform, MessageID: in.MessageID, Workspace: in.Workspace, Files: in.Files, Spoken: in.Spoken}
}

// CommandPrefix starts a command typed to the bot ("!remind in 2h -- call
// Ana"): it is answered by Options.CommandFunc, not by the model.
const CommandPrefix = "!"

func commandText(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, CommandPrefix) {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(t, CommandPrefix)), true
}

// queueCommand stores a command's message and queues the work item that
// answers it (RunCommand): answering may need the person's profile from the
// platform, which must not hold up the platform's ack.
// The entry is logged (in as the log keeps it); the work item carries the
// command as typed, since answering it needs the whole text.
func (s *Service) queueCommand(ctx context.Context, q store.Queries, in, logged *Inbound, b *store.Binding, cmd string, res *SubmitResult) error {
	now := s.now()
	u, err := q.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: b.ConversationID, Kind: store.EntryUser, Author: store.UserAuthor(in.UserID),
		Content: mustJSON(userContent(logged)), Now: now,
	})
	if err != nil {
		return fmt.Errorf("appending command entry: %w", err)
	}
	conv := b.ConversationID
	if _, err := Enqueue(ctx, q, CommandArgs{Inbound: *in, Text: cmd}, &EnqueueOpts{ConversationID: &conv, Now: now}); err != nil {
		return fmt.Errorf("queueing command: %w", err)
	}
	res.ConversationID, res.Seq = conv, u.Entry.SeqValue()
	return nil
}

// WorkCommand answers a typed command (Service.RunCommand).
const WorkCommand = "command"

// CommandArgs are the args of a WorkCommand item: the command and the
// message it came in.
type CommandArgs struct {
	Inbound Inbound `json:"inbound"`
	Text    string  `json:"text"`
}

// Kind is WorkCommand.
func (CommandArgs) Kind() string { return WorkCommand }

// RunCommand answers a command with no model call: the person's profile is
// resolved (their time zone reaches the command), the reply is appended and
// delivered. A retried item may run the command again.
func (s *Service) RunCommand(ctx context.Context, item *store.WorkItem, args CommandArgs) error {
	if item.ConversationID == nil {
		return fmt.Errorf("command item %s has no conversation", item.ID)
	}
	in := args.Inbound
	if s.opts.People != nil && s.opts.People.Keeps(in.Platform) && in.UserID != "" {
		if p, err := s.opts.People.Resolve(ctx, in.Platform, in.Workspace, in.UserID); err != nil {
			s.log.WarnContext(ctx, "resolving the person behind a command", "user_id", in.UserID, "error", err)
		} else if in.TimeZone == "" {
			in.TimeZone = p.TimeZone
		}
	}
	reply := "Commands are not configured here."
	if s.opts.CommandFunc != nil {
		var err error
		reply, err = s.opts.CommandFunc(ctx, &in, &Command{Text: args.Text, ConversationID: *item.ConversationID})
		if err != nil {
			if errors.Is(err, ErrInvalid) {
				reply = "⚠️ " + err.Error()
			} else {
				s.log.ErrorContext(ctx, "command failed", "command", HideLinkCode(CommandPrefix+args.Text), "error", redact.String(err.Error()))
				reply = "⚠️ That command failed; please try again."
			}
		}
	}
	conv := *item.ConversationID
	err := s.st.InTx(ctx, func(q store.Queries) error {
		now := s.now()
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: conv, Kind: store.EntryAssistant, Author: store.SystemAuthor,
			Content: mustJSON(AssistantContent{Text: reply}), Now: now,
		}); err != nil {
			return err
		}
		return enqueueDelivery(ctx, q, conv, now)
	})
	if err != nil {
		return fmt.Errorf("recording command reply: %w", err)
	}
	return nil
}

// appendAndQueue appends an entry and enqueues the turn it causes, inside the
// caller's transaction.
func (s *Service) appendAndQueue(ctx context.Context, q store.Queries, conv uuid.UUID, kind store.EntryKind, author store.Author, content any, reason string) (int64, error) {
	now := s.now()
	res, err := q.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: conv, Kind: kind, Author: author, Content: mustJSON(content), Now: now,
	})
	if err != nil {
		return 0, fmt.Errorf("appending %s entry: %w", kind, err)
	}
	seq := res.Entry.SeqValue()
	if err := s.enqueueTurn(ctx, q, conv, seq, reason); err != nil {
		return 0, err
	}
	return seq, nil
}

func (s *Service) enqueueTurn(ctx context.Context, q store.Queries, conv uuid.UUID, triggerSeq int64, reason string) error {
	return s.enqueueTurnArgs(ctx, q, conv, TurnArgs{TriggerSeq: triggerSeq, Reason: reason})
}

func (s *Service) enqueueTurnArgs(ctx context.Context, q store.Queries, conv uuid.UUID, args TurnArgs) error {
	_, err := Enqueue(ctx, q, args, &EnqueueOpts{
		ConversationID: &conv,
		// One claim more than the cap: the claim past the cap is the one that
		// tells the user the turn failed for good (see RunTurn).
		MaxAttempts: s.opts.MaxTurnAttempts + 1,
		Now:         s.now(),
	})
	if err != nil {
		return fmt.Errorf("queueing turn: %w", err)
	}
	return nil
}

// Act takes a button click: an answer to a question, a decision on an
// approval, or a card's signal button handed back to the agent.
func (s *Service) Act(ctx context.Context, a *Action) (*ActionResult, error) {
	if a == nil {
		return nil, invalid("no action")
	}
	now := s.now()
	var ap *store.Approval
	var err error
	switch {
	case IsReminderAction(a.ActionID):
		return s.reminderAct(ctx, a)
	case strings.HasPrefix(a.ActionID, approvalPrefix):
		// A platform button: the action id names the approval, the value
		// the choice (an index for questions).
		id, perr := uuid.Parse(strings.TrimPrefix(a.ActionID, approvalPrefix))
		if perr != nil {
			return nil, invalid("malformed approval action %q", a.ActionID)
		}
		ap, err = s.st.ApprovalGet(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("approval %s: %w", id, ErrNotPending)
		}
		if err != nil {
			return nil, fmt.Errorf("finding approval %s: %w", id, err)
		}
		a.ConversationID, a.CallID = ap.ConversationID, ap.CallID
		if ap.Kind == store.ApprovalQuestion {
			a.Value = choiceAt(ap, a.Value)
		}
	case a.CallID == "":
		return s.signal(ctx, a)
	default:
		if a.ConversationID == uuid.Nil {
			return nil, invalid("action needs a conversation")
		}
		ap, err = s.st.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: a.ConversationID, CallID: a.CallID})
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("deciding call %s: %w", a.CallID, ErrNotPending)
		}
		if err != nil {
			return nil, fmt.Errorf("finding approval for call %s: %w", a.CallID, err)
		}
	}
	if ok, reason, err := s.mayDecide(ctx, ap, a); err != nil {
		return nil, err
	} else if !ok {
		return &ActionResult{Refused: true, Reason: reason}, nil
	}
	if ap.Status != store.ApprovalPending || !now.Before(ap.ExpiresAt) {
		return &ActionResult{Duplicate: true, Settled: approvalSettled(ap, now)}, nil
	}
	status := store.ApprovalApproved
	result := ToolResultContent{CallID: a.CallID, Name: ap.Tool, DecidedBy: who(a)}
	switch ap.Kind {
	case store.ApprovalQuestion:
		result.Output = mustJSON(map[string]string{"answer": a.Value, "answered_by": who(a)})
	case store.ApprovalConfirm:
		if a.Value != ChoiceAllowOnce && a.Value != ChoiceAlwaysAllow && a.Value != ChoiceAlwaysAllowArgs {
			status = store.ApprovalDenied
			result.IsError = true
			result.Output = mustJSON(map[string]string{"error": "denied by " + who(a)})
		}
	}
	err = s.st.InTx(ctx, func(q store.Queries) error {
		if err := recordEvent(ctx, q, a, now); err != nil {
			return err
		}
		if _, err := q.ApprovalDecide(ctx, &store.ApprovalDecideParams{
			ID: ap.ID, Status: status, Decision: mustJSON(map[string]string{"value": a.Value}), DecidedBy: who(a), Now: now,
		}); err != nil {
			return err
		}
		if g := grantFor(ap, a.Value, cmp.Or(a.UserID, who(a))); g != nil {
			// In a conversation of a workspace the grant holds in that
			// workspace, by its id.
			ws, err := q.ConversationWorkspace(ctx, ap.ConversationID)
			if err != nil {
				return fmt.Errorf("granting %s: %w", ap.Tool, err)
			}
			g.WorkspaceID, g.Now = ws, now
			if _, err := q.GrantCreate(ctx, g); err != nil {
				return fmt.Errorf("granting %s: %w", ap.Tool, err)
			}
		}
		// The call's audit row names the person; an approved confirmation
		// stays pending until the resumed turn has run it.
		outcome := store.AuditOK
		switch {
		case status == store.ApprovalDenied:
			outcome = store.AuditDenied
		case ap.Kind == store.ApprovalConfirm:
			outcome = store.AuditPending
		}
		if err := settleAudit(ctx, q, &store.AuditSettleParams{
			ConversationID: a.ConversationID, CallID: a.CallID, Outcome: outcome, DecidedBy: string(store.UserAuthor(a.UserID)), Now: now,
		}); err != nil {
			return err
		}
		// An approved confirmation is run by the resumed turn; everything
		// else is answered here.
		if ap.Kind == store.ApprovalConfirm && status == store.ApprovalApproved {
			conv, err := q.ConversationGet(ctx, a.ConversationID)
			if err != nil {
				return err
			}
			return s.enqueueTurnArgs(ctx, q, a.ConversationID, TurnArgs{TriggerSeq: conv.LastSeq, Reason: "resume", ResumeCall: a.CallID})
		}
		_, err := s.appendAndQueue(ctx, q, a.ConversationID, store.EntryToolResult, store.UserAuthor(a.UserID), result, "resume")
		return err
	})
	if errors.Is(err, errDuplicate) {
		return &ActionResult{Duplicate: true}, nil
	}
	if errors.Is(err, store.ErrConflict) {
		// Another click (or the sweep) got there first: say which.
		res := &ActionResult{Duplicate: true}
		if cur, gerr := s.st.ApprovalGet(ctx, ap.ID); gerr == nil {
			res.Settled = approvalSettled(cur, now)
		}
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deciding call %s: %w", a.CallID, err)
	}
	return &ActionResult{}, nil
}

// approvalSettled says how an approval that is no longer open was
// settled: its expiry, or who chose what. Nil while it is open.
func approvalSettled(ap *store.Approval, now time.Time) *Settled {
	switch {
	case ap.Status == store.ApprovalExpired, ap.Status == store.ApprovalPending && !now.Before(ap.ExpiresAt):
		return &Settled{Expired: true, At: ap.ExpiresAt}
	case ap.Status == store.ApprovalPending:
		return nil
	}
	var d struct {
		Value string `json:"value"`
	}
	_ = json.Unmarshal(ap.Decision, &d)
	st := &Settled{By: ap.DecidedBy, Choice: d.Value}
	if ap.Kind == store.ApprovalConfirm {
		st.Choice = ChoiceLabel(d.Value)
	}
	if ap.DecidedAt != nil {
		st.At = *ap.DecidedAt
	}
	return st
}

// ChoiceLabel is how an approval prompt's button reads for a choice.
func ChoiceLabel(choice string) string {
	switch choice {
	case ChoiceAllowOnce:
		return "Allow once"
	case ChoiceAlwaysAllow:
		return "Always allow"
	case ChoiceAlwaysAllowArgs:
		return "Always allow these arguments"
	case ChoiceDeny:
		return "Deny"
	}
	return choice
}

const approvalPrefix = "sb-approval:"

// ApprovalActionID is the button action id that answers an approval.
func ApprovalActionID(id uuid.UUID) string { return approvalPrefix + id.String() }

// choiceAt maps a button's value (the choice's index) to the choice's text;
// a value that is not an index is taken as the text itself (API clients).
func choiceAt(ap *store.Approval, v string) string {
	var req struct {
		Choices []string `json:"choices"`
	}
	if json.Unmarshal(ap.Request, &req) != nil {
		return v
	}
	if i, err := strconv.Atoi(v); err == nil && i >= 0 && i < len(req.Choices) {
		return req.Choices[i]
	}
	return v
}

func who(a *Action) string {
	if a.UserName != "" {
		return a.UserName
	}
	return a.UserID
}

// signal takes a card button click. The click names the card's entry and
// the action; what the action does is read from the stamped card, never from
// the platform. Both kinds become an action entry and a turn: a signal tells
// the agent, a tool action is run by that turn through the guard.
func (s *Service) signal(ctx context.Context, a *Action) (*ActionResult, error) {
	entryID, actionID, ok := cards.ParseActionID(a.ActionID)
	if !ok {
		return nil, invalid("unknown action %q", a.ActionID)
	}
	entry, err := s.st.EntryGet(ctx, entryID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && entry.Kind != store.EntryCard) {
		return nil, invalid("action %q names no card", a.ActionID)
	}
	if err != nil {
		return nil, fmt.Errorf("loading card %s: %w", entryID, err)
	}
	cc, err := Decode[CardContent](entry)
	if err != nil {
		return nil, err
	}
	var st cards.Stamped
	if err := json.Unmarshal(cc.Card, &st); err != nil {
		return nil, fmt.Errorf("decoding card %s: %w", entryID, err)
	}
	var act *cards.Action
	for i := range st.Actions {
		if st.Actions[i].ID == actionID {
			act = &st.Actions[i]
		}
	}
	if act == nil {
		return nil, invalid("card %s has no action %q", entryID, actionID)
	}
	content := ActionContent{
		EntryID: entryID.String(), ActionID: actionID, Value: a.Value, UserID: a.UserID, UserName: a.UserName,
		Label: act.Label,
	}
	if act.Kind == "tool" {
		content.Tool, content.Args = act.Tool, act.Args
	}
	if act.Form != nil {
		// A form's button opens the form; its submission acts (forms.go).
		res, err := s.formAnswers(ctx, a, entry, act, &content)
		if res != nil || err != nil {
			return res, err
		}
	}
	return s.settleCard(ctx, a, entry, act, content)
}

// settleCard records a card's action (a click, a form's answers) as an
// action entry and the turn it starts, unless the card was settled before.
func (s *Service) settleCard(ctx context.Context, a *Action, entry *store.Entry, act *cards.Action, content ActionContent) (*ActionResult, error) {
	entryID, actionID := entry.ID, act.ID
	a.ConversationID = entry.ConversationID
	now := s.now()
	var first *store.CardChoice
	err := s.st.InTx(ctx, func(q store.Queries) error {
		if err := recordEvent(ctx, q, a, now); err != nil {
			return err
		}
		// The card's buttons are settled by the first click that acts, in
		// the commit that records it: a later click, by anyone, on any
		// instance, does nothing.
		res, err := q.CardChoiceSettle(ctx, &store.CardChoiceSettleParams{
			EntryID: entryID, ConversationID: entry.ConversationID, ActionID: actionID, Value: a.Value, Label: act.Label,
			Platform: a.Platform, UserID: a.UserID, UserName: a.UserName, Now: now,
		})
		if err != nil {
			return err
		}
		if !res.Settled {
			first = res.Choice
			return errSettled
		}
		_, err = s.appendAndQueue(ctx, q, entry.ConversationID, store.EntryAction, store.UserAuthor(a.UserID), content, "action")
		return err
	})
	if errors.Is(err, errDuplicate) {
		return &ActionResult{Duplicate: true}, nil
	}
	if errors.Is(err, errSettled) {
		return &ActionResult{Duplicate: true, Settled: &Settled{
			By: cmp.Or(first.UserName, first.UserID), ByUserID: first.UserID, Platform: first.Platform,
			Choice: cmp.Or(first.Label, first.Value, first.ActionID), At: first.CreatedAt,
		}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recording action %s: %w", a.ActionID, err)
	}
	return &ActionResult{}, nil
}

var errDuplicate = errors.New("duplicate event")

// errSettled rolls back a click on a card whose buttons another click
// settled first.
var errSettled = errors.New("card already settled")

// recordEvent dedupes a click by its platform event id, inside the
// transaction that acts on it.
func recordEvent(ctx context.Context, q store.Queries, a *Action, now time.Time) error {
	if a.EventID == "" {
		return nil
	}
	fresh, err := q.InboundRecord(ctx, &store.InboundRecordParams{Platform: a.Platform, EventID: a.EventID, Now: now})
	if err != nil {
		return fmt.Errorf("recording action event: %w", err)
	}
	if !fresh {
		return errDuplicate
	}
	return nil
}

// CreateConversation starts a conversation for an API or terminal client.
func (s *Service) CreateConversation(ctx context.Context, agentName string, contextName tool.ContextName, starter string) (*store.Conversation, error) {
	return s.CreateConversationWith(ctx, &CreateConversationParams{Agent: agentName, Context: contextName, Starter: starter})
}

// CreateConversationParams is a conversation a client starts (the API,
// an MCP call, the terminal chat).
type CreateConversationParams struct {
	// Agent answers in it; "" is the default agent.
	Agent string
	// Context is where its turns run (the tools they get); "" is
	// tool.ContextAPI.
	Context tool.ContextName
	// Starter is the person it is for.
	Starter string
	// WorkspaceID, when set, is the workspace it belongs to (whose members
	// see it, whose rules apply).
	WorkspaceID *uuid.UUID
	// Title, when set, names it in the history.
	Title string
}

// CreateConversationWith starts a conversation as p says, placed in its
// workspace in the same transaction.
func (s *Service) CreateConversationWith(ctx context.Context, p *CreateConversationParams) (*store.Conversation, error) {
	var conv *store.Conversation
	err := s.st.InTx(ctx, func(q store.Queries) error {
		var err error
		conv, err = s.createConversation(ctx, q, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating conversation: %w", err)
	}
	return conv, nil
}

// createConversation is CreateConversationWith in the caller's
// transaction.
func (s *Service) createConversation(ctx context.Context, q store.Queries, p *CreateConversationParams) (*store.Conversation, error) {
	ag := s.agents().Default()
	if p.Agent != "" {
		a, ok := s.agents().Find(p.Agent)
		if !ok {
			return nil, invalid("no agent named %q", p.Agent)
		}
		ag = a
	}
	conv, err := q.ConversationCreate(ctx, &store.ConversationCreateParams{
		AgentID: s.agentID(ag.Name), Title: p.Title, Now: s.now(),
		Metadata: ConversationMeta{Context: cmp.Or(p.Context, tool.ContextAPI), Starter: p.Starter}.Encode(),
	})
	if err != nil {
		return nil, err
	}
	if p.WorkspaceID != nil {
		if err := q.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: conv.ID, WorkspaceID: *p.WorkspaceID}); err != nil {
			return nil, fmt.Errorf("placing it in workspace %s: %w", *p.WorkspaceID, err)
		}
	}
	return conv, nil
}

// PostMessage appends a user message to a conversation and queues its turn.
// It returns the entry's seq.
func (s *Service) PostMessage(ctx context.Context, conv uuid.UUID, userID, text string) (int64, error) {
	return s.PostMessageWith(ctx, conv, userID, text, MessageOptions{})
}

// MaxPageContext bounds the page context a client sends with a message.
const MaxPageContext = 2000

// MessageOptions are what a client may say about a message besides its
// text.
type MessageOptions struct {
	// PageContext is what the person is looking at (the web console's
	// view): the turn that answers sees it in its per-turn block.
	PageContext string
	// UserName is the sender's display name, shown to the model instead of
	// the user id.
	UserName string

	// spoken and files make the message a spoken one (PostSpoken).
	spoken *Spoken
	files  []UserFile
}

// PostMessageWith is PostMessage with what the client says about the
// message (see MessageOptions).
func (s *Service) PostMessageWith(ctx context.Context, conv uuid.UUID, userID, text string, o MessageOptions) (int64, error) {
	pageContext := o.PageContext
	if len(pageContext) > MaxPageContext {
		return 0, invalid("page context is %d bytes; at most %d", len(pageContext), MaxPageContext)
	}
	if strings.TrimSpace(text) == "" {
		return 0, invalid("message text is empty")
	}
	var seq int64
	err := s.st.InTx(ctx, func(q store.Queries) error {
		var err error
		seq, err = s.admit(ctx, q, &speech{conv: conv, author: store.UserAuthor(userID), content: UserContent{Text: text, UserID: userID, UserName: o.UserName, PageContext: strings.TrimSpace(pageContext), Spoken: o.spoken, Files: o.files}})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("posting message to %s: %w", conv, err)
	}
	return seq, nil
}

// ToolResultInput is a result posted by a client for a pending call.
type ToolResultInput struct {
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"`
	IsError bool            `json:"is_error,omitempty"`
}

// PostToolResults resumes a paused turn with results for pending calls. A
// result for a call that is not pending gets ErrNotPending, one for a call
// that waits for a person ErrNeedsPerson; either changes nothing.
func (s *Service) PostToolResults(ctx context.Context, conv uuid.UUID, userID string, results []ToolResultInput) (int64, error) {
	if len(results) == 0 {
		return 0, invalid("no results")
	}
	var last int64
	err := s.st.InTx(ctx, func(q store.Queries) error {
		c, err := q.ConversationGet(ctx, conv)
		if err != nil {
			return fmt.Errorf("reading conversation %s: %w", conv, err)
		}
		// A summary never covers a call without its result: the pending
		// calls are all after it, and the read goes back to the calls
		// answered here however long the log is.
		ids := make([]string, len(results))
		for i, r := range results {
			ids[i] = r.CallID
		}
		ml, err := loadModelLog(ctx, q, c, windowOf(s.agentOf(c), ids...))
		if err != nil {
			return err
		}
		pending := pendingCalls(ml.entries)
		ctxName := metaOf(c).Context
		seen := map[string]bool{}
		for _, r := range results {
			call, ok := pending[r.CallID]
			if !ok || seen[r.CallID] {
				return fmt.Errorf("call %q: %w", r.CallID, ErrNotPending)
			}
			seen[r.CallID] = true
			switch w, _, err := s.waitingFor(ctx, q, conv, ctxName, call.ToolCallContent); {
			case err != nil:
				return err
			case w == WaitingForPerson:
				return fmt.Errorf("call %q: %w", r.CallID, ErrNeedsPerson)
			case w != WaitingForClient:
				return fmt.Errorf("call %q (%s): %w: %s runs on the server, which records its result", r.CallID, call.Name, ErrNotForClient, call.Name)
			}
			out := r.Output
			if len(out) == 0 || !json.Valid(out) {
				return invalid("call %q: output must be JSON", r.CallID)
			}
			res, err := q.EntryAppend(ctx, &store.EntryAppendParams{
				ConversationID: conv, Kind: store.EntryToolResult, Author: store.UserAuthor(userID),
				Content: mustJSON(ToolResultContent{CallID: r.CallID, Name: call.Name, Output: out, IsError: r.IsError}),
				Now:     s.now(),
			})
			if err != nil {
				return err
			}
			last = res.Entry.SeqValue()
			outcome := store.AuditOK
			if r.IsError {
				outcome = store.AuditFailed
			}
			if err := settleAudit(ctx, q, &store.AuditSettleParams{ConversationID: conv, CallID: r.CallID, Outcome: outcome, Now: s.now()}); err != nil {
				return err
			}
		}
		return s.enqueueTurn(ctx, q, conv, last, "resume")
	})
	if err != nil {
		return 0, fmt.Errorf("posting tool results to %s: %w", conv, err)
	}
	return last, nil
}

// Fork edits an earlier message: a new conversation seeded with the entries
// before seq, with content as the message at seq, and a turn queued there.
func (s *Service) Fork(ctx context.Context, conv uuid.UUID, seq int64, userID, text string) (*store.EntryAppendResult, error) {
	if seq < 1 {
		return nil, invalid("seq must be at least 1")
	}
	if strings.TrimSpace(text) == "" {
		return nil, invalid("content is empty")
	}
	var res *store.EntryAppendResult
	err := s.st.InTx(ctx, func(q store.Queries) error {
		c, err := q.ConversationGet(ctx, conv)
		if err != nil {
			return err
		}
		if seq > c.LastSeq+1 {
			return invalid("seq %d is past the end of the log (%d)", seq, c.LastSeq)
		}
		retitle, err := firstMessageEdit(ctx, q, conv, seq)
		if err != nil {
			return err
		}
		res, err = q.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: conv, ExpectSeq: &seq, Kind: store.EntryUser, Author: store.UserAuthor(userID),
			Content: mustJSON(UserContent{Text: text, UserID: userID}), Title: ConversationTitle(text),
			Retitle: retitle, Now: s.now(),
		})
		if err != nil {
			return err
		}
		return s.enqueueTurn(ctx, q, res.ConversationID, res.Entry.SeqValue(), "message")
	})
	if err != nil {
		return nil, fmt.Errorf("forking %s at %d: %w", conv, seq, err)
	}
	return res, nil
}

// TitleRunes bounds a title taken from a message (ConversationTitle).
const TitleRunes = 60

// ConversationTitle is the title a conversation takes from a person's
// first message: its text on one line, cut at a word near TitleRunes
// characters with an ellipsis ("" for none).
func ConversationTitle(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	r := []rune(text)
	if len(r) <= TitleRunes {
		return text
	}
	cut := TitleRunes - 1
	for i := cut; i > TitleRunes*2/3; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " ,.;:-") + "…"
}

// firstMessageEdit reports whether a person's message at seq of conv's
// log, which forks it, is the fork's first message: no person's message
// comes before seq. A fork made by such an edit is titled by it when the
// conversation's title is automatic (store.EntryAppendParams.Retitle); an
// edit that keeps the text keeps the title too, since the title is the
// text's (ConversationTitle).
func firstMessageEdit(ctx context.Context, q store.Queries, conv uuid.UUID, seq int64) (bool, error) {
	const page = 64
	if seq <= 1 {
		return true, nil // nothing before it (and UpToSeq 0 is no bound)
	}
	for after := int64(0); ; {
		es, err := q.EntryList(ctx, &store.EntryListParams{ConversationID: conv, AfterSeq: after, UpToSeq: seq - 1, Limit: page})
		if err != nil {
			return false, fmt.Errorf("reading the log of %s before %d: %w", conv, seq, err)
		}
		for _, e := range es {
			if _, person := e.Author.User(); person && e.Kind == store.EntryUser {
				return false, nil
			}
		}
		if len(es) < page {
			return true, nil
		}
		after = es[len(es)-1].SeqValue()
	}
}

func title(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return text
}

// What a pending call waits for (PendingCall.WaitingFor).
const (
	// WaitingForClient: a frontend tool's call, handed to the live client,
	// which posts its result (PostToolResults).
	WaitingForClient = "client"
	// WaitingForPerson: a confirmation or a question; only the person's
	// answer settles it (Act).
	WaitingForPerson = "person"
	// WaitingForServer: a server tool's call, running or about to run on
	// the server, which records its result; nobody else may.
	WaitingForServer = "server"
)

// PendingCall is a tool call waiting for a result, as clients see it.
type PendingCall struct {
	CallID string          `json:"call_id"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Seq    int64           `json:"seq"`
	// WaitingFor is "client" (a frontend tool: post the result), "person"
	// (a question or approval: only the person's answer on the platform
	// settles it) or "server" (the server runs it and records its result).
	WaitingFor string `json:"waiting_for"`
	// Approval is the pending question or approval that asks the person,
	// when WaitingFor is "person"; nil otherwise.
	Approval *store.Approval `json:"-"`
}

// PendingCalls lists the calls of a conversation that wait for a result.
func (s *Service) PendingCalls(ctx context.Context, conv uuid.UUID) ([]PendingCall, error) {
	return s.PendingCallsAt(ctx, conv, 0)
}

// PendingCallsAt lists the calls that waited for a result when the log
// ended at seq at (time travel, StateAt); at 0 is now.
func (s *Service) PendingCallsAt(ctx context.Context, conv uuid.UUID, at int64) ([]PendingCall, error) {
	c, err := s.st.ConversationGet(ctx, conv)
	if err != nil {
		return nil, fmt.Errorf("reading conversation %s: %w", conv, err)
	}
	ml, err := s.loadModelLogAt(ctx, s.st, c, at)
	if err != nil {
		return nil, fmt.Errorf("loading log of %s: %w", conv, err)
	}
	ctxName := metaOf(c).Context
	out := []PendingCall{}
	for _, p := range pendingCalls(ml.entries) {
		w, ap, err := s.waitingFor(ctx, s.st, conv, ctxName, p.ToolCallContent)
		if err != nil {
			return nil, err
		}
		out = append(out, PendingCall{CallID: p.CallID, Name: p.Name, Input: p.Input, Seq: p.Seq, WaitingFor: w, Approval: ap})
	}
	slices.SortFunc(out, func(a, b PendingCall) int { return int(a.Seq - b.Seq) })
	return out, nil
}

// waitingFor says what a pending call of conv, which runs in ctxName,
// waits for, from its execution state, and the approval that asks when
// it is a person:
//
//   - its handler runs (marker executing): the server;
//   - a pending approval or question: a person; a decided one whose call
//     has not run yet (approved, or expired): the server, which runs it
//     or records that nobody answered;
//   - a frontend tool of the context (the turn handed it to the client, or
//     left it for the client): the client;
//   - anything else (a server tool's call not started yet, a tool the
//     context does not offer as a frontend tool): the server.
func (s *Service) waitingFor(ctx context.Context, q store.Queries, conv uuid.UUID, ctxName tool.ContextName, c ToolCallContent) (string, *store.Approval, error) {
	x, err := q.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: conv, CallID: c.CallID})
	switch {
	case errors.Is(err, store.ErrNotFound):
		x = nil
	case err != nil:
		return "", nil, fmt.Errorf("reading the state of call %q: %w", c.CallID, err)
	case x.State == store.ToolExecuting:
		return WaitingForServer, nil, nil
	}
	ap, err := q.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: conv, CallID: c.CallID})
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return "", nil, fmt.Errorf("finding approval for call %q: %w", c.CallID, err)
	case ap.Status == store.ApprovalPending:
		return WaitingForPerson, ap, nil
	case x == nil:
		return WaitingForServer, nil, nil
	}
	if s.frontendIn(ctxName, c.Name) {
		return WaitingForClient, nil, nil
	}
	return WaitingForServer, nil, nil
}

// frontendIn reports whether the tool name is offered as a frontend tool
// in ctxName: only such a call's result may come from a client.
func (s *Service) frontendIn(ctxName tool.ContextName, name string) bool {
	for _, tl := range s.opts.Tools(ctxName) {
		if tl.Name() == name {
			return tl.Tier() == tool.TierFrontend
		}
	}
	return false
}

// settleAudit records a call's outcome on its audit row. A call without one
// (made before calls had a row each) has nothing to settle.
func settleAudit(ctx context.Context, q store.Queries, p *store.AuditSettleParams) error {
	if _, err := q.AuditSettle(ctx, p); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("recording the outcome of call %s: %w", p.CallID, err)
	}
	return nil
}
