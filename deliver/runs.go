package deliver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/store"
)

// ShowRun implements core.RunProgress: the run's progress is shown in the
// conversation it came from, on each platform bound to it. A platform that
// shows runs itself (bots.RunShower: Slack's plan and task chunks) gets
// the view; one that can edit gets one text message posted, then edited
// as the steps move.
//
// Which message shows a run is kept in this process only: after a restart
// the next change posts a new progress message (the run's events and its
// result message are durable; the progress message is a view).
func (d *Deliverer) ShowRun(ctx context.Context, v *core.RunView) error {
	conv, err := d.st.ConversationGet(ctx, v.Run.ConversationID)
	if err != nil {
		return fmt.Errorf("loading conversation %s: %w", v.Run.ConversationID, err)
	}
	bs, err := d.bindings(ctx, conv)
	if err != nil {
		return err
	}
	view := runView(v)
	var errs []error
	for _, b := range bs {
		if rs, ok := b.ad.(bots.RunShower); ok {
			if err := rs.ShowRun(ctx, b.to, view); err != nil {
				errs = append(errs, fmt.Errorf("showing run %s on %s: %w", v.Run.ID, b.b.Place.Platform, err))
			}
			continue
		}
		if err := d.runMessage(ctx, b, view); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

var _ core.RunProgress = (*Deliverer)(nil)

// runMessages are the text messages showing runs, by run and binding.
type runMessages struct {
	mu   sync.Mutex
	refs map[string][]bots.MessageRef
}

func (d *Deliverer) runMessage(ctx context.Context, b *bound, v *bots.RunView) error {
	ms := &d.runs
	key := v.ID + "/" + b.b.ID.String()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.refs == nil {
		ms.refs = map[string][]bots.MessageRef{}
	}
	msg := &bots.Message{Text: v.Text}
	if refs := ms.refs[key]; len(refs) > 0 {
		if ed, ok := b.ad.(bots.Editor); ok {
			if err := ed.Update(ctx, refs[0], msg); err != nil {
				return fmt.Errorf("editing the progress of run %s on %s: %w", v.ID, b.b.Place.Platform, err)
			}
			return nil
		}
	}
	refs, err := b.ad.Post(ctx, b.to, msg)
	if err != nil {
		return fmt.Errorf("posting the progress of run %s on %s: %w", v.ID, b.b.Place.Platform, err)
	}
	ms.refs[key] = refs
	return nil
}

func runView(v *core.RunView) *bots.RunView {
	out := &bots.RunView{ID: v.Run.ID.String(), Title: v.Run.Goal, Status: string(v.Run.Status), Text: runText(v)}
	if out.Title == "" {
		out.Title = "Run " + run.ShortID(v.Run)
	}
	for _, s := range v.Steps {
		detail := ""
		switch {
		case s.Error != "":
			detail = s.Error
		case s.Status == store.StepDone:
			detail = fmt.Sprintf("%d in / %d out tokens, %s", s.InputTokens, s.OutputTokens, run.Cost(s.CostMicroUSD))
		}
		out.Steps = append(out.Steps, bots.RunStepView{Key: s.Key, Title: s.Title, Agent: s.Agent, Status: string(s.Status), Detail: detail})
	}
	return out
}

// runText is the progress message's text: the run without its result
// (the result comes as the lead's message).
func runText(v *core.RunView) string {
	r := *v.Run
	r.Result = ""
	return run.Summary(&r, v.Steps)
}
