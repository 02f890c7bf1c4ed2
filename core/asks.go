package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// An ask is a question put to an agent from outside a chat whose answer
// goes back to whoever asked rather than into a conversation people read:
// a Slack Workflow Builder step ("Ask agent X") is one. The platform
// adapter calls Ask on the ack; the answer reaches it through its
// AskReplier once the turn is over:
//
//	Ask ═► dedupe(platform, key) · conversation · instruction · work(turn)
//	       · work(ask_answer, after the turn, unique per key)
//	                                  │
//	worker ── turn (any instance) ────┘
//	worker ── ask_answer: turn still queued, running or paused?
//	            yes, before the deadline ─► look again later (ask_answer, check+1)
//	            no, or past the deadline ─► AskOutcome ─► AskReplier.ReplyAsk
//
// What happens on failure:
//   - The platform delivers the event again (a retry, another instance):
//     the dedupe row commits with the conversation, so the second Ask is
//     Duplicate and starts nothing.
//   - The process dies mid-turn: the turn is taken over as any turn is; the
//     ask_answer item waits in the store and runs after it.
//   - The process dies after ReplyAsk reached the platform but before the
//     item completed: the item runs again and the replier is called a
//     second time with the same outcome; a replier must take a repeated
//     reply as done (Slack answers execution_not_in_running_state).
//   - The model fails, or the turn ends without a word: the outcome is a
//     Failure with the reason people would have been shown.
//   - The turn outlives the deadline (stuck waiting for an approval nobody
//     gives, or a slow model): the outcome is a Failure saying so, and the
//     running turn is asked to stop.

// WorkAskAnswer hands the outcome of an ask to its platform once the turn
// is over (Service.RunAskAnswer).
const WorkAskAnswer = "ask_answer"

// DefaultAskTimeout is how long an ask waits for its answer when
// AskParams.Deadline is not set.
const DefaultAskTimeout = 10 * time.Minute

// AskParams is one ask.
type AskParams struct {
	// Platform is whose AskReplier gets the outcome (SetAskReplier).
	Platform string
	// Key is the platform's id of the ask (a Slack function_execution_id):
	// a second Ask with the same platform and key is a Duplicate.
	Key string
	// Agent answers; "" is the default agent.
	Agent string
	// UserID is the person the ask is for, when the platform names one.
	UserID string
	// Text is the question, with whatever the platform gave as its inputs.
	Text string
	// Reply is the platform's own data for its answer (the team and the
	// execution id), handed back to ReplyAsk untouched. It is stored with
	// the work item: no secrets.
	Reply json.RawMessage
	// Deadline ends the wait: past it the ask fails as timed out. Zero:
	// DefaultAskTimeout from now.
	Deadline time.Time
}

func (p *AskParams) validate() error {
	var errs []error
	if p.Platform == "" {
		errs = append(errs, errors.New("ask needs a platform"))
	}
	if p.Key == "" {
		errs = append(errs, errors.New("ask needs a key"))
	}
	if strings.TrimSpace(p.Text) == "" {
		errs = append(errs, errors.New("ask needs a question (text is empty)"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// AskResult says what Ask did.
type AskResult struct {
	ConversationID uuid.UUID
	// Duplicate: an ask with this key was taken before; nothing was stored.
	Duplicate bool
}

// AskOutcome is how an ask ended: an Answer, or a Failure saying why
// there is none.
type AskOutcome struct {
	Answer  string
	Failure string
	// ConversationID is where the turn ran (for the logs and the console).
	ConversationID uuid.UUID
}

// AskReplier hands an ask's outcome back to its platform. ReplyAsk may be
// called again with the same outcome after a crash, and must take that as
// done. An error is retried with backoff; a reply the platform refuses for
// good should be logged and answered nil.
type AskReplier interface {
	ReplyAsk(ctx context.Context, reply json.RawMessage, out *AskOutcome) error
}

// SetAskReplier names the adapter that answers a platform's asks. Call it
// at start-up, before the worker runs.
func (s *Service) SetAskReplier(platform string, r AskReplier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.askRepliers == nil {
		s.askRepliers = map[string]AskReplier{}
	}
	s.askRepliers[platform] = r
}

func (s *Service) askReplier(platform string) AskReplier {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.askRepliers[platform]
}

// AskAnswerArgs are the args of a WorkAskAnswer item.
type AskAnswerArgs struct {
	Platform string          `json:"platform"`
	Key      string          `json:"key"`
	Seq      int64           `json:"seq"`
	Reply    json.RawMessage `json:"reply,omitempty"`
	Deadline time.Time       `json:"deadline"`
	Check    int             `json:"check,omitempty"`
}

// Kind is WorkAskAnswer.
func (AskAnswerArgs) Kind() string { return WorkAskAnswer }

// Ask starts a turn that answers p.Text in a conversation of its own (no
// platform place: nothing of it is posted) and queues the hand-back of its
// outcome, in one transaction with the dedupe row. The turn runs in the
// scheduler's context: nobody watches it, so frontend tools have their
// headless equivalents.
func (s *Service) Ask(ctx context.Context, p *AskParams) (*AskResult, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	ag := s.agents().Default()
	if p.Agent != "" {
		a, ok := s.agents().Find(p.Agent)
		if !ok {
			return nil, invalid("no agent named %q", p.Agent)
		}
		ag = a
	}
	now := s.now()
	deadline := p.Deadline
	if deadline.IsZero() {
		deadline = now.Add(DefaultAskTimeout)
	}
	res := &AskResult{}
	err := s.st.InTx(ctx, func(q store.Queries) error {
		*res = AskResult{}
		fresh, err := q.InboundRecord(ctx, &store.InboundRecordParams{Platform: p.Platform, EventID: "ask:" + p.Key, Now: now})
		if err != nil {
			return fmt.Errorf("recording the ask: %w", err)
		}
		if !fresh {
			res.Duplicate = true
			return nil
		}
		conv, err := s.createConversation(ctx, q, &CreateConversationParams{
			Agent: ag.Name, Context: tool.ContextScheduler, Starter: p.UserID, Title: ConversationTitle(p.Text),
		})
		if err != nil {
			return err
		}
		seq, err := s.appendAndQueue(ctx, q, conv.ID, store.EntrySystem, "system", SystemContent{Text: p.Text}, "ask")
		if err != nil {
			return err
		}
		res.ConversationID = conv.ID
		return enqueueAskAnswer(ctx, q, conv.ID, AskAnswerArgs{
			Platform: p.Platform, Key: p.Key, Seq: seq, Reply: p.Reply, Deadline: deadline,
		}, now, now)
	})
	if err != nil {
		return nil, fmt.Errorf("asking %s for %s %s: %w", ag.Name, p.Platform, p.Key, err)
	}
	return res, nil
}

// enqueueAskAnswer queues the look at an ask's turn. It sits on the ask's
// conversation below the turn's priority, so the worker hands it out when
// no turn of that conversation runs or waits; one item per look (check).
func enqueueAskAnswer(ctx context.Context, q Enqueuer, conv uuid.UUID, args AskAnswerArgs, at, now time.Time) error {
	key := fmt.Sprintf("ask:%s:%s:%d", args.Platform, args.Key, args.Check)
	_, err := Enqueue(ctx, q, args, &EnqueueOpts{
		ConversationID: &conv, RunAt: at, Priority: -1, UniqueKey: &key, MaxAttempts: 10, Now: now,
	})
	if err != nil {
		return fmt.Errorf("queueing the answer of %s ask %s: %w", args.Platform, args.Key, err)
	}
	return nil
}

// askRecheck is the longest wait between two looks at a running ask.
const askRecheck = 15 * time.Second

// RunAskAnswer runs a WorkAskAnswer item: once the ask's turn is over (or
// its deadline passed) it reads the outcome and hands it to the
// platform's AskReplier; before, it queues the next look.
func (s *Service) RunAskAnswer(ctx context.Context, item *store.WorkItem, args AskAnswerArgs) error {
	if item.ConversationID == nil {
		return fmt.Errorf("ask answer item %s has no conversation", item.ID)
	}
	conv := *item.ConversationID
	now := s.now()
	busy, err := s.askBusy(ctx, conv)
	if err != nil {
		return err
	}
	out := &AskOutcome{ConversationID: conv}
	switch {
	case busy && now.Before(args.Deadline):
		next := args
		next.Check++
		wait := min(askRecheck, time.Second<<min(args.Check, 4))
		return s.st.InTx(ctx, func(q store.Queries) error {
			return enqueueAskAnswer(ctx, q, conv, next, now.Add(wait), now)
		})
	case busy:
		out.Failure = "The agent did not answer in time."
		if _, err := s.StopConversation(ctx, conv, "The ask's deadline"); err != nil {
			s.log.WarnContext(ctx, "stopping the turn of an ask that timed out", "conversation_id", conv, "error", err)
		}
	default:
		a, err := s.AnswerAfter(ctx, conv, args.Seq)
		if err != nil {
			return err
		}
		switch {
		case a.Failure != "":
			out.Failure = a.Failure
		case len(a.Texts) == 0 && a.Card == nil:
			out.Failure = "The agent ended its turn without an answer."
		case len(a.Texts) == 0:
			out.Answer = string(a.Card)
		default:
			out.Answer = strings.Join(a.Texts, "\n\n")
		}
	}
	r := s.askReplier(args.Platform)
	if r == nil {
		// Wired at start-up: the retry finds it.
		return fmt.Errorf("answering %s ask %s: no replier for %s", args.Platform, args.Key, args.Platform)
	}
	if err := r.ReplyAsk(ctx, args.Reply, out); err != nil {
		return fmt.Errorf("answering %s ask %s: %w", args.Platform, args.Key, err)
	}
	s.log.InfoContext(ctx, "ask answered", "platform", args.Platform, "key", args.Key, "conversation_id", conv, "failed", out.Failure != "")
	return nil
}

// askBusy reports whether an ask's conversation still has a turn to come:
// one queued or running, or a pause for a person.
func (s *Service) askBusy(ctx context.Context, conv uuid.UUID) (bool, error) {
	c, err := s.st.ConversationGet(ctx, conv)
	if err != nil {
		return false, fmt.Errorf("reading conversation %s: %w", conv, err)
	}
	if c.Status == store.ConversationPaused {
		return true, nil
	}
	q, err := s.TurnQueue(ctx, conv)
	if err != nil {
		return false, err
	}
	return !q.Empty(), nil
}
