package core

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Schedules lists every schedule, at most limit: the operator's, for they
// span every workspace.
func (s *Service) Schedules(ctx context.Context, a workspace.Actor, limit int) ([]*Schedule, error) {
	if !a.Operator {
		return nil, workspace.Forbidden("only the operator may list every schedule")
	}
	return s.st.ScheduleList(ctx, &store.ScheduleListParams{Limit: limit})
}

// Schedule reads schedule id for the operator, who pauses, resumes and
// runs any schedule.
func (s *Service) Schedule(ctx context.Context, a workspace.Actor, id uuid.UUID) (*Schedule, error) {
	if !a.Operator {
		return nil, workspace.Forbidden("only the operator may act on any schedule")
	}
	return s.st.ScheduleGet(ctx, id)
}
