package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The YAML library reports errors in Go's words ("field persnoa not found
// in type agent.Agent", "cannot unmarshal !!str `abc` into int"). People
// write switchboard.yaml, not Go: these functions say the same in the
// file's words, with the file, the line and the path of the setting
// ("switchboard.yaml line 4: unknown field "persnoa" in agents[0]").

var (
	unknownFieldRE = regexp.MustCompile(`^line (\d+): field (.+) not found in type \S+$`)
	// A key given twice: in one struct's fields, or in any mapping.
	setTwiceRE = regexp.MustCompile(`^line (\d+): (?:field (.+) already set in type \S+|mapping key "(.+)" already defined at line \d+)$`)
	cannotRE   = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")
	lineRE     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
)

// YAMLError rewrites err, from decoding raw (the file at file, e.g.
// switchboard.yaml) with yaml.v3, in the words of the file. Errors that are
// not the YAML library's are returned as they are.
func YAMLError(file string, raw []byte, err error) error {
	var root yaml.Node
	if yaml.Unmarshal(raw, &root) != nil {
		return prefixLines(file, err)
	}
	return explain(file, &root, err)
}

func explain(file string, root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return prefixLines(file, err)
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		msgs = append(msgs, explainOne(file, root, e))
	}
	return errors.New(strings.Join(msgs, "; "))
}

func explainOne(file string, root *yaml.Node, e string) string {
	if m := unknownFieldRE.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		if path, ok := keyPath(root, line, m[2], nil); ok {
			return fmt.Sprintf("%sline %d: unknown field %q in %s", at(file), line, m[2], where(path))
		}
		return fmt.Sprintf("%sline %d: unknown field %q", at(file), line, m[2])
	}
	if m := setTwiceRE.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		key := m[2] + m[3]
		if path, ok := keyPath(root, line, key, nil); ok {
			return fmt.Sprintf("%sline %d: %q is set twice in %s", at(file), line, key, where(path))
		}
	}
	if m := cannotRE.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		full, _ := valuePath(root, line, m[3], nil)
		what := "this value"
		if m[3] != "" {
			what = strconv.Quote(m[3])
		} else if m[2] == "map" {
			what = "a mapping"
		} else if m[2] == "seq" {
			what = "a list"
		}
		return fmt.Sprintf("%sline %d: %s: %s must be %s", at(file), line, where(full), what, goTypeWords(m[4]))
	}
	if m := lineRE.FindStringSubmatch(e); m != nil {
		return fmt.Sprintf("%sline %s: %s", at(file), m[1], m[2])
	}
	return at(file) + e
}

// at names the file before a line number ("switchboard.yaml "), or
// nothing when the caller names it.
func at(file string) string {
	if file == "" {
		return ""
	}
	return file + " "
}

// prefixLines names the file in an error that is not a type error (a syntax
// error: "yaml: line 3: mapping values are not allowed in this context").
func prefixLines(file string, err error) error {
	s := err.Error()
	if m := lineRE.FindStringSubmatch(s); m != nil {
		return fmt.Errorf("%sline %s: %s", at(file), m[1], m[2])
	}
	if strings.HasPrefix(s, "yaml: ") {
		return fmt.Errorf("%s%s", at(file), strings.TrimPrefix(s, "yaml: "))
	}
	return err
}

// goTypeWords says what a Go type takes, in a person's words.
func goTypeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	case t == "time.Duration":
		return "a duration such as 30s or 5m"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.Contains(t, "."):
		return "a mapping"
	}
	return "a " + t
}

// where prints a path: agents[0].tools, or "the top level".
func where(path []string) string {
	if len(path) == 0 {
		return "the top level"
	}
	var b strings.Builder
	for i, p := range path {
		if strings.HasPrefix(p, "[") || i == 0 {
			b.WriteString(p)
			continue
		}
		b.WriteString("." + p)
	}
	return b.String()
}

// keyPath finds the mapping holding key at line and returns its path.
func keyPath(n *yaml.Node, line int, key string, path []string) ([]string, bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p, ok := keyPath(c, line, key, path); ok {
				return p, true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Line == line && k.Value == key {
				return path, true
			}
			if p, ok := keyPath(v, line, key, append(append([]string{}, path...), k.Value)); ok {
				return p, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p, ok := keyPath(c, line, key, append(append([]string{}, path...), fmt.Sprintf("[%d]", i))); ok {
				return p, true
			}
		}
	}
	return nil, false
}

// valuePath finds the deepest value at line (with text value, when given)
// and returns its path.
func valuePath(n *yaml.Node, line int, value string, path []string) ([]string, bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p, ok := valuePath(c, line, value, path); ok {
				return p, true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			sub := append(append([]string{}, path...), k.Value)
			if p, ok := valuePath(v, line, value, sub); ok {
				return p, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p, ok := valuePath(c, line, value, append(append([]string{}, path...), fmt.Sprintf("[%d]", i))); ok {
				return p, true
			}
		}
	}
	if n.Kind != yaml.DocumentNode && n.Line == line && (value == "" && n.Kind != yaml.ScalarNode || value != "" && sameValue(n.Value, value)) {
		return path, true
	}
	return nil, false
}

// sameValue reports whether text is the value the YAML library quoted in
// an error: it cuts values longer than 10 bytes to their first 7 and "...".
func sameValue(text, quoted string) bool {
	if cut, ok := strings.CutSuffix(quoted, "..."); ok && len(text) > 10 {
		return strings.HasPrefix(text, cut)
	}
	return text == quoted
}
