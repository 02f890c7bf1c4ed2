package postgres

import (
	"context"
	"errors"
	"slices"

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

func (q *queries) PersonForget(ctx context.Context, p *store.PersonForgetParams) (*store.PersonForgetResult, error) {
	res := &store.PersonForgetResult{}
	err := q.atomic(ctx, func(t *queries) error {
		*res = store.PersonForgetResult{} // again from zero when the transaction is retried
		// The records of the human: the one named, the one it was merged
		// into (up the chain), and every record merged into that one.
		top := p.PersonID
		for range 100 {
			row, err := call(ctx, t, (*dbsqlc.Queries).PersonByID, top)
			if errors.Is(err, store.ErrNotFound) || (err == nil && row.MergedInto == nil) {
				break
			}
			if err != nil {
				return err
			}
			top = *row.MergedInto
		}
		ids := []uuid.UUID{top}
		for i := 0; i < len(ids); i++ {
			id := ids[i]
			more, err := call(ctx, t, (*dbsqlc.Queries).PersonMergedInto, &id)
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
		if top != p.PersonID && !slices.Contains(ids, p.PersonID) {
			ids = append(ids, p.PersonID)
		}
		var idents []store.Identity
		for _, id := range ids {
			rows, err := call(ctx, t, (*dbsqlc.Queries).PersonIdentityList, id)
			if err != nil {
				return err
			}
			for _, r := range rows {
				idents = append(idents, store.Identity{Platform: r.Platform, Workspace: r.Workspace, UserID: r.UserID})
			}
		}
		authors, userIDs := store.ForgetAuthors(ids, idents)

		if err := exec(ctx, t, (*dbsqlc.Queries).ForgetBumpContentRev, authors); err != nil {
			return err
		}
		n, err := call(ctx, t, (*dbsqlc.Queries).ForgetEntries, &dbsqlc.ForgetEntriesParams{
			DeletedAuthor: string(store.DeletedUser), Redact: p.DeleteMessages, RedactedText: store.RedactedText,
			DeletedUserID: store.DeletedUserID, DeletedUserName: store.DeletedUserName, Authors: authors,
		})
		if err != nil {
			return err
		}
		m, err := call(ctx, t, (*dbsqlc.Queries).ForgetDiscardedEntries, &dbsqlc.ForgetDiscardedEntriesParams{
			DeletedAuthor: string(store.DeletedUser), Redact: p.DeleteMessages, RedactedText: store.RedactedText,
			DeletedUserID: store.DeletedUserID, DeletedUserName: store.DeletedUserName, Authors: authors,
		})
		if err != nil {
			return err
		}
		res.Entries = int(n + m)
		if err := exec(ctx, t, (*dbsqlc.Queries).ForgetParticipants, authors); err != nil {
			return err
		}
		if err := exec(ctx, t, (*dbsqlc.Queries).ForgetCardChoices, &dbsqlc.ForgetCardChoicesParams{
			DeletedUserID: store.DeletedUserID, DeletedUserName: store.DeletedUserName, UserIds: userIDs,
		}); err != nil {
			return err
		}
		if err := exec(ctx, t, (*dbsqlc.Queries).ForgetApprovalDeciders, &dbsqlc.ForgetApprovalDecidersParams{
			DeletedAuthor: string(store.DeletedUser), Authors: authors, UserIds: userIDs,
		}); err != nil {
			return err
		}
		if err := exec(ctx, t, (*dbsqlc.Queries).ForgetAuditDeciders, &dbsqlc.ForgetAuditDecidersParams{
			DeletedAuthor: string(store.DeletedUser), Authors: authors, UserIds: userIDs,
		}); err != nil {
			return err
		}
		g, err := call(ctx, t, (*dbsqlc.Queries).ForgetGrants, &dbsqlc.ForgetGrantsParams{UserIds: userIDs, Authors: authors})
		if err != nil {
			return err
		}
		res.Grants = int(g)
		for _, i := range idents {
			n, err := call(ctx, t, (*dbsqlc.Queries).ForgetPairings, &dbsqlc.ForgetPairingsParams{Platform: i.Platform, UserID: i.UserID})
			if err != nil {
				return err
			}
			res.Pairings += int(n)
			if err := exec(ctx, t, (*dbsqlc.Queries).ForgetRefusalNotices, &dbsqlc.ForgetRefusalNoticesParams{Platform: i.Platform, UserID: i.UserID}); err != nil {
				return err
			}
		}
		// Merged records last-first: a record merged into another is
		// deleted before the one it points at.
		for _, id := range slices.Backward(ids) {
			for _, f := range []struct {
				count *int
				run   func() (int64, error)
			}{
				{&res.APIKeys, func() (int64, error) { return call(ctx, t, (*dbsqlc.Queries).ForgetAPIKeys, &id) }},
				{&res.Logins, func() (int64, error) { return call(ctx, t, (*dbsqlc.Queries).ForgetLogins, &id) }},
				{&res.Connections, func() (int64, error) { return call(ctx, t, (*dbsqlc.Queries).ForgetConnections, id) }},
				{&res.Notes, func() (int64, error) { return call(ctx, t, (*dbsqlc.Queries).ForgetPersonalNotes, id) }},
				{&res.Memberships, func() (int64, error) { return call(ctx, t, (*dbsqlc.Queries).ForgetMemberships, id) }},
				{nil, func() (int64, error) { return 0, exec(ctx, t, (*dbsqlc.Queries).ForgetLinkCodes, id) }},
				{nil, func() (int64, error) { return 0, exec(ctx, t, (*dbsqlc.Queries).ForgetSSOGrants, id) }},
				{&res.Identities, func() (int64, error) { return call(ctx, t, (*dbsqlc.Queries).ForgetIdentities, id) }},
				{&res.People, func() (int64, error) { return call(ctx, t, (*dbsqlc.Queries).ForgetPerson, id) }},
			} {
				n, err := f.run()
				if err != nil {
					return err
				}
				if f.count != nil {
					*f.count += int(n)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "forgetting person %s", p.PersonID)
	}
	return res, nil
}
