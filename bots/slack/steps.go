package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/core"
)

// The Workflow Builder step "Ask an agent": a custom step (a function of
// the app, declared under functions in the app manifest) whose run Slack
// announces with a function_executed event. The event is stored with
// core.Service.Ask on the ack, deduped on its function_execution_id; the
// turn runs like any other, in a conversation nobody reads; once it is
// over, core hands the outcome to ReplyAsk, which completes the step:
// functions.completeSuccess with the answer as the output "answer", or
// functions.completeError with the reason.

// StepAskAgent is the custom step's callback_id in the manifest.
const StepAskAgent = "ask_agent"

// The step's input and output parameters, as the manifest names them.
const (
	StepInputAgent   = "agent"
	StepInputPrompt  = "prompt"
	StepInputContext = "context"
	StepInputUser    = "user_id"
	StepOutputAnswer = "answer"
)

// Asker is core's ask (core.Service.Ask).
type Asker interface {
	Ask(ctx context.Context, p *core.AskParams) (*core.AskResult, error)
}

// functionExecuted is the function_executed event's part the adapter reads.
type functionExecuted struct {
	Function struct {
		CallbackID string `json:"callback_id"`
	} `json:"function"`
	Inputs              map[string]json.RawMessage `json:"inputs"`
	FunctionExecutionID string                     `json:"function_execution_id"`
	WorkflowExecutionID string                     `json:"workflow_execution_id"`
}

// stepReply is what ReplyAsk needs to complete a step: the team whose
// token calls functions.complete*, and the execution. No token: the bot
// token of the team is read when the step completes.
type stepReply struct {
	Team      string `json:"team"`
	Execution string `json:"execution"`
}

// stepFailedPrefix starts the reason a failed step shows in Workflow
// Builder's activity.
const stepFailedPrefix = "Ask an agent: "

// handleFunctionExecuted takes a run of the custom step. It returns an
// error only when core did not store it, so the ack is withheld and Slack
// delivers it again.
func (a *Adapter) handleFunctionExecuted(ctx context.Context, w *workspace, cb *callback) error {
	var ev functionExecuted
	if err := json.Unmarshal(cb.Event, &ev); err != nil || ev.FunctionExecutionID == "" {
		a.log.WarnContext(ctx, "dropping a function_executed event that does not decode", "event_id", cb.EventID, "err", err)
		return nil
	}
	log := a.log.With("function_execution_id", ev.FunctionExecutionID, "callback_id", ev.Function.CallbackID)
	if ev.Function.CallbackID != StepAskAgent {
		log.WarnContext(ctx, "a step of this app that Switchboard does not know; failing it")
		a.failStep(w, ev.FunctionExecutionID, "this app has no step "+ev.Function.CallbackID)
		return nil
	}
	if a.opts.Asker == nil {
		a.failStep(w, ev.FunctionExecutionID, "workflow steps are not turned on in this Switchboard")
		return nil
	}
	agent, text, user := stepQuestion(&ev)
	if strings.TrimSpace(text) == "" {
		a.failStep(w, ev.FunctionExecutionID, "the step's prompt is empty")
		return nil
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	timeout := a.opts.StepTimeout
	if timeout <= 0 {
		timeout = core.DefaultAskTimeout
	}
	res, err := a.opts.Asker.Ask(subCtx, &core.AskParams{
		Platform: PlatformName, Key: ev.FunctionExecutionID, Agent: agent, UserID: user, Text: text,
		Reply: core.DeferredJSON(stepReply{Team: w.team, Execution: ev.FunctionExecutionID}), Deadline: a.opts.Now().Add(timeout),
	})
	switch {
	case errors.Is(err, core.ErrInvalid):
		// An agent that does not exist, for instance: the step fails now,
		// with core's reason, rather than Slack retrying it forever.
		log.WarnContext(ctx, "a workflow step core refused", "err", err)
		a.failStep(w, ev.FunctionExecutionID, strings.TrimPrefix(err.Error(), core.ErrInvalid.Error()+": "))
		return nil
	case err != nil:
		return fmt.Errorf("asking for workflow step %s: %w", ev.FunctionExecutionID, err)
	}
	log.InfoContext(ctx, "workflow step taken", "agent", agent, "duplicate", res.Duplicate, "conversation_id", res.ConversationID)
	return nil
}

// stepQuestion maps the step's inputs into the agent's question: the
// prompt first, then the context and every other input by name.
func stepQuestion(ev *functionExecuted) (agent, text, user string) {
	str := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	agent = strings.TrimSpace(str(ev.Inputs[StepInputAgent]))
	user = str(ev.Inputs[StepInputUser])
	prompt := strings.TrimSpace(str(ev.Inputs[StepInputPrompt]))
	if prompt == "" {
		return agent, "", user
	}
	var b strings.Builder
	b.WriteString("A step of a Slack workflow asks you the following. Your reply is the step's output, passed on to the workflow's next steps as it is: answer in plain text, without asking back (nobody can reply).\n\n")
	b.WriteString(prompt)
	var names []string
	for k := range ev.Inputs {
		if k != StepInputAgent && k != StepInputPrompt {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	if len(names) > 0 {
		b.WriteString("\n\nThe step's inputs:")
		for _, k := range names {
			v := strings.TrimSpace(str(ev.Inputs[k]))
			if k == StepInputUser && v != "" {
				v = "<@" + v + ">"
			}
			if v == "" || v == "null" {
				continue
			}
			fmt.Fprintf(&b, "\n- %s: %s", k, strings.ReplaceAll(truncateRunes(v, shortcutMessageRunes*2), "\n", "\n  "))
		}
	}
	return agent, truncateRunes(b.String(), shortcutQuestionRunes), user
}

// failStep fails a step at once, after the ack, for a reason found before
// any turn started. A repeated event fails it again, which Slack refuses
// harmlessly.
func (a *Adapter) failStep(w *workspace, execution, reason string) {
	a.background(func(ctx context.Context) {
		if err := a.completeStep(ctx, w, execution, &core.AskOutcome{Failure: reason}); err != nil {
			a.log.WarnContext(ctx, "failing a workflow step", "function_execution_id", execution, "err", err)
		}
	})
}

// ReplyAsk implements core.AskReplier: it completes the workflow step
// with the agent's answer, or fails it with the reason.
func (a *Adapter) ReplyAsk(ctx context.Context, reply json.RawMessage, out *core.AskOutcome) error {
	var r stepReply
	if err := json.Unmarshal(reply, &r); err != nil || r.Execution == "" {
		a.log.ErrorContext(ctx, "an ask of slack without its step; dropped", "reply", string(reply), "err", err)
		return nil
	}
	w, err := a.workspaceFor(ctx, r.Team)
	if err != nil {
		if errors.Is(err, ErrNotInstalled) {
			a.log.WarnContext(ctx, "completing a workflow step of a team the app left; dropped", "team_id", r.Team, "err", err)
			return nil
		}
		return err
	}
	return a.completeStep(ctx, w, r.Execution, out)
}

var _ core.AskReplier = (*Adapter)(nil)

// stepDone are the answers of functions.complete* to a step that cannot be
// completed (again): a repeat after a crash finds the step completed.
var stepDone = []string{"execution_not_in_running_state", "function_execution_not_found"}

// completeStep calls functions.completeSuccess or functions.completeError.
// An output Slack refuses (parameter_validation_failed) fails the step
// with that reason instead.
func (a *Adapter) completeStep(ctx context.Context, w *workspace, execution string, out *core.AskOutcome) error {
	fail := func(reason string) error {
		return a.retry(ctx, "functions.completeError", func(ctx context.Context) error {
			return w.api.FunctionCompleteErrorContext(ctx, execution, truncateRunes(stepFailedPrefix+reason, 2000))
		})
	}
	var err error
	if out.Failure != "" {
		err = fail(out.Failure)
	} else {
		err = a.retry(ctx, "functions.completeSuccess", func(ctx context.Context) error {
			return w.api.FunctionCompleteSuccessContext(ctx, execution,
				slack.FunctionCompleteSuccessRequestOptionOutput(map[string]string{StepOutputAnswer: out.Answer}))
		})
		if slackError(err) == "parameter_validation_failed" {
			a.log.WarnContext(ctx, "slack refused a step's answer as its output; failing the step", "function_execution_id", execution, "err", err)
			err = fail("Slack refused the agent's answer as the step's output")
		}
	}
	if code := slackError(err); slices.Contains(stepDone, code) {
		a.log.InfoContext(ctx, "workflow step completed already", "function_execution_id", execution, "answer", code)
		return nil
	}
	if err != nil {
		return fmt.Errorf("completing workflow step %s: %w", execution, err)
	}
	return nil
}

// slackError is the error code of a Web API error answer, "" for another
// error or none.
func slackError(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}
