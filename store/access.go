package store

import (
	"context"
	"time"
)

// Who may talk to agents: the pairings that let a stranger in after an
// operator or admin approved their one-time code, and the record of the
// polite refusals sent, so a person is told at most once a day. A refused
// message itself is stored nowhere; these rows are all that is kept.

// PairingCodeTTL is how long a pairing code can be approved after it was
// handed out. A stranger who writes again after that gets a new code.
const PairingCodeTTL = 24 * time.Hour

// PairingStatus is where a pairing stands.
type PairingStatus string

const (
	PairingPending  PairingStatus = "pending"  // a code was handed out and waits for approval
	PairingApproved PairingStatus = "approved" // the identity may talk to agents
)

// Valid reports whether s is a known status.
func (s PairingStatus) Valid() bool { return s == PairingPending || s == PairingApproved }

// Pairing is one platform identity's pairing: at most one per (Platform,
// UserID). Approved pairings are durable.
type Pairing struct {
	Platform   string // "slack", "discord"
	UserID     string // the platform's user id
	Workspace  string // where the request came from (Slack team; "" for a Discord DM)
	UserName   string
	Code       string
	Status     PairingStatus
	CreatedAt  time.Time // when the current code was handed out
	ExpiresAt  time.Time // a pending code cannot be approved after this
	ApprovedAt *time.Time
	ApprovedBy string // who approved: "operator", "api" or an admin's platform id
}

// Approved reports whether the identity may talk to agents.
func (p *Pairing) Approved() bool { return p.Status == PairingApproved }

// PairingRequestParams asks for a stranger's pairing.
type PairingRequestParams struct {
	Platform  string
	UserID    string
	Workspace string
	UserName  string
	// Code is the one-time code handed out if a new one is needed. Default:
	// a fresh random code (the rules make it).
	Code string
	Now  time.Time
	// ExpiresAt of a new code. Default: Now + PairingCodeTTL.
	ExpiresAt time.Time
}

// PairingRequestResult is the identity's pairing after a request.
type PairingRequestResult struct {
	Pairing *Pairing
	// Created: a new code was handed out (none was pending, or it expired).
	Created bool
}

// PairingFindParams names a platform identity.
type PairingFindParams struct {
	Platform string
	UserID   string
}

// PairingApproveParams approves a pending code.
type PairingApproveParams struct {
	Code string // case-insensitive; the rules normalise it
	By   string // who approved, for the record
	Now  time.Time
}

// PairingListParams filters PairingList.
type PairingListParams struct {
	// Status: PairingPending lists the codes that can still be approved at
	// Now; PairingApproved the approved identities; "" both.
	Status PairingStatus
	Now    time.Time
	Limit  int // default DefaultListLimit
}

// RefusalNoticeParams records that a person was told their message was
// refused.
type RefusalNoticeParams struct {
	Platform string
	UserID   string
	Now      time.Time
	// Day is the UTC date of Now as YYYY-MM-DD; the rules fill it in.
	Day string
}

// AccessQueries is the access part of Queries.
type AccessQueries interface {
	// PairingRequest returns the identity's pairing: the approved one, or
	// the pending one whose code is still valid, or else a pending one with
	// a new code (Created).
	PairingRequest(ctx context.Context, p *PairingRequestParams) (*PairingRequestResult, error)
	// PairingFind returns the identity's pairing; ErrNotFound when none.
	PairingFind(ctx context.Context, p *PairingFindParams) (*Pairing, error)
	// PairingApprove approves the pending pairing with the code;
	// ErrNotFound when no pending pairing has it at Now (unknown, expired or
	// approved already).
	PairingApprove(ctx context.Context, p *PairingApproveParams) (*Pairing, error)
	// PairingList lists pairings, newest first.
	PairingList(ctx context.Context, p *PairingListParams) ([]*Pairing, error)
	// RefusalNoticeRecord records a refusal notice for the person's day;
	// false when one was recorded that day already (then tell them nothing).
	RefusalNoticeRecord(ctx context.Context, p *RefusalNoticeParams) (bool, error)
}
