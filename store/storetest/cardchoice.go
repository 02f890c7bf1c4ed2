package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) cardChoiceTests() []namedTest {
	return []namedTest{
		{"CardChoiceFirstClickSettles", s.testCardChoiceFirstClickSettles},
		{"CardChoiceOneWinner", s.testCardChoiceOneWinner},
	}
}

// newCard appends a card entry to a new conversation.
func newCard(t *testing.T, st store.Queries, clk *clock) *store.Entry {
	t.Helper()
	c := newConversation(t, st, clk)
	res, err := st.EntryAppend(ctxFor(t), &store.EntryAppendParams{
		ConversationID: c.ID, Kind: store.EntryCard, Author: "agent:a", Content: content("a card"), Now: clk.Now(),
	})
	noErr(t, err, "appending a card")
	return res.Entry
}

// testCardChoiceFirstClickSettles: the first click settles a card's
// choice; a later click, by anyone, changes nothing and gets the first.
func (s suite) testCardChoiceFirstClickSettles(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	card := newCard(t, st, clk)

	_, err := st.CardChoiceGet(ctx, card.ID)
	errIs(t, err, store.ErrNotFound, "reading the choice of a card nobody clicked")
	first, err := st.CardChoiceSettle(ctx, &store.CardChoiceSettleParams{
		EntryID: card.ID, ConversationID: card.ConversationID, ActionID: "pick-a", Value: "a", Label: "Pick A",
		Platform: "slack", UserID: "U1", UserName: "alice", Now: clk.Now(),
	})
	noErr(t, err, "the first click")
	isTrue(t, first.Settled, "the first click must settle the card")
	eq(t, first.Choice.ActionID, "pick-a", "action of the choice")
	eq(t, first.Choice.UserName, "alice", "who chose")
	timeEq(t, first.Choice.CreatedAt, clk.Now(), "when")

	later, err := st.CardChoiceSettle(ctx, &store.CardChoiceSettleParams{
		EntryID: card.ID, ConversationID: card.ConversationID, ActionID: "pick-b", Value: "b", Label: "Pick B",
		Platform: "slack", UserID: "U2", UserName: "bob", Now: clk.Advance(time.Minute),
	})
	noErr(t, err, "a later click")
	isTrue(t, !later.Settled, "a later click must not settle the card again")
	eq(t, later.Choice.ActionID, "pick-a", "the choice a later click gets")
	eq(t, later.Choice.UserID, "U1", "the first chooser's id")
	eq(t, later.Choice.Label, "Pick A", "the first choice's label")
	eq(t, later.Choice.Platform, "slack", "the first choice's platform")
	eq(t, later.Choice.Value, "a", "the first choice's value")

	got, err := st.CardChoiceGet(ctx, card.ID)
	noErr(t, err, "reading the choice")
	eq(t, got.UserName, "alice", "who chose, read back")
	eq(t, got.ConversationID, card.ConversationID, "conversation")

	_, err = st.CardChoiceSettle(ctx, &store.CardChoiceSettleParams{EntryID: uuid.New(), ConversationID: card.ConversationID, ActionID: "x", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "a click on a card that does not exist")
	_, err = st.CardChoiceSettle(ctx, &store.CardChoiceSettleParams{EntryID: card.ID, ConversationID: card.ConversationID, Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "a click without an action")
	_, err = st.CardChoiceSettle(ctx, &store.CardChoiceSettleParams{ConversationID: card.ConversationID, ActionID: "x"})
	errIs(t, err, store.ErrInvalid, "a click without a card")
}

// testCardChoiceOneWinner: of clicks racing on one card, each in its own
// transaction (as a click on each instance), exactly one settles it and
// every other gets that one's choice.
func (s suite) testCardChoiceOneWinner(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	card := newCard(t, st, clk)
	const n = 8
	var wg sync.WaitGroup
	results, errs := make([]*store.CardChoiceSettleResult, n), make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.InTx(ctx, func(q store.Queries) error {
				r, err := q.CardChoiceSettle(ctx, &store.CardChoiceSettleParams{
					EntryID: card.ID, ConversationID: card.ConversationID, ActionID: "pick", Value: fmt.Sprint(i),
					UserID: fmt.Sprintf("U%d", i), UserName: fmt.Sprintf("user%d", i), Now: clk.Now(),
				})
				results[i] = r
				return err
			})
		}()
	}
	wg.Wait()
	won := -1
	for i := range n {
		noErr(t, errs[i], "click %d", i)
		if results[i].Settled {
			isTrue(t, won < 0, "clicks %d and %d both settled the card", won, i)
			won = i
		}
	}
	isTrue(t, won >= 0, "no click settled the card")
	for i := range n {
		eq(t, results[i].Choice.UserID, fmt.Sprintf("U%d", won), "the choice click %d got", i)
	}
}
