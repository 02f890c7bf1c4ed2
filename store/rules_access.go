package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"
)

// pairingAlphabet leaves out letters and digits that read alike (0/O, 1/I/L)
// so a code read aloud or copied by hand survives.
const pairingAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// PairingCodeLen is the length of a pairing code.
const PairingCodeLen = 8

// NewPairingCode returns a random pairing code.
func NewPairingCode() string {
	b := make([]byte, PairingCodeLen)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = pairingAlphabet[int(b[i])%len(pairingAlphabet)]
	}
	return string(b)
}

// NormalizePairingCode is the code as stored: upper case, without the spaces
// and dashes people type.
func NormalizePairingCode(code string) string {
	return strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(code)))
}

func checkIdentity(what, platform, userID string) error {
	switch {
	case platform == "":
		return invalidf("%s: empty Platform", what)
	case userID == "":
		return invalidf("%s: empty UserID", what)
	}
	return nil
}

func (q checked) PairingRequest(ctx context.Context, p *PairingRequestParams) (*PairingRequestResult, error) {
	if p == nil {
		return nil, invalidf("requesting pairing: params are nil")
	}
	if err := checkIdentity("requesting pairing", p.Platform, p.UserID); err != nil {
		return nil, err
	}
	c := *p
	c.Now = q.at(c.Now)
	if c.ExpiresAt.IsZero() {
		c.ExpiresAt = c.Now.Add(PairingCodeTTL)
	}
	if !c.ExpiresAt.After(c.Now) {
		return nil, invalidf("requesting pairing for %s: ExpiresAt is not after Now", p.UserID)
	}
	fixed := c.Code != ""
	c.Code = NormalizePairingCode(c.Code)
	// A random code may collide with one handed out before; another draw
	// settles it.
	for attempt := 0; ; attempt++ {
		if !fixed {
			c.Code = NewPairingCode()
		}
		res, err := q.Queries.PairingRequest(ctx, &c)
		if err == nil || fixed || attempt == 3 || !errors.Is(err, ErrConflict) {
			return res, err
		}
	}
}

func (q checked) PairingFind(ctx context.Context, p *PairingFindParams) (*Pairing, error) {
	if p == nil {
		return nil, invalidf("finding pairing: params are nil")
	}
	if err := checkIdentity("finding pairing", p.Platform, p.UserID); err != nil {
		return nil, err
	}
	return q.Queries.PairingFind(ctx, p)
}

func (q checked) PairingApprove(ctx context.Context, p *PairingApproveParams) (*Pairing, error) {
	if p == nil {
		return nil, invalidf("approving pairing: params are nil")
	}
	c := *p
	c.Code = NormalizePairingCode(c.Code)
	if c.Code == "" {
		return nil, invalidf("approving pairing: empty Code")
	}
	if c.By == "" {
		return nil, invalidf("approving pairing %s: empty By", c.Code)
	}
	c.Now = q.at(c.Now)
	return q.Queries.PairingApprove(ctx, &c)
}

func (q checked) PairingList(ctx context.Context, p *PairingListParams) ([]*Pairing, error) {
	c := PairingListParams{}
	if p != nil {
		c = *p
	}
	if c.Status != "" && !c.Status.Valid() {
		return nil, invalidf("listing pairings: unknown Status %q", c.Status)
	}
	c.Now, c.Limit = q.at(c.Now), limitOr(c.Limit, DefaultListLimit)
	return q.Queries.PairingList(ctx, &c)
}

func (q checked) RefusalNoticeRecord(ctx context.Context, p *RefusalNoticeParams) (bool, error) {
	if p == nil {
		return false, invalidf("recording refusal notice: params are nil")
	}
	if err := checkIdentity("recording refusal notice", p.Platform, p.UserID); err != nil {
		return false, err
	}
	c := *p
	c.Now = q.at(c.Now)
	if c.Day == "" {
		c.Day = c.Now.UTC().Format(time.DateOnly)
	} else if _, err := time.Parse(time.DateOnly, c.Day); err != nil {
		return false, fmt.Errorf("recording refusal notice: %w", invalidf("Day %q is not YYYY-MM-DD", c.Day))
	}
	return q.Queries.RefusalNoticeRecord(ctx, &c)
}
