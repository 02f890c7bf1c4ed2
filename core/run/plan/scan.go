// Package plan reads a lead agent's plan out of what a model wrote: a
// tolerant scanner finds the JSON object (in a code fence or not, wrapped in
// prose or not) and repairs the slips models make (trailing commas, smart
// quotes), then a strict validation checks it against the plan schema:
// steps with an id, a title, an agent or a role, inputs and dependencies.
// A plan that fails validation goes back to the model once with the errors
// (Extract); a second failure is final.
//
// Scanning is forgiving so a model's formatting slips cost nothing;
// validation is strict so a plan that runs is one the model meant.
package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// ErrNoPlan is returned by Scan when the text holds no JSON object.
var ErrNoPlan = errors.New("no JSON object found")

// Scan finds the plan's JSON object in text and returns it, repaired and
// valid JSON. It looks in fenced code blocks first (```json or bare ```),
// then anywhere in the text; among the objects it finds it prefers the
// first that has a "steps" key, else the first object at all. Repairs:
// smart quotes become straight ones, commas before a closing bracket or
// brace are dropped, and an object cut off at the end of the text (a
// missing closing fence and brace) is closed. Scan never panics; it
// returns ErrNoPlan when nothing parses.
func Scan(text string) (json.RawMessage, error) {
	var candidates []string
	// As written first (a curly quote inside a string is just a
	// character), then with curly quotes made straight (a word processor
	// turned the JSON's own quotes curly).
	for _, t := range []string{text, straighten(text)} {
		for _, block := range fenced(t) {
			candidates = append(candidates, objects(block)...)
		}
		candidates = append(candidates, objects(t)...)
	}
	var first json.RawMessage
	for _, c := range candidates {
		raw, ok := repair(c)
		if !ok {
			continue
		}
		if hasSteps(raw) {
			return raw, nil
		}
		if first == nil {
			first = raw
		}
	}
	if first != nil {
		return first, nil
	}
	return nil, ErrNoPlan
}

func hasSteps(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m["steps"]
	return ok
}

// straighten replaces typographic quotes with ASCII ones.
func straighten(s string) string {
	return strings.NewReplacer(
		"\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u201f", `"`, "\u2033", `"`,
		"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'",
	).Replace(s)
}

// fenced returns the contents of the text's code fences; an opening fence
// with no closing one runs to the end of the text.
func fenced(text string) []string {
	var out []string
	for {
		i := strings.Index(text, "```")
		if i < 0 {
			return out
		}
		rest := text[i+3:]
		// Skip the info string (json, JSON, jsonc...) up to the line end.
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{}") {
			rest = rest[nl+1:]
		}
		j := strings.Index(rest, "```")
		if j < 0 {
			return append(out, rest)
		}
		out = append(out, rest[:j])
		text = rest[j+3:]
	}
}

// maxCandidates bounds the objects tried per text, so a text of many
// braces costs linear time, not quadratic.
const maxCandidates = 32

// objects returns, for each '{' that is not inside an object already
// returned, the text from it to its matching '}' (or to the end of the
// text when it never closes), honouring strings and escapes.
func objects(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		start := strings.IndexByte(text[i:], '{')
		if start < 0 {
			break
		}
		start += i
		end := match(text, start)
		out = append(out, text[start:end])
		if len(out) == maxCandidates {
			break
		}
		// A candidate that fails to parse may hide a good object inside
		// (prose with a stray brace before the plan): look inside too.
		i = start + 1
	}
	return out
}

// match returns the index just past the brace matching the one at start,
// or len(text) when it never closes.
func match(text string, start int) int {
	depth := 0
	inString, escaped := false, false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(text)
}

// repair drops trailing commas, closes what a cut-off object left open,
// and reports whether the result is valid JSON (an object).
func repair(c string) (json.RawMessage, bool) {
	var b bytes.Buffer
	var stack []byte
	inString, escaped := false, false
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if inString {
			b.WriteByte(ch)
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
			continue
		}
		switch ch {
		case '"':
			inString = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			trimComma(&b)
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
		b.WriteByte(ch)
	}
	if inString {
		b.WriteByte('"')
	}
	for i := len(stack) - 1; i >= 0; i-- {
		trimComma(&b)
		b.WriteByte(stack[i])
	}
	out := b.Bytes()
	if !json.Valid(out) || bytes.IndexByte(bytes.TrimSpace(out), '{') != 0 {
		return nil, false
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out); err != nil {
		return nil, false
	}
	return json.RawMessage(compact.Bytes()), true
}

// trimComma removes a comma (and the space after it) at the end of b.
func trimComma(b *bytes.Buffer) {
	s := b.Bytes()
	j := len(s)
	for j > 0 && isSpace(s[j-1]) {
		j--
	}
	if j > 0 && s[j-1] == ',' {
		b.Truncate(j - 1)
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Looks reports whether text holds what looks like a plan: a JSON object
// (as Scan finds it) with a "steps" key. A lead's answer that does not is
// prose, not a plan to validate.
func Looks(text string) bool {
	raw, err := Scan(text)
	return err == nil && hasSteps(raw)
}
