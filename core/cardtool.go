package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/tool"
)

// postResultOutput hands the stamped card to the engine as an attachment of
// CardMimeType, which the engine turns into a card entry; the model sees
// only the summary.
type postResultOutput struct {
	cards.PostResultOutput
	card []byte
}

func (o postResultOutput) Attachments() []tool.Attachment {
	return []tool.Attachment{{Name: "card.json", MimeType: CardMimeType, Data: o.card, Title: o.Template}}
}

// RegisterPostResult registers the post_result tool: any agent may post a
// structured result that platforms show as a rich card.
func RegisterPostResult(r *tool.Registry, lib *cards.Library) error {
	post := cards.NewPostResult(lib)
	return tool.Register(r, tool.Def{
		Name: cards.PostResultName,
		Description: "Post a structured result (hotels, flights, emails, stock quotes, job listings, recipes, " +
			"a briefing, news, weather, calendar events, a task list) that people see as a rich card with buttons. " +
			"Use it instead of prose whenever the answer is a set of results.",
		Risk: tool.RiskLow,
		Tier: tool.TierServer,
		// The cards package's schema adds the enums and patterns its
		// validator checks, so the model is told the same rules.
		SchemaFunc: func(s *jsonschema.Schema) error {
			full, err := cards.InputSchema()
			if err != nil {
				return err
			}
			*s = *full
			return nil
		},
	}, func(ctx context.Context, _ *tool.Request, in cards.Result) (postResultOutput, error) {
		out, err := post(ctx, in)
		if err != nil {
			return postResultOutput{}, err
		}
		b, err := json.Marshal(out.Card)
		if err != nil {
			return postResultOutput{}, fmt.Errorf("encoding stamped card: %w", err)
		}
		return postResultOutput{PostResultOutput: out, card: b}, nil
	})
}

// cardText is a card entry's plain fallback, for readers that draw no
// cards (the web console, exports): the card as plain text, its forms
// asked in text; what when the card does not decode.
func cardText(card []byte, what string) string {
	var st cards.Stamped
	if err := json.Unmarshal(card, &st); err != nil {
		return what
	}
	return st.WithoutForms().PlainText()
}
