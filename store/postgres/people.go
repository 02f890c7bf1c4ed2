package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) PersonCreate(ctx context.Context, p *store.PersonCreateParams) (*store.Person, error) {
	var out *store.Person
	err := q.atomic(ctx, func(t *queries) error {
		row, err := call(ctx, t, (*dbsqlc.Queries).PersonInsert, &dbsqlc.PersonInsertParams{
			ID: p.ID, DisplayName: p.DisplayName, TimeZone: p.TimeZone, Now: ts(p.Now),
		})
		if err != nil {
			return err
		}
		id := p.Identity
		if err := exec(ctx, t, (*dbsqlc.Queries).PersonIdentityInsert, &dbsqlc.PersonIdentityInsertParams{
			Platform: id.Platform, Workspace: id.Workspace, UserID: id.UserID, PersonID: row.ID, Now: ts(p.Now),
		}); err != nil {
			return err
		}
		out, err = t.personWith(ctx, &row)
		return err
	})
	if err != nil {
		return nil, wrap(err, "creating person for %s/%s", p.Identity.Platform, p.Identity.UserID)
	}
	return out, nil
}

// personWith reads a person's identities into the row read.
func (q *queries) personWith(ctx context.Context, row *dbsqlc.Person) (*store.Person, error) {
	ids, err := call(ctx, q, (*dbsqlc.Queries).PersonIdentityList, row.ID)
	if err != nil {
		return nil, err
	}
	p := &store.Person{
		ID: row.ID, DisplayName: row.DisplayName, TimeZone: row.TimeZone, MergedInto: row.MergedInto,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}
	for _, r := range ids {
		p.Identities = append(p.Identities, &store.PersonIdentity{
			Identity: store.Identity{Platform: r.Platform, Workspace: r.Workspace, UserID: r.UserID},
			PersonID: r.PersonID, RefreshedAt: r.RefreshedAt, CreatedAt: r.CreatedAt,
		})
	}
	return p, nil
}

func (q *queries) personByID(ctx context.Context, id uuid.UUID) (*store.Person, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).PersonByID, id)
	if err != nil {
		return nil, err
	}
	return q.personWith(ctx, &row)
}

func (q *queries) PersonGet(ctx context.Context, id uuid.UUID) (*store.Person, error) {
	p, err := q.personByID(ctx, id)
	return p, wrap(err, "getting person %s", id)
}

func (q *queries) PersonFind(ctx context.Context, p *store.PersonFindParams) (*store.Person, error) {
	id := p.Identity
	owner, err := call(ctx, q, (*dbsqlc.Queries).PersonIdentityOwner, &dbsqlc.PersonIdentityOwnerParams{
		Platform: id.Platform, Workspace: id.Workspace, UserID: id.UserID,
	})
	if err != nil {
		return nil, wrap(err, "finding person of %s/%s/%s", id.Platform, id.Workspace, id.UserID)
	}
	person, err := q.personByID(ctx, owner)
	return person, wrap(err, "finding person of %s/%s/%s", id.Platform, id.Workspace, id.UserID)
}

func (q *queries) PersonSetProfile(ctx context.Context, p *store.PersonProfileParams) (*store.Person, error) {
	var out *store.Person
	err := q.atomic(ctx, func(t *queries) error {
		id := p.Identity
		n, err := call(ctx, t, (*dbsqlc.Queries).PersonIdentityTouch, &dbsqlc.PersonIdentityTouchParams{
			Now: ts(p.Now), Platform: id.Platform, Workspace: id.Workspace, UserID: id.UserID, PersonID: p.ID,
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return errNoRow
		}
		row, err := call(ctx, t, (*dbsqlc.Queries).PersonProfileUpdate, &dbsqlc.PersonProfileUpdateParams{
			DisplayName: p.DisplayName, TimeZone: p.TimeZone, Now: ts(p.Now), ID: p.ID,
		})
		if err != nil {
			return err
		}
		out, err = t.personWith(ctx, &row)
		return err
	})
	return out, wrap(err, "setting the profile of person %s", p.ID)
}

func (q *queries) PersonMerge(ctx context.Context, p *store.PersonMergeParams) (*store.Person, error) {
	var out *store.Person
	err := q.atomic(ctx, func(t *queries) error {
		n, err := call(ctx, t, (*dbsqlc.Queries).PersonMergeMark, &dbsqlc.PersonMergeMarkParams{Keep: p.Keep, Drop: p.Drop, Now: ts(p.Now)})
		if err == nil && n == 0 {
			err = store.ErrConflict // merged by someone else since the rules read it
		}
		if err != nil {
			return err
		}
		if _, err := call(ctx, t, (*dbsqlc.Queries).PersonMergeIdentities, &dbsqlc.PersonMergeIdentitiesParams{Keep: p.Keep, Drop: p.Drop}); err != nil {
			return err
		}
		row, err := call(ctx, t, (*dbsqlc.Queries).PersonProfileUpdate, &dbsqlc.PersonProfileUpdateParams{
			DisplayName: p.DisplayName, TimeZone: p.TimeZone, Now: ts(p.Now), ID: p.Keep,
		})
		if err != nil {
			return err
		}
		out, err = t.personWith(ctx, &row)
		return err
	})
	return out, wrap(err, "merging person %s into %s", p.Drop, p.Keep)
}

func (q *queries) PersonLinkCodeCreate(ctx context.Context, p *store.PersonLinkCodeCreateParams) (*store.PersonLinkCode, error) {
	var row dbsqlc.PersonLinkCode
	err := q.atomic(ctx, func(t *queries) error {
		if _, err := call(ctx, t, (*dbsqlc.Queries).PersonLinkCodeForget, &dbsqlc.PersonLinkCodeForgetParams{PersonID: p.PersonID, Now: ts(p.Now)}); err != nil {
			return err
		}
		var err error
		row, err = call(ctx, t, (*dbsqlc.Queries).PersonLinkCodeInsert, &dbsqlc.PersonLinkCodeInsertParams{
			CodeHash: p.CodeHash, PersonID: p.PersonID, Platform: p.Platform, ExpiresAt: ts(p.ExpiresAt), Now: ts(p.Now),
		})
		return err
	})
	if err != nil {
		return nil, wrap(err, "creating a link code for person %s", p.PersonID)
	}
	return (*store.PersonLinkCode)(&row), nil
}

func (q *queries) PersonLinkCodeUse(ctx context.Context, p *store.PersonLinkCodeUseParams) (*store.PersonLinkCode, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).PersonLinkCodeSpend, &dbsqlc.PersonLinkCodeSpendParams{CodeHash: p.CodeHash, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "using a link code")
	}
	return (*store.PersonLinkCode)(&row), nil
}

func (q *queries) PersonLinkCodePrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).PersonLinkCodePrune, &dbsqlc.PersonLinkCodePruneParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	return int(n), wrap(err, "pruning link codes expired before %s", p.Before)
}
