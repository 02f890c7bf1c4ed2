package core

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/route"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Side threads: an agent that writes <dm target="nova">…</dm> in a reply
// talks with nova apart from the conversation. The tag is the whole
// mechanism: it is taken out of what people see (also from the live
// stream), and the message goes into a side conversation between the two
// agents (the child), opened on the first tag and reused while it is in
// progress, linked to the entry that carried the tag. The parent gets a
// side_thread entry, the marker people see under the message; in a DM
// there is no marker, and only the result is posted back.
//
// Either agent resolves the side thread with resolve_side_thread: the
// summary is posted back to the parent as a side_thread entry, and the
// marker's platform messages are edited in place (a SideThreadMarkerArgs
// item under the parent's lease). A side thread whose child has had no
// message for side_threads.abandon_after is abandoned by Sweep, and its
// marker edited the same way.

// DM is one <dm target="…">…</dm> tag of an agent's reply.
type DM struct {
	Target string `json:"target"`
	Text   string `json:"text"`
}

var (
	dmTagRE    = regexp.MustCompile(`(?s)<dm\s+target\s*=\s*"([^"]*)"\s*>(.*?)</dm>`)
	blankRunRE = regexp.MustCompile(`\n{3,}`)
)

// SplitDMs takes the <dm> tags out of an agent's text: what people see,
// and the tags in order.
func SplitDMs(text string) (string, []DM) {
	var dms []DM
	out := dmTagRE.ReplaceAllStringFunc(text, func(tag string) string {
		m := dmTagRE.FindStringSubmatch(tag)
		dms = append(dms, DM{Target: strings.TrimPrefix(strings.TrimSpace(m[1]), "@"), Text: strings.TrimSpace(m[2])})
		return ""
	})
	if len(dms) == 0 {
		return text, nil
	}
	return strings.TrimSpace(blankRunRE.ReplaceAllString(out, "\n\n")), dms
}

// tag is the tag as the agent wrote it, for its own history.
func (d DM) tag() string { return fmt.Sprintf("<dm target=%q>%s</dm>", d.Target, d.Text) }

// dmFilter keeps <dm> tags out of the live stream: text from "<dm" to
// "</dm>" is held back, and so is a tail that may be the start of a tag.
type dmFilter struct {
	pending string
	inTag   bool
}

const (
	dmOpen  = "<dm"
	dmClose = "</dm>"
)

// feed takes the next delta and returns what may be shown of it.
func (f *dmFilter) feed(delta string) string {
	f.pending += delta
	var out strings.Builder
	for {
		if f.inTag {
			i := strings.Index(f.pending, dmClose)
			if i < 0 {
				if n := len(f.pending); n > len(dmClose) {
					f.pending = f.pending[n-len(dmClose):]
				}
				return out.String()
			}
			f.pending, f.inTag = f.pending[i+len(dmClose):], false
			continue
		}
		if i := strings.Index(f.pending, dmOpen); i >= 0 {
			out.WriteString(f.pending[:i])
			f.pending, f.inTag = f.pending[i+len(dmOpen):], true
			continue
		}
		keep := 0
		for k := min(len(dmOpen)-1, len(f.pending)); k > 0; k-- {
			if strings.HasPrefix(dmOpen, f.pending[len(f.pending)-k:]) {
				keep = k
				break
			}
		}
		out.WriteString(f.pending[:len(f.pending)-keep])
		f.pending = f.pending[len(f.pending)-keep:]
		return out.String()
	}
}

// reset forgets what the filter held: the model call starts over.
func (f *dmFilter) reset() { *f = dmFilter{} }

// addressed makes text name target, so that admitting it wakes target.
func (s *Service) addressed(target, text string) string {
	if slices.Contains(route.Addressed(text, s.agentNames()), target) {
		return text
	}
	return "@" + target + " " + text
}

// openSideThreads sends each of a reply's tags, in the transaction that
// appends the reply (the entry e), and returns the entries it appended to
// the parent: markers, and notes for tags that went nowhere.
func (t *turn) openSideThreads(ctx context.Context, q store.Queries, e *store.Entry, dms []DM) ([]*store.Entry, error) {
	var out []*store.Entry
	for _, dm := range dms {
		es, err := t.openSideThread(ctx, q, e.SeqValue(), dm)
		if err != nil {
			return nil, fmt.Errorf("side thread of %s with %s: %w", t.agent.Name, dm.Target, err)
		}
		out = append(out, es...)
	}
	return out, nil
}

func (t *turn) openSideThread(ctx context.Context, q store.Queries, parentSeq int64, dm DM) ([]*store.Entry, error) {
	s, me := t.s, t.agent.Name
	note := func(text string) ([]*store.Entry, error) {
		p := t.appendParams(store.EntrySystem, SystemContent{Text: text})
		p.Author = store.SystemAuthor
		res, err := q.EntryAppend(ctx, p)
		if err != nil {
			return nil, err
		}
		return []*store.Entry{res.Entry}, nil
	}
	if _, ok := s.agents().Find(dm.Target); !ok || dm.Target == me {
		return note(fmt.Sprintf("Your <dm> to %q was not sent: there is no other agent by that name (agents: %s).", dm.Target, strings.Join(s.agentNames(), ", ")))
	}
	if dm.Text == "" {
		return note(fmt.Sprintf("Your <dm> to %s was not sent: it was empty.", dm.Target))
	}
	text := s.addressed(dm.Target, dm.Text)
	now := s.now()
	open, err := q.SideThreadFindOpen(ctx, &store.SideThreadFindOpenParams{ParentID: t.conv.ID, A: me, B: dm.Target})
	switch {
	case err == nil:
		if _, err := s.admit(ctx, q, &speech{conv: open.ChildID, author: store.AgentAuthor(me), content: agentContent(me, text)}); err != nil {
			return nil, err
		}
		_, err := q.SideThreadProgress(ctx, &store.SideThreadProgressParams{ID: open.ID, Now: now})
		return nil, err
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	child, err := s.openTalk(ctx, q, AgentTalk{From: me, To: dm.Target, Text: text}, dm.Target, ConversationMeta{Context: t.meta.Context})
	if err != nil {
		return nil, err
	}
	th, err := q.SideThreadCreate(ctx, &store.SideThreadCreateParams{
		ParentID: t.conv.ID, ParentSeq: parentSeq, ChildID: child, Opener: me, Peer: dm.Target, Now: now,
	})
	if err != nil {
		return nil, err
	}
	if t.meta.DM {
		// A task started in a DM: the work stays out of sight, and only
		// its result is posted back.
		return nil, nil
	}
	res, err := q.EntryAppend(ctx, t.appendParams(store.EntrySideThread, SideThreadContent{
		SideThreadID: th.ID, Event: SideThreadOpened, Opener: me, Peer: dm.Target, ChildID: child,
	}))
	if err != nil {
		return nil, err
	}
	if _, err := q.SideThreadMark(ctx, &store.SideThreadMarkParams{ID: th.ID, EntryID: res.Entry.ID, Now: now}); err != nil {
		return nil, err
	}
	return []*store.Entry{res.Entry}, nil
}

// SideThreadMarkerArgs are the args of an item that edits a side thread's
// marker to its current status, on every binding of the parent, in place
// (deliver.Deliverer.HandleSideThreadMarker). It runs under the parent's
// lease, after the marker was posted.
type SideThreadMarkerArgs struct {
	SideThreadID uuid.UUID `json:"side_thread_id"`
	// Mirror: only copy the side conversation's new messages into the
	// marker's platform thread, where the platform has one (Discord); the
	// marker is left as it is.
	Mirror bool `json:"mirror,omitempty"`
}

// WorkSideThreadMarker is the kind of SideThreadMarkerArgs.
const WorkSideThreadMarker = "side_thread_marker"

// Kind is WorkSideThreadMarker.
func (SideThreadMarkerArgs) Kind() string { return WorkSideThreadMarker }

// finishSideThread resolves or abandons a side thread and posts what
// people see, in the caller's transaction: the summary (a resolved side
// thread; abandoning posts nothing but the marker's new status), and the
// edit of the marker.
func (s *Service) finishSideThread(ctx context.Context, q store.Queries, id uuid.UUID, status store.SideThreadStatus, summary, by string) (*store.SideThread, error) {
	now := s.now()
	th, err := q.SideThreadFinish(ctx, &store.SideThreadFinishParams{ID: id, Status: status, Summary: summary, FinishedBy: by, Now: now})
	if err != nil {
		return nil, err
	}
	event, author := SideThreadResolved, store.AgentAuthor(by)
	if status == store.SideThreadAbandoned {
		event, author = SideThreadAbandoned, store.SystemAuthor
	}
	if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: th.ParentID, Kind: store.EntrySideThread, Author: author, Now: now,
		Content: mustJSON(SideThreadContent{SideThreadID: th.ID, Event: event, Opener: th.Opener, Peer: th.Peer, ChildID: th.ChildID, Summary: summary, By: by}),
	}); err != nil {
		return nil, fmt.Errorf("posting the end of side thread %s back: %w", th.ID, err)
	}
	if event == SideThreadResolved {
		if err := enqueueDelivery(ctx, q, th.ParentID, now); err != nil {
			return nil, err
		}
	}
	if th.MarkerEntryID != nil {
		key := fmt.Sprintf("side-thread-marker:%s:%s", th.ID, th.Status)
		if _, err := Enqueue(ctx, q, SideThreadMarkerArgs{SideThreadID: th.ID}, &EnqueueOpts{ConversationID: &th.ParentID, UniqueKey: &key, Now: now}); err != nil {
			return nil, fmt.Errorf("queueing the marker edit of side thread %s: %w", th.ID, err)
		}
	}
	return th, nil
}

// sideThreadProgress moves the side thread of conv (if conv is one's
// child) forward: something was said in it.
func (s *Service) sideThreadProgress(ctx context.Context, q store.Queries, conv uuid.UUID) error {
	th, err := q.SideThreadByChild(ctx, conv)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err = q.SideThreadProgress(ctx, &store.SideThreadProgressParams{ID: th.ID, Now: s.now()}); err != nil {
		return err
	}
	if th.MarkerEntryID == nil {
		return nil // a DM's side thread shows nothing
	}
	// People following the marker's platform thread see what was said.
	if _, err := Enqueue(ctx, q, SideThreadMarkerArgs{SideThreadID: th.ID, Mirror: true}, &EnqueueOpts{ConversationID: &th.ParentID, Now: s.now()}); err != nil {
		return fmt.Errorf("queueing the copy of side thread %s's messages: %w", th.ID, err)
	}
	return nil
}

// abandonStale abandons the side threads with no progress for
// side_threads.abandon_after.
func (s *Service) abandonStale(ctx context.Context) (int, error) {
	stale, err := s.st.SideThreadListStale(ctx, &store.SideThreadListStaleParams{Before: s.now().Add(-s.agents().AbandonAfter()), Limit: sweepBatch})
	if err != nil {
		return 0, fmt.Errorf("listing stale side threads: %w", err)
	}
	n := 0
	var errs []error
	for _, th := range stale {
		err := s.st.InTx(ctx, func(q store.Queries) error {
			_, err := s.finishSideThread(ctx, q, th.ID, store.SideThreadAbandoned, "", string(store.SystemAuthor))
			return err
		})
		switch {
		case errors.Is(err, store.ErrConflict):
			// Resolved meanwhile.
		case err != nil:
			errs = append(errs, fmt.Errorf("abandoning side thread %s: %w", th.ID, err))
		default:
			n++
		}
	}
	return n, errors.Join(errs...)
}

// SideThread reads a side thread (the API shows them).
func (s *Service) SideThread(ctx context.Context, id uuid.UUID) (*store.SideThread, error) {
	th, err := s.st.SideThreadGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading side thread %s: %w", id, err)
	}
	return th, nil
}

// ResolveSideThreadToolName is the tool either agent of a side thread
// calls to end it with a summary.
const ResolveSideThreadToolName = "resolve_side_thread"

type resolveInput struct {
	Summary string `json:"summary" jsonschema:"what the side conversation concluded, for the people of the original conversation; a few sentences"`
}

type resolveOutput struct {
	Resolved bool   `json:"resolved"`
	PostedTo string `json:"posted_to"`
}

func (s *Service) resolveSideThread(ctx context.Context, req *tool.Request, in resolveInput) (resolveOutput, error) {
	if strings.TrimSpace(in.Summary) == "" {
		return resolveOutput{}, errors.New("summary is empty: say what the side conversation concluded")
	}
	th, err := s.st.SideThreadByChild(ctx, req.ConversationID)
	if errors.Is(err, store.ErrNotFound) {
		return resolveOutput{}, errors.New("this conversation is not a side thread: resolve_side_thread works only inside one")
	}
	if err != nil {
		return resolveOutput{}, err
	}
	if !slices.Contains(th.Agents(), req.Agent) {
		return resolveOutput{}, fmt.Errorf("only %s and %s can resolve this side thread", th.Opener, th.Peer)
	}
	err = s.st.InTx(ctx, func(q store.Queries) error {
		_, err := s.finishSideThread(ctx, q, th.ID, store.SideThreadResolved, strings.TrimSpace(in.Summary), req.Agent)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return resolveOutput{}, fmt.Errorf("this side thread is %s already", th.Status)
	}
	if err != nil {
		return resolveOutput{}, err
	}
	return resolveOutput{Resolved: true, PostedTo: th.ParentID.String()}, nil
}

// sideThreadPart is what the stable block says about side threads: the
// tag and who can be reached, where the conversation's channel (or the
// file) says agents are told; and, in a side conversation, what it is.
// th is the side thread the conversation is the child of (nil: none), bs
// its bindings.
func (s *Service) sideThreadPart(th *store.SideThread, bs []*store.Binding, name string) string {
	if th != nil {
		other := th.Peer
		if other == name {
			other = th.Opener
		}
		return fmt.Sprintf("This is a side conversation between you and %s, opened from another conversation. "+
			"When it has reached its answer, call %s with a short summary: it is posted back there.", other, ResolveSideThreadToolName)
	}
	var others []string
	for _, n := range s.agentNames() {
		if n != name {
			others = append(others, n)
		}
	}
	if len(others) == 0 {
		return ""
	}
	channel := ""
	if len(bs) > 0 {
		channel = bs[0].Place.Channel
	}
	tell, prompt := s.agents().SideThreadsFor(channel)
	if !tell {
		return ""
	}
	return prompt + "\nAgents you can reach: " + strings.Join(others, ", ") + "."
}

// RegisterTeamTools registers the tools of agents working together:
// resolve_side_thread and delegate. Call it after New, before the worker
// starts.
func (s *Service) RegisterTeamTools(r *tool.Registry) error {
	if err := tool.Register(r, tool.Def{
		Name: ResolveSideThreadToolName,
		Description: "End the side conversation you are in with a summary of what it concluded. The summary is posted " +
			"back to the conversation the side thread was opened from, and its marker there shows it resolved.",
		Risk: tool.RiskLow,
		Tier: tool.TierServer,
	}, s.resolveSideThread); err != nil {
		return err
	}
	return tool.Register(r, tool.Def{
		Name: DelegateToolName,
		Description: "Hand a task to another agent. Name the agent, or leave it out and the server picks the best one " +
			"(by what the task is about, role, availability, load, track record, cost, latency and the tools it needs). " +
			"The task runs in that agent's own conversation; its result comes back here as a message and wakes you.",
		Risk: tool.RiskLow,
		Tier: tool.TierServer,
	}, s.delegate)
}
