package main

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	discordbot "github.com/switchboardhq/switchboard/bots/discord"
	slackbot "github.com/switchboardhq/switchboard/bots/slack"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/memory"
	"github.com/switchboardhq/switchboard/internal/doccheck"
	"github.com/switchboardhq/switchboard/scheduler"
	"github.com/switchboardhq/switchboard/store"
)

// configField is one setting of switchboard.yaml as the reference shows it.
type configField struct {
	path    string       // agents[].answers.channels
	typ     reflect.Type // the field's type
	def     string       // its default tag, as written
	goType  reflect.Type // the struct that declares it
	goField string       // the Go field, whose doc comment says what it does
	section string       // the top-level key it is under
}

// configFields walks t (a struct) along its yaml tags, depth first, in
// declaration order: every field a file may set, with the path it has in
// the file. Types on the way down (seen) are not entered again.
func configFields(t reflect.Type, prefix, section string, seen []reflect.Type) []configField {
	var out []configField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if slices.Contains(strings.Split(opts, ","), "inline") {
			out = append(out, configFields(ft, prefix, section, seen)...)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // as yaml.v3 does
		}
		path := prefix + name
		sec := section
		if sec == "" {
			sec = name
		}
		out = append(out, configField{
			path: path, typ: ft, def: f.Tag.Get("default"),
			goType: t, goField: f.Name, section: sec,
		})
		if slices.Contains(seen, ft) {
			continue
		}
		below := append(seen[:len(seen):len(seen)], ft)
		switch {
		case leaf(ft):
		case ft.Kind() == reflect.Struct:
			out = append(out, configFields(ft, path+".", sec, below)...)
		case ft.Kind() == reflect.Slice && !leaf(ft.Elem()):
			out = append(out, configFields(ft.Elem(), path+"[].", sec, below)...)
		case ft.Kind() == reflect.Map && !leaf(ft.Elem()):
			out = append(out, configFields(ft.Elem(), path+"."+mapKey(ft)+".", sec, below)...)
		}
	}
	return out
}

var durationType = reflect.TypeFor[time.Duration]()

// typeNamer is a field type that says how the reference names it (one
// read from YAML in a way of its own).
type typeNamer interface{ YAMLType() string }

// leaf reports whether the reference shows t as one value, not as the
// fields within it.
func leaf(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(reflect.TypeFor[typeNamer]()) || t == durationType {
		return true
	}
	switch t.Kind() {
	case reflect.Struct:
		return false
	case reflect.Slice, reflect.Map:
		return leaf(t.Elem())
	}
	return true
}

// mapKey is the placeholder of a mapping's keys in a path: <risk> for a
// named key type, else <id>.
func mapKey(t reflect.Type) string {
	if t.Key().Name() != "string" {
		return "<" + strings.ToLower(t.Key().Name()) + ">"
	}
	return "<id>"
}

// yamlType says what a field of type t holds, in the file's words, with
// the values a named text type takes (the constants declared with it).
func (d goDocs) yamlType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n, ok := reflect.Zero(t).Interface().(typeNamer); ok {
		return n.YAMLType()
	}
	if t == durationType {
		return "duration"
	}
	switch t.Kind() {
	case reflect.String:
		if vals := d.values[t.PkgPath()][t.Name()]; len(vals) > 0 {
			return "one of " + strings.Join(quoteAll(vals), ", ")
		}
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		if !leaf(t.Elem()) {
			return "list of mappings"
		}
		return "list of " + d.yamlType(t.Elem())
	case reflect.Map:
		key := ""
		if vals := d.values[t.Key().PkgPath()][t.Key().Name()]; len(vals) > 0 {
			key = " from " + strings.Join(quoteAll(vals), ", ")
		}
		switch {
		case t.Elem().Kind() == reflect.Interface:
			return "mapping"
		case !leaf(t.Elem()):
			return "mapping" + key + " to mappings"
		}
		return "mapping" + key + " to " + d.yamlType(t.Elem())
	}
	return "mapping"
}

// goDocs are the doc comments of a set of packages: by package path, type
// name and field name; and the string constants of each named type.
type goDocs struct {
	fields map[string]map[string]map[string]string
	values map[string]map[string][]string
}

// readGoDocs parses the Go source of the packages the fields are declared
// in (found with go list) for their doc comments.
func readGoDocs(t *testing.T, fields []configField) goDocs {
	t.Helper()
	// The packages declaring the structs, and the named types of values
	// and keys (whose constants are the values they take).
	var pkgs []string
	add := func(t reflect.Type) {
		if p := t.PkgPath(); p != "" && !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	for _, f := range fields {
		add(f.goType)
		for t := f.typ; ; t = t.Elem() {
			if t.Kind() == reflect.Map {
				add(t.Key())
			}
			if k := t.Kind(); k != reflect.Pointer && k != reflect.Slice && k != reflect.Map {
				add(t)
				break
			}
		}
	}
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(pkgs, " "), err)
	}
	d := goDocs{fields: map[string]map[string]map[string]string{}, values: map[string]map[string][]string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, dir, _ := strings.Cut(line, " ")
		fset := token.NewFileSet()
		var files []*ast.File
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatalf("parsing %s: %v", name, err)
			}
			files = append(files, f)
		}
		p, err := doc.NewFromFiles(fset, files, pkg, doc.PreserveAST)
		if err != nil {
			t.Fatalf("reading the docs of %s: %v", pkg, err)
		}
		d.fields[pkg], d.values[pkg] = map[string]map[string]string{}, map[string][]string{}
		for _, ty := range p.Types {
			d.fields[pkg][ty.Name] = doccheck.FieldDocs(ty.Decl)
			d.values[pkg][ty.Name] = constValues(ty.Consts)
		}
	}
	return d
}

// constValues are the string values of a type's constants.
func constValues(consts []*doc.Value) []string {
	var out []string
	for _, c := range consts {
		for _, spec := range c.Decl.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					out = append(out, s)
				}
			}
		}
	}
	return out
}

var (
	seeGo    = regexp.MustCompile(`\s*\(see [^)]*\)`)
	spaces   = regexp.MustCompile(`\s+`)
	goIdent  = regexp.MustCompile(`\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b`)
	mdEscape = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;")
)

// describe turns a field's doc comment into a cell of the table, in the
// file's words: the Go names of the struct's fields become their YAML
// keys, and pointers into the Go source ("(see Runs)") are left out.
func describe(text string, f configField) string {
	keys := map[string]string{}
	for i := range f.goType.NumField() {
		sf := f.goType.Field(i)
		if name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ","); name != "" && name != "-" {
			keys[sf.Name] = name
		}
	}
	text = seeGo.ReplaceAllString(spaces.ReplaceAllString(strings.TrimSpace(text), " "), "")
	text = mdEscape.Replace(text)
	// "Tools lists the tools": the leading name is the field's own.
	if rest, ok := strings.CutPrefix(text, f.goField); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':' || rest[0] == ',') {
		text = "`" + keys[f.goField] + "`" + rest
	}
	return goIdent.ReplaceAllStringFunc(text, func(id string) string {
		if k, ok := keys[id]; ok {
			return "`" + k + "`"
		}
		return id
	})
}

// configReference renders docs/reference/config.md: every field of
// switchboard.yaml, walked by reflection from config.Config along the
// yaml tags, with its type, its default (the field's default tag) and
// what it does (its doc comment in the Go source). Fields without a doc
// comment fail the test.
func configReference(t *testing.T) string {
	t.Helper()
	fields := configFields(reflect.TypeFor[config.Config](), "", "", nil)
	docs := readGoDocs(t, fields)
	var b strings.Builder
	b.WriteString("# `switchboard.yaml`\n\n")
	b.WriteString("<!-- Generated from core/config.Config and its fields' doc comments by `go test ./cmd/switchboard -run TestReference -update`; do not edit. -->\n\n")
	b.WriteString(configIntro + "\n\n")
	var sections []string
	for _, f := range fields {
		if f.path == f.section {
			sections = append(sections, "[`"+f.section+"`](#"+slug(f.section)+")")
		}
	}
	b.WriteString("Sections: " + strings.Join(sections, " · ") + ".\n")
	var undocumented []string
	for _, f := range fields {
		text := docs.fields[f.goType.PkgPath()][f.goType.Name()][f.goField]
		if goName := f.goType.PkgPath() + "." + f.goType.Name() + "." + f.goField; strings.TrimSpace(text) == "" && !slices.Contains(undocumented, goName) {
			undocumented = append(undocumented, goName)
		}
		what := describe(text, f)
		if f.path == f.section {
			b.WriteString("\n## `" + f.section + "`\n\n" + what + "\n")
			if leaf(f.typ) {
				b.WriteString("\n" + "Type: " + docs.yamlType(f.typ) + defaultText(f) + ".\n")
			} else {
				b.WriteString("\n| field | type | default | what |\n| --- | --- | --- | --- |\n")
			}
			continue
		}
		def := ""
		if f.def != "" {
			def = "`" + f.def + "`"
		}
		b.WriteString("| `" + f.path + "` | " + docs.yamlType(f.typ) + " | " + def + " | " + what + " |\n")
	}
	if len(undocumented) > 0 {
		t.Errorf("fields of switchboard.yaml without a doc comment (write one: it is their reference):\n\t%s", strings.Join(undocumented, "\n\t"))
	}
	return b.String()
}

func defaultText(f configField) string {
	if f.def == "" {
		return ""
	}
	return "; default `" + f.def + "`"
}

func quoteAll(vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "`" + v + "`"
	}
	return out
}

const configIntro = "Every setting of `switchboard.yaml` (the file `SWITCHBOARD_CONFIG` names), by its path in the\n" +
	"file: `agents[].name` is `name` in an item of the `agents` list, and `workspaces.<id>.policy` is `policy`\n" +
	"under a key of your choosing (here a workspace id). Every field is optional unless its text says\n" +
	"otherwise. The service reads the file once, at start and on each reload; an unknown field, a key given\n" +
	"twice or a value of the wrong type is an error naming the line and the path, and a value out of range\n" +
	"one naming the path. A `duration` is written as `90s`, `5m` or `1h30m`. What the settings are for:\n" +
	"[agents](../agents.md), [scheduled work](../scheduling.md), [agents together](../teams.md),\n" +
	"[access](../access.md), [Slack](../slack.md), [Discord](../discord.md)."

func TestReferenceConfig(t *testing.T) {
	t.Parallel()
	page, err := filepath.Abs(filepath.Join("..", "..", "docs", "reference", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, page, configReference(t))
}

// TestReferenceConfigDefaults: where the code keeps a default as a
// constant, the default the reference shows (the field's default tag) is
// that constant, so the page cannot drift from what the service does.
func TestReferenceConfigDefaults(t *testing.T) {
	t.Parallel()
	d, itoa := config.ShortDuration, strconv.Itoa
	ftoa := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	inCode := map[string]string{
		"agents[].max_tokens":              itoa(config.DefaultMaxTokens),
		"agents[].step_budget":             itoa(config.DefaultStepBudget),
		"agents[].family":                  config.DefaultFamily,
		"agents[].personality.min_ratio":   ftoa(config.DefaultPersonalityMinRatio),
		"agents[].personality.min_chars":   itoa(config.DefaultPersonalityMinChars),
		"context.summarize_at":             itoa(config.DefaultSummarizeAt),
		"approvals.deciders":               config.DecidersStarter,
		"approvals.expiry":                 d(config.DefaultApprovalExpiry),
		"access.dm_policy":                 string(config.DMPairing),
		"side_threads.abandon_after":       d(config.DefaultAbandonAfter),
		"loop.max_agent_messages_group":    itoa(config.DefaultMaxAgentMessagesGroup),
		"loop.max_agent_messages_direct":   itoa(config.DefaultMaxAgentMessagesDirect),
		"schedules.routines[].missed":      string(store.MissedRunOnce),
		"schedules.loops[].max_iterations": itoa(scheduler.DefaultLoopMaxIterations),
		"schedules.loops[].token_budget":   itoa(scheduler.DefaultLoopTokenBudget),
		"memory.budget":                    d(memory.DefaultBudget),
		"memory.decay.every":               d(memory.DefaultDecayEvery),
		"memory.decay.half_life":           d(memory.DefaultHalfLife),
		"memory.decay.archive_below":       ftoa(memory.DefaultArchiveBelow),
		"memory.consolidate.every":         d(memory.DefaultConsolidateEvery),
		"slack.files.max_bytes":            itoa(slackbot.DefaultFileMaxBytes),
		"slack.files.max_count":            itoa(slackbot.DefaultFileMaxCount),
		"discord.cards":                    discordbot.CardsComponentsV2,
	}
	w := reflect.ValueOf(config.DefaultDelegationWeights)
	for i := range w.NumField() {
		name, _, _ := strings.Cut(w.Type().Field(i).Tag.Get("yaml"), ",")
		inCode["delegation.weights."+name] = ftoa(w.Field(i).Float())
	}
	shown := map[string]string{}
	for _, f := range configFields(reflect.TypeFor[config.Config](), "", "", nil) {
		shown[f.path] = f.def
	}
	for path, want := range inCode {
		got, ok := shown[path]
		switch {
		case !ok:
			t.Errorf("%s is not a field of switchboard.yaml any more: drop it from this table", path)
		case got != want:
			t.Errorf("%s: the reference shows the default %q, the code has %q: fix the field's default tag", path, got, want)
		}
	}
}
