package core

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// ForgetPerson deletes what is kept of person on their request: the
// operator's act alone, recorded as done by by. With deleteMessages the
// text of what they wrote goes too. Forgetting again finds nothing and
// answers zero counts.
func (s *Service) ForgetPerson(ctx context.Context, a workspace.Actor, person uuid.UUID, deleteMessages bool, by string) (*PersonForgetResult, error) {
	if !a.Operator {
		return nil, workspace.Forbidden("only the operator may forget a person")
	}
	return s.st.PersonForget(ctx, &store.PersonForgetParams{PersonID: person, DeleteMessages: deleteMessages, By: by})
}
