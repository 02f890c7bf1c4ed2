package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) PairingRequest(ctx context.Context, p *store.PairingRequestParams) (*store.PairingRequestResult, error) {
	res, err := write(ctx, q, func(t *queries) (*store.PairingRequestResult, error) {
		r, err := t.tx.PairingUpsert(ctx, dbsqlc.PairingUpsertParams{
			Platform: p.Platform, UserID: p.UserID, Workspace: p.Workspace, UserName: p.UserName,
			Code: p.Code, Now: micros(p.Now), ExpiresAt: micros(p.ExpiresAt),
		})
		if err == nil {
			return &store.PairingRequestResult{Pairing: pairing(r), Created: true}, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		// No row back: approved, or a code still valid, which is the answer.
		r, err = t.tx.PairingGet(ctx, dbsqlc.PairingGetParams{Platform: p.Platform, UserID: p.UserID})
		if err != nil {
			return nil, err
		}
		return &store.PairingRequestResult{Pairing: pairing(r)}, nil
	})
	if err != nil {
		return nil, wrap(err, "requesting pairing for %s user %s", p.Platform, p.UserID)
	}
	return res, nil
}

func (q *queries) PairingFind(ctx context.Context, p *store.PairingFindParams) (*store.Pairing, error) {
	r, err := q.read().PairingGet(ctx, dbsqlc.PairingGetParams(*p))
	if err != nil {
		return nil, wrap(err, "finding pairing of %s user %s", p.Platform, p.UserID)
	}
	return pairing(r), nil
}

func (q *queries) PairingApprove(ctx context.Context, p *store.PairingApproveParams) (*store.Pairing, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Pairing, error) {
		return t.tx.PairingApprove(ctx, dbsqlc.PairingApproveParams{Code: p.Code, ApprovedBy: p.By, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "approving pairing code %s", p.Code)
	}
	return pairing(r), nil
}

func (q *queries) PairingList(ctx context.Context, p *store.PairingListParams) ([]*store.Pairing, error) {
	rows, err := q.read().PairingList(ctx, dbsqlc.PairingListParams{Status: string(p.Status), Now: micros(p.Now), MaxRows: limitArg(p.Limit)})
	out, err := all(rows, err, pairing)
	if err != nil {
		return nil, wrap(err, "listing pairings")
	}
	return out, nil
}

func (q *queries) RefusalNoticeRecord(ctx context.Context, p *store.RefusalNoticeParams) (bool, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.RefusalNoticeInsert(ctx, dbsqlc.RefusalNoticeInsertParams{Platform: p.Platform, UserID: p.UserID, Day: p.Day, Now: micros(p.Now)})
	})
	if err != nil {
		return false, wrap(err, "recording refusal notice to %s user %s", p.Platform, p.UserID)
	}
	return n == 1, nil
}

// pairing converts a row; the times are unix microseconds here.
func pairing(r dbsqlc.Pairing) *store.Pairing {
	p := &store.Pairing{Platform: r.Platform, UserID: r.UserID, Workspace: r.Workspace, UserName: r.UserName, Code: r.Code}
	p.Status, p.ApprovedBy = store.PairingStatus(r.Status), r.ApprovedBy
	p.CreatedAt, p.ExpiresAt, p.ApprovedAt = fromMicros(r.CreatedAt), fromMicros(r.ExpiresAt), nullMicros(r.ApprovedAt)
	return p
}
