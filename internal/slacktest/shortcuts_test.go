package slacktest

import (
	"context"
	"errors"
	"testing"

	"github.com/slack-go/slack"
)

func slackErr(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestViewsOpen: a trigger opens one modal, and only once; a modal
// breaking the documented limits is refused.
func TestViewsOpen(t *testing.T) {
	s := NewServer(Options{})
	defer s.Close()
	api := newClient(s)
	ctx := context.Background()
	text := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
	}
	input := slack.NewInputBlock("q", text("Question"), nil, slack.NewPlainTextInputBlockElement(nil, "q_text"))
	view := slack.ModalViewRequest{Type: slack.VTModal, Title: text("Ask"), Submit: text("Ask"), CallbackID: "cb", PrivateMetadata: "m",
		Blocks: slack.Blocks{BlockSet: []slack.Block{input}}}

	if _, err := api.OpenViewContext(ctx, "1.2.abc", view); err != nil {
		t.Fatalf("views.open: %v", err)
	}
	if _, err := api.OpenViewContext(ctx, "1.2.abc", view); slackErr(err) != "exchanged_trigger_id" {
		t.Fatalf("views.open with a used trigger: %v, want exchanged_trigger_id", err)
	}
	long := view
	long.Title = text("A title far longer than twenty-four characters")
	if _, err := api.OpenViewContext(ctx, "1.2.def", long); slackErr(err) != "invalid_arguments" {
		t.Fatalf("views.open with a long title: %v, want invalid_arguments", err)
	}
	noSubmit := view
	noSubmit.Submit = nil
	if _, err := api.OpenViewContext(ctx, "1.2.ghi", noSubmit); slackErr(err) != "invalid_arguments" {
		t.Fatalf("views.open of inputs without submit: %v, want invalid_arguments", err)
	}
	if v := s.Views(); len(v) != 1 || v[0].CallbackID != "cb" || v[0].PrivateMetadata != "m" {
		t.Fatalf("views %+v; want the one opened", v)
	}
}

// TestFunctionsComplete: a step run is completed once, with its required
// outputs; an unknown run is not found.
func TestFunctionsComplete(t *testing.T) {
	s := NewServer(Options{})
	defer s.Close()
	api := newClient(s)
	ctx := context.Background()
	out := []Param{{Name: "answer", Type: "string", Title: "Answer", Required: true}}

	if err := api.FunctionCompleteErrorContext(ctx, "Fx0NONE", "nope"); slackErr(err) != "function_execution_not_found" {
		t.Fatalf("completeError of an unknown run: %v, want function_execution_not_found", err)
	}
	s.FunctionExecuted("Fx01", "ask_agent", nil, out, map[string]any{"prompt": "hi"})
	missing := slack.FunctionCompleteSuccessRequestOptionOutput(map[string]string{"other": "x"})
	if err := api.FunctionCompleteSuccessContext(ctx, "Fx01", missing); slackErr(err) != "parameter_validation_failed" {
		t.Fatalf("completeSuccess without the required output: %v, want parameter_validation_failed", err)
	}
	ok := slack.FunctionCompleteSuccessRequestOptionOutput(map[string]string{"answer": "42"})
	if err := api.FunctionCompleteSuccessContext(ctx, "Fx01", ok); err != nil {
		t.Fatalf("completeSuccess: %v", err)
	}
	if err := api.FunctionCompleteSuccessContext(ctx, "Fx01", ok); slackErr(err) != "execution_not_in_running_state" {
		t.Fatalf("completeSuccess again: %v, want execution_not_in_running_state", err)
	}
	if err := api.FunctionCompleteErrorContext(ctx, "Fx01", "late"); slackErr(err) != "execution_not_in_running_state" {
		t.Fatalf("completeError after success: %v, want execution_not_in_running_state", err)
	}
	c := s.StepCompletions()
	if len(c) != 1 || !c[0].Success || c[0].Outputs["answer"] != "42" {
		t.Fatalf("completions %+v; want the one success with answer 42", c)
	}
}
