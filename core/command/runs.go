package command

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/store"
)

// Runs is what !run needs of core; *core.Service implements it.
type Runs interface {
	RunFor(ctx context.Context, conv uuid.UUID, ref string) (*core.RunView, error)
	RunsOf(ctx context.Context, conv uuid.UUID) ([]*store.Run, error)
	CancelRun(ctx context.Context, id uuid.UUID, by string) (*store.Run, error)
	RetryRun(ctx context.Context, id uuid.UUID, by string) (*store.Run, error)
}

var _ Runs = (*core.Service)(nil)

// RunsHelp lists the run commands.
const RunsHelp = "• `runs` lists this conversation's runs · `run ID` shows one · `run cancel ID` · `run retry ID` (re-runs its failed steps); ID is the run id or its first 8 characters"

// runs answers `runs`, `run ID`, `run cancel ID` and `run retry ID`.
func (h *Handler) runs(ctx context.Context, r request, verb string, args []string) (string, error) {
	if h.opts.Runs == nil {
		return "", invalid("runs are not available here")
	}
	if r.ConversationID == uuid.Nil {
		return "", invalid("type `!%s` in a conversation", verb)
	}
	if verb == "runs" {
		rs, err := h.opts.Runs.RunsOf(ctx, r.ConversationID)
		if err != nil {
			return "", err
		}
		if len(rs) == 0 {
			return "No runs started here.", nil
		}
		var b strings.Builder
		b.WriteString("Runs started here:\n")
		for _, x := range rs {
			fmt.Fprintf(&b, "• `%s` %s %s\n", run.ShortID(x), x.Status, x.Goal)
		}
		return strings.TrimSpace(b.String()), nil
	}
	if len(args) == 0 {
		return "", invalid("run needs an id. %s", RunsHelp)
	}
	sub, ref := "show", args[0]
	if len(args) == 2 {
		sub, ref = strings.ToLower(args[0]), args[1]
	} else if len(args) > 2 {
		return "", invalid("too many words. %s", RunsHelp)
	}
	v, err := h.opts.Runs.RunFor(ctx, r.ConversationID, ref)
	if errors.Is(err, store.ErrNotFound) {
		return "", invalid("no run %s here", ref)
	}
	if errors.Is(err, core.ErrInvalid) {
		return "", invalid("%s", strings.TrimPrefix(err.Error(), core.ErrInvalid.Error()+": "))
	}
	if err != nil {
		return "", err
	}
	by := string(store.UserAuthor(r.UserID))
	switch sub {
	case "show":
		return run.Summary(v.Run, v.Steps), nil
	case "cancel":
		if v.Run.Status != store.RunStatusRunning {
			return "", invalid("run %s is %s already", run.ShortID(v.Run), v.Run.Status)
		}
		if _, err := h.opts.Runs.CancelRun(ctx, v.Run.ID, by); err != nil {
			return "", err
		}
		return fmt.Sprintf("Run %s cancelled; its working steps are being stopped.", run.ShortID(v.Run)), nil
	case "retry":
		if v.Run.Status != store.RunStatusFailed && v.Run.Status != store.RunStatusCancelled {
			return "", invalid("run %s is %s: only a failed or cancelled run is retried", run.ShortID(v.Run), v.Run.Status)
		}
		if _, err := h.opts.Runs.RetryRun(ctx, v.Run.ID, by); err != nil {
			return "", err
		}
		return fmt.Sprintf("Run %s retried: its failed and cancelled steps run again.", run.ShortID(v.Run)), nil
	}
	return "", invalid("unknown run command %q. %s", sub, RunsHelp)
}
