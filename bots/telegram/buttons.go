package telegram

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core/cards"
)

// Telegram's inline keyboard limits.
const (
	// MaxCallbackData is the most bytes a button's callback_data holds.
	MaxCallbackData = 64
	// MaxButtons is how many buttons the adapter puts under a message
	// (Telegram allows 100); rowButtons how many share a row.
	MaxButtons = 30
	rowButtons = 3
	// maxLabelChars keeps a label readable on a phone.
	maxLabelChars = 64
)

// ErrButtons is wrapped by every error about buttons Telegram cannot show.
var ErrButtons = errors.New("buttons do not fit telegram's limits")

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// encodeCallback packs a button's ActionID and Value into callback_data:
// "<len(ActionID)>:<ActionID><Value>" when it fits in 64 bytes, else a
// compact form, "~<ActionID with each uuid as ! and 22 base64 characters>|<Value>"
// (an approval's or a card's id fits then); what fits in neither is an
// error, never a cut id.
func encodeCallback(actionID, value string) (string, error) {
	plain := strconv.Itoa(len(actionID)) + ":" + actionID + value
	if len(plain) <= MaxCallbackData {
		return plain, nil
	}
	if !strings.ContainsAny(actionID, "|!") {
		compact := "~" + uuidPattern.ReplaceAllStringFunc(actionID, func(s string) string {
			id := uuid.MustParse(s)
			return "!" + base64.RawURLEncoding.EncodeToString(id[:])
		}) + "|" + value
		if len(compact) <= MaxCallbackData {
			return compact, nil
		}
	}
	return "", fmt.Errorf("%w: action id %q with value %q takes more than Telegram's %d bytes of callback_data", ErrButtons, actionID, value, MaxCallbackData)
}

// decodeCallback reverses encodeCallback; data it did not make comes back
// whole as the action id.
func decodeCallback(data string) (actionID, value string) {
	if rest, ok := strings.CutPrefix(data, "~"); ok {
		act, val, found := strings.Cut(rest, "|")
		if !found {
			return data, ""
		}
		var b strings.Builder
		for {
			i := strings.IndexByte(act, '!')
			if i < 0 || len(act) < i+23 {
				b.WriteString(act)
				break
			}
			raw, err := base64.RawURLEncoding.DecodeString(act[i+1 : i+23])
			id, err2 := uuid.FromBytes(raw)
			if err != nil || err2 != nil {
				b.WriteString(act)
				break
			}
			b.WriteString(act[:i] + id.String())
			act = act[i+23:]
		}
		return b.String(), val
	}
	head, rest, ok := strings.Cut(data, ":")
	n, err := strconv.Atoi(head)
	if !ok || err != nil || n < 0 || n > len(rest) {
		return data, ""
	}
	return rest[:n], rest[n:]
}

// keyboard lays buttons out as an inline keyboard, three to a row.
func keyboard(btns []bots.Button) (*models.InlineKeyboardMarkup, error) {
	if len(btns) == 0 {
		return nil, nil
	}
	if len(btns) > MaxButtons {
		return nil, fmt.Errorf("%w: %d buttons; the adapter shows at most %d", ErrButtons, len(btns), MaxButtons)
	}
	kb := &models.InlineKeyboardMarkup{}
	var row []models.InlineKeyboardButton
	perRow := rowButtons
	for _, b := range btns {
		if utf8.RuneCountInString(b.Label) > 20 {
			perRow = 1 // long labels read better one to a row
		}
	}
	seen := map[string]bool{}
	for _, b := range btns {
		data, err := encodeCallback(b.ActionID, b.Value)
		if err != nil {
			return nil, err
		}
		if seen[data] {
			return nil, fmt.Errorf("%w: two buttons share action id %q and value %q", ErrButtons, b.ActionID, b.Value)
		}
		seen[data] = true
		label := b.Label
		if label == "" {
			label = b.Value
		}
		if label == "" {
			return nil, fmt.Errorf("%w: button %q has no label", ErrButtons, b.ActionID)
		}
		row = append(row, models.InlineKeyboardButton{Text: shorten(label, maxLabelChars), CallbackData: data, Style: buttonStyle(b.Style)})
		if len(row) == perRow {
			kb.InlineKeyboard = append(kb.InlineKeyboard, row)
			row = nil
		}
	}
	if len(row) > 0 {
		kb.InlineKeyboard = append(kb.InlineKeyboard, row)
	}
	return kb, nil
}

// buttonStyle maps a button's style to the inline button's (Bot API 9.4
// styles; older clients show every button alike).
func buttonStyle(s string) string {
	switch s {
	case "primary":
		return "primary"
	case "danger":
		return "danger"
	case "success":
		return "success"
	}
	return ""
}

// cardButtons are a card's actions as buttons, unless it has an outcome
// (a button was used: the outcome shows instead).
func cardButtons(c *bots.Card) []bots.Button {
	if c == nil || c.Stamped == nil || c.Stamped.Outcome != "" {
		return nil
	}
	var out []bots.Button
	for _, a := range c.Stamped.Actions {
		label := a.Label
		if label == "" {
			label = a.ID
		}
		out = append(out, bots.Button{ActionID: cards.ActionID(c.EntryID, a.ID), Label: label, Style: a.Style})
	}
	return out
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
