package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/route"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Delegation: an agent hands a task to another with the delegate tool, by
// name or, with none, to the eligible agent with the highest score. The
// task becomes the first message of a conversation of the delegate's own
// (admitted like any agent's message, so it is a turn in the queue); the
// choice, with every candidate's factors, is recorded on a delegations
// row. When the delegate replies there, the reply is the result: once the
// delegating conversation's turn is over (an item under its lease), the
// row is completed and the result enters that conversation as a message
// from the delegate naming the delegating agent, which wakes it.
//
// The score is the weighted sum (delegation.weights.*) of factors each
// between 0 and 1:
//
//	capability    the agent's best domain score for the task (package
//	              route's), over the best any candidate reaches
//	role          fit of its role: for a one-domain task a specialist of
//	              that domain 1, a generalist 0.5; for a task of several
//	              domains, or none, a generalist 1, a specialist of a
//	              matched domain 0.5; else 0
//	available     1 when it can run now: its model backend can be built
//	              (the spec parses, the credentials are there) and it is
//	              under max_concurrent running turns; else 0
//	load          1 / (1 + open work items of its conversations)
//	track_record  (completed + 1) / (delegated + 2) of its delegated tasks
//	cost          1 - its list price / the highest among the candidates
//	              (input + output per million tokens; 0.5 when unknown)
//	latency       1 - its typical latency / the highest (0.5 when
//	              unknown): the mean time of its turns of the last 7
//	              days once it has 3, else its latency setting
//	tools         the share of the task's required tools it may use
//
// Agents whose backend cannot be built are not eligible; ties go to the
// agent declared first.

// DelegateToolName is the tool that hands a task to another agent.
const DelegateToolName = "delegate"

type delegateInput struct {
	Task  string   `json:"task" jsonschema:"the task, with everything the other agent needs to know to do it"`
	Agent string   `json:"agent,omitempty" jsonschema:"the agent to hand it to; leave out to let the server pick the best one"`
	Tools []string `json:"tools,omitempty" jsonschema:"names of tools the task needs; the agent chosen should have them"`
}

type delegateOutput struct {
	DelegationID string  `json:"delegation_id"`
	Agent        string  `json:"agent"`
	ChosenBy     string  `json:"chosen_by"`
	Score        float64 `json:"score"`
	Note         string  `json:"note"`
}

// Factors are one candidate's factors, each between 0 and 1.
type Factors struct {
	Capability  float64 `json:"capability"`
	Role        float64 `json:"role"`
	Available   float64 `json:"available"`
	Load        float64 `json:"load"`
	TrackRecord float64 `json:"track_record"`
	Cost        float64 `json:"cost"`
	Latency     float64 `json:"latency"`
	Tools       float64 `json:"tools"`
}

// Candidate is one agent as the choice weighed it.
type Candidate struct {
	Agent    string  `json:"agent"`
	Eligible bool    `json:"eligible"`
	Why      string  `json:"why,omitempty"` // why not eligible
	Factors  Factors `json:"factors"`
	Score    float64 `json:"score"`
}

// DelegationChoice is what a delegations row keeps as its factors: who was
// chosen and how, the weights, and every candidate, best first.
type DelegationChoice struct {
	Chosen     string                   `json:"chosen"`
	ChosenBy   string                   `json:"chosen_by"` // "name" or "score"
	Tools      []string                 `json:"tools,omitempty"`
	Weights    config.DelegationWeights `json:"weights"`
	Candidates []Candidate              `json:"candidates"`
}

func (w Factors) score(k config.DelegationWeights) float64 {
	s := k.Capability*w.Capability + k.Role*w.Role + k.Available*w.Available + k.Load*w.Load +
		k.TrackRecord*w.TrackRecord + k.Cost*w.Cost + k.Latency*w.Latency + k.Tools*w.Tools
	return math.Round(s*1000) / 1000
}

// Rank scores every agent but from for task, best first (the ineligible
// last).
func (s *Service) Rank(ctx context.Context, from, task string, tools []string) (*DelegationChoice, error) {
	weights := s.agents().Delegation.Weights.WithDefaults()
	var names []string
	for _, n := range s.agentNames() {
		if n != from {
			names = append(names, n)
		}
	}
	loads, err := s.st.AgentLoads(ctx)
	if err != nil {
		return nil, err
	}
	records, err := s.st.DelegationTrackRecords(ctx)
	if err != nil {
		return nil, err
	}
	lats, err := s.st.AgentLatencies(ctx, s.now().Add(-latencyWindow))
	if err != nil {
		return nil, err
	}
	all := s.settings().router.Scores(task, names)
	one := s.settings().router.OneDomain(all)
	var bestCap, maxPrice float64
	var maxLatency float64
	caps := map[string]float64{}
	prices := map[string]float64{}
	latency := map[string]time.Duration{}
	for _, n := range names {
		if sc := s.settings().router.Scores(task, []string{n}); len(sc) > 0 {
			caps[n] = sc[0].Score
			bestCap = max(bestCap, sc[0].Score)
		}
		a, _ := s.agents().Find(n)
		if spec, err := model.ParseSpec(a.Model); err == nil {
			if p, ok := model.PriceFor(spec.Provider, spec.Model); ok {
				prices[n] = p.InputPerMTok + p.OutputPerMTok
				maxPrice = max(maxPrice, prices[n])
			}
		}
		latency[n] = s.typicalLatency(a, lats)
		maxLatency = max(maxLatency, latency[n].Seconds())
	}
	choice := &DelegationChoice{Weights: weights, Tools: tools}
	for _, n := range names {
		a, _ := s.agents().Find(n)
		c := Candidate{Agent: n, Eligible: true}
		f := &c.Factors
		if bestCap > 0 {
			f.Capability = caps[n] / bestCap
		}
		f.Role = roleFit(a, all, one)
		var open, running int
		if id := s.agentID(n); id != nil {
			for _, l := range loads {
				if l.AgentID == *id {
					open, running = l.OpenWork, l.Running
				}
			}
		}
		f.Load = 1 / float64(1+open)
		if _, err := s.backendFor(a); err != nil {
			c.Eligible, c.Why = false, err.Error()
		} else if a.MaxConcurrent == 0 || running < a.MaxConcurrent {
			f.Available = 1
		}
		delegated, completed := 0, 0
		for _, r := range records {
			if r.Agent == n {
				delegated, completed = r.Delegated, r.Completed
			}
		}
		f.TrackRecord = float64(completed+1) / float64(delegated+2)
		f.Cost = 0.5
		if p, ok := prices[n]; ok && maxPrice > 0 {
			f.Cost = 1 - p/maxPrice
		}
		f.Latency = 0.5
		if latency[n] > 0 && maxLatency > 0 {
			f.Latency = 1 - latency[n].Seconds()/maxLatency
		}
		f.Tools = 1
		if len(tools) > 0 {
			have := 0
			for _, t := range tools {
				if s.mayUse(a, t) {
					have++
				}
			}
			f.Tools = float64(have) / float64(len(tools))
		}
		c.Score = f.score(weights)
		choice.Candidates = append(choice.Candidates, c)
	}
	// Best first; the sort is stable, so ties keep declaration order.
	sort.SliceStable(choice.Candidates, func(i, j int) bool {
		ci, cj := choice.Candidates[i], choice.Candidates[j]
		if ci.Eligible != cj.Eligible {
			return ci.Eligible
		}
		return ci.Score > cj.Score
	})
	return choice, nil
}

// Typical latency is measured: the mean time of an agent's turns over the
// last latencyWindow (from being queued to their end), once it has at
// least latencyMinTurns of them; before that, its latency setting.
const (
	latencyWindow   = 7 * 24 * time.Hour
	latencyMinTurns = 3
)

// typicalLatency is how long agent a typically takes to answer: measured
// from its recent turns (lats), else its setting (0: unknown).
func (s *Service) typicalLatency(a *config.Agent, lats []*store.AgentLatency) time.Duration {
	if id := s.agentID(a.Name); id != nil {
		for _, l := range lats {
			if l.AgentID == *id && l.Turns >= latencyMinTurns && l.Mean > 0 {
				return l.Mean
			}
		}
	}
	return a.Latency
}

// roleFit is how well an agent's role fits a task whose domains are
// scores (one: a question of one domain).
func roleFit(a *config.Agent, scores []route.Score, one bool) float64 {
	generalist := a.Role != string(route.Specialist)
	declares := func(domain string) bool {
		return slices.ContainsFunc(a.Domains, func(d config.Domain) bool { return d.Name == domain })
	}
	switch {
	case one && declares(scores[0].Domain) && !generalist:
		return 1
	case one && generalist:
		return 0.5
	case one:
		return 0
	case generalist:
		return 1
	}
	for _, sc := range scores {
		if declares(sc.Domain) {
			return 0.5
		}
	}
	return 0
}

// mayUse reports whether agent a may use the tool named name: it is
// registered, and the agent's tool list (when it has one) names it.
func (s *Service) mayUse(a *config.Agent, name string) bool {
	tl, ok := s.opts.Registry.Get(name)
	if !ok {
		return false
	}
	return (len(a.Tools) == 0 && !tl.OptIn()) || slices.Contains(a.Tools, name)
}

func (s *Service) delegate(ctx context.Context, req *tool.Request, in delegateInput) (delegateOutput, error) {
	task := strings.TrimSpace(in.Task)
	if task == "" {
		return delegateOutput{}, errors.New("task is empty: say what the other agent should do")
	}
	choice, err := s.Rank(ctx, req.Agent, task, in.Tools)
	if err != nil {
		return delegateOutput{}, fmt.Errorf("weighing the agents: %w", err)
	}
	var picked *Candidate
	if in.Agent != "" {
		name := strings.TrimPrefix(strings.TrimSpace(in.Agent), "@")
		for i := range choice.Candidates {
			if choice.Candidates[i].Agent == name {
				picked = &choice.Candidates[i]
			}
		}
		if picked == nil {
			return delegateOutput{}, fmt.Errorf("no other agent named %q (agents: %s)", name, strings.Join(s.agentNames(), ", "))
		}
		if !picked.Eligible {
			return delegateOutput{}, fmt.Errorf("%s cannot take tasks now: %s", name, picked.Why)
		}
		choice.ChosenBy = "name"
	} else {
		if len(choice.Candidates) == 0 || !choice.Candidates[0].Eligible {
			return delegateOutput{}, errors.New("no other agent can take the task now")
		}
		picked, choice.ChosenBy = &choice.Candidates[0], "score"
	}
	choice.Chosen = picked.Agent
	parent, err := s.st.ConversationGet(ctx, req.ConversationID)
	if err != nil {
		return delegateOutput{}, err
	}
	meta := metaOf(parent)
	var d *store.Delegation
	err = s.st.InTx(ctx, func(q store.Queries) error {
		child, err := s.openTalk(ctx, q, AgentTalk{From: req.Agent, To: picked.Agent, Text: s.addressed(picked.Agent, task)},
			picked.Agent, ConversationMeta{Context: meta.Context})
		if err != nil {
			return err
		}
		d, err = q.DelegationCreate(ctx, &store.DelegationCreateParams{
			FromConversation: parent.ID, FromAgent: req.Agent, ToAgent: picked.Agent, ChildID: child,
			Task: task, Factors: mustJSON(choice), Now: s.now(),
		})
		return err
	})
	if err != nil {
		return delegateOutput{}, fmt.Errorf("handing the task to %s: %w", picked.Agent, err)
	}
	s.log.InfoContext(ctx, "delegated a task", "conversation_id", parent.ID, "from", req.Agent, "to", picked.Agent,
		"chosen_by", choice.ChosenBy, "score", picked.Score, "delegation_id", d.ID)
	return delegateOutput{
		DelegationID: d.ID.String(), Agent: picked.Agent, ChosenBy: choice.ChosenBy, Score: picked.Score,
		Note: fmt.Sprintf("%s is on it. Its result will come back to this conversation as a message from %s; you will be woken to use it. "+
			"Do not answer the task yourself meanwhile.", picked.Agent, picked.Agent),
	}, nil
}

// delegationResult, in the transaction of a reply in conv, queues the
// return of the result when conv runs a delegation and the reply is the
// delegate's (see RunDelegationResult).
func (s *Service) delegationResult(ctx context.Context, q store.Queries, conv uuid.UUID, from, text string) error {
	d, err := q.DelegationByChild(ctx, conv)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status != store.DelegationRunning || d.ToAgent != from || text == "" {
		return nil
	}
	key := "delegation-result:" + d.ID.String()
	if _, err := Enqueue(ctx, q, DelegationResultArgs{DelegationID: d.ID, Result: text},
		&EnqueueOpts{ConversationID: &d.FromConversation, UniqueKey: &key, Now: s.now()}); err != nil {
		return fmt.Errorf("queueing the result of delegation %s: %w", d.ID, err)
	}
	return nil
}

// delegationFailed, in the transaction that records a failed turn in conv,
// queues the news of the failure when conv runs a delegation still
// running: the task failed (a model error, a backend that cannot be
// built, every attempt died, the step budget spent), and left alone it
// would stay running for ever. It shares the result's unique key, so a
// task ends once, the first outcome winning.
func (s *Service) delegationFailed(ctx context.Context, q store.Queries, conv uuid.UUID, msg string) error {
	d, err := q.DelegationByChild(ctx, conv)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status != store.DelegationRunning {
		return nil
	}
	key := "delegation-result:" + d.ID.String()
	if _, err := Enqueue(ctx, q, DelegationResultArgs{DelegationID: d.ID, Failed: true, Result: msg},
		&EnqueueOpts{ConversationID: &d.FromConversation, UniqueKey: &key, Now: s.now()}); err != nil {
		return fmt.Errorf("queueing the failure of delegation %s: %w", d.ID, err)
	}
	return nil
}

// DelegationResultArgs are the args of the item that brings a delegate's
// result back. It runs under the delegating conversation's lease, so the
// result lands after the turn that delegated has ended (its reply first,
// then the result), never in the middle of it.
type DelegationResultArgs struct {
	DelegationID uuid.UUID `json:"delegation_id"`
	Result       string    `json:"result"`
	// Failed: the delegate's turn failed, and Result is the error people
	// were shown there.
	Failed bool `json:"failed,omitempty"`
}

// WorkDelegationResult is the kind of DelegationResultArgs.
const WorkDelegationResult = "delegation_result"

// Kind is WorkDelegationResult.
func (DelegationResultArgs) Kind() string { return WorkDelegationResult }

// RunDelegationResult is the handler of DelegationResultArgs: in one
// transaction the delegation is completed (or failed) and the result (or
// the failure) enters the delegating conversation as the delegate's
// message naming the delegating agent, which wakes it there to use the
// result or tell the person. A second run finds the delegation finished
// and adds nothing. A failed task counts against the delegate's track
// record (delegated, not completed).
func (s *Service) RunDelegationResult(ctx context.Context, _ *store.WorkItem, args DelegationResultArgs) error {
	status := store.DelegationCompleted
	if args.Failed {
		status = store.DelegationFailed
	}
	err := s.st.InTx(ctx, func(q store.Queries) error {
		d, err := q.DelegationFinish(ctx, &store.DelegationFinishParams{ID: args.DelegationID, Status: status, Result: args.Result, Now: s.now()})
		if err != nil {
			return err
		}
		msg := fmt.Sprintf("@%s Result of the task you delegated to me (%s): %s", d.FromAgent, title(d.Task), args.Result)
		if args.Failed {
			msg = fmt.Sprintf("@%s I could not finish the task you delegated to me (%s); it failed: %s", d.FromAgent, title(d.Task), args.Result)
		}
		_, err = s.admit(ctx, q, &speech{conv: d.FromConversation, author: store.AgentAuthor(d.ToAgent), content: agentContent(d.ToAgent, msg)})
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return nil // returned already
	}
	if err != nil {
		return fmt.Errorf("returning the result of delegation %s: %w", args.DelegationID, err)
	}
	return nil
}

// Delegation reads a delegated task with the factors of its choice.
func (s *Service) Delegation(ctx context.Context, id uuid.UUID) (*store.Delegation, *DelegationChoice, error) {
	d, err := s.st.DelegationGet(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("reading delegation %s: %w", id, err)
	}
	var c DelegationChoice
	if err := json.Unmarshal(d.Factors, &c); err != nil {
		return nil, nil, fmt.Errorf("decoding the factors of delegation %s: %w", id, err)
	}
	return d, &c, nil
}
