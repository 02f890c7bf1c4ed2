package sqlite

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// person reads a person's identities beside the row.
func (q *queries) person(ctx context.Context, r dbsqlc.Person) (*store.Person, error) {
	rows, err := q.read().IdentitiesOf(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	out := &store.Person{
		ID: r.ID, DisplayName: r.DisplayName, TimeZone: r.TimeZone, MergedInto: nullUUID(r.MergedInto),
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
	for _, i := range rows {
		out.Identities = append(out.Identities, &store.PersonIdentity{
			Identity:    store.Identity{Platform: i.Platform, Workspace: i.Workspace, UserID: i.UserID},
			PersonID:    i.PersonID,
			RefreshedAt: nullMicros(i.RefreshedAt),
			CreatedAt:   fromMicros(i.CreatedAt),
		})
	}
	return out, nil
}

func (q *queries) personOf(ctx context.Context, id uuid.UUID) (*store.Person, error) {
	r, err := q.read().PeopleGet(ctx, id)
	if err != nil {
		return nil, err
	}
	return q.person(ctx, r)
}

func (q *queries) PersonCreate(ctx context.Context, p *store.PersonCreateParams) (*store.Person, error) {
	out, err := write(ctx, q, func(t *queries) (*store.Person, error) {
		r, err := t.tx.PeopleInsert(ctx, dbsqlc.PeopleInsertParams{ID: p.ID, DisplayName: p.DisplayName, TimeZone: p.TimeZone, Now: micros(p.Now)})
		if err != nil {
			return nil, err
		}
		if err := t.tx.IdentityInsert(ctx, dbsqlc.IdentityInsertParams{
			Platform: p.Identity.Platform, Workspace: p.Identity.Workspace, UserID: p.Identity.UserID, PersonID: r.ID, Now: micros(p.Now),
		}); err != nil {
			return nil, err
		}
		return t.person(ctx, r)
	})
	if err != nil {
		return nil, wrap(err, "creating person for %s/%s", p.Identity.Platform, p.Identity.UserID)
	}
	return out, nil
}

func (q *queries) PersonGet(ctx context.Context, id uuid.UUID) (*store.Person, error) {
	out, err := q.personOf(ctx, id)
	if err != nil {
		return nil, wrap(err, "getting person %s", id)
	}
	return out, nil
}

func (q *queries) PersonFind(ctx context.Context, p *store.PersonFindParams) (*store.Person, error) {
	i := p.Identity
	owner, err := q.read().IdentityOwner(ctx, dbsqlc.IdentityOwnerParams{Platform: i.Platform, Workspace: i.Workspace, UserID: i.UserID})
	var out *store.Person
	if err == nil {
		out, err = q.personOf(ctx, owner)
	}
	if err != nil {
		return nil, wrap(err, "finding person of %s/%s/%s", i.Platform, i.Workspace, i.UserID)
	}
	return out, nil
}

func (q *queries) PersonSetProfile(ctx context.Context, p *store.PersonProfileParams) (*store.Person, error) {
	out, err := write(ctx, q, func(t *queries) (*store.Person, error) {
		i := p.Identity
		n, err := t.tx.IdentityRefreshed(ctx, dbsqlc.IdentityRefreshedParams{
			Now: micros(p.Now), Platform: i.Platform, Workspace: i.Workspace, UserID: i.UserID, PersonID: p.ID,
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, store.ErrNotFound
		}
		r, err := t.tx.PeopleSetProfile(ctx, dbsqlc.PeopleSetProfileParams{DisplayName: p.DisplayName, TimeZone: p.TimeZone, Now: micros(p.Now), ID: p.ID})
		if err != nil {
			return nil, err
		}
		return t.person(ctx, r)
	})
	if err != nil {
		return nil, wrap(err, "setting the profile of person %s", p.ID)
	}
	return out, nil
}

func (q *queries) PersonMerge(ctx context.Context, p *store.PersonMergeParams) (*store.Person, error) {
	out, err := write(ctx, q, func(t *queries) (*store.Person, error) {
		n, err := t.tx.PeopleMarkMerged(ctx, dbsqlc.PeopleMarkMergedParams{Keep: uuidArg(&p.Keep), Drop: p.Drop, Now: micros(p.Now)})
		switch {
		case err != nil:
			return nil, err
		case n == 0:
			return nil, store.ErrConflict
		}
		if _, err := t.tx.IdentitiesMove(ctx, dbsqlc.IdentitiesMoveParams{Keep: p.Keep, Drop: p.Drop}); err != nil {
			return nil, err
		}
		r, err := t.tx.PeopleSetProfile(ctx, dbsqlc.PeopleSetProfileParams{DisplayName: p.DisplayName, TimeZone: p.TimeZone, Now: micros(p.Now), ID: p.Keep})
		if err != nil {
			return nil, err
		}
		return t.person(ctx, r)
	})
	if err != nil {
		return nil, wrap(err, "merging person %s into %s", p.Drop, p.Keep)
	}
	return out, nil
}

func linkCode(r dbsqlc.PersonLinkCode) *store.PersonLinkCode {
	return &store.PersonLinkCode{
		CodeHash: r.CodeHash, PersonID: r.PersonID, Platform: r.Platform,
		ExpiresAt: fromMicros(r.ExpiresAt), UsedAt: nullMicros(r.UsedAt), CreatedAt: fromMicros(r.CreatedAt),
	}
}

func (q *queries) PersonLinkCodeCreate(ctx context.Context, p *store.PersonLinkCodeCreateParams) (*store.PersonLinkCode, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.PersonLinkCode, error) {
		if _, err := t.tx.LinkCodesForget(ctx, dbsqlc.LinkCodesForgetParams{PersonID: p.PersonID, Now: micros(p.Now)}); err != nil {
			return dbsqlc.PersonLinkCode{}, err
		}
		return t.tx.LinkCodeInsert(ctx, dbsqlc.LinkCodeInsertParams{
			CodeHash: p.CodeHash, PersonID: p.PersonID, Platform: p.Platform, ExpiresAt: micros(p.ExpiresAt), Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "creating a link code for person %s", p.PersonID)
	}
	return linkCode(r), nil
}

func (q *queries) PersonLinkCodeUse(ctx context.Context, p *store.PersonLinkCodeUseParams) (*store.PersonLinkCode, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.PersonLinkCode, error) {
		return t.tx.LinkCodeSpend(ctx, dbsqlc.LinkCodeSpendParams{CodeHash: p.CodeHash, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "using a link code")
	}
	return linkCode(r), nil
}

func (q *queries) PersonLinkCodePrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.LinkCodesPrune(ctx, dbsqlc.LinkCodesPruneParams{Before: micros(p.Before), Limit: limitArg(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning link codes expired before %s", p.Before)
	}
	return int(n), nil
}
