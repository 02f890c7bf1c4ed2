package core

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
)

// LoginStore is what the console's sign-in keeps: one-time links and the
// sessions they open, by the hash of their secret. It is a narrow view of
// the store, as DeliveryStore is delivery's; the store implements it.
type LoginStore interface {
	LoginCreate(ctx context.Context, p *LoginCreateParams) (*Login, error)
	LoginFind(ctx context.Context, secretHash []byte) (*Login, error)
	LoginUse(ctx context.Context, p *LoginUseParams) (*Login, error)
	LoginPrune(ctx context.Context, p *PruneParams) (int, error)
	// LoginTouch records a session's use (when, IP, user agent).
	LoginTouch(ctx context.Context, p *TouchParams) error
	// AuditLog records sign-ins and sign-outs.
	AuditLog(ctx context.Context, p *AuditLogParams) (*AuditRecord, error)
}

var _ LoginStore = store.Store(nil)

// What LoginStore's methods take, and the kinds of login.
type (
	LoginCreateParams = store.LoginCreateParams
	LoginUseParams    = store.LoginUseParams
	PruneParams       = store.PruneParams
	TouchParams       = store.TouchParams
	AuditLogParams    = store.AuditLogParams
	LoginMethod       = store.LoginMethod
)

// The kinds of login: a link spent once to sign in, and the session it
// opens.
const (
	LoginLink    = store.LoginLink
	LoginSession = store.LoginSession
)

// How a console session was opened.
const (
	LoginByLink  = store.LoginByLink
	LoginByToken = store.LoginByToken
	LoginByOIDC  = store.LoginByOIDC
)
