package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Actor is who acts on a workspace, whatever they came through (the HTTP
// API, the CLI, a chat command): the operator, who may do everything, or a
// person, whose roles decide. A credential may narrow a person to some of
// their workspaces (Scope). The zero Actor is nobody: an agent's or a
// host's credential, which no workspace's roles admit.
type Actor struct {
	// Operator holds every right (the API token, the CLI on the database).
	Operator bool
	// Person acts under their roles; uuid.Nil for no person.
	Person uuid.UUID
	// Scope, when not empty, is the only workspaces the credential reaches.
	Scope []uuid.UUID
}

// TheOperator is the operator, with every right.
var TheOperator = Actor{Operator: true}

// Reaches reports whether the actor's credential reaches workspace ws (its
// Scope names it, or it has none).
func (a Actor) Reaches(ws uuid.UUID) bool {
	return len(a.Scope) == 0 || slices.Contains(a.Scope, ws)
}

// Forbidden is an ErrForbidden whose message is msg alone.
func Forbidden(msg string) error { return forbidden(msg) }

type forbidden string

func (f forbidden) Error() string { return string(f) }
func (f forbidden) Unwrap() error { return ErrForbidden }

// Rights checks that a may do action in workspace ws. ws nil is a row made
// outside any workspace: only the operator reaches it. A person who is not
// a member of ws gets store.ErrNotFound, so that what exists elsewhere is
// not revealed; a member without the role gets ErrForbidden.
func Rights(ctx context.Context, q store.Queries, a Actor, ws *uuid.UUID, action Action) error {
	if a.Operator {
		return nil
	}
	if a.Person == uuid.Nil || ws == nil {
		return fmt.Errorf("%w: only the operator may do that", ErrForbidden)
	}
	if !a.Reaches(*ws) {
		return fmt.Errorf("%w: this credential is not for workspace %s", ErrForbidden, *ws)
	}
	role, err := Check(ctx, q, *ws, a.Person, action)
	if role == "" && errors.Is(err, ErrForbidden) {
		return fmt.Errorf("workspace %s: %w", *ws, store.ErrNotFound)
	}
	return err
}
