package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// The run messages' rules: a record names a run and a binding; a saved
// record names a message once it is past posting; a compare-and-set on the
// version that
// matched no row is told apart as a record changed by another (ErrConflict)
// or no record (ErrNotFound).

func (q checked) RunMessageCreate(ctx context.Context, p *RunMessageCreateParams) (*RunMessage, error) {
	switch {
	case p == nil || p.RunID == uuid.Nil:
		return nil, invalidf("recording a run message: RunID is required")
	case p.BindingID == uuid.Nil:
		return nil, invalidf("recording the message of run %s: BindingID is required", p.RunID)
	case p.Platform == "":
		return nil, invalidf("recording the message of run %s: Platform is required", p.RunID)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.RunMessageCreate(ctx, &c)
}

func (q checked) RunMessageGet(ctx context.Context, k *RunMessageKey) (*RunMessage, error) {
	if k == nil || k.RunID == uuid.Nil || k.BindingID == uuid.Nil {
		return nil, invalidf("reading a run message: RunID and BindingID are required")
	}
	return q.Queries.RunMessageGet(ctx, k)
}

func (q checked) RunMessageSave(ctx context.Context, p *RunMessageSaveParams) (*RunMessage, error) {
	switch {
	case p == nil || p.RunID == uuid.Nil || p.BindingID == uuid.Nil:
		return nil, invalidf("saving a run message: RunID and BindingID are required")
	case !p.State.Valid():
		return nil, invalidf("saving the message of run %s: State %q is not a run message state", p.RunID, p.State)
	case p.State != RunMessagePosting && (p.Channel == "" || p.MessageID == ""):
		return nil, invalidf("saving the message of run %s: a %s message needs Channel and MessageID", p.RunID, p.State)
	case p.State == RunMessagePosting && p.MessageID != "":
		return nil, invalidf("saving the message of run %s: a posting record names no MessageID", p.RunID)
	}
	sent, err := jsonOr("Sent", p.Sent, "{}")
	if err != nil {
		return nil, fmt.Errorf("saving the message of run %s: %w", p.RunID, err)
	}
	c := *p
	c.Sent = sent
	c.Now = q.at(c.Now)
	m, err := q.Queries.RunMessageSave(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		cur, gerr := q.Queries.RunMessageGet(ctx, &RunMessageKey{RunID: p.RunID, BindingID: p.BindingID})
		switch {
		case gerr == nil:
			return nil, fmt.Errorf("%w: saving the message of run %s: the record is at version %d, not %d", ErrConflict, p.RunID, cur.Version, p.PrevVersion)
		case !errors.Is(gerr, ErrNotFound):
			return nil, gerr
		}
	}
	return m, err
}
