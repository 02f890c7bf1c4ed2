package deliver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
)

// HandleApprovalCard is the handler of core.ApprovalCardArgs items: it
// edits an approval prompt's message, on every binding where it was
// posted, to show how the approval was settled (its expiry), with no
// buttons left to click. It runs under the conversation's lease; the item
// is enqueued once per approval in the commit that expired it, so it
// survives a restart and runs on one instance.
func (d *Deliverer) HandleApprovalCard(ctx context.Context, _ *core.WorkItem, args core.ApprovalCardArgs) error {
	ap, err := d.st.ApprovalGet(ctx, args.ApprovalID)
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading approval %s: %w", args.ApprovalID, err)
	}
	msg, err := SettledPromptMessage(ap)
	if err != nil || msg == nil {
		return err // still open: nothing to show yet
	}
	conv, err := d.st.ConversationGet(ctx, ap.ConversationID)
	if err != nil {
		return fmt.Errorf("loading conversation %s: %w", ap.ConversationID, err)
	}
	bs, err := d.bindings(ctx, conv)
	if err != nil {
		return err
	}
	var errs []error
	for _, b := range bs {
		err := d.editPrompt(ctx, b, ap, msg)
		if errors.Is(err, bots.ErrGone) {
			continue // that workspace cannot be reached any more
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// editPrompt replaces the message of an approval's prompt on b. A prompt
// never posted there has nothing to edit (a settled approval's prompt is
// not posted any more).
func (d *Deliverer) editPrompt(ctx context.Context, b *bound, ap *core.Approval, msg *bots.Message) error {
	posted, err := d.st.PostedGet(ctx, &core.PostedGetParams{BindingID: b.b.ID, EntryID: ap.ID})
	if errors.Is(err, core.ErrNotFound) || (err == nil && posted.Pending) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the post of approval %s: %w", ap.ID, err)
	}
	ed, ok := b.ad.(bots.Editor)
	refs := decodeRefs(posted.MessageIDs)
	if !ok || len(refs) == 0 {
		return nil
	}
	// The buttons are on the prompt's last message.
	if err := ed.Update(ctx, refs[len(refs)-1], msg); err != nil {
		return fmt.Errorf("editing the prompt of approval %s on %s: %w", ap.ID, b.b.Place.Platform, err)
	}
	return nil
}

// SettledPromptMessage is an approval prompt once it can no longer be
// answered: the request as it was asked, without buttons, and a line
// saying it expired. Nil while the approval is open or was decided (a
// decision's click shows the choice itself).
func SettledPromptMessage(ap *core.Approval) (*bots.Message, error) {
	if ap.Status != core.ApprovalExpired {
		return nil, nil
	}
	m, err := PromptMessage(ap)
	if err != nil {
		return nil, err
	}
	m.Buttons = nil
	m.Text += "\n\n" + ExpiredText(ap.ExpiresAt)
	return m, nil
}

// ExpiredText is the line an expired approval's prompt ends with.
func ExpiredText(at time.Time) string {
	return fmt.Sprintf("⌛ This approval expired at %s with no answer; ask again.", at.UTC().Format("2006-01-02 15:04 UTC"))
}
