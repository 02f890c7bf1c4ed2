package discord

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
)

// Discord's component limits.
const (
	MaxActionRows  = 5
	MaxRowButtons  = 5
	MaxButtons     = MaxActionRows * MaxRowButtons
	MaxLabelChars  = 80
	MaxCustomIDLen = 100
)

// ErrButtons is wrapped by every error about buttons that Discord cannot
// show (too many, or an ActionID and Value too long for a custom_id).
var ErrButtons = errors.New("buttons do not fit discord's limits")

// encodeCustomID packs ActionID and Value into one custom_id as
// "<len(ActionID)>:<ActionID><Value>", which needs no escaping and can be
// split again whatever the two contain.
func encodeCustomID(actionID, value string) (string, error) {
	id := strconv.Itoa(len(actionID)) + ":" + actionID + value
	if n := utf8.RuneCountInString(id); n > MaxCustomIDLen {
		return "", fmt.Errorf("%w: action id %q with value %q makes a custom_id of %d characters; Discord allows %d",
			ErrButtons, actionID, value, n, MaxCustomIDLen)
	}
	return id, nil
}

// decodeCustomID reverses encodeCustomID; a custom_id it did not make comes
// back whole as the action id.
func decodeCustomID(id string) (actionID, value string) {
	head, rest, ok := strings.Cut(id, ":")
	n, err := strconv.Atoi(head)
	if !ok || err != nil || n < 0 || n > len(rest) {
		return id, ""
	}
	return rest[:n], rest[n:]
}

func buttonStyle(s string) discordgo.ButtonStyle {
	switch s {
	case "primary":
		return discordgo.PrimaryButton
	case "danger":
		return discordgo.DangerButton
	case "success":
		return discordgo.SuccessButton
	default:
		return discordgo.SecondaryButton
	}
}

// components lays buttons out in action rows of five. Labels longer than
// Discord allows are shortened; ids that do not fit are an error, since a
// shortened id would no longer say what was clicked.
func components(btns []bots.Button) ([]discordgo.MessageComponent, error) {
	if len(btns) == 0 {
		return nil, nil
	}
	if len(btns) > MaxButtons {
		return nil, fmt.Errorf("%w: %d buttons; Discord shows at most %d (%d rows of %d)", ErrButtons, len(btns), MaxButtons, MaxActionRows, MaxRowButtons)
	}
	seen := map[string]bool{}
	var rows []discordgo.MessageComponent
	var row discordgo.ActionsRow
	for _, b := range btns {
		id, err := encodeCustomID(b.ActionID, b.Value)
		if err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, fmt.Errorf("%w: two buttons share action id %q and value %q", ErrButtons, b.ActionID, b.Value)
		}
		seen[id] = true
		label := b.Label
		if label == "" {
			label = b.Value
		}
		if label == "" {
			return nil, fmt.Errorf("%w: button %q has no label", ErrButtons, b.ActionID)
		}
		row.Components = append(row.Components, discordgo.Button{
			Label: shorten(label, MaxLabelChars), Style: buttonStyle(b.Style), CustomID: id,
		})
		if len(row.Components) == MaxRowButtons {
			rows = append(rows, row)
			row = discordgo.ActionsRow{}
		}
	}
	if len(row.Components) > 0 {
		rows = append(rows, row)
	}
	return rows, nil
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// buttonLabel finds the label of the clicked button on the message, in a
// top-level row or in a row inside a Components V2 container.
func buttonLabel(m *discordgo.Message, customID string) string {
	if m == nil {
		return ""
	}
	return labelIn(m.Components, customID)
}

func labelIn(comps []discordgo.MessageComponent, customID string) string {
	for _, c := range comps {
		switch v := c.(type) {
		case *discordgo.ActionsRow:
			for _, rc := range v.Components {
				if b, ok := rc.(*discordgo.Button); ok && b.CustomID == customID {
					return b.Label
				}
			}
		case *discordgo.Container:
			if l := labelIn(v.Components, customID); l != "" {
				return l
			}
		}
	}
	return ""
}

// withoutRows returns a Components V2 message's components with every
// action row taken out (the choice was made), and note appended as small
// text inside the container, or at the end.
func withoutRows(comps []discordgo.MessageComponent, note string) []discordgo.MessageComponent {
	out := make([]discordgo.MessageComponent, 0, len(comps)+1)
	placed := false
	for _, c := range comps {
		switch v := c.(type) {
		case *discordgo.ActionsRow:
			continue
		case *discordgo.Container:
			cc := *v
			cc.Components = withoutRows(v.Components, "")
			if !placed {
				cc.Components = append(cc.Components, discordgo.TextDisplay{Content: note})
				placed = true
			}
			out = append(out, cc)
		default:
			out = append(out, c)
		}
	}
	if !placed && note != "" {
		out = append(out, discordgo.TextDisplay{Content: note})
	}
	return out
}
