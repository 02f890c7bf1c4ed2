// Package skill reads skills in the open Agent Skills format: a folder with a
// SKILL.md (YAML front matter, then the instructions) and optional resource
// files. It parses and validates them, imports them from a folder, a .zip or
// .tar.gz archive or an HTTPS URL, decides which skills an agent is offered
// in a context (layering and activation), renders the compact index for the
// prompt and provides the load_skill and read_skill_file tools.
//
// Example SKILL.md:
//
//	---
//	name: meeting-notes
//	description: Turn a meeting transcript into decisions, owners and dates.
//	allowed-tools: [remind]
//	requires-tools: [calendar_*]
//	contexts: [slack, discord]
//	---
//	# Meeting notes
//	1. ...
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/switchboardhq/switchboard/core/tool"
)

// FileName is the file every skill folder holds.
const FileName = "SKILL.md"

// Limits of the format (from the Agent Skills specification).
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
)

// namePattern: lowercase letters, digits and single hyphens, not at either end.
var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Skill is one parsed skill.
type Skill struct {
	Name        string
	Description string
	// AllowedTools are the tools the skill uses; assigning the skill to an
	// agent grants them.
	AllowedTools []string
	// RequiresTools are glob patterns (path.Match syntax, e.g. calendar_*):
	// the skill is offered only to an agent with a tool matching each.
	RequiresTools []string
	// Contexts, when not empty, are the only contexts the skill is offered in.
	Contexts []tool.ContextName
	// FrontMatter is the YAML front matter as written, fields this package
	// does not read included.
	FrontMatter []byte
	// Instructions is the body of SKILL.md after the front matter.
	Instructions string
	// Files are the resource files by slash-separated path relative to the
	// skill folder; SKILL.md is not among them.
	Files map[string][]byte
}

// frontMatter is the part of the front matter this package reads.
type frontMatter struct {
	Name          string    `yaml:"name"`
	Description   string    `yaml:"description"`
	AllowedTools  stringSet `yaml:"allowed-tools"`
	RequiresTools stringSet `yaml:"requires-tools"`
	Contexts      stringSet `yaml:"contexts"`
}

// stringSet accepts a YAML list or, as the specification writes
// allowed-tools, one space-separated string.
type stringSet []string

func (s *stringSet) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*s = strings.Fields(n.Value)
		return nil
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		*s = l
		return nil
	}
	return fmt.Errorf("line %d: want a list or a space-separated string", n.Line)
}

// ErrInvalid marks every error about what a skill or an import holds (as
// opposed to an error reading or storing it).
var ErrInvalid = errors.New("invalid skill")

// FieldError is a problem with one field of one file.
type FieldError struct {
	File  string // the file, as the caller named it
	Field string // the front matter field, "" for the file as a whole
	Msg   string
}

// Is makes a FieldError an ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
}

// Parse reads a SKILL.md. file names it in error messages (a path or an
// archive member). The front matter is between two lines of "---" at the
// start of the file.
func Parse(file string, data []byte) (*Skill, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, &FieldError{File: file, Msg: "no front matter: the file must start with a line \"---\""}
	}
	fm, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		if fm2, found := strings.CutSuffix(rest, "\n---"); found {
			fm, body, ok = fm2, "", true
		}
	}
	if !ok {
		return nil, &FieldError{File: file, Msg: "the front matter is not closed by a line \"---\""}
	}
	var m frontMatter
	dec := yaml.NewDecoder(bytes.NewReader([]byte(fm)))
	if err := dec.Decode(&m); err != nil {
		return nil, &FieldError{File: file, Msg: "front matter is not valid YAML: " + err.Error()}
	}
	s := &Skill{
		Name: m.Name, Description: strings.TrimSpace(m.Description),
		AllowedTools: m.AllowedTools, RequiresTools: m.RequiresTools,
		FrontMatter:  []byte(fm),
		Instructions: strings.TrimSpace(body),
	}
	for _, c := range m.Contexts {
		s.Contexts = append(s.Contexts, tool.ContextName(c))
	}
	if err := s.validate(file); err != nil {
		return nil, err
	}
	return s, nil
}

// Validate checks a skill's fields; file names it in the errors.
func (s *Skill) Validate(file string) error { return s.validate(file) }

func (s *Skill) validate(file string) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{File: file, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case s.Name == "":
		bad("name", "missing")
	case len(s.Name) > MaxNameLen:
		bad("name", "%d characters, at most %d", len(s.Name), MaxNameLen)
	case !namePattern.MatchString(s.Name):
		bad("name", "%q: use lowercase letters, digits and single hyphens, not at the start or end", s.Name)
	}
	switch {
	case s.Description == "":
		bad("description", "missing: say in one line what the skill does and when to use it")
	case len(s.Description) > MaxDescriptionLen:
		bad("description", "%d characters, at most %d", len(s.Description), MaxDescriptionLen)
	}
	for _, t := range s.AllowedTools {
		if t == "" || strings.ContainsAny(t, "*?[") {
			bad("allowed-tools", "%q is not a tool name (patterns belong in requires-tools)", t)
		}
	}
	for _, p := range s.RequiresTools {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			bad("requires-tools", "%q is not a valid pattern", p)
		}
	}
	for _, c := range s.Contexts {
		if !slices.Contains(tool.Contexts(), c) {
			bad("contexts", "%q is not a context (one of %v)", c, tool.Contexts())
		}
	}
	if s.Instructions == "" {
		bad("", "no instructions after the front matter")
	}
	for p := range s.Files {
		if err := CheckPath(p); err != nil {
			bad("", "resource %q: %v", p, err)
		}
	}
	return errors.Join(errs...)
}

// Markdown renders the skill's SKILL.md back from its front matter and
// instructions.
func (s *Skill) Markdown() []byte {
	fm := strings.TrimRight(string(s.FrontMatter), "\n")
	return []byte("---\n" + fm + "\n---\n" + s.Instructions + "\n")
}

// CheckPath reports whether p may name a file inside a skill: a relative,
// slash-separated, clean path that does not climb out.
func CheckPath(p string) error {
	switch {
	case p == "" || p == ".":
		return errors.New("empty path")
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || (len(p) > 1 && p[1] == ':'):
		return errors.New("an absolute path is refused; name a file inside the skill")
	case slices.Contains(strings.Split(p, "/"), ".."):
		return errors.New("\"..\" is refused; name a file inside the skill")
	case path.Clean(p) != p:
		return fmt.Errorf("not a clean path (write %q)", path.Clean(p))
	}
	return nil
}

// FileNames lists the resource files in path order.
func (s *Skill) FileNames() []string {
	out := make([]string, 0, len(s.Files))
	for p := range s.Files {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
