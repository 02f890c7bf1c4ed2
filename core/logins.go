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
}

var _ LoginStore = store.Store(nil)

// What LoginStore's methods take, and the kinds of login.
type (
	LoginCreateParams = store.LoginCreateParams
	LoginUseParams    = store.LoginUseParams
	PruneParams       = store.PruneParams
)

// The kinds of login: a link spent once to sign in, and the session it
// opens.
const (
	LoginLink    = store.LoginLink
	LoginSession = store.LoginSession
)
