package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// The rules of the people queries.

func (i Identity) validate(what string) error {
	if i.Platform == "" || i.UserID == "" {
		return invalidf("%s: the identity needs a platform and a user id", what)
	}
	return nil
}

// validZone reports whether tz is "" or an IANA time zone this binary knows.
func validZone(tz string) bool {
	if tz == "" {
		return true
	}
	_, err := time.LoadLocation(tz)
	return err == nil
}

func (q checked) PersonCreate(ctx context.Context, p *PersonCreateParams) (*Person, error) {
	if p == nil {
		return nil, invalidf("creating person: params are nil")
	}
	if err := p.Identity.validate("creating person"); err != nil {
		return nil, err
	}
	if !validZone(p.TimeZone) {
		return nil, invalidf("creating person: unknown time zone %q", p.TimeZone)
	}
	c := *p
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	c.Now = q.at(c.Now)
	return q.Queries.PersonCreate(ctx, &c)
}

func (q checked) PersonFind(ctx context.Context, p *PersonFindParams) (*Person, error) {
	if p == nil {
		return nil, invalidf("finding person: params are nil")
	}
	if err := p.Identity.validate("finding person"); err != nil {
		return nil, err
	}
	return q.Queries.PersonFind(ctx, p)
}

func (q checked) PersonSetProfile(ctx context.Context, p *PersonProfileParams) (*Person, error) {
	if p == nil {
		return nil, invalidf("setting a profile: params are nil")
	}
	if err := p.Identity.validate("setting a profile"); err != nil {
		return nil, err
	}
	c := *p
	if !validZone(c.TimeZone) {
		// A platform may name a zone this binary does not know: keep the
		// stored one rather than refuse the name.
		c.TimeZone = ""
	}
	c.Now = q.at(c.Now)
	return q.Queries.PersonSetProfile(ctx, &c)
}

func (q checked) PersonMerge(ctx context.Context, p *PersonMergeParams) (*Person, error) {
	switch {
	case p == nil || p.Keep == uuid.Nil || p.Drop == uuid.Nil:
		return nil, invalidf("merging people: Keep and Drop are required")
	case p.Keep == p.Drop:
		return nil, invalidf("merging person %s into itself", p.Keep)
	}
	c := *p
	c.Now = q.at(c.Now)
	var out *Person
	err := q.atomic(ctx, func(tq Queries) error {
		keep, err := tq.PersonGet(ctx, c.Keep)
		if err != nil {
			return err
		}
		drop, err := tq.PersonGet(ctx, c.Drop)
		if err != nil {
			return err
		}
		if keep.MergedInto != nil || drop.MergedInto != nil {
			return fmt.Errorf("%w: one of them was merged already", ErrConflict)
		}
		// The kept record's values win; where it has none, the dropped one's.
		c.DisplayName, c.TimeZone = keep.DisplayName, keep.TimeZone
		if c.DisplayName == "" {
			c.DisplayName = drop.DisplayName
		}
		if c.TimeZone == "" {
			c.TimeZone = drop.TimeZone
		}
		out, err = tq.PersonMerge(ctx, &c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("merging person %s into %s: %w", p.Drop, p.Keep, err)
	}
	return out, nil
}

func (q checked) PersonLinkCodeCreate(ctx context.Context, p *PersonLinkCodeCreateParams) (*PersonLinkCode, error) {
	switch {
	case p == nil || p.CodeHash == "":
		return nil, invalidf("creating link code: empty CodeHash")
	case p.Platform == "":
		return nil, invalidf("creating link code: empty Platform")
	case p.ExpiresAt.IsZero():
		return nil, invalidf("creating link code: zero ExpiresAt")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.PersonLinkCodeCreate(ctx, &c)
}

func (q checked) PersonLinkCodeUse(ctx context.Context, p *PersonLinkCodeUseParams) (*PersonLinkCode, error) {
	if p == nil || p.CodeHash == "" {
		return nil, invalidf("using link code: empty CodeHash")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.PersonLinkCodeUse(ctx, &c)
}

func (q checked) PersonLinkCodePrune(ctx context.Context, p *PruneParams) (int, error) {
	c, err := q.prune("link codes", p)
	if err != nil {
		return 0, err
	}
	return q.Queries.PersonLinkCodePrune(ctx, c)
}
