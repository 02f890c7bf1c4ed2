package model

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// finishArgs turns streamed tool arguments into Part.Input: the JSON object
// when it is one, "{}" when nothing was streamed, and otherwise the raw text
// as a JSON string, so the engine's validation reports the problem to the
// model rather than the call failing (see Part.Input).
func finishArgs(raw string) json.RawMessage {
	s := strings.TrimSpace(raw)
	if s == "" {
		return json.RawMessage("{}")
	}
	if strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	quoted, _ := json.Marshal(raw) // a string always marshals
	return quoted
}

// dropEmptyText removes text parts with no text (a block that started and
// ended empty), which providers reject when the message is sent back.
func dropEmptyText(parts []Part) []Part {
	out := parts[:0]
	for _, p := range parts {
		if p.Kind == PartText && p.Text == "" {
			continue
		}
		out = append(out, p)
	}
	return out
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// newCallID makes a tool call id for a provider or script that gave none.
// Ids must be unique within a conversation, across restarts too, so they are
// random rather than counted.
func newCallID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b[:])
}
