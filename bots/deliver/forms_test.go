package deliver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/deliver"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// former is a recorder that opens forms in modals.
type former struct{ recorder }

func (f *former) OpensForms() bool { return true }

// TestFormCardsDegradeWithoutModals: a platform that opens forms gets the
// card as it is; one that does not gets its questions in text, without
// the button, and never JSON.
func TestFormCardsDegradeWithoutModals(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		ad        interface{ all() []posted }
		withForms bool
	}{
		{"without modals", &recorder{}, false},
		{"with modals", &former{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := testenv.SQLite(t)
			d, err := deliver.New(deliver.Options{Store: st, Adapters: []bots.Adapter{tt.ad.(bots.Adapter)}})
			require.NoError(t, err)
			conv := bind(t, st, "C1", "").ConversationID
			r := cardstest.FormResult()
			stamped, err := cards.Stamp(&r, nil)
			require.NoError(t, err)
			raw, _ := json.Marshal(stamped)
			appendEntry(t, st, conv, store.EntryCard, core.CardContent{Card: raw})
			require.NoError(t, d.Flush(context.Background(), conv))
			got := tt.ad.all()
			require.Len(t, got, 1)
			card := got[0].msg.Card.Stamped
			require.Equal(t, tt.withForms, card.HasForm())
			if tt.withForms {
				return
			}
			require.Len(t, card.Actions, 1, "the Not now button stays")
			text := got[0].msg.Text
			require.Contains(t, text, "📝 Book a table: reply with your answers.")
			require.Contains(t, text, "2. Seating (one of: Inside, Terrace; required)")
			require.False(t, strings.Contains(text, "{") || strings.Contains(text, "[Fill in]"), "plain questions, no JSON, no dead button: %s", text)
		})
	}
}
