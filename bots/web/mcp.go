package web

import (
	"context"
	"net/http"

	"github.com/google/uuid"
)

// Authenticate resolves who a request acts as, exactly as every /api route
// does: the operator token, a session, a personal token, or a direct
// loopback caller when no operator token is set. Agent keys and host tokens
// are refused here as on /api. On refusal it returns the HTTP status and
// the message to send. Other endpoints that take the API's credentials
// (/mcp) call it.
func (a *API) Authenticate(r *http.Request) (*Principal, int, string) {
	who, herr := a.authenticate(r)
	if herr == nil {
		herr = admit(who, routeOrdinary)
	}
	if herr != nil {
		return nil, herr.status, herr.msg
	}
	return who, http.StatusOK, ""
}

// WithPrincipal returns ctx carrying p, as the API's handlers see it
// (PrincipalFrom).
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, callerKey{}, p)
}

// WorkspaceFor is the workspace a conversation that p opens goes to, as
// POST /api/conversations picks it: asked (a workspace id) where p may use
// it, else a person's personal workspace, else (the operator, a session)
// none.
func (a *API) WorkspaceFor(ctx context.Context, p *Principal, asked string) (*uuid.UUID, error) {
	r, err := http.NewRequestWithContext(WithPrincipal(ctx, p), http.MethodPost, "/", nil)
	if err != nil {
		return nil, err
	}
	return a.workspaceForNew(r, asked)
}
