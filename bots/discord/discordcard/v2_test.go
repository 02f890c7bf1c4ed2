package discordcard_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/bots/discord/discordcard"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
)

func v2Payload(t *testing.T, comps []discordgo.MessageComponent) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(map[string]any{"flags": discordcard.FlagComponentsV2, "components": comps}))
	return buf.Bytes()
}

// The V2 form of the cards that fit, byte for byte, so a change to the
// layout shows in review.
func TestRenderV2Golden(t *testing.T) {
	for _, name := range []string{"email_full", "hotel_minimal", "stock_quote_full", "task_list_full"} {
		t.Run(name, func(t *testing.T) {
			ex := exampleNamed(t, name)
			s, err := cards.Stamp(&ex.Result, nil)
			require.NoError(t, err)
			comps, _, err := discordcard.RenderV2(s, opts())
			require.NoError(t, err, "the %s example must fit components v2", name)
			got := v2Payload(t, comps)
			path := filepath.Join("testdata", "v2_"+name+".json")
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "missing golden file; run go test -update")
			require.Equal(t, string(want), string(got), "%s differs from the golden file (run go test -update and review the diff)", path)
		})
	}
}

// Every example either renders within the V2 limits, or says it does not
// fit so the adapter can send embeds; nothing else.
func TestRenderV2WithinLimitsOrFallsBack(t *testing.T) {
	fit, fell := 0, 0
	for _, ex := range cardstest.Examples() {
		s, err := cards.Stamp(&ex.Result, nil)
		require.NoError(t, err)
		comps, _, err := discordcard.RenderV2(s, opts())
		if err != nil {
			require.ErrorIs(t, err, discordcard.ErrV2DoesNotFit, "%s: the only failure is not fitting", ex.Name)
			fell++
			continue
		}
		require.NoError(t, discordcard.CheckV2(comps), ex.Name)
		fit++
	}
	require.Positive(t, fit, "some examples must fit V2")
}

func TestRenderV2TooManyComponents(t *testing.T) {
	r := cards.Result{Kind: cards.KindLodging}
	for i := range 10 {
		r.Items = append(r.Items, cards.Item{Title: "Hotel " + string(rune('A'+i)), Image: "https://example.com/h.png", Subtitle: "near the sea"})
	}
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	_, _, err = discordcard.RenderV2(s, opts())
	require.ErrorIs(t, err, discordcard.ErrV2DoesNotFit)
	require.ErrorContains(t, err, "at most 40")
	embeds, _, _, err := discordcard.Render(s, opts())
	require.NoError(t, err, "the embed form of the same card still renders")
	require.NotEmpty(t, embeds)
}

func TestRenderV2TooMuchText(t *testing.T) {
	r := cards.Result{Kind: cards.KindBriefing}
	for i := range 3 {
		r.Items = append(r.Items, cards.Item{Title: "Story " + string(rune('A'+i)), Subtitle: strings.Repeat("word ", 700)})
	}
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	_, _, err = discordcard.RenderV2(s, opts())
	require.ErrorIs(t, err, discordcard.ErrV2DoesNotFit)
	require.ErrorContains(t, err, "at most 4000")
}

func TestCheckV2CountsNested(t *testing.T) {
	row := discordgo.ActionsRow{}
	for range 5 {
		row.Components = append(row.Components, discordgo.Button{Label: "x", CustomID: "x"})
	}
	// 1 container + 6 rows of (1 row + 5 buttons) = 37: fits.
	c := discordgo.Container{}
	for range 6 {
		c.Components = append(c.Components, row)
	}
	require.NoError(t, discordcard.CheckV2([]discordgo.MessageComponent{c}))
	// Four text displays more make 41.
	for range 4 {
		c.Components = append(c.Components, discordgo.TextDisplay{Content: "t"})
	}
	err := discordcard.CheckV2([]discordgo.MessageComponent{c})
	require.Error(t, err)
	require.False(t, errors.Is(err, discordcard.ErrV2DoesNotFit), "CheckV2 reports the violation; RenderV2 wraps it")
	require.ErrorContains(t, err, "41 in all")
}
