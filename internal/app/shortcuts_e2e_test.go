package app_test

// Whole-service tests of the shortcuts and the Workflow Builder step
// (bots/slack/shortcuts.go, steps.go; core/asks.go) against the fake Slack.

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// shortcutsModel is the scripted model of these tests.
func shortcutsModel(t *testing.T) map[string]string {
	script, err := filepath.Abs(filepath.Join("testdata", "shortcuts_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}
}

// postInteraction posts an interactivity payload to /slack/interactivity,
// signed as Slack signs it, and returns the status.
func (e *slackEnv) postInteraction(payload any) int {
	e.tb.Helper()
	req := slacktest.NewSignedRequest(e.base+"/slack/interactivity", "application/x-www-form-urlencoded", e2eSecret, time.Now(), slacktest.InteractionForm(payload))
	resp, err := e.http.Do(req)
	if err != nil {
		e.tb.Fatalf("posting an interaction: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// threadReplies are the bot's finished messages in a thread.
func (e *slackEnv) threadReplies(channel, thread string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.botMessages(channel) {
		if m.ThreadTS == thread && !m.Streaming {
			out = append(out, m)
		}
	}
	return out
}

// TestSlackMessageShortcutAnswersInThread: "Ask an agent" on a reply in a
// thread starts a turn whose question is the message and its thread
// (conversations.replies), and the answer is posted in that thread, once,
// even when Slack delivers the shortcut again.
func TestSlackMessageShortcutAnswersInThread(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{env: shortcutsModel(t)})
		const channel = "C0SHORTCUT"
		root := e.slack.PersonMessage(channel, "", alice, "Release plan: ship the importer on Friday.")
		reply := e.slack.PersonMessage(channel, root, "U0BOB", "Does the importer handle CSV files with a BOM?")

		action := slacktest.MessageAction(slacktest.Shortcut{
			TeamID: e2eTeam, UserID: alice, UserName: "alice", CallbackID: "switchboard_ask_message",
			TriggerID: "13345224609.738474920.8088930838d88f008e0", Channel: channel,
			MessageTS: reply, ThreadTS: root, Author: "U0BOB", Text: "Does the importer handle CSV files with a BOM?",
		})
		if got := e.postInteraction(action); got != http.StatusOK {
			t.Fatalf("POST /slack/interactivity (message_action) answered %d, want 200", got)
		}
		answer := e.waitReply(channel, "Shortcut answer.")
		if answer.ThreadTS != root {
			t.Fatalf("the answer went to thread %q, want the message's thread %q", answer.ThreadTS, root)
		}
		// The question was the message and its thread, read from Slack.
		for _, want := range []string{"Does the importer handle CSV files with a BOM?", "Release plan: ship the importer on Friday.", "asked you about a message", "→ "} {
			if !strings.Contains(shown(answer), want) {
				t.Errorf("the answer %q does not show the question held %q", shown(answer), want)
			}
		}
		if calls := e.slack.Calls("conversations.replies"); len(calls) == 0 || calls[0].Params.Get("ts") != root {
			t.Errorf("conversations.replies calls %+v; want the thread %s read", calls, root)
		}

		// Slack delivers the same shortcut again: nothing more is posted.
		if got := e.postInteraction(action); got != http.StatusOK {
			t.Fatalf("the repeated shortcut answered %d, want 200", got)
		}
		e.waitIdle()
		if got := e.threadReplies(channel, root); len(got) != 1 {
			t.Fatalf("the thread has %d answers from the bot, want exactly 1: %+v", len(got), got)
		}
	})
}

// TestSlackMessageShortcutChoosesAgentInModal: with several agents and a
// channel bound to none, the shortcut opens a modal; its submission, with
// the agent chosen and a question, is answered by that agent in the
// message's thread.
func TestSlackMessageShortcutChoosesAgentInModal(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		model := shortcutsModel(t)["SWITCHBOARD_MODEL"]
		cfg := openAccess + "agents:\n  - name: ada\n    model: " + model + "\n  - name: grace\n    model: " + model + "\n"
		e := startSlack(t, db(t), envOptions{env: shortcutsModel(t), config: cfg})
		const channel = "C0MODAL"
		root := e.slack.PersonMessage(channel, "", alice, "The nightly build failed again.")
		action := slacktest.MessageAction(slacktest.Shortcut{
			TeamID: e2eTeam, UserID: alice, UserName: "alice", CallbackID: "switchboard_ask_message",
			Channel: channel, MessageTS: root, Author: alice, Text: "The nightly build failed again.",
		})
		if got := e.postInteraction(action); got != http.StatusOK {
			t.Fatalf("POST /slack/interactivity (message_action) answered %d, want 200", got)
		}
		var views []slacktest.View
		poll(t, "the modal to open", func() (bool, string) {
			views = e.slack.Views()
			return len(views) == 1, fmt.Sprint(views)
		})
		if len(e.botMessages(channel)) != 0 {
			t.Fatal("the shortcut answered before an agent was chosen")
		}
		sub := slacktest.ViewSubmission(views[0], slacktest.Submitter{TeamID: e2eTeam, UserID: alice, UserName: "alice"}, map[string][]string{
			"agent":    {"grace"},
			"question": {"What is the likely cause?"},
		})
		if got := e.postInteraction(sub); got != http.StatusOK {
			t.Fatalf("POST /slack/interactivity (view_submission) answered %d, want 200", got)
		}
		answer := e.waitReply(channel, "Shortcut answer.")
		if answer.ThreadTS != root || !strings.Contains(shown(answer), "What is the likely cause?") {
			t.Fatalf("answer %+v; want it in thread %s with the question asked in the modal", answer, root)
		}
		if got := replyAgents(t, e.store, e.conversation(channel, root).ID); len(got) != 1 || got[0] != "grace" {
			t.Fatalf("the thread's conversation is answered by %v, want grace (chosen in the modal)", got)
		}
	})
}

// TestSlackGlobalShortcutAnswersByDM: the global shortcut opens a modal;
// the question submitted is answered in the person's DM with the app,
// under a line saying what they asked.
func TestSlackGlobalShortcutAnswersByDM(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{env: shortcutsModel(t)})
		if got := e.postInteraction(slacktest.GlobalShortcut(slacktest.Shortcut{TeamID: e2eTeam, UserID: alice, UserName: "alice", CallbackID: "switchboard_ask"})); got != http.StatusOK {
			t.Fatalf("POST /slack/interactivity (shortcut) answered %d, want 200", got)
		}
		var views []slacktest.View
		poll(t, "the modal to open", func() (bool, string) {
			views = e.slack.Views()
			return len(views) == 1, fmt.Sprint(views)
		})
		sub := slacktest.ViewSubmission(views[0], slacktest.Submitter{TeamID: e2eTeam, UserID: alice, UserName: "alice"}, map[string][]string{
			"question": {"When is the next release?"},
		})
		if got := e.postInteraction(sub); got != http.StatusOK {
			t.Fatalf("POST /slack/interactivity (view_submission) answered %d, want 200", got)
		}
		dm := "D" + strings.TrimPrefix(alice, "U") // the fake's conversations.open
		answer := e.waitReply(dm, "Answer: ")
		if !strings.Contains(shown(answer), "When is the next release?") || answer.ThreadTS == "" {
			t.Fatalf("DM answer %+v; want the question answered in a thread", answer)
		}
		asked, ok := e.slack.Message(dm, answer.ThreadTS)
		if !ok || !strings.Contains(asked.Text, "You asked") {
			t.Fatalf("the answer's thread starts with %+v, want the line saying what was asked", asked)
		}
	})
}

// stepInputs and stepOutputs are the ask_agent step's parameters as the
// manifest declares them.
var (
	stepInputs = []slacktest.Param{
		{Name: "agent", Type: "string", Title: "Agent"},
		{Name: "prompt", Type: "string", Title: "Prompt", Required: true},
		{Name: "context", Type: "string", Title: "Context"},
		{Name: "user_id", Type: "slack#/types/user_id", Title: "For whom"},
	}
	stepOutputs = []slacktest.Param{{Name: "answer", Type: "string", Title: "Answer", Required: true}}
)

// stepEvent is the signed function_executed event of one run of the step.
func (e *slackEnv) stepEvent(eventID, execution string, inputs map[string]any) signedEvent {
	return signedEvent{
		body:     slacktest.MustJSON(slacktest.EventCallback(e2eTeam, eventID, e.slack.FunctionExecuted(execution, "ask_agent", stepInputs, stepOutputs, inputs))),
		secret:   e2eSecret,
		signedAt: time.Now(),
	}
}

// waitCompletion waits for the step run execution to be completed, and
// returns how.
func (e *slackEnv) waitCompletion(execution string) slacktest.StepCompletion {
	e.tb.Helper()
	var got slacktest.StepCompletion
	poll(e.tb, "workflow step "+execution+" to complete", func() (bool, string) {
		for _, c := range e.slack.StepCompletions() {
			if c.Execution == execution {
				got = c
				return true, ""
			}
		}
		return false, fmt.Sprint(e.slack.StepCompletions())
	})
	return got
}

// TestSlackWorkflowStep: the step's run is answered with the agent's
// answer as its output; a failing agent fails the step with a reason, and
// an agent that does not exist fails it at once; a run Slack delivers
// again is completed once.
func TestSlackWorkflowStep(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{env: shortcutsModel(t)})

		ok := e.stepEvent("Ev0STEP1", "Fx0STEP1", map[string]any{
			"prompt": "Summarise the launch plan for the team.", "context": "Launch is on Friday at 10:00.", "user_id": alice,
		})
		e.mustPost(ok)
		done := e.waitCompletion("Fx0STEP1")
		answer, _ := done.Outputs["answer"].(string)
		if !done.Success || !strings.Contains(answer, "Summarise the launch plan for the team.") || !strings.Contains(answer, "Launch is on Friday at 10:00.") {
			t.Fatalf("step completed %+v; want success with the agent's answer (prompt and context mapped into the question) as output", done)
		}
		// Slack retries the event (the first ack was lost), and delivers
		// it again under a new event id: the step stays completed once.
		ok.header = http.Header{"X-Slack-Retry-Num": {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}}
		e.mustPost(ok)
		e.mustPost(signedEvent{body: []byte(strings.Replace(string(ok.body), "Ev0STEP1", "Ev0STEP1B", 1)), secret: e2eSecret, signedAt: time.Now()})

		// A failing agent fails the step, with the reason.
		e.mustPost(e.stepEvent("Ev0STEP2", "Fx0STEP2", map[string]any{"prompt": "please fail: this request"}))
		failed := e.waitCompletion("Fx0STEP2")
		if failed.Success || !strings.HasPrefix(failed.Error, "Ask an agent: ") || len(failed.Error) < len("Ask an agent: ")+5 {
			t.Fatalf("step completed %+v; want a failure with a reason", failed)
		}
		t.Logf("the failed step's reason: %s", failed.Error)
		// An agent that does not exist: failed at once, naming it.
		e.mustPost(e.stepEvent("Ev0STEP3", "Fx0STEP3", map[string]any{"agent": "nobody", "prompt": "Hello?"}))
		if c := e.waitCompletion("Fx0STEP3"); c.Success || !strings.Contains(c.Error, `"nobody"`) {
			t.Fatalf("step completed %+v; want a failure naming the missing agent", c)
		}

		e.waitIdle()
		if n := len(e.slack.Calls("functions.completeSuccess")); n != 1 {
			t.Errorf("functions.completeSuccess was called %d times, want 1", n)
		}
		if n := len(e.slack.StepCompletions()); n != 3 {
			t.Errorf("%d steps completed, want 3: %+v", n, e.slack.StepCompletions())
		}
	})
}

// TestSlackWorkflowStepAcrossRestart: the service stops while the step's
// turn runs; the instance that starts next completes the step, once.
func TestSlackWorkflowStepAcrossRestart(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{env: shortcutsModel(t), instanceID: "first"})
		e.mustPost(e.stepEvent("Ev0SLOW", "Fx0SLOW", map[string]any{"prompt": "A slow step, please."}))
		poll(t, "the step's turn to start", func() (bool, string) {
			items, err := e.queued(0)
			if err != nil {
				return false, err.Error()
			}
			for _, it := range items {
				if it.Kind == "turn" && it.State == "running" {
					return true, ""
				}
			}
			return false, fmt.Sprint(len(items), " items")
		})
		opts := e.opts
		opts.instanceID = "second"
		e.opts = opts
		e2 := e.restart(nil)
		done := e2.waitCompletion("Fx0SLOW")
		if !done.Success || done.Outputs["answer"] != "A slow step answer." {
			t.Fatalf("step completed %+v; want the slow answer", done)
		}
		e2.waitIdle()
		if n := len(e2.slack.Calls("functions.completeSuccess", "functions.completeError")); n != 1 {
			t.Errorf("the step was completed with %d calls, want 1", n)
		}
	})
}

// TestSlackWorkflowStepTwoInstances: Slack delivers one run of the step to
// two instances of the service on one database (a retry landing on the
// other replica): the step is completed once.
func TestSlackWorkflowStepTwoInstances(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		a := startSlack(t, url, envOptions{env: shortcutsModel(t), instanceID: "instance-a"})
		b := startSlack(t, url, envOptions{env: shortcutsModel(t), instanceID: "instance-b", slack: a.slack})
		ev := a.stepEvent("Ev0TWO", "Fx0TWO", map[string]any{"prompt": "Which instance answers?"})
		a.mustPost(ev)
		b.mustPost(ev)
		done := a.waitCompletion("Fx0TWO")
		if !done.Success {
			t.Fatalf("step completed %+v; want success", done)
		}
		a.waitIdle()
		if n := len(a.slack.Calls("functions.completeSuccess", "functions.completeError")); n != 1 {
			t.Errorf("the step was completed with %d calls across two instances, want 1", n)
		}
	})
}
