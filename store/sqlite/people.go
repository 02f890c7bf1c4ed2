package sqlite

import (
	"context"
	"errors"
	"slices"

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

func (q *queries) PersonForget(ctx context.Context, p *store.PersonForgetParams) (*store.PersonForgetResult, error) {
	out, err := write(ctx, q, func(t *queries) (*store.PersonForgetResult, error) {
		res := &store.PersonForgetResult{}
		// The records of the human: the one named, the one it was merged
		// into (up the chain), and every record merged into that one.
		top := p.PersonID
		for range 100 {
			r, err := t.tx.PeopleGet(ctx, top)
			if errors.Is(mapErr(err), store.ErrNotFound) || (err == nil && !r.MergedInto.Valid) {
				break
			}
			if err != nil {
				return nil, err
			}
			top = r.MergedInto.UUID
		}
		ids := []uuid.UUID{top}
		for i := 0; i < len(ids); i++ {
			more, err := t.tx.PeopleMergedInto(ctx, uuidArg(&ids[i]))
			if err != nil {
				return nil, err
			}
			ids = append(ids, more...)
		}
		if !slices.Contains(ids, p.PersonID) {
			ids = append(ids, p.PersonID)
		}
		var idents []store.Identity
		for _, id := range ids {
			rows, err := t.tx.IdentitiesOf(ctx, id)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				idents = append(idents, store.Identity{Platform: r.Platform, Workspace: r.Workspace, UserID: r.UserID})
			}
		}
		authorList, userIDList := store.ForgetAuthors(ids, idents)
		authors, userIDs := idsArg(authorList), idsArg(userIDList)
		redact := int64(0)
		if p.DeleteMessages {
			redact = 1
		}

		if err := t.tx.ForgetBumpContentRev(ctx, authors); err != nil {
			return nil, err
		}
		n, err := t.tx.ForgetEntries(ctx, dbsqlc.ForgetEntriesParams{
			DeletedAuthor: string(store.DeletedUser), Redact: redact, RedactedText: store.RedactedText,
			DeletedUserID: store.DeletedUserID, DeletedUserName: store.DeletedUserName, Authors: authors,
		})
		if err != nil {
			return nil, err
		}
		m, err := t.tx.ForgetDiscardedEntries(ctx, dbsqlc.ForgetDiscardedEntriesParams{
			DeletedAuthor: string(store.DeletedUser), Redact: redact, RedactedText: store.RedactedText,
			DeletedUserID: store.DeletedUserID, DeletedUserName: store.DeletedUserName, Authors: authors,
		})
		if err != nil {
			return nil, err
		}
		res.Entries = int(n + m)
		if err := t.tx.ForgetParticipants(ctx, authors); err != nil {
			return nil, err
		}
		if err := t.tx.ForgetCardChoices(ctx, dbsqlc.ForgetCardChoicesParams{
			DeletedUserID: store.DeletedUserID, DeletedUserName: store.DeletedUserName, UserIds: userIDs,
		}); err != nil {
			return nil, err
		}
		if err := t.tx.ForgetApprovalDeciders(ctx, dbsqlc.ForgetApprovalDecidersParams{
			DeletedAuthor: string(store.DeletedUser), Authors: authors, UserIds: userIDs,
		}); err != nil {
			return nil, err
		}
		if err := t.tx.ForgetAuditDeciders(ctx, dbsqlc.ForgetAuditDecidersParams{
			DeletedAuthor: string(store.DeletedUser), Authors: authors, UserIds: userIDs,
		}); err != nil {
			return nil, err
		}
		g, err := t.tx.ForgetGrants(ctx, dbsqlc.ForgetGrantsParams{UserIds: userIDs, Authors: authors})
		if err != nil {
			return nil, err
		}
		res.Grants = int(g)
		for _, i := range idents {
			n, err := t.tx.ForgetPairings(ctx, dbsqlc.ForgetPairingsParams{Platform: i.Platform, UserID: i.UserID})
			if err != nil {
				return nil, err
			}
			res.Pairings += int(n)
			if err := t.tx.ForgetRefusalNotices(ctx, dbsqlc.ForgetRefusalNoticesParams{Platform: i.Platform, UserID: i.UserID}); err != nil {
				return nil, err
			}
		}
		// Merged records last-first: a record merged into another is
		// deleted before the one it points at.
		for _, id := range slices.Backward(ids) {
			for _, f := range []struct {
				count *int
				run   func() (int64, error)
			}{
				{&res.APIKeys, func() (int64, error) { return t.tx.ForgetAPIKeys(ctx, uuidArg(&id)) }},
				{&res.Logins, func() (int64, error) { return t.tx.ForgetLogins(ctx, uuidArg(&id)) }},
				{&res.Connections, func() (int64, error) { return t.tx.ForgetConnections(ctx, id) }},
				{&res.Notes, func() (int64, error) { return t.tx.ForgetPersonalNotes(ctx, id) }},
				{&res.Memberships, func() (int64, error) { return t.tx.ForgetMemberships(ctx, id) }},
				{nil, func() (int64, error) { return 0, t.tx.ForgetLinkCodes(ctx, id) }},
				{nil, func() (int64, error) { return 0, t.tx.ForgetSSOGrants(ctx, id) }},
				{&res.Identities, func() (int64, error) { return t.tx.ForgetIdentities(ctx, id) }},
				{&res.People, func() (int64, error) { return t.tx.ForgetPerson(ctx, id) }},
			} {
				n, err := f.run()
				if err != nil {
					return nil, err
				}
				if f.count != nil {
					*f.count += int(n)
				}
			}
		}
		return res, nil
	})
	if err != nil {
		return nil, wrap(err, "forgetting person %s", p.PersonID)
	}
	return out, nil
}
