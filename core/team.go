package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/route"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Several agents in one conversation.
//
// A message enters a conversation the same way whoever wrote it (admit):
// a user entry under its author, the participants it brings in, and one
// turn naming the agent that answers first, with the ones after it in
// TurnArgs.Then. A person's message goes through Submit; an agent's final
// reply that addresses other agents goes through admit from the commit
// that records the reply, so the handover and the reply are one write.
//
// Who answers (package route): the agents the message names, in order;
// else, among the conversation's agents, by domain; else the channel's
// fallback. An agent's message wakes only the agents it names.
//
// Loop guards: the floor counts agent messages since a person last wrote;
// at the limit (loop.max_agent_messages_group, or _direct between two
// agents alone) agents are not woken there until a person writes, and one
// notice says so. An agent that said it is done (the done tool or its
// done_marker) is not woken by replies to its own messages.

// speech is a message entering a conversation.
type speech struct {
	conv    uuid.UUID
	author  store.Author
	content UserContent
	// channel is the platform channel, for its configured agents and its
	// fallback ("" for none).
	channel string
	// named is the agent the platform says was addressed ("" for none).
	named string
	// starter is the agent a new conversation was opened for ("" for none).
	starter string
	// replyTo is, for an agent's message, who wrote what its turn answered.
	replyTo store.Author
}

// admit appends a message and queues who answers it, in the caller's
// transaction. It returns the message's seq.
func (s *Service) admit(ctx context.Context, q store.Queries, sp *speech) (int64, error) {
	now := s.now()
	p := &store.EntryAppendParams{
		ConversationID: sp.conv, Kind: store.EntryUser, Author: sp.author, Content: mustJSON(sp.content), Now: now,
	}
	if _, isPerson := sp.author.User(); isPerson {
		// A person's first message names a conversation that has no name.
		p.Title = ConversationTitle(sp.content.Text)
	}
	res, err := q.EntryAppend(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("appending %s entry: %w", store.EntryUser, err)
	}
	seq := res.Entry.SeqValue()
	var order []string
	if from, isAgent := sp.author.Agent(); isAgent {
		order, err = s.wokenByAgent(ctx, q, sp, from)
		if err != nil || len(order) == 0 {
			return seq, err
		}
	} else if order, err = s.wokenByPerson(ctx, q, sp); err != nil {
		return 0, err
	}
	args := TurnArgs{TriggerSeq: seq, Reason: "message"}
	if len(order) > 0 {
		args.Agent, args.Then = order[0], order[1:]
	}
	if err := s.enqueueTurnArgs(ctx, q, sp.conv, args); err != nil {
		return 0, err
	}
	return seq, nil
}

// wokenByPerson decides who answers a person's message and brings them in.
// A conversation with one agent keeps it (nil: the conversation's agent).
func (s *Service) wokenByPerson(ctx context.Context, q store.Queries, sp *speech) ([]string, error) {
	now := s.now()
	join := func(name string, how store.ParticipantJoin, rejoin bool) error {
		_, err := q.ParticipantJoin(ctx, &store.ParticipantJoinParams{
			ConversationID: sp.conv, Author: store.AgentAuthor(name), Joined: how, Rejoin: rejoin, Now: now,
		})
		return err
	}
	if _, err := q.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: sp.conv, Author: sp.author, Joined: store.JoinWrote, Now: now}); err != nil {
		return nil, fmt.Errorf("adding the writer: %w", err)
	}
	if _, err := q.FloorPersonSpoke(ctx, &store.FloorParams{ConversationID: sp.conv, Now: now}); err != nil {
		return nil, err
	}
	if sp.starter != "" {
		if err := join(sp.starter, store.JoinStarted, false); err != nil {
			return nil, fmt.Errorf("adding agent %s: %w", sp.starter, err)
		}
	}
	for _, name := range s.agents().ChannelAgents(sp.channel) {
		if err := join(name, store.JoinChannel, false); err != nil {
			return nil, fmt.Errorf("adding agent %s: %w", name, err)
		}
	}
	named := route.Addressed(sp.content.Text, s.agentNames())
	if sp.named != "" && !slices.Contains(named, sp.named) {
		named = append([]string{sp.named}, named...)
	}
	parts, err := q.ParticipantList(ctx, sp.conv)
	if err != nil {
		return nil, err
	}
	agents := activeAgents(parts)
	var order []string
	how, rejoin := store.JoinAddressed, true
	switch {
	case len(named) > 0:
		order = named
	case len(agents) <= 1:
		// One agent: it answers, as it always has.
		return agents, s.wake(ctx, q, sp.conv, agents)
	default:
		d, err := s.settings().router.Next(sp.content.Text, agents, s.agents().Fallback(sp.channel))
		if err != nil {
			return nil, fmt.Errorf("choosing who answers: %w", err)
		}
		s.log.DebugContext(ctx, "routed a message", "conversation_id", sp.conv, "order", d.Order, "reason", d.Reason)
		order, how, rejoin = d.Order, store.JoinRouted, false
	}
	var out []string
	for _, name := range order {
		p, err := q.ParticipantJoin(ctx, &store.ParticipantJoinParams{
			ConversationID: sp.conv, Author: store.AgentAuthor(name), Joined: how, Rejoin: rejoin, Now: now,
		})
		if err != nil {
			return nil, fmt.Errorf("adding agent %s: %w", name, err)
		}
		if p.Active() {
			out = append(out, name)
		}
	}
	// A person's message is something new: whoever it wakes is no longer done.
	return out, s.wake(ctx, q, sp.conv, out)
}

// wokenByAgent is who an agent's message wakes: the agents it names,
// never itself, never one removed from the conversation, and not a done
// agent whose own message this one answers.
func (s *Service) wokenByAgent(ctx context.Context, q store.Queries, sp *speech, from string) ([]string, error) {
	parts, err := q.ParticipantList(ctx, sp.conv)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range route.Addressed(sp.content.Text, s.agentNames()) {
		if name == from {
			continue
		}
		if p := participantOf(parts, store.AgentAuthor(name)); p != nil {
			if !p.Active() || (p.DoneSeq != nil && sp.replyTo == p.Author) {
				continue
			}
		}
		if _, err := q.ParticipantJoin(ctx, &store.ParticipantJoinParams{
			ConversationID: sp.conv, Author: store.AgentAuthor(name), Joined: store.JoinAddressed, Now: s.now(),
		}); err != nil {
			return nil, fmt.Errorf("adding agent %s: %w", name, err)
		}
		out = append(out, name)
	}
	return out, s.wake(ctx, q, sp.conv, out)
}

// wake clears the done mark of the agents about to answer.
func (s *Service) wake(ctx context.Context, q store.Queries, conv uuid.UUID, names []string) error {
	for _, name := range names {
		if _, err := q.ParticipantSetDone(ctx, &store.ParticipantSetDoneParams{
			ConversationID: conv, Author: store.AgentAuthor(name), Now: s.now(),
		}); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("waking agent %s: %w", name, err)
		}
	}
	return nil
}

func participantOf(parts []*store.Participant, a store.Author) *store.Participant {
	for _, p := range parts {
		if p.Author == a {
			return p
		}
	}
	return nil
}

// activeAgents are the names of the agents taking part, in joining order.
func activeAgents(parts []*store.Participant) []string {
	var out []string
	for _, p := range parts {
		if name, ok := p.IsAgent(); ok && p.Active() {
			out = append(out, name)
		}
	}
	return out
}

func (s *Service) agentNames() []string {
	out := make([]string, len(s.agents().Agents))
	for i, a := range s.agents().Agents {
		out[i] = a.Name
	}
	return out
}

// loopLimit is how many agent messages in a row a conversation takes: the
// direct limit when its only participants are two agents, else the group's.
func (s *Service) loopLimit(parts []*store.Participant) int {
	loop := s.agents().Loop
	group := cmpOr(loop.MaxAgentMessagesGroup, config.DefaultMaxAgentMessagesGroup)
	direct := cmpOr(loop.MaxAgentMessagesDirect, config.DefaultMaxAgentMessagesDirect)
	var active, agents int
	for _, p := range parts {
		if p.Active() {
			active++
			if _, ok := p.IsAgent(); ok {
				agents++
			}
		}
	}
	if active == 2 && agents == 2 {
		return direct
	}
	return group
}

// lowestLoopLimit is the lower of the limits loopLimit picks from: a
// streak below it is under the limit whoever takes part.
func (s *Service) lowestLoopLimit() int {
	loop := s.agents().Loop
	return min(cmpOr(loop.MaxAgentMessagesGroup, config.DefaultMaxAgentMessagesGroup),
		cmpOr(loop.MaxAgentMessagesDirect, config.DefaultMaxAgentMessagesDirect))
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// halted reports whether agents may not be woken in conv: the floor has
// reached the limit and no person wrote since.
func (s *Service) halted(ctx context.Context, q store.Queries, conv uuid.UUID) (bool, error) {
	f, err := q.FloorGet(ctx, conv)
	if err != nil {
		return false, err
	}
	if f.AgentStreak == 0 {
		return false, nil
	}
	parts, err := q.ParticipantList(ctx, conv)
	if err != nil {
		return false, err
	}
	return f.AgentStreak >= s.loopLimit(parts), nil
}

// haltNotice is the one line people see when agents stop answering each
// other.
func haltNotice(n int) string {
	return fmt.Sprintf("Agents have sent %d messages in a row here with no person in between, so they stop answering each other until someone writes.", n)
}

// Invite adds an agent to a conversation (`!invite scout`): it answers
// there from now on when addressed or routed to. Someone removed comes
// back.
func (s *Service) Invite(ctx context.Context, conv uuid.UUID, name string) error {
	if _, ok := s.agents().Find(name); !ok {
		return invalid("no agent named %q (agents: %s)", name, strings.Join(s.agentNames(), ", "))
	}
	if _, err := s.st.ParticipantJoin(ctx, &store.ParticipantJoinParams{
		ConversationID: conv, Author: store.AgentAuthor(name), Joined: store.JoinInvited, Rejoin: true, Now: s.now(),
	}); err != nil {
		return fmt.Errorf("inviting %s to %s: %w", name, conv, err)
	}
	return nil
}

// Remove takes an agent out of a conversation (`!remove scout`): it is not
// routed to there, nor woken by other agents, until invited again or named
// by a person.
func (s *Service) Remove(ctx context.Context, conv uuid.UUID, name string) error {
	if _, ok := s.agents().Find(name); !ok {
		return invalid("no agent named %q (agents: %s)", name, strings.Join(s.agentNames(), ", "))
	}
	_, err := s.st.ParticipantRemove(ctx, &store.ParticipantRemoveParams{ConversationID: conv, Author: store.AgentAuthor(name), Now: s.now()})
	if errors.Is(err, store.ErrNotFound) {
		return invalid("%s is not in this conversation", name)
	}
	if err != nil {
		return fmt.Errorf("removing %s from %s: %w", name, conv, err)
	}
	return nil
}

// Participants lists who takes part in a conversation.
func (s *Service) Participants(ctx context.Context, conv uuid.UUID) ([]*store.Participant, error) {
	ps, err := s.st.ParticipantList(ctx, conv)
	if err != nil {
		return nil, fmt.Errorf("listing participants of %s: %w", conv, err)
	}
	return ps, nil
}

// AgentTalk opens a conversation between two agents alone: From's
// first message goes in through the same path as any message and wakes To
// when it names To. Place, when set, binds the conversation there so
// people can watch it. Side threads between agents build on it.
type AgentTalk struct {
	From, To string
	Text     string
	Place    *store.Place
}

// OpenAgentTalk opens the conversation AgentTalk describes and returns it.
func (s *Service) OpenAgentTalk(ctx context.Context, p AgentTalk) (uuid.UUID, error) {
	meta := ConversationMeta{Context: tool.ContextAPI}
	if p.Place != nil {
		meta.Context = tool.ContextName(p.Place.Platform)
	}
	var conv uuid.UUID
	err := s.st.InTx(ctx, func(q store.Queries) error {
		var err error
		conv, err = s.openTalk(ctx, q, p, p.From, meta)
		return err
	})
	if err != nil {
		return uuid.Nil, err
	}
	return conv, nil
}

// openTalk opens a conversation between two agents in the caller's
// transaction: owner's conversation, with both agents taking part, and
// From's first message admitted like any message. Side threads and
// delegated tasks open theirs here.
func (s *Service) openTalk(ctx context.Context, q store.Queries, p AgentTalk, owner string, meta ConversationMeta) (uuid.UUID, error) {
	if _, ok := s.agents().Find(p.From); !ok {
		return uuid.Nil, invalid("no agent named %q", p.From)
	}
	if _, ok := s.agents().Find(p.To); !ok || p.To == p.From {
		return uuid.Nil, invalid("no other agent named %q", p.To)
	}
	if strings.TrimSpace(p.Text) == "" {
		return uuid.Nil, invalid("the first message is empty")
	}
	now := s.now()
	var conv uuid.UUID
	err := func() error {
		create := store.ConversationCreateParams{AgentID: s.agentID(owner), Title: title(p.Text), Metadata: meta.Encode(), Now: now}
		if p.Place != nil {
			b, err := q.BindingEnsure(ctx, &store.BindingEnsureParams{Place: *p.Place, Conversation: create, Now: now})
			if err != nil {
				return err
			}
			conv = b.Binding.ConversationID
		} else {
			c, err := q.ConversationCreate(ctx, &create)
			if err != nil {
				return err
			}
			conv = c.ID
		}
		for _, name := range []string{p.From, p.To} {
			if _, err := q.ParticipantJoin(ctx, &store.ParticipantJoinParams{
				ConversationID: conv, Author: store.AgentAuthor(name), Joined: store.JoinStarted, Now: now,
			}); err != nil {
				return err
			}
		}
		_, err := s.admit(ctx, q, &speech{conv: conv, author: store.AgentAuthor(p.From), content: agentContent(p.From, p.Text)})
		return err
	}()
	if err != nil {
		return uuid.Nil, fmt.Errorf("opening a conversation between %s and %s: %w", p.From, p.To, err)
	}
	return conv, nil
}

// agentContent is an agent's message as a user entry holds it: the same
// shape as a person's, with the agent's name as the writer's.
func agentContent(name, text string) UserContent {
	return UserContent{Text: text, UserName: name}
}

// DelegationByID reads delegation id as recorded (Delegation decodes its
// choice too); who may see it is who may use the conversation it came
// from.
func (s *Service) DelegationByID(ctx context.Context, id uuid.UUID) (*Delegation, error) {
	return s.st.DelegationGet(ctx, id)
}

// Delegations lists what conversation from delegated.
func (s *Service) Delegations(ctx context.Context, from uuid.UUID) ([]*Delegation, error) {
	return s.st.DelegationList(ctx, from)
}

// DelegationOf is the delegation that made conversation child
// (ErrNotFound: none did).
func (s *Service) DelegationOf(ctx context.Context, child uuid.UUID) (*Delegation, error) {
	return s.st.DelegationByChild(ctx, child)
}

// SideThreads lists the side threads conversation parent opened.
func (s *Service) SideThreads(ctx context.Context, parent uuid.UUID) ([]*SideThread, error) {
	return s.st.SideThreadList(ctx, parent)
}

// SideThreadOf is the side thread that conversation child is
// (ErrNotFound: it is none).
func (s *Service) SideThreadOf(ctx context.Context, child uuid.UUID) (*SideThread, error) {
	return s.st.SideThreadByChild(ctx, child)
}
