package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/switchboardhq/switchboard/bots/slack/mrkdwn"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
)

// Card forms on Slack. A click on a card button that opens a form comes
// back from core with the form (ActionResult.Form); the adapter opens it
// at once with views.open and the click's trigger_id (valid for three
// seconds), as a modal of input blocks whose block_id and action_id are
// the inputs' names. The view_submission is handed to core with the
// answers; answers core finds wrong are returned with
// response_action "errors", keyed by block_id, so they show under their
// inputs and the modal stays open with what the person typed.

// FormCallbackID is the callback_id of a card form's modal.
const FormCallbackID = "sb-card-form"

// Slack's modal limits (https://docs.slack.dev/reference/views/modal-views).
const (
	modalTitleLen      = 24
	modalButtonLen     = 24
	privateMetadataLen = 3000
	optionTextLen      = 75
	placeholderLen     = 150
)

// OpensForms reports that Slack opens card forms in modals.
func (a *Adapter) OpensForms() bool { return true }

// formMeta is a form modal's private_metadata: which card action it
// answers and where the card is, to mark it once answered.
type formMeta struct {
	Action  string `json:"a"`
	Team    string `json:"t,omitempty"`
	Channel string `json:"c,omitempty"`
	TS      string `json:"ts,omitempty"`
	Thread  string `json:"th,omitempty"`
}

// openForm opens the form a click asked for in a modal. A failure is told
// to the clicker, since nothing else would show.
func (a *Adapter) openForm(ctx context.Context, ic *slack.InteractionCallback, res *core.ActionResult, actionID string) {
	meta := formMeta{
		Action: actionID, Team: firstOf(ic.Team.ID, ic.User.TeamID),
		Channel: firstOf(ic.Container.ChannelID, ic.Channel.ID),
		TS:      firstOf(ic.Container.MessageTs, ic.Message.Timestamp),
		Thread:  firstOf(ic.Container.ThreadTs, ic.Message.ThreadTimestamp),
	}
	view, err := FormView(res.Form, res.FormTitle, meta)
	if err == nil {
		var w *workspace
		if w, err = a.workspaceFor(ctx, meta.Team); err == nil {
			// No retry: the trigger is spent or stale by the time a
			// retry could go.
			_, err = w.api.OpenViewContext(ctx, ic.TriggerID, view)
		}
	}
	if err != nil {
		a.log.WarnContext(ctx, "opening a card form", "action_id", actionID, "trigger_id", ic.TriggerID, "err", err)
		c := clicked{team: meta.Team, channel: meta.Channel, thread: meta.Thread, user: ic.User.ID}
		a.background(func(ctx context.Context) {
			if w, err := a.workspaceFor(ctx, c.team); err == nil {
				a.tellClicker(ctx, w, c, "The form could not be opened; please click again.", "telling a user their form did not open")
			}
		})
	}
}

// FormView is the modal of a card's form: one input block per input.
func FormView(f *cards.Form, title string, meta formMeta) (slack.ModalViewRequest, error) {
	md, err := json.Marshal(meta)
	if err != nil || len(md) > privateMetadataLen {
		return slack.ModalViewRequest{}, fmt.Errorf("the form's metadata does not fit in private_metadata (%d bytes)", len(md))
	}
	blocks := make([]slack.Block, 0, len(f.Inputs))
	for i := range f.Inputs {
		in := &f.Inputs[i]
		label := formText(in.Label, 2000)
		ib := slack.NewInputBlock(in.Name, label, nil, inputElement(in))
		ib.Optional = !in.Required
		blocks = append(blocks, ib)
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           formText(cardsOr(title, "Form"), modalTitleLen),
		Submit:          formText(f.SubmitLabel(), modalButtonLen),
		Close:           formText("Cancel", modalButtonLen),
		Blocks:          slack.Blocks{BlockSet: blocks},
		CallbackID:      FormCallbackID,
		PrivateMetadata: string(md),
	}, nil
}

func cardsOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func formText(s string, max int) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, cards.Truncate(s, max), false, false)
}

// inputElement is the Block Kit element of an input, filled in with its
// initial answer.
func inputElement(in *cards.Input) slack.BlockElement {
	var ph *slack.TextBlockObject
	if in.Placeholder != "" {
		ph = formText(in.Placeholder, placeholderLen)
	}
	initial, _ := in.InitialAnswers()
	first := ""
	if len(initial) > 0 {
		first = initial[0]
	}
	options := func() []*slack.OptionBlockObject {
		out := make([]*slack.OptionBlockObject, len(in.Options))
		for i, o := range in.Options {
			out[i] = slack.NewOptionBlockObject(o.Value, formText(o.Label, optionTextLen), nil)
		}
		return out
	}
	switch in.Type {
	case cards.InputSelect:
		opts := options()
		e := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, ph, in.Name, opts...)
		for _, o := range opts {
			if o.Value == first {
				e.InitialOption = o
			}
		}
		return e
	case cards.InputMultiSelect:
		opts := options()
		e := slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, ph, in.Name, opts...)
		for _, o := range opts {
			for _, v := range initial {
				if o.Value == v {
					e.InitialOptions = append(e.InitialOptions, o)
				}
			}
		}
		return e
	case cards.InputDate:
		e := slack.NewDatePickerBlockElement(in.Name)
		e.Placeholder, e.InitialDate = ph, first
		return e
	case cards.InputTime:
		e := slack.NewTimePickerBlockElement(in.Name)
		e.Placeholder, e.InitialTime = ph, first
		return e
	case cards.InputNumber:
		e := slack.NewNumberInputBlockElement(ph, in.Name, in.Decimal)
		e.InitialValue = first
		if in.Min != nil {
			e.MinValue = strconv.FormatFloat(*in.Min, 'f', -1, 64)
		}
		if in.Max != nil {
			e.MaxValue = strconv.FormatFloat(*in.Max, 'f', -1, 64)
		}
		return e
	default:
		e := slack.NewPlainTextInputBlockElement(ph, in.Name)
		e.Multiline, e.InitialValue = in.Multiline, first
		e.MinLength, e.MaxLength = in.MinLength, in.MaxTextLength()
		return e
	}
}

// formValues reads a submitted modal's answers, keyed by block_id (the
// input's name), as strings.
func formValues(v *slack.View) map[string][]string {
	out := map[string][]string{}
	if v == nil || v.State == nil {
		return out
	}
	for blockID, byAction := range v.State.Values {
		for _, act := range byAction {
			var vals []string
			switch act.Type {
			case "static_select":
				if act.SelectedOption.Value != "" {
					vals = []string{act.SelectedOption.Value}
				}
			case "multi_static_select":
				for _, o := range act.SelectedOptions {
					vals = append(vals, o.Value)
				}
			case "datepicker":
				vals = []string{act.SelectedDate}
			case "timepicker":
				vals = []string{act.SelectedTime}
			default: // plain_text_input, number_input
				vals = []string{act.Value}
			}
			out[blockID] = append(out[blockID], vals...)
		}
	}
	return out
}

// formSubmission answers a view_submission of a card form: nil closes the
// modal; errors keep it open. handled is false for any other interaction,
// which handleInteraction takes.
func (a *Adapter) formSubmission(ctx context.Context, ic *slack.InteractionCallback) (resp *slack.ViewSubmissionResponse, handled bool) {
	if ic.Type != slack.InteractionTypeViewSubmission || ic.View.CallbackID != FormCallbackID {
		return nil, false
	}
	var meta formMeta
	if err := json.Unmarshal([]byte(ic.View.PrivateMetadata), &meta); err != nil || meta.Action == "" {
		a.log.WarnContext(ctx, "card form submission without its metadata", "view_id", ic.View.ID, "err", err)
		return slack.NewUpdateViewSubmissionResponse(noticeView("This form can no longer be sent.")), true
	}
	values := formValues(&ic.View)
	action := &core.Action{
		Platform: PlatformName,
		// One modal is sent once: its view id names the submission, so a
		// retry is recorded once; a submission refused for its answers
		// records nothing and may be sent again from the same view.
		EventID:   "view:" + ic.View.ID,
		ActionID:  meta.Action,
		UserID:    ic.User.ID,
		UserName:  firstOf(ic.User.Username, ic.User.Name),
		Workspace: firstOf(ic.User.TeamID, ic.Team.ID),
		At:        a.opts.Now(),
		Values:    values,
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	res, err := a.opts.Submitter.Act(subCtx, action)
	cancel()
	first := ""
	if blocks := ic.View.Blocks.BlockSet; len(blocks) > 0 {
		if ib, ok := blocks[0].(*slack.InputBlock); ok {
			first = ib.BlockID
		}
	}
	switch {
	case errors.Is(err, core.ErrInvalid), errors.Is(err, core.ErrNotPending):
		a.log.WarnContext(ctx, "card form refused by core", "action_id", meta.Action, "err", err)
		return slack.NewUpdateViewSubmissionResponse(noticeView("This form no longer works.")), true
	case err != nil:
		a.log.ErrorContext(ctx, "handing a card form to core", "action_id", meta.Action, "err", err)
		if first == "" {
			return slack.NewUpdateViewSubmissionResponse(noticeView("Something went wrong; your answers were not sent.")), true
		}
		return slack.NewErrorsViewSubmissionResponse(map[string]string{first: "Something went wrong; your answers were not sent. Please submit again."}), true
	case len(res.Invalid) > 0:
		return slack.NewErrorsViewSubmissionResponse(res.Invalid), true
	case res.Refused:
		return slack.NewUpdateViewSubmissionResponse(noticeView(firstOf(res.Reason, "This form is not yours to answer."))), true
	case res.Duplicate && res.Settled != nil:
		return slack.NewUpdateViewSubmissionResponse(noticeView(settledPlain(res.Settled))), true
	case res.Duplicate:
		return nil, true // this very submission, again: already recorded
	}
	title := ic.View.Title
	c := clicked{
		team: firstOf(meta.Team, ic.Team.ID, ic.User.TeamID), channel: meta.Channel, ts: meta.TS, thread: meta.Thread,
		user: ic.User.ID,
	}
	if title != nil {
		c.choice = title.Text
	}
	a.background(func(ctx context.Context) { a.afterForm(ctx, c) })
	return nil, true
}

// noticeView replaces a form's modal with a line of text.
func noticeView(text string) *slack.ModalViewRequest {
	return &slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  formText("Form", modalTitleLen),
		Close:  formText("Close", modalButtonLen),
		Blocks: slack.Blocks{BlockSet: []slack.Block{slack.NewSectionBlock(formText(text, 3000), nil, nil)}},
	}
}

// settledPlain is settledText for a modal's plain text.
func settledPlain(st *core.Settled) string {
	if st.Expired {
		return "This expired; ask again."
	}
	text := "Already answered by " + firstOf(st.By, "someone else")
	if st.Choice != "" {
		text += ": " + st.Choice
	}
	return text + "."
}

// afterForm marks the card a form was sent from: its buttons go, and a
// line says who sent the form. The card is read back from Slack, since a
// submission does not carry the message.
func (a *Adapter) afterForm(ctx context.Context, c clicked) {
	if c.channel == "" || c.ts == "" {
		return
	}
	w, err := a.workspaceFor(ctx, c.team)
	if err != nil {
		a.log.WarnContext(ctx, "marking a sent form", "team_id", c.team, "err", err)
		return
	}
	var msgs []slack.Message
	err = a.retry(ctx, "conversations.replies", func(ctx context.Context) error {
		var err error
		if c.thread != "" && c.thread != c.ts {
			msgs, _, _, err = w.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: c.channel, Timestamp: c.thread, Oldest: c.ts, Latest: c.ts, Inclusive: true, Limit: 2,
			})
			return err
		}
		res, err := w.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
			ChannelID: c.channel, Oldest: c.ts, Latest: c.ts, Inclusive: true, Limit: 1,
		})
		if res != nil {
			msgs = res.Messages
		}
		return err
	})
	if err != nil {
		a.log.WarnContext(ctx, "reading the card a form was sent from", "channel", c.channel, "ts", c.ts, "err", err)
		return
	}
	for _, m := range msgs {
		if m.Timestamp != c.ts {
			continue
		}
		c.blocks, c.text = m.Blocks.BlockSet, m.Text
		blocks := decidedBlocks(c)
		line := fmt.Sprintf("✅ *%s* — sent by <@%s>", mrkdwn.Escape(truncateRunes(c.choice, 200)), c.user)
		blocks[len(blocks)-1] = slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, line, false, false))
		err := a.retry(ctx, "chat.update", func(ctx context.Context) error {
			_, _, _, err := w.api.UpdateMessageContext(ctx, c.channel, c.ts,
				slack.MsgOptionText(firstOf(c.text, "✅ "+mrkdwn.Escape(c.choice)), false), slack.MsgOptionBlocks(blocks...))
			return err
		})
		if err != nil {
			a.log.WarnContext(ctx, "marking a sent form on its card", "channel", c.channel, "ts", c.ts, "err", err)
		}
		return
	}
}

// writeFormAnswer writes a view_submission's answer to the interactivity
// request: an empty 200 closes the modal.
func writeFormAnswer(w http.ResponseWriter, resp *slack.ViewSubmissionResponse) {
	if resp == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// ackFormAnswer acks a Socket Mode view_submission with its answer as the
// ack's payload.
func (a *Adapter) ackFormAnswer(ctx context.Context, client *socketmode.Client, envelopeID string, resp *slack.ViewSubmissionResponse) {
	if resp == nil {
		a.ack(ctx, client, envelopeID)
		return
	}
	if err := client.AckCtx(ctx, envelopeID, resp); err != nil && !errors.Is(err, context.Canceled) {
		a.log.WarnContext(ctx, "acking a slack form submission", "envelope_id", envelopeID, "err", err)
	}
}
