package postgres

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) PairingRequest(ctx context.Context, p *store.PairingRequestParams) (*store.PairingRequestResult, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).PairingRequest, &dbsqlc.PairingRequestParams{
		Platform: p.Platform, UserID: p.UserID, Workspace: p.Workspace, UserName: p.UserName,
		Code: p.Code, Now: ts(p.Now), ExpiresAt: ts(p.ExpiresAt),
	})
	if err == nil {
		return &store.PairingRequestResult{Pairing: pairing(&row), Created: true}, nil
	}
	if errors.Is(err, errNoRow) {
		// Approved, or a code still valid: that row is the answer.
		cur, ferr := q.PairingFind(ctx, &store.PairingFindParams{Platform: p.Platform, UserID: p.UserID})
		if ferr != nil {
			return nil, ferr
		}
		return &store.PairingRequestResult{Pairing: cur}, nil
	}
	return nil, wrap(err, "requesting pairing for %s user %s", p.Platform, p.UserID)
}

func (q *queries) PairingFind(ctx context.Context, p *store.PairingFindParams) (*store.Pairing, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).PairingFind, (*dbsqlc.PairingFindParams)(p))
	if err != nil {
		return nil, wrap(err, "finding pairing of %s user %s", p.Platform, p.UserID)
	}
	return pairing(&row), nil
}

func (q *queries) PairingApprove(ctx context.Context, p *store.PairingApproveParams) (*store.Pairing, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).PairingApprove, &dbsqlc.PairingApproveParams{
		Code: p.Code, ApprovedBy: p.By, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "approving pairing code %s", p.Code)
	}
	return pairing(&row), nil
}

func (q *queries) PairingList(ctx context.Context, p *store.PairingListParams) ([]*store.Pairing, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).PairingList, &dbsqlc.PairingListParams{
		Status: string(p.Status), Now: ts(p.Now), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing pairings")
	}
	return each(rows, pairing), nil
}

func (q *queries) RefusalNoticeRecord(ctx context.Context, p *store.RefusalNoticeParams) (bool, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).RefusalNoticeRecord, &dbsqlc.RefusalNoticeRecordParams{
		Platform: p.Platform, UserID: p.UserID, Day: p.Day, Now: ts(p.Now),
	})
	if err != nil {
		return false, wrap(err, "recording refusal notice to %s user %s", p.Platform, p.UserID)
	}
	return n == 1, nil
}

func pairing(r *dbsqlc.Pairing) *store.Pairing {
	return &store.Pairing{
		Platform: r.Platform, UserID: r.UserID, Workspace: r.Workspace, UserName: r.UserName,
		Code: r.Code, Status: store.PairingStatus(r.Status), CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt,
		ApprovedAt: r.ApprovedAt, ApprovedBy: r.ApprovedBy,
	}
}
