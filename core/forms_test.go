package core_test

import (
	"context"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

type bookIn struct {
	Restaurant string  `json:"restaurant"`
	Day        string  `json:"day"`
	Guests     float64 `json:"guests"`
}

// TestCardFormAnswersRunTheTool: a tool action's form opens without
// recording anything, wrong answers come back by input name, and right
// ones run the declared tool with its fixed args and the typed answers,
// once.
func TestCardFormAnswersRunTheTool(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := &setup{st: st, clock: newClock(), tools: &testTools{}}
		var booked []bookIn
		var mu sync.Mutex
		script := `
turns:
  - when_last_user_contains: dinner
    tool_calls:
      - name: post_result
        input:
          kind: event
          title: Dinner
          items: [{title: Tasca do Chico}]
          actions:
            - id: book
              label: Fill in
              kind: tool
              tool: book_table
              args: {restaurant: tasca}
              form:
                title: Book a table
                inputs:
                  - {name: day, label: Day, type: date, required: true}
                  - {name: guests, label: Guests, type: number, min: 1, max: 12}
  - after_tool: book_table
    text: "Booked: {{last_user}}"
fallback:
  text: ok
`
		in := s.startWith(t, script, func(r *tool.Registry) {
			tool.MustRegister(r, tool.Def{Name: "book_table", Description: "book a table", Risk: tool.RiskLow},
				func(ctx context.Context, _ *tool.Request, b bookIn) (lookupOut, error) {
					mu.Lock()
					booked = append(booked, b)
					mu.Unlock()
					return lookupOut{Answer: "booked " + b.Day}, nil
				})
		})
		ctx := context.Background()
		res, err := in.svc.Submit(ctx, slackMessage("Ev1", "U1", "dinner please"))
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, res.ConversationID, store.ConversationIdle)
		var card *store.Entry
		for _, e := range entries(t, st, res.ConversationID, false) {
			if e.Kind == store.EntryCard {
				card = e
			}
		}
		if card == nil {
			t.Fatal("no card entry")
		}
		id := cards.FormActionID(card.ID, "book")
		before := len(entries(t, st, res.ConversationID, false))

		opened, err := in.svc.Act(ctx, &core.Action{Platform: "slack", ActionID: id, UserID: "U1"})
		if err != nil || opened.Form == nil || opened.FormTitle != "Book a table" || len(opened.Form.Inputs) != 2 {
			t.Fatalf("the click = %+v, %v; want the form to open", opened, err)
		}
		wrong, err := in.svc.Act(ctx, &core.Action{Platform: "slack", EventID: "v1", ActionID: id, UserID: "U1",
			Values: map[string][]string{"day": {"24/12/2026"}, "guests": {"40"}}})
		if err != nil || wrong.Invalid["day"] == "" || wrong.Invalid["guests"] != "Enter a number from 1 to 12." {
			t.Fatalf("wrong answers = %+v, %v; want both named", wrong, err)
		}
		if n := len(entries(t, st, res.ConversationID, false)); n != before {
			t.Fatalf("the log grew from %d to %d entries on an open and wrong answers; want nothing recorded", before, n)
		}
		right := &core.Action{Platform: "slack", EventID: "v1", ActionID: id, UserID: "U1", UserName: "alice",
			Values: map[string][]string{"day": {"2026-12-24"}, "guests": {"4"}}}
		if got, err := in.svc.Act(ctx, right); err != nil || got.Duplicate || len(got.Invalid) > 0 {
			t.Fatalf("right answers = %+v, %v; want them recorded", got, err)
		}
		if again, err := in.svc.Act(ctx, right); err != nil || !again.Duplicate {
			t.Fatalf("the same submission again = %+v, %v; want Duplicate", again, err)
		}
		waitStatus(t, st, res.ConversationID, store.ConversationIdle)
		mu.Lock()
		got := append([]bookIn(nil), booked...)
		mu.Unlock()
		if len(got) != 1 || got[0] != (bookIn{Restaurant: "tasca", Day: "2026-12-24", Guests: 4}) {
			t.Fatalf("book_table ran with %+v; want once with the fixed args and the typed answers", got)
		}
		late, err := in.svc.Act(ctx, &core.Action{Platform: "slack", ActionID: id, UserID: "U2"})
		if err != nil || !late.Duplicate || late.Settled == nil || late.Settled.ByUserID != "U1" || late.Form != nil {
			t.Fatalf("opening the answered form = %+v, %v; want it settled by U1", late, err)
		}
	})
}
