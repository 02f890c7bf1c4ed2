package browse

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboardhq/switchboard/core/tool"
)

// ToolName is the tool's name; agents name it in their tools list.
const ToolName = "browse"

// RegisterTools adds browse to r, bound to b.
//
// Its risk is medium, not low: a click can do something on the web (send
// a form, press a button that orders or deletes) on the page's side,
// where the call cannot take it back; it is not high because the browser
// carries no one's cookies or logins (a fresh profile per call) and only
// reaches what the address rules allow.
func RegisterTools(r *tool.Registry, b *Browser) error {
	if b == nil {
		return errors.New("registering browse: the Browser is nil")
	}
	o := b.Options()
	return tool.Register(r, tool.Def{
		Name: ToolName,
		Description: fmt.Sprintf("Open a web page in a headless browser and act on it: click, type, read text, take screenshots (posted in the conversation as images), go back. "+
			"Returns the final page's address, title and text, and each action's result. "+
			"A call opens at most %d pages and runs at most %d actions within %s; addresses of the local network are refused. "+
			"The browser starts fresh each call: it is signed in nowhere.", o.MaxPages, o.MaxActions, o.Timeout),
		Risk:  tool.RiskMedium,
		Tier:  tool.TierServer,
		OptIn: true,
		SchemaFunc: func(s *jsonschema.Schema) error {
			actions := s.Properties["actions"]
			if actions == nil || actions.Items == nil || actions.Items.Properties["kind"] == nil {
				return errors.New("the browse schema has no actions[].kind")
			}
			max := o.MaxActions
			actions.MaxItems = &max
			kinds := make([]any, len(ActionKinds))
			for i, k := range ActionKinds {
				kinds[i] = k
			}
			actions.Items.Properties["kind"].Enum = kinds
			return nil
		},
	}, func(ctx context.Context, _ *tool.Request, in In) (Out, error) {
		return b.Browse(ctx, in)
	})
}
