package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// Plans and runs through the real app on the fake Slack, on both stores:
// a lead's plan_run becomes a run whose steps are turns in the step
// agents' own conversations; statuses, events, usage per step, retry,
// cancel and slots.

const runChannel = "C0RUNS"

// runScripts: atlas plans three steps; scout finds and tells; coder fails
// its first fix (a model error) and succeeds when retried; a slow step
// hangs until cancelled.
var runScripts = map[string]string{
	"atlas": `turns:
  - after_tool: plan_run
    text: "Run started."
  - when_last_user_contains: "ship the release"
    tool_calls:
      - name: plan_run
        input:
          goal: "Ship the release"
          steps:
            - {id: find, title: "Find the failing test", agent: scout}
            - {id: fix, title: "Fix it", agent: coder, inputs: {component: parser}, depends_on: [find]}
            - {id: tell, title: "Tell the team", agent: scout, depends_on: [fix]}
  - when_last_user_contains: "something slow"
    tool_calls:
      - name: plan_run
        input:
          steps:
            - {id: slow, title: "Take your time", agent: coder}
  - when_last_user_contains: "three slow parts"
    tool_calls:
      - name: plan_run
        input:
          goal: "Three slow parts"
          steps:
            - {id: one, title: "Slow part one", agent: coder}
            - {id: two, title: "Slow part two", agent: coder, depends_on: [one]}
            - {id: three, title: "Slow part three", agent: coder, depends_on: [two]}
  - when_last_user_contains: "two coding"
    tool_calls:
      - name: plan_run
        input:
          steps:
            - {id: one, title: "Code part one", agent: coder}
            - {id: two, title: "Code part two", agent: coder}
fallback:
  text: "atlas here."
`,
	"scout": `turns:
  - when_last_user_contains: 'Step "find"'
    text: "The parser test fails on empty input."
  - when_last_user_contains: 'Step "tell"'
    text: "Told the team: {{last_user}}"
fallback:
  text: "scout here."
`,
	"coder": `turns:
  - when_last_user_contains: 'Step "fix"'
    once: true
    failure: {status: 400, message: "the model refused the request"}
  - when_last_user_contains: 'Step "slow"'
    delay: 60s
    text: "finally done"
  - when_last_user_contains: 'Code part'
    delay: 300ms
    text: "coded"
  - when_last_user_contains: 'Slow part'
    # Longer than the stream's pace (one call a second): a step that ends
    # within it shows only its end.
    delay: 2500ms
    text: "part done"
fallback:
  text: "Fixed the parser for empty input."
`,
}

const runAgents = `  - name: atlas
    model: {{atlas}}
    answers: {default: true}
  - name: scout
    model: {{scout}}
  - name: coder
    model: {{coder}}
    class: coding
`

func startRuns(t *testing.T, db databaseFunc, extra string) *slackEnv {
	return startSlack(t, db(t), envOptions{config: agentsConfig(t, runScripts, runAgents, extra)})
}

// onlyRun is the one run started from a conversation.
func onlyRun(t *testing.T, st store.Store, conv uuid.UUID) *store.Run {
	t.Helper()
	var r *store.Run
	poll(t, "a run from the thread", func() (bool, string) {
		rs, err := st.RunList(context.Background(), &store.RunListParams{ConversationID: &conv})
		if err != nil || len(rs) != 1 {
			return false, fmt.Sprintf("%d runs, %v", len(rs), err)
		}
		r = rs[0]
		return true, ""
	})
	return r
}

func waitRun(t *testing.T, st store.Store, id uuid.UUID, want store.RunStatus) (*store.Run, []*store.RunStep) {
	t.Helper()
	var r *store.Run
	var steps []*store.RunStep
	poll(t, "run "+string(want), func() (bool, string) {
		var err error
		if r, err = st.RunGet(context.Background(), id); err != nil {
			return false, err.Error()
		}
		steps, _ = st.RunStepList(context.Background(), id)
		var b strings.Builder
		for _, s := range steps {
			fmt.Fprintf(&b, "%s=%s ", s.Key, s.Status)
		}
		return r.Status == want, string(r.Status) + " " + b.String()
	})
	return r, steps
}

func (e *slackEnv) runAPI(method, path string, out any) int {
	e.tb.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(method, e.base+path, body)
	if err != nil {
		e.tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.http.Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			e.tb.Fatalf("%s %s: decoding: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

type apiRun struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Steps  []struct {
		Key          string `json:"key"`
		Status       string `json:"status"`
		Agent        string `json:"agent"`
		Model        string `json:"model"`
		Attempts     int    `json:"attempts"`
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
		CostMicroUSD int64  `json:"cost_micro_usd"`
		Output       string `json:"output"`
		Error        string `json:"error"`
	} `json:"steps"`
}

type apiEvents struct {
	Events []struct {
		Step   string `json:"step"`
		Kind   string `json:"kind"`
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"events"`
}

// TestRunThreeStepsWithFailureAndRetry: the fix step fails (its model
// call errs), the run fails with the step's error, nothing after it runs;
// retry re-runs only the failed step, and the run finishes with the
// result back in the thread. Statuses, events and usage per step are
// read back from the API.
func TestRunThreeStepsWithFailureAndRetry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startRuns(t, db, "")
		const ts = "1700002000.000100"
		e.mustPost(newEvent("EvRun1", mention(runChannel, ts, "", alice, "please ship the release")))
		conv := e.conversation(runChannel, ts).ID
		r := onlyRun(t, e.store, conv)
		r, steps := waitRun(t, e.store, r.ID, store.RunStatusFailed)
		if got := []store.StepStatus{steps[0].Status, steps[1].Status, steps[2].Status}; got[0] != store.StepDone || got[1] != store.StepFailed || got[2] != store.StepPending {
			t.Fatalf("steps %v after the failure, want done, failed, pending", got)
		}
		if !strings.Contains(steps[1].Error, "the model refused the request") || !strings.Contains(r.Result, "fix") {
			t.Errorf("fix error %q, run result %q; want the model's error, naming the step", steps[1].Error, r.Result)
		}
		failedMsg := e.waitReply(runChannel, "Run "+run.ShortID(r)+": failed")
		if !strings.Contains(shown(failedMsg), "❌ fix") {
			t.Errorf("the failure message %q does not show the failed step", shown(failedMsg))
		}
		e.waitIdle()

		// Retry over the API: only fix runs again (attempt 2), then tell.
		var got apiRun
		if code := e.runAPI("POST", "/api/runs/"+r.ID.String()+"/retry", &got); code != 200 || got.Status != "running" {
			t.Fatalf("POST retry: %d %+v", code, got)
		}
		_, steps = waitRun(t, e.store, r.ID, store.RunStatusDone)
		e.waitReply(runChannel, "Run "+run.ShortID(r)+": done")
		e.waitIdle()

		if code := e.runAPI("GET", "/api/runs/"+r.ID.String(), &got); code != 200 {
			t.Fatalf("GET run: %d", code)
		}
		attempts := map[string]int{"find": 1, "fix": 2, "tell": 1}
		for i, s := range got.Steps {
			if s.Status != "done" || s.Attempts != attempts[s.Key] || s.InputTokens == 0 || s.OutputTokens == 0 || s.Model == "" {
				t.Errorf("step %s: %+v; want done, %d attempts, tokens and model recorded", s.Key, s, attempts[s.Key])
			}
			// Cost per step is the sum of the usage of its conversation.
			var cost int64
			us, err := e.store.UsageList(context.Background(), *steps[i].ConversationID)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range us {
				cost += u.CostMicroUSD
			}
			if s.CostMicroUSD != cost || len(us) == 0 {
				t.Errorf("step %s cost %d, usage rows %d summing %d", s.Key, s.CostMicroUSD, len(us), cost)
			}
		}
		if got.Steps[1].Output != "Fixed the parser for empty input." {
			t.Errorf("fix output %q", got.Steps[1].Output)
		}
		// The fix step saw find's output; tell saw fix's.
		fixConv := e.entries(*steps[1].ConversationID, store.EntryUser)
		if len(fixConv) == 0 || !strings.Contains(decode[core.UserContent](t, fixConv[0]).Text, "The parser test fails on empty input.") {
			t.Errorf("the fix step was not given find's output")
		}
		if !strings.Contains(steps[2].Output, "Fixed the parser for empty input.") {
			t.Errorf("tell's output %q does not carry fix's output", steps[2].Output)
		}

		var evs apiEvents
		if code := e.runAPI("GET", "/api/runs/"+r.ID.String()+"/events", &evs); code != 200 {
			t.Fatalf("GET events: %d", code)
		}
		var seq []string
		for _, ev := range evs.Events {
			seq = append(seq, strings.TrimSuffix(ev.Step+":"+ev.Kind, ":"))
		}
		want := []string{
			":created", "find:step_started", "find:step_done", "fix:step_started", "fix:step_failed", ":run_finished",
			":run_reopened", "fix:step_retry", "fix:step_started", "fix:step_done", "tell:step_started", "tell:step_done", ":run_finished",
		}
		if strings.Join(seq, " ") != strings.Join(want, " ") {
			t.Errorf("events\n got %v\nwant %v", seq, want)
		}
		checkRunStreams(t, e, r.ID.String())

		var list struct {
			Runs []apiRun `json:"runs"`
		}
		if code := e.runAPI("GET", "/api/runs?status=done", &list); code != 200 || len(list.Runs) != 1 || list.Runs[0].ID != r.ID.String() {
			t.Errorf("GET /api/runs?status=done: %d %+v", code, list)
		}
	})
}

// TestRunCancelStopsWorkingStep: cancelling a run stops the model call of
// its working step (the turn ends within 2 s, not after the minute the
// model would take) and the step and run read cancelled.
func TestRunCancelStopsWorkingStep(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startRuns(t, db, "")
		const ts = "1700002000.000200"
		e.mustPost(newEvent("EvRun2", mention(runChannel, ts, "", alice, "do something slow")))
		r := onlyRun(t, e.store, e.conversation(runChannel, ts).ID)
		var child uuid.UUID
		poll(t, "the slow step's turn running", func() (bool, string) {
			steps, _ := e.store.RunStepList(context.Background(), r.ID)
			if len(steps) != 1 || steps[0].Status != store.StepWorking || steps[0].ConversationID == nil {
				return false, "not working yet"
			}
			child = *steps[0].ConversationID
			items, _ := e.store.WorkList(context.Background(), &store.WorkListParams{ConversationID: &child, Kind: core.WorkTurn, States: []store.WorkState{store.WorkRunning}, Limit: 1})
			return len(items) == 1, "turn not running"
		})
		// Cancelled over the API: the step's turn (its model call) is gone
		// within 2 s of the request.
		start := time.Now()
		var got apiRun
		if code := e.runAPI("POST", "/api/runs/"+r.ID.String()+"/cancel", &got); code != 200 || got.Status != "cancelled" || got.Steps[0].Status != "cancelled" {
			t.Fatalf("POST cancel: %d %+v", code, got)
		}
		stopped := func(conv uuid.UUID) func() (bool, string) {
			return func() (bool, string) {
				items, _ := e.store.WorkList(context.Background(), &store.WorkListParams{ConversationID: &conv, Kind: core.WorkTurn, States: []store.WorkState{store.WorkRunning, store.WorkAvailable}, Limit: 1})
				return len(items) == 0, fmt.Sprintf("%d turns still running", len(items))
			}
		}
		pollFor(t, 2*time.Second-time.Since(start), 10*time.Millisecond, "the step's turn to stop within 2 s of the cancel", stopped(child))
		t.Logf("the step's turn stopped %s after the cancel request", time.Since(start))
		for _, en := range e.entries(child, store.EntryAssistant) {
			if strings.Contains(decode[core.AssistantContent](t, en).Text, "finally done") {
				t.Error("the cancelled step's model call finished anyway")
			}
		}
		if code := e.runAPI("POST", "/api/runs/"+r.ID.String()+"/cancel", nil); code != http.StatusConflict {
			t.Errorf("cancelling a cancelled run: %d, want 409", code)
		}
		// !run ID shows it; the API retry brings the step back, and the
		// typed command cancels it again, by the run's short id.
		e.mustPost(newEvent("EvRun2d", mention(runChannel, "1700002000.000202", ts, alice, "!run "+run.ShortID(r))))
		e.waitReply(runChannel, "⏹ slow: Take your time (coder) cancelled")
		if code := e.runAPI("POST", "/api/runs/"+r.ID.String()+"/retry", &got); code != 200 || got.Status != "running" {
			t.Fatalf("POST retry: %d %+v", code, got)
		}
		var child2 uuid.UUID
		poll(t, "the slow step working again", func() (bool, string) {
			steps, _ := e.store.RunStepList(context.Background(), r.ID)
			if steps[0].Status != store.StepWorking || steps[0].Attempts != 2 {
				return false, string(steps[0].Status)
			}
			child2 = *steps[0].ConversationID
			return true, ""
		})
		e.mustPost(newEvent("EvRun2c", mention(runChannel, "1700002000.000201", ts, alice, "!run cancel "+run.ShortID(r))))
		e.waitReply(runChannel, "Run "+run.ShortID(r)+" cancelled")
		if code := e.runAPI("GET", "/api/runs/"+r.ID.String(), &got); code != 200 || got.Status != "cancelled" || got.Steps[0].Status != "cancelled" {
			t.Fatalf("GET run after the typed cancel: %d %+v", code, got)
		}
		poll(t, "the retried step's turn to stop", stopped(child2))
		e.waitIdle()
	})
}

// TestRunSlots: with runs.slots.coding 1, the second coding step waits
// (a step_waiting event) until the first is done; they never overlap.
func TestRunSlots(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startRuns(t, db, "runs:\n  slots: {coding: 1}\n")
		const ts = "1700002000.000300"
		e.mustPost(newEvent("EvRun3", mention(runChannel, ts, "", alice, "two coding steps please")))
		r := onlyRun(t, e.store, e.conversation(runChannel, ts).ID)
		_, steps := waitRun(t, e.store, r.ID, store.RunStatusDone)
		a, b := steps[0], steps[1]
		if a.StartedAt.After(*b.StartedAt) {
			a, b = b, a
		}
		if b.StartedAt.Before(*a.FinishedAt) {
			t.Errorf("coding steps overlapped: %s ran %s–%s, %s started %s", a.Key, a.StartedAt, a.FinishedAt, b.Key, b.StartedAt)
		}
		evs, err := e.store.RunEventList(context.Background(), &store.RunEventListParams{RunID: r.ID})
		if err != nil {
			t.Fatal(err)
		}
		waited := false
		for _, ev := range evs {
			waited = waited || (ev.Kind == core.RunEventWaiting && ev.StepKey == b.Key && strings.Contains(ev.Detail, "coding slot"))
		}
		if !waited {
			t.Errorf("no step_waiting event for %s: %+v", b.Key, evs)
		}
		e.waitIdle()
	})
}

// checkRunStreams: the fake Slack saw the run's progress as two streamed
// messages in the thread (the failed attempt, then the retry), each
// opening with a plan_update, moving each step forward only (pending →
// in_progress → complete or error) and ending with a plan_update saying
// how the run ended.
func checkRunStreams(t *testing.T, e *slackEnv, id string) {
	t.Helper()
	var streams []slacktest.Message
	for _, m := range e.botMessages(runChannel) {
		if m.Streamed && len(m.Chunks) > 0 && m.Chunks[0].Type == "plan_update" && m.Chunks[0].Title == "Plan: Ship the release" {
			streams = append(streams, m)
		}
	}
	if len(streams) != 2 {
		t.Fatalf("%d run progress streams, want 2 (the failure, the retry): %+v", len(streams), streams)
	}
	rank := map[string]int{"pending": 0, "in_progress": 1, "complete": 2, "error": 2}
	wantFinal := []map[string]string{
		{"find": "complete", "fix": "error", "tell": "pending"},
		{"find": "complete", "fix": "complete", "tell": "complete"},
	}
	wantEnd := []string{"Ship the release: failed", "Ship the release: done"}
	for i, m := range streams {
		if m.Streaming {
			t.Errorf("stream %d was not stopped", i)
		}
		last := map[string]string{}
		var order []string
		for _, c := range m.Chunks {
			if c.Type != "task_update" {
				continue
			}
			if prev, ok := last[c.ID]; ok && rank[c.Status] < rank[prev] {
				t.Errorf("stream %d: step %s went from %s back to %s", i, c.ID, prev, c.Status)
			}
			last[c.ID] = c.Status
			order = append(order, c.ID+"="+c.Status)
		}
		for k, v := range wantFinal[i] {
			if last[k] != v {
				t.Errorf("stream %d: step %s ends %q, want %q (chunks %v)", i, k, last[k], v, order)
			}
		}
		if end := m.Chunks[len(m.Chunks)-1]; end.Type != "plan_update" || end.Title != wantEnd[i] {
			t.Errorf("stream %d ends with %+v, want a plan_update %q", i, end, wantEnd[i])
		}
		t.Logf("stream %d: %v", i, order)
	}
}

// planScripts: planner answers with a plan in prose, without a code
// fence, naming an agent that does not exist; told what is wrong, it
// answers a corrected plan (fenced, with a trailing comma). strict's plan
// is valid at once, and its completion check fails.
var planScripts = map[string]string{
	"planner": `turns:
  - when_last_user_contains: "Your plan is not valid"
    text: "Sorry, fixed:\n` + "```json" + `\n{\"goal\": \"Write the docs\", \"steps\": [{\"id\": \"write\", \"title\": \"Write the runs section\", \"agent\": \"scout\"},]}\n` + "```" + `"
  - when_last_user_contains: "document runs"
    text: "Here is how I would split it: {\"goal\": \"Write the docs\", \"steps\": [{\"id\": \"write\", \"title\": \"Write the runs section\", \"agent\": \"ghostwriter\"}]} Shall I go on?"
fallback:
  text: "planner here."
`,
	"strict": `turns:
  - when_last_user_contains: "check it"
    text: "{\"steps\": [{\"id\": \"build\", \"title\": \"Build it\", \"agent\": \"scout\"}]}"
fallback:
  text: "strict here."
`,
	"scout": "fallback:\n  text: \"Section written.\"\n",
	"judged": `turns:
  - when_last_user_contains: "judge this"
    text: "{\"steps\": [{\"id\": \"draft\", \"title\": \"Draft it\", \"agent\": \"scout\"}]}"
fallback:
  text: "judged here."
`,
	"critic": "fallback:\n  text: \"PASS\\nThe draft covers the goal.\"\n",
}

const planAgents = `  - name: planner
    model: {{planner}}
    plans: true
    answers: {default: true}
    run_check: {command: "echo 12 tests passed"}
  - name: strict
    model: {{strict}}
    plans: true
    run_check: {command: "echo 2 tests failed; exit 1"}
  - name: judged
    model: {{judged}}
    plans: true
    run_check: {judge: critic}
  - name: critic
    model: {{critic}}
  - name: scout
    model: {{scout}}
`

// TestRunPlanInAnswer: a lead with plans: true answers with a plan; the
// invalid one goes back to its model once with the errors (naming the
// field), the corrected one becomes a run, and the completion check's
// verdict and reason are recorded. A check that fails fails the run.
func TestRunPlanInAnswer(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, planScripts, planAgents, "")})
		const ts = "1700002000.000400"
		e.mustPost(newEvent("EvPlan1", mention(runChannel, ts, "", alice, "please document runs")))
		conv := e.conversation(runChannel, ts).ID
		r := onlyRun(t, e.store, conv)
		r, steps := waitRun(t, e.store, r.ID, store.RunStatusDone)
		if r.LeadAgent != "planner" || r.Goal != "Write the docs" || len(steps) != 1 || steps[0].Agent != "scout" || steps[0].Output != "Section written." {
			t.Fatalf("run %+v, steps %+v; want the corrected plan run by scout", r, steps)
		}
		// The revision was one extra model call of the planner's, recorded
		// as usage of the thread.
		us, err := e.store.UsageList(context.Background(), conv)
		if err != nil || len(us) != 2 {
			t.Errorf("usage rows in the thread: %d (%v), want the answer and the one revision", len(us), err)
		}
		evs, err := e.store.RunEventList(context.Background(), &store.RunEventListParams{RunID: r.ID})
		if err != nil {
			t.Fatal(err)
		}
		var check *store.RunEvent
		for _, ev := range evs {
			if ev.Kind == core.RunEventCheck {
				check = ev
			}
		}
		if check == nil || check.Status != "passed" || !strings.Contains(check.Detail, "12 tests passed") {
			t.Errorf("check event %+v; want passed with the command's output", check)
		}
		e.waitReply(runChannel, "Completion check passed")

		// strict's check fails: the run fails, with the reason.
		const ts2 = "1700002000.000500"
		e.mustPost(newEvent("EvPlan2", mention(runChannel, ts2, "", alice, "@strict build and check it")))
		r2 := onlyRun(t, e.store, e.conversation(runChannel, ts2).ID)
		r2, _ = waitRun(t, e.store, r2.ID, store.RunStatusFailed)
		if !strings.Contains(r2.Result, "Completion check failed") || !strings.Contains(r2.Result, "2 tests failed") {
			t.Errorf("result %q; want the failed check and its output", r2.Result)
		}

		// judged's runs are judged by critic's model: PASS, and why.
		const ts3 = "1700002000.000600"
		e.mustPost(newEvent("EvPlan3", mention(runChannel, ts3, "", alice, "@judged judge this")))
		r3 := onlyRun(t, e.store, e.conversation(runChannel, ts3).ID)
		r3, _ = waitRun(t, e.store, r3.ID, store.RunStatusDone)
		if !strings.Contains(r3.Result, "Completion check passed: critic: The draft covers the goal.") {
			t.Errorf("result %q; want the judge's verdict and reason", r3.Result)
		}
		e.waitIdle()
	})
}

// TestRunDiscordEmbed: on Discord the run is one embed listing the steps,
// edited in place as they move: the same message ends showing every step
// done.
func TestRunDiscordEmbed(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		const channel = "3200000000000000077"
		e := discordStartWith(t, db, 0, agentsConfig(t, runScripts, runAgents, "runs:\n  slots: {coding: 1}\n"))
		e.mention(channel, discordAlice, "two coding steps please")
		var progress *discordtest.Message
		e.fake.Wait(t, "the run's embed showing both steps done", func() bool {
			for _, m := range e.fake.Messages(channel, "") {
				if strings.Contains(string(m.Embeds), "Run ") && strings.Contains(string(m.Embeds), "· done") {
					progress = m
					return true
				}
			}
			return false
		})
		body := string(progress.Embeds)
		// Each change is shown from the run as it is when its delivery runs,
		// so changes close together may land in one edit: at least one edit
		// (never a second message, counted below).
		if strings.Count(body, "✅") != 2 || !strings.Contains(body, "Code part one (coder)") || progress.Edits < 1 {
			t.Errorf("the embed shows %s after %d edits; want both steps done, edited in place as they moved", body, progress.Edits)
		}
		n := 0
		for _, m := range e.fake.Messages(channel, "") {
			if strings.Contains(string(m.Embeds), "Code part one") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d progress messages, want the one edited in place", n)
		}
		e.settle(channel)
	})
}

// delegatedScripts: atlas delegates a goal to planner, who answers with a
// plan; the run it becomes is the task, and its result goes back to atlas.
var delegatedScripts = map[string]string{
	"atlas": `turns:
  - after_tool: delegate
    text: "I have asked planner."
  - when_last_user_contains: "Result of the task"
    text: "Final: {{last_user}}"
  - when_last_user_contains: "docs for runs"
    tool_calls: [{name: delegate, input: {task: "Write the docs for runs", agent: planner}}]
fallback:
  text: "atlas here."
`,
	"planner": "fallback:\n  text: \"{\\\"goal\\\": \\\"Runs docs\\\", \\\"steps\\\": [{\\\"id\\\": \\\"write\\\", \\\"title\\\": \\\"Write them\\\", \\\"agent\\\": \\\"scout\\\"}]}\"\n",
	"scout":   "fallback:\n  text: \"Section written.\"\n",
}

const delegatedAgents = `  - name: atlas
    model: {{atlas}}
    answers: {default: true}
  - name: planner
    model: {{planner}}
    plans: true
  - name: scout
    model: {{scout}}
`

// TestRunFromDelegatedGoal: a goal delegated to a lead that plans becomes
// a run in the delegate's conversation; the delegation completes with the
// run's result (not with the plan), which wakes the delegating agent.
func TestRunFromDelegatedGoal(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, delegatedScripts, delegatedAgents, "")})
		const ts = "1700002000.000700"
		e.mustPost(newEvent("EvDelRun", mention(runChannel, ts, "", alice, "please write the docs for runs")))
		final := e.waitReply(runChannel, "Final:")
		e.waitIdle()
		if !strings.Contains(shown(final), "Section written.") || !strings.Contains(shown(final), ": done") {
			t.Errorf("atlas relayed %q; want the run's result", shown(final))
		}
		parent := e.conversation(runChannel, ts).ID
		ds, err := e.store.DelegationList(context.Background(), parent)
		if err != nil || len(ds) != 1 {
			t.Fatalf("delegations: %d (%v)", len(ds), err)
		}
		r := onlyRun(t, e.store, ds[0].ChildID)
		if r.Status != store.RunStatusDone || r.LeadAgent != "planner" {
			t.Errorf("run %+v; want planner's, done", r)
		}
		if d := ds[0]; d.Status != store.DelegationCompleted || !strings.Contains(d.Result, "Run "+run.ShortID(r)+": done") || strings.Contains(d.Result, `"steps"`) {
			t.Errorf("delegation %s with result %q; want completed with the run's result, not the plan", d.Status, d.Result)
		}
	})
}

// slowPartsProgress are the bot's messages in the thread that showed the
// "three slow parts" run as a stream (their first chunk is its plan).
func slowPartsProgress(e *slackEnv, thread string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.botMessages(runChannel) {
		if m.ThreadTS == thread && len(m.Chunks) > 0 && m.Chunks[0].Type == "plan_update" && m.Chunks[0].Title == "Plan: Three slow parts" {
			out = append(out, m)
		}
	}
	return out
}

// TestRunSlackProgressSurvivesRestart: the service restarts while a run's
// first step works; the run's progress goes on in the one message that
// showed it before the restart, to the end. When Slack kept the stream
// open, the new process appends to it (every step ends complete, the
// stream stopped with the outcome); when Slack ended it meanwhile, that
// same message turns into the run's text, edited to the end. Either way
// the thread shows one progress message for the run.
func TestRunSlackProgressSurvivesRestart(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		for i, tc := range []struct {
			name       string
			slackEnded bool
		}{
			{"the stream kept open", false},
			{"the stream ended by slack", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := startRuns(t, db, "")
				ts := fmt.Sprintf("1700002000.0009%02d", i)
				e.mustPost(newEvent("EvRunRestart"+fmt.Sprint(i), mention(runChannel, ts, "", alice, "three slow parts please")))
				r := onlyRun(t, e.store, e.conversation(runChannel, ts).ID)
				var before slacktest.Message
				poll(t, "the progress stream showing part one working", func() (bool, string) {
					ms := slowPartsProgress(e, ts)
					for _, m := range ms {
						for _, c := range m.Chunks {
							if c.Type == "task_update" && c.ID == "one" && c.Status == "in_progress" {
								before = m
								return true, ""
							}
						}
					}
					return false, fmt.Sprintf("%d progress messages: %+v", len(ms), ms)
				})
				e = e.restart(func() {
					if tc.slackEnded {
						e.slack.StopSession(runChannel, ts)
					}
				})
				waitRun(t, e.store, r.ID, store.RunStatusDone)
				e.waitReply(runChannel, "Run "+run.ShortID(r)+": done")
				e.waitIdle()

				ms := slowPartsProgress(e, ts)
				if len(ms) != 1 || ms[0].TS != before.TS {
					t.Fatalf("%d progress messages %+v; want the one made before the restart (ts %s), and no other", len(ms), ms, before.TS)
				}
				m := ms[0]
				if m.Streaming {
					t.Errorf("the progress message is still streaming after the run ended")
				}
				if !tc.slackEnded {
					last := map[string]string{}
					for _, c := range m.Chunks {
						if c.Type == "task_update" {
							last[c.ID] = c.Status
						}
					}
					for _, k := range []string{"one", "two", "three"} {
						if last[k] != "complete" {
							t.Errorf("step %s ends %q in the stream, want complete (chunks %+v)", k, last[k], m.Chunks)
						}
					}
					if end := m.Chunks[len(m.Chunks)-1]; end.Type != "plan_update" || end.Title != "Three slow parts: done" {
						t.Errorf("the stream ends with %+v, want the plan_update saying it is done", end)
					}
					if m.Edits != 0 {
						t.Errorf("the stream was replaced (%d edits), want it appended to", m.Edits)
					}
					return
				}
				// Slack ended the stream: the same message shows the run
				// as text, edited to the end.
				text := shown(m)
				if m.Edits == 0 || !strings.Contains(text, "Run "+run.ShortID(r)+": done") || strings.Count(text, "done") < 4 {
					t.Errorf("the progress message shows %q after %d edits; want the run's text, every step done", text, m.Edits)
				}
			})
		}
	})
}

// TestRunDiscordEmbedSurvivesRestart: the service restarts while a run's
// first step works; the embed posted before the restart is edited by the
// new process to the end, and no other progress message is posted.
func TestRunDiscordEmbedSurvivesRestart(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		const channel = "3200000000000000078"
		e := discordStartWith(t, db, 0, agentsConfig(t, runScripts, runAgents, ""))
		e.mention(channel, discordAlice, "three slow parts please")
		progress := func() []*discordtest.Message {
			var out []*discordtest.Message
			for _, m := range e.fake.Messages(channel, "") {
				if strings.Contains(string(m.Embeds), "Slow part one") {
					out = append(out, m)
				}
			}
			return out
		}
		var before *discordtest.Message
		e.fake.Wait(t, "the run's embed showing part one working", func() bool {
			for _, m := range progress() {
				if strings.Contains(string(m.Embeds), "⏳ **one**") {
					before = m
					return true
				}
			}
			return false
		})
		e = e.restart()
		e.fake.Wait(t, "the run's embed showing every part done", func() bool {
			for _, m := range progress() {
				if strings.Contains(string(m.Embeds), "· done") {
					return true
				}
			}
			return false
		})
		e.settle(channel)
		ms := progress()
		if len(ms) != 1 || ms[0].ID != before.ID {
			t.Fatalf("%d progress messages; want the one posted before the restart (%s), and no other", len(ms), before.ID)
		}
		if body := string(ms[0].Embeds); strings.Count(body, "✅") != 3 || !strings.Contains(body, "· done") {
			t.Errorf("the embed shows %s; want all three parts done", body)
		}
	})
}

// TestRunStartedOverHTTP: POST /api/runs starts a plan without a chat, in
// a conversation of the lead's own that no platform shows; the steps run
// as turns of their agents, one after the other, the run finishes done, its result comes back
// to that conversation as the lead's message, and nothing is posted to
// Slack.
func TestRunStartedOverHTTP(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startRuns(t, db, "")
		var started apiRun
		var conv struct {
			Conversation uuid.UUID `json:"conversation"`
		}
		body := `{"lead": "atlas", "plan": {"goal": "Tell the team about the parser", "steps": [
			{"id": "find", "title": "Find the failing test", "agent": "scout"},
			{"id": "patch", "title": "Patch the parser", "agent": "coder", "depends_on": ["find"]}]}}`
		e.api("POST", "/api/runs", body, http.StatusCreated, &started)
		e.api("GET", "/api/runs/"+started.ID, "", http.StatusOK, &conv)
		id := uuid.MustParse(started.ID)
		r, steps := waitRun(t, e.store, id, store.RunStatusDone)
		if r.ConversationID != conv.Conversation || r.LeadAgent != "atlas" {
			t.Fatalf("run %+v; want atlas's, held in conversation %s", r, conv.Conversation)
		}
		if steps[0].Output != "The parser test fails on empty input." || steps[1].Output != "Fixed the parser for empty input." {
			t.Errorf("step outputs %q, %q; want scout's finding, then coder's fix", steps[0].Output, steps[1].Output)
		}
		e.waitIdle()

		c, err := e.store.ConversationGet(context.Background(), r.ConversationID)
		if err != nil {
			t.Fatal(err)
		}
		atlas, err := e.store.AgentGetByName(context.Background(), "atlas")
		if err != nil {
			t.Fatal(err)
		}
		if c.AgentID == nil || *c.AgentID != atlas.ID || c.Title != "Tell the team about the parser" {
			t.Errorf("the run's conversation: agent %v, title %q; want atlas's, titled with the goal", c.AgentID, c.Title)
		}
		said := e.entries(r.ConversationID, store.EntryAssistant)
		if len(said) != 1 || !strings.Contains(decode[core.AssistantContent](t, said[0]).Text, "Run "+started.ID[len(started.ID)-8:]+": done") {
			t.Errorf("the lead's conversation holds %d messages of atlas; want one, the run's result", len(said))
		}
		if posted := e.slack.Calls("chat.postMessage", "chat.startStream"); len(posted) != 0 {
			t.Errorf("a run started over HTTP posted %d messages to Slack", len(posted))
		}
	})
}
