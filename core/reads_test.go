package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// quiet starts a service on st whose agent says one thing.
func quiet(t *testing.T, st store.Store) *core.Service {
	t.Helper()
	s := &setup{st: st, clock: newClock(), tools: &testTools{}}
	return s.start(t, "turns:\n  - text: Fine.\n").svc
}

// TestAuditReaders: the operator reads the whole audit; a person reads a
// workspace's rows only as its owner or an admin, and only when they name
// it.
func TestAuditReaders(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		svc := quiet(t, open(t))
		owner, member := uuid.New(), uuid.New()
		ws, err := svc.Workspaces().Create(ctx, owner, "Acme")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Workspaces().AddMember(ctx, workspace.Actor{Person: owner}, ws.ID, member, ""); err != nil {
			t.Fatal(err)
		}
		mine := &core.AuditQuery{Workspace: ws.ID.String()}
		if _, err := svc.Audit(ctx, workspace.TheOperator, &core.AuditQuery{}); err != nil {
			t.Errorf("the operator, the whole audit: %v", err)
		}
		if _, err := svc.Audit(ctx, workspace.Actor{Person: owner}, mine); err != nil {
			t.Errorf("the owner, their workspace's rows: %v", err)
		}
		for name, tc := range map[string]struct {
			a workspace.Actor
			q *core.AuditQuery
		}{
			"the owner, the whole audit":   {workspace.Actor{Person: owner}, &core.AuditQuery{}},
			"a member, the workspace's":    {workspace.Actor{Person: member}, mine},
			"an agent's credential":        {workspace.Actor{}, mine},
			"the owner, scoped elsewhere":  {workspace.Actor{Person: owner, Scope: []uuid.UUID{uuid.New()}}, mine},
			"a stranger, the workspace's":  {workspace.Actor{Person: uuid.New()}, mine},
			"the owner, a platform's team": {workspace.Actor{Person: owner}, &core.AuditQuery{Workspace: "T123"}},
		} {
			if _, err := svc.Audit(ctx, tc.a, tc.q); !errors.Is(err, workspace.ErrForbidden) {
				t.Errorf("%s: %v, want ErrForbidden", name, err)
			}
		}
	})
}

// TestOperatorOnlyReads: the usage and the schedules span every
// workspace, and forgetting a person is irreversible: the operator's
// alone.
func TestOperatorOnlyReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := quiet(t, testenv.SQLite(t))
	person := workspace.Actor{Person: uuid.New()}
	if _, err := svc.Usage(ctx, person, time.Time{}, 0); !errors.Is(err, workspace.ErrForbidden) {
		t.Errorf("a person reading the usage: %v, want ErrForbidden", err)
	}
	if _, err := svc.Usage(ctx, workspace.TheOperator, time.Time{}, 0); err != nil {
		t.Errorf("the operator reading the usage: %v", err)
	}
	if _, err := svc.Schedules(ctx, person, 10); !errors.Is(err, workspace.ErrForbidden) {
		t.Errorf("a person listing every schedule: %v, want ErrForbidden", err)
	}
	if _, err := svc.Schedules(ctx, workspace.TheOperator, 10); err != nil {
		t.Errorf("the operator listing the schedules: %v", err)
	}
	if _, err := svc.Schedule(ctx, person, uuid.New()); !errors.Is(err, workspace.ErrForbidden) {
		t.Errorf("a person reading a schedule: %v, want ErrForbidden", err)
	}
	if _, err := svc.ForgetPerson(ctx, person, person.Person, true, "them"); !errors.Is(err, workspace.ErrForbidden) {
		t.Errorf("a person forgetting themselves: %v, want ErrForbidden", err)
	}
	if _, err := svc.ForgetPerson(ctx, workspace.TheOperator, person.Person, true, "operator"); err != nil {
		t.Errorf("the operator forgetting a person: %v", err)
	}
}

// TestAgentsConversation: an agent's session reaches its own agent's
// conversations only.
func TestAgentsConversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.SQLite(t)
	s := &setup{st: st, clock: newClock(), tools: &testTools{}}
	in := s.start(t, "turns:\n  - text: Fine.\n")
	res, err := in.svc.Submit(ctx, slackMessage("Ev1", "U1", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.svc.AgentsConversation(ctx, "atlas", res.ConversationID); err != nil {
		t.Errorf("atlas, its own conversation: %v", err)
	}
	if err := in.svc.AgentsConversation(ctx, "nobody", res.ConversationID); !errors.Is(err, workspace.ErrForbidden) {
		t.Errorf("an unknown agent: %v, want ErrForbidden", err)
	}
	if _, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "other", Config: []byte(`{}`), Now: s.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := in.svc.AgentsConversation(ctx, "other", res.ConversationID); !errors.Is(err, workspace.ErrForbidden) {
		t.Errorf("another agent: %v, want ErrForbidden", err)
	}
}
