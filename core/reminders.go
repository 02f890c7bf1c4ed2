package core

import (
	"context"
	"strings"
)

// A reminder is posted with Snooze and Done buttons (see the scheduler's
// snooze.go). Their clicks reach Act like any other and are handed, by the
// action id's prefix, to Options.ReminderActFunc: what a click does to a
// schedule is the scheduler's to decide, and core does not import it.

// ReminderActionPrefix starts the action id of a reminder's buttons; the
// rest names the firing (the schedule run) they belong to.
const ReminderActionPrefix = "sb-reminder:"

// IsReminderAction reports whether an action id is a reminder's button.
func IsReminderAction(actionID string) bool {
	return strings.HasPrefix(actionID, ReminderActionPrefix)
}

// ActionFunc decides a click that core hands on (a reminder's Snooze or
// Done). Its ActionResult is what the platform shows: Outcome replaces
// the buttons; Duplicate with Settled tells a late clicker who came first.
type ActionFunc func(ctx context.Context, a *Action) (*ActionResult, error)

// ActionButton is a button an agent's message carries without a turn (a
// reminder's Snooze and Done): its click comes back through Act with
// ActionID and Value as they are here.
type ActionButton struct {
	ActionID string `json:"action_id"`
	Value    string `json:"value,omitempty"`
	Label    string `json:"label"`
	Style    string `json:"style,omitempty"` // "", "primary" or "danger"
}

// reminderAct hands a reminder's button to the scheduler.
func (s *Service) reminderAct(ctx context.Context, a *Action) (*ActionResult, error) {
	if s.opts.ReminderActFunc == nil {
		return nil, invalid("reminder buttons are not handled here")
	}
	return s.opts.ReminderActFunc(ctx, a)
}
