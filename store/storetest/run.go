package storetest

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) runTests() []namedTest {
	return []namedTest{
		{"RunLifecycle", s.testRunLifecycle},
		{"RunSlots", s.testRunSlots},
		{"RunSlotsConcurrent", s.testRunSlotsConcurrent},
		{"RunInvalid", s.testRunInvalid},
		{"RunStepChanges", s.testRunStepChanges},
	}
}

func threeSteps() []store.RunStepSpec {
	return []store.RunStepSpec{
		{Key: "find", Title: "Find it", Agent: "scout", Class: "default", Inputs: map[string]string{"where": "docs"}},
		{Key: "fix", Title: "Fix it", Agent: "coder", Class: "coding", DependsOn: []string{"find"}},
		{Key: "tell", Title: "Tell them", Agent: "scout", Class: "default", DependsOn: []string{"fix"}},
	}
}

func (s suite) testRunLifecycle(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)

	r, err := st.RunCreate(ctx, &store.RunCreateParams{
		ConversationID: conv.ID, LeadAgent: "lead", Goal: "ship", Check: json.RawMessage(`{"command":"true"}`),
		Steps: threeSteps(), Now: clk.Now(),
	})
	noErr(t, err, "creating a run")
	eq(t, r.Status, store.RunStatusRunning, "status of a new run")
	eq(t, r.Goal, "ship", "goal")
	eq(t, string(r.Check), `{"command":"true"}`, "check")
	_, err = st.RunCreate(ctx, &store.RunCreateParams{ConversationID: uuid.New(), LeadAgent: "lead", Steps: threeSteps(), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "a run in a conversation that does not exist")

	steps, err := st.RunStepList(ctx, r.ID)
	noErr(t, err, "listing steps")
	eq(t, len(steps), 3, "steps")
	eq(t, steps[0].Key, "find", "first step in plan order")
	eq(t, steps[0].Inputs["where"], "docs", "inputs kept")
	eq(t, steps[1].DependsOn[0], "find", "depends_on kept")
	eq(t, steps[2].Status, store.StepPending, "a new step is pending")

	// find: pending → working → done, with usage.
	child := newConversation(t, st, clk)
	res, err := st.RunStepStart(ctx, &store.RunStepStartParams{ID: steps[0].ID, ConversationID: child.ID, Model: "scripted:x", SlotLimit: 8, Now: clk.Advance(time.Second)})
	noErr(t, err, "starting a step")
	isTrue(t, res.Started, "a step with a free slot starts")
	eq(t, res.Step.Status, store.StepWorking, "a started step is working")
	eq(t, res.Step.Attempts, 1, "attempts after a start")
	eq(t, res.Step.Model, "scripted:x", "model")
	_, err = st.RunStepStart(ctx, &store.RunStepStartParams{ID: steps[0].ID, ConversationID: child.ID, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "starting a working step")
	by, err := st.RunStepByConversation(ctx, child.ID)
	noErr(t, err, "finding the step by its conversation")
	eq(t, by.ID, steps[0].ID, "the step of the conversation")
	_, err = st.RunStepByConversation(ctx, conv.ID)
	errIs(t, err, store.ErrNotFound, "a conversation that runs no step")

	done, err := st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: steps[0].ID, Status: store.StepDone, Output: "found", InputTokens: 10, OutputTokens: 5, CostMicroUSD: 42, Now: clk.Advance(time.Second)})
	noErr(t, err, "finishing a step")
	eq(t, done.Status, store.StepDone, "status")
	eq(t, done.CostMicroUSD, int64(42), "cost")
	eq(t, done.Output, "found", "output")
	isTrue(t, done.FinishedAt != nil, "finished at")
	_, err = st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: steps[0].ID, Status: store.StepFailed, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "finishing a done step")
	_, err = st.RunStepReset(ctx, &store.RunStepResetParams{ID: steps[0].ID, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "resetting a done step")

	// fix fails, is reset and starts again in another conversation.
	child2 := newConversation(t, st, clk)
	_, err = st.RunStepStart(ctx, &store.RunStepStartParams{ID: steps[1].ID, ConversationID: child2.ID, Now: clk.Now()})
	noErr(t, err, "starting fix")
	failed, err := st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: steps[1].ID, Status: store.StepFailed, Error: "boom", InputTokens: 3, CostMicroUSD: 7, Now: clk.Now()})
	noErr(t, err, "failing fix")
	eq(t, failed.Error, "boom", "error")
	reset, err := st.RunStepReset(ctx, &store.RunStepResetParams{ID: steps[1].ID, Now: clk.Now()})
	noErr(t, err, "resetting fix")
	eq(t, reset.Status, store.StepPending, "a reset step is pending")
	eq(t, reset.Error, "", "a reset step has no error")
	eq(t, reset.CostMicroUSD, int64(0), "a reset step has no cost")
	child3 := newConversation(t, st, clk)
	again, err := st.RunStepStart(ctx, &store.RunStepStartParams{ID: steps[1].ID, ConversationID: child3.ID, Now: clk.Now()})
	noErr(t, err, "starting fix again")
	eq(t, again.Step.Attempts, 2, "attempts after a retry")

	// Cancel: a working step and a pending one.
	_, err = st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: steps[1].ID, Status: store.StepCancelled, Now: clk.Now()})
	noErr(t, err, "cancelling a working step")
	c, err := st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: steps[2].ID, Status: store.StepCancelled, Now: clk.Now()})
	noErr(t, err, "cancelling a pending step")
	eq(t, c.Status, store.StepCancelled, "status")
	_, err = st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: steps[2].ID, Status: store.StepDone, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "finishing a cancelled step")

	fin, err := st.RunFinish(ctx, &store.RunFinishParams{ID: r.ID, Status: store.RunStatusCancelled, Result: "stopped", Now: clk.Now()})
	noErr(t, err, "cancelling the run")
	eq(t, fin.Status, store.RunStatusCancelled, "status")
	isTrue(t, fin.FinishedAt != nil, "finished at")
	_, err = st.RunFinish(ctx, &store.RunFinishParams{ID: r.ID, Status: store.RunStatusDone, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "finishing a finished run")
	re, err := st.RunReopen(ctx, &store.RunReopenParams{ID: r.ID, Now: clk.Now()})
	noErr(t, err, "reopening")
	eq(t, re.Status, store.RunStatusRunning, "a reopened run runs")
	isTrue(t, re.FinishedAt == nil, "a reopened run is not finished")
	_, err = st.RunReopen(ctx, &store.RunReopenParams{ID: r.ID, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "reopening a running run")
	_, err = st.RunGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "a run that does not exist")

	// Events, in order, paged by id.
	for i, k := range []string{"created", "step_started", "step_done"} {
		_, err := st.RunEventAppend(ctx, &store.RunEventAppendParams{RunID: r.ID, StepKey: map[bool]string{true: "find"}[i > 0], Kind: k, Status: "x", Detail: k, Now: clk.Now()})
		noErr(t, err, "appending %s", k)
	}
	evs, err := st.RunEventList(ctx, &store.RunEventListParams{RunID: r.ID})
	noErr(t, err, "listing events")
	eq(t, len(evs), 3, "events")
	eq(t, evs[0].Kind, "created", "first event")
	eq(t, evs[1].StepKey, "find", "step of an event")
	rest, err := st.RunEventList(ctx, &store.RunEventListParams{RunID: r.ID, AfterID: evs[0].ID})
	noErr(t, err, "listing events after the first")
	eq(t, len(rest), 2, "events after the first")
	eq(t, rest[0].ID, evs[1].ID, "paging by id")

	// Lists: by conversation, by status.
	other := newConversation(t, st, clk)
	_, err = st.RunCreate(ctx, &store.RunCreateParams{ConversationID: other.ID, LeadAgent: "lead", Steps: threeSteps(), Now: clk.Advance(time.Second)})
	noErr(t, err, "a second run")
	all, err := st.RunList(ctx, &store.RunListParams{})
	noErr(t, err, "listing all runs")
	eq(t, len(all), 2, "runs")
	eq(t, all[0].ConversationID, other.ID, "newest first")
	mine, err := st.RunList(ctx, &store.RunListParams{ConversationID: &conv.ID})
	noErr(t, err, "listing a conversation's runs")
	isTrue(t, len(mine) == 1 && mine[0].ID == r.ID, "the conversation's run")
	ws := uuid.New()
	none, err := st.RunList(ctx, &store.RunListParams{WorkspaceID: &ws})
	noErr(t, err, "listing a workspace's runs")
	eq(t, len(none), 0, "runs of a workspace with none")
}

func (s suite) testRunSlots(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	coding := []store.RunStepSpec{
		{Key: "a", Title: "A", Agent: "coder", Class: "coding"},
		{Key: "b", Title: "B", Agent: "coder", Class: "coding"},
		{Key: "c", Title: "C", Agent: "scout", Class: "default"},
	}
	r, err := st.RunCreate(ctx, &store.RunCreateParams{ConversationID: conv.ID, LeadAgent: "lead", Steps: coding, Now: clk.Now()})
	noErr(t, err, "creating a run")
	steps, err := st.RunStepList(ctx, r.ID)
	noErr(t, err, "listing steps")
	start := func(i, limit int) *store.RunStepStartResult {
		t.Helper()
		child := newConversation(t, st, clk)
		res, err := st.RunStepStart(ctx, &store.RunStepStartParams{ID: steps[i].ID, ConversationID: child.ID, SlotLimit: limit, Now: clk.Now()})
		noErr(t, err, "starting step %s", steps[i].Key)
		return res
	}
	isTrue(t, start(0, 1).Started, "the first coding step takes the one slot")
	second := start(1, 1)
	isTrue(t, !second.Started, "a second coding step waits while the slot is taken")
	eq(t, second.Step.Status, store.StepPending, "a waiting step stays pending")
	isTrue(t, start(2, 1).Started, "another class has slots of its own")
	_, err = st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: steps[0].ID, Status: store.StepDone, Now: clk.Now()})
	noErr(t, err, "finishing the first")
	isTrue(t, start(1, 1).Started, "the second coding step starts once the slot is free")
}

func (s suite) testRunSlotsConcurrent(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	var specs []store.RunStepSpec
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		specs = append(specs, store.RunStepSpec{Key: k, Title: k, Agent: "coder", Class: "coding"})
	}
	r, err := st.RunCreate(ctx, &store.RunCreateParams{ConversationID: conv.ID, LeadAgent: "lead", Steps: specs, Now: clk.Now()})
	noErr(t, err, "creating a run")
	steps, err := st.RunStepList(ctx, r.ID)
	noErr(t, err, "listing steps")
	children := make([]uuid.UUID, len(steps))
	for i := range steps {
		children[i] = newConversation(t, st, clk).ID
	}
	var mu sync.Mutex
	started := 0
	var wg sync.WaitGroup
	for i := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := st.RunStepStart(ctx, &store.RunStepStartParams{ID: steps[i].ID, ConversationID: children[i], SlotLimit: 2, Now: clk.Now()})
			if err != nil {
				t.Errorf("starting step %d: %v", i, err)
				return
			}
			if res.Started {
				mu.Lock()
				started++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	eq(t, started, 2, "steps started at once with two slots")
}

func (s suite) testRunInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	cases := map[string]*store.RunCreateParams{
		"no steps":      {ConversationID: conv.ID, LeadAgent: "lead"},
		"no lead":       {ConversationID: conv.ID, Steps: threeSteps()},
		"duplicate key": {ConversationID: conv.ID, LeadAgent: "lead", Steps: []store.RunStepSpec{{Key: "a", Title: "A", Agent: "x", Class: "default"}, {Key: "a", Title: "B", Agent: "x", Class: "default"}}},
		"unknown dep":   {ConversationID: conv.ID, LeadAgent: "lead", Steps: []store.RunStepSpec{{Key: "a", Title: "A", Agent: "x", Class: "default", DependsOn: []string{"z"}}}},
		"no class":      {ConversationID: conv.ID, LeadAgent: "lead", Steps: []store.RunStepSpec{{Key: "a", Title: "A", Agent: "x"}}},
	}
	for name, p := range cases {
		_, err := st.RunCreate(ctx, p)
		errIs(t, err, store.ErrInvalid, "creating a run with %s", name)
	}
	_, err := st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: uuid.New(), Status: store.StepPending})
	errIs(t, err, store.ErrInvalid, "finishing a step as pending")
	_, err = st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: uuid.New(), Status: store.StepDone})
	errIs(t, err, store.ErrNotFound, "finishing a step that does not exist")
}

// A coding step's change is kept as JSON whatever the step's state, and
// survives a reset (a retried step resumes on its branch).
func (s suite) testRunStepChanges(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	r, err := st.RunCreate(ctx, &store.RunCreateParams{ConversationID: conv.ID, LeadAgent: "lead", Steps: threeSteps(), Now: clk.Now()})
	noErr(t, err, "creating a run")
	steps, err := st.RunStepList(ctx, r.ID)
	noErr(t, err, "listing steps")
	isTrue(t, steps[1].Changes == nil, "a new step has no changes")

	want := `{"branch":"switchboard/run-1-fix","files":[{"path":"a.go","insertions":2}],"diff":"+x\n"}`
	set, err := st.RunStepChangesSet(ctx, &store.RunStepChangesSetParams{ID: steps[1].ID, Changes: json.RawMessage(want), Now: clk.Advance(time.Second)})
	noErr(t, err, "recording changes")
	var got, exp any
	noErr(t, json.Unmarshal(set.Changes, &got), "decoding the changes")
	noErr(t, json.Unmarshal([]byte(want), &exp), "decoding want")
	eq(t, mustMarshal(got), mustMarshal(exp), "changes as recorded")
	read, err := st.RunStepGet(ctx, steps[1].ID)
	noErr(t, err, "reading the step")
	eq(t, mustMarshal(decodeAny(t, read.Changes)), mustMarshal(exp), "changes read back")

	child := newConversation(t, st, clk)
	_, err = st.RunStepStart(ctx, &store.RunStepStartParams{ID: steps[1].ID, ConversationID: child.ID, Now: clk.Now()})
	noErr(t, err, "starting the step")
	_, err = st.RunStepFinish(ctx, &store.RunStepFinishParams{ID: steps[1].ID, Status: store.StepFailed, Error: "check failed", Now: clk.Now()})
	noErr(t, err, "failing the step")
	reset, err := st.RunStepReset(ctx, &store.RunStepResetParams{ID: steps[1].ID, Now: clk.Now()})
	noErr(t, err, "resetting the step")
	isTrue(t, len(reset.Changes) > 0, "a reset step keeps its changes")

	_, err = st.RunStepChangesSet(ctx, &store.RunStepChangesSetParams{ID: uuid.New(), Changes: json.RawMessage(`{}`), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "changes of a step that does not exist")
	_, err = st.RunStepChangesSet(ctx, &store.RunStepChangesSetParams{ID: steps[1].ID, Changes: json.RawMessage(`{nope`), Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "changes that are not JSON")
}

func decodeAny(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	noErr(t, json.Unmarshal(raw, &v), "decoding %s", raw)
	return v
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
