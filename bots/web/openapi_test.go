package web

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"maps"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/compare"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/internal/doccheck"
)

// updateFlag rewrites the generated files this package checks instead of
// comparing them:
//
//	go test ./bots/web -run 'TestOpenAPI|TestReference|TestTour' -update
var updateFlag = flag.Bool("update", false, "rewrite openapi.json, docs/reference/http.md and testdata/*.golden.json")

// The OpenAPI document is generated here, in a test, from the route table
// and the Go types its entries name: the binary embeds the committed file
// and links none of this. JSON Schemas come from github.com/google/jsonschema-go
// (draft 2020-12, the dialect of OpenAPI 3.1), with what it cannot know
// added: the schemas of types that marshal themselves, one component per
// named struct, and the fields an embedded pointer makes optional.

// The objects of an OpenAPI 3.1 document this API uses.
type (
	oaDocument struct {
		OpenAPI    string                             `json:"openapi"`
		Info       oaInfo                             `json:"info"`
		Tags       []oaTag                            `json:"tags"`
		Paths      map[string]map[string]*oaOperation `json:"paths"`
		Components oaComponents                       `json:"components"`
	}
	oaInfo struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}
	oaTag struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	oaOperation struct {
		OperationID string                 `json:"operationId"`
		Summary     string                 `json:"summary"`
		Tags        []string               `json:"tags"`
		Parameters  []oaParameter          `json:"parameters,omitempty"`
		RequestBody *oaRequestBody         `json:"requestBody,omitempty"`
		Responses   map[string]*oaResponse `json:"responses"`
		Security    []map[string][]string  `json:"security"`
		Auth        string                 `json:"x-switchboard-auth"`
	}
	oaParameter struct {
		Name        string             `json:"name"`
		In          string             `json:"in"`
		Required    bool               `json:"required,omitempty"`
		Description string             `json:"description,omitempty"`
		Schema      *jsonschema.Schema `json:"schema"`
	}
	oaRequestBody struct {
		Required bool                   `json:"required"`
		Content  map[string]oaMediaType `json:"content"`
	}
	oaResponse struct {
		Description string                 `json:"description"`
		Content     map[string]oaMediaType `json:"content,omitempty"`
	}
	oaMediaType struct {
		Schema *jsonschema.Schema `json:"schema"`
	}
	oaComponents struct {
		Schemas         map[string]*jsonschema.Schema `json:"schemas"`
		SecuritySchemes map[string]oaSecurityScheme   `json:"securitySchemes"`
	}
	oaSecurityScheme struct {
		Type        string `json:"type"`
		Scheme      string `json:"scheme,omitempty"`
		In          string `json:"in,omitempty"`
		Name        string `json:"name,omitempty"`
		Description string `json:"description"`
	}
)

const apiDescription = `The HTTP API of Switchboard: conversations with agents, their log and live stream, approvals, runs, schedules, workspaces and credentials.

A request authenticates with "Authorization: Bearer <token>": the operator token (SWITCHBOARD_API_TOKEN), a person's personal access token, or an agent's session (exchanged from an agent key at POST /api/auth/token); or, from the web console, with its session cookie and the X-CSRF-Token header on unsafe requests. Without SWITCHBOARD_API_TOKEN the server answers direct loopback callers as the operator. A request that changes state sends Content-Type: application/json, even with an empty body. Every refusal or failure answers {"error": "..."}.

This document is generated from the server's route table and types; GET /api/openapi.json serves it without a credential.`

var apiTags = []oaTag{
	{"conversations", "Conversations: open, post, follow, fork, read the log"},
	{"history", "The history: list, search, rename, archive, file, export and import conversations"},
	{"approvals", "Calls waiting for a person, and standing grants"},
	{"runs", "Runs of plans, and the work graph"},
	{"artifacts", "What agents made in conversations"},
	{"schedules", "Routines, pulses, reminders and loops"},
	{"workspaces", "Workspaces, their members and agents, retention, forgetting a person"},
	{"auth", "Who the caller is, keys and tokens, the console's sign-in"},
	{"operator", "The operator's: audit, usage, pairing, personalities, skills, connections, comparing models"},
	{"meta", "This document"},
}

// scalarSchemas are the schemas of the types that marshal themselves.
var scalarSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[uuid.UUID]():       {Type: "string", Format: "uuid"},
	reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
	reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
	reflect.TypeFor[optionalID]():      {Types: []string{"null", "string"}, Format: "uuid"},
}

// uuidParams are the path parameters that are ids.
var uuidParams = []string{"id", "ws", "person", "folder", "artifact", "schedule"}

const (
	webPkg     = "github.com/switchboardhq/switchboard/bots/web"
	schemaRefs = "#/components/schemas/"
)

// schemas builds the components of the document.
type schemas struct {
	names      map[reflect.Type]string // each named struct's component
	types      map[string]reflect.Type
	docs       map[string]string // the doc comments of this package's types and fields: "Type" and "Type.Field"
	components map[string]*jsonschema.Schema
}

// componentName is the schema name of a named struct: its Go name without
// a JSON suffix, capitalised, after its package's name unless it is this
// package's (transcript.Doc is TranscriptDoc, mcpclient.Status
// MCPClientStatus).
func componentName(t reflect.Type) string {
	n := strings.TrimSuffix(t.Name(), "JSON")
	n = strings.ToUpper(n[:1]) + n[1:]
	if t.PkgPath() != webPkg {
		p := path.Base(t.PkgPath())
		if spelled, ok := packageNames[p]; ok {
			p = spelled
		}
		n = strings.ToUpper(p[:1]) + p[1:] + n
	}
	return n
}

// packageNames spells the packages whose names hold an acronym.
var packageNames = map[string]string{"mcpclient": "MCPClient"}

// collect names every named struct reachable from t.
func (s *schemas) collect(t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if scalarSchemas[t] != nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return s.collect(t.Elem())
	case reflect.Struct:
	default:
		return nil
	}
	if t.Name() != "" {
		if _, ok := s.names[t]; ok {
			return nil
		}
		n := componentName(t)
		if other, ok := s.types[n]; ok {
			return fmt.Errorf("types %s and %s would both be schema %s", other, t, n)
		}
		s.names[t], s.types[n] = n, t
	}
	for _, f := range reflect.VisibleFields(t) {
		if f.IsExported() || f.Anonymous {
			if err := s.collect(f.Type); err != nil {
				return err
			}
		}
	}
	return nil
}

// ref is the schema of a body of type t: a reference to its component.
func (s *schemas) ref(t reflect.Type) (*jsonschema.Schema, error) {
	if t == reflect.TypeFor[json.RawMessage]() {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	if n, ok := s.names[t]; ok {
		return &jsonschema.Schema{Ref: schemaRefs + n}, nil
	}
	return nil, fmt.Errorf("body type %s is not a named struct", t)
}

// component builds the schema of the named struct t, with references to
// the other components.
func (s *schemas) component(t reflect.Type) (*jsonschema.Schema, error) {
	known := map[reflect.Type]*jsonschema.Schema{}
	for st, sc := range scalarSchemas {
		known[st] = sc
	}
	// Embedded structs are flattened, not referred to: the library takes
	// an override of one as its properties.
	embedded := map[reflect.Type]bool{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous {
			embedded[f.Type] = true
		}
	}
	for ot, n := range s.names {
		if ot != t && !embedded[ot] {
			known[ot] = &jsonschema.Schema{Ref: schemaRefs + n}
		}
	}
	sc, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: known})
	if err != nil {
		return nil, err
	}
	// A field promoted from an embedded pointer is there only when the
	// pointer is set.
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() || !throughPointer(t, f.Index) {
			continue
		}
		name := jsonName(f)
		sc.Required = slices.DeleteFunc(sc.Required, func(r string) bool { return r == name })
	}
	if t.PkgPath() == webPkg {
		sc.Description = s.docs[t.Name()]
		for _, f := range reflect.VisibleFields(t) {
			if p := sc.Properties[jsonName(f)]; p != nil && p.Ref == "" && p.Description == "" {
				p.Description = s.docs[declaringType(t, f.Index)+"."+f.Name]
			}
		}
	}
	fixNullableRefs(sc)
	return sc, nil
}

// throughPointer reports whether the field at index is reached through an
// embedded pointer.
func throughPointer(t reflect.Type, index []int) bool {
	for i := 1; i < len(index); i++ {
		if f := t.FieldByIndex(index[:i]); f.Anonymous && f.Type.Kind() == reflect.Pointer {
			return true
		}
	}
	return false
}

// declaringType names the struct that declares the field at index.
func declaringType(t reflect.Type, index []int) string {
	for _, i := range index[:len(index)-1] {
		t = t.Field(i).Type
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	return t.Name()
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// fixNullableRefs turns {"$ref": X, "type": ["null"]}, what the library
// makes of a pointer to a component, into {"anyOf": [{"$ref": X}, {"type": "null"}]}.
func fixNullableRefs(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Ref != "" && slices.Equal(s.Types, []string{"null"}) {
		*s = jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Ref: s.Ref}, {Type: "null"}}, Description: s.Description}
		return
	}
	for _, p := range s.Properties {
		fixNullableRefs(p)
	}
	fixNullableRefs(s.Items)
	fixNullableRefs(s.AdditionalProperties)
	for _, x := range slices.Concat(s.AnyOf, s.OneOf, s.AllOf) {
		fixNullableRefs(x)
	}
}

// packageDocs reads the doc comments of this package's types and their
// fields: the first paragraph, on one line.
func packageDocs() (map[string]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		return nil, err
	}
	var parsed []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, f)
	}
	p, err := doc.NewFromFiles(fset, parsed, webPkg, doc.AllDecls)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	oneLine := func(s string) string {
		first, _, _ := strings.Cut(strings.TrimSpace(s), "\n\n")
		return strings.Join(strings.Fields(first), " ")
	}
	for _, t := range p.Types {
		// "ConversationJSON is a conversation ..." reads "A conversation ...".
		d := oneLine(t.Doc)
		if rest, ok := strings.CutPrefix(d, t.Name+" is "); ok && rest != "" {
			d = strings.ToUpper(rest[:1]) + rest[1:]
		}
		out[t.Name] = d
		for field, text := range doccheck.FieldDocs(t.Decl) {
			out[t.Name+"."+field] = oneLine(text)
		}
	}
	return out, nil
}

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// openAPIDocument builds the document of the route table.
func openAPIDocument() (*oaDocument, error) {
	docs, err := packageDocs()
	if err != nil {
		return nil, err
	}
	s := &schemas{names: map[reflect.Type]string{}, types: map[string]reflect.Type{}, docs: docs, components: map[string]*jsonschema.Schema{}}
	for _, rt := range routes {
		for _, v := range []any{rt.Body, rt.Answer, rt.Lines} {
			if v != nil {
				if err := s.collect(reflect.TypeOf(v)); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := s.collect(reflect.TypeFor[ErrorJSON]()); err != nil {
		return nil, err
	}
	d := &oaDocument{
		OpenAPI: "3.1.0",
		Info:    oaInfo{Title: "Switchboard HTTP API", Version: "1", Description: apiDescription},
		Tags:    apiTags,
		Paths:   map[string]map[string]*oaOperation{},
		Components: oaComponents{
			Schemas: map[string]*jsonschema.Schema{},
			SecuritySchemes: map[string]oaSecurityScheme{
				"bearer":  {Type: "http", Scheme: "bearer", Description: "The operator token, a personal access token, an agent's session, or (POST /api/auth/token only) an agent key or host token"},
				"session": {Type: "apiKey", In: "cookie", Name: SessionCookie, Description: "The web console's session; an unsafe request also sends X-CSRF-Token from GET /api/session"},
			},
		},
	}
	for n, t := range s.types {
		sc, err := s.component(t)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", n, err)
		}
		d.Components.Schemas[n] = sc
	}
	errRef, _ := s.ref(reflect.TypeFor[ErrorJSON]())
	for i := range routes {
		rt := &routes[i]
		op, err := operation(s, rt, errRef)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rt.Pattern(), err)
		}
		if d.Paths[rt.Path] == nil {
			d.Paths[rt.Path] = map[string]*oaOperation{}
		}
		d.Paths[rt.Path][strings.ToLower(rt.Method)] = op
	}
	pruneComponents(d)
	return d, nil
}

// operation is a route's operation.
func operation(s *schemas, rt *Route, errRef *jsonschema.Schema) (*oaOperation, error) {
	op := &oaOperation{
		OperationID: rt.ID, Summary: rt.Summary, Tags: []string{rt.Tag}, Auth: rt.Auth.String(),
		Responses: map[string]*oaResponse{"default": {Description: "Refused or failed", Content: map[string]oaMediaType{"application/json": {Schema: errRef}}}},
		Security:  []map[string][]string{},
	}
	switch rt.Auth {
	case AuthAPI, AuthOperator:
		op.Security = []map[string][]string{{"bearer": {}}, {"session": {}}}
	case AuthExchange:
		op.Security = []map[string][]string{{"bearer": {}}}
	}
	for _, m := range pathParamRE.FindAllStringSubmatch(rt.Path, -1) {
		sc := &jsonschema.Schema{Type: "string"}
		switch {
		case slices.Contains(uuidParams, m[1]):
			sc.Format = "uuid"
		case m[1] == "n":
			sc.Type = "integer"
		}
		op.Parameters = append(op.Parameters, oaParameter{Name: m[1], In: "path", Required: true, Schema: sc})
	}
	for _, p := range rt.Query {
		sc := &jsonschema.Schema{Type: cmp(p.Type, "string")}
		for _, e := range p.Enum {
			sc.Enum = append(sc.Enum, e)
		}
		op.Parameters = append(op.Parameters, oaParameter{Name: p.Name, In: cmp(p.In, "query"), Required: p.Required, Description: p.Doc, Schema: sc})
	}
	if rt.Body != nil || len(rt.BodyMedia) > 0 {
		op.RequestBody = &oaRequestBody{Required: !rt.BodyOptional, Content: map[string]oaMediaType{}}
		if rt.Body != nil {
			sc, err := s.ref(reflect.TypeOf(rt.Body))
			if err != nil {
				return nil, err
			}
			op.RequestBody.Content["application/json"] = oaMediaType{Schema: sc}
		}
		for _, m := range rt.BodyMedia {
			op.RequestBody.Content[m] = oaMediaType{Schema: &jsonschema.Schema{Type: "string", ContentMediaType: m}}
		}
	}
	ok := &oaResponse{Description: http.StatusText(rt.Status)}
	if rt.Answer != nil || rt.Text != "" {
		ok.Content = map[string]oaMediaType{}
	}
	if rt.Answer != nil {
		sc, err := s.ref(reflect.TypeOf(rt.Answer))
		if err != nil {
			return nil, err
		}
		ok.Content["application/json"] = oaMediaType{Schema: sc}
	}
	switch {
	case rt.Lines != nil:
		// JSON lines: the schema of each line.
		sc, err := s.ref(reflect.TypeOf(rt.Lines))
		if err != nil {
			return nil, err
		}
		ok.Content[rt.Text] = oaMediaType{Schema: sc}
	case rt.Text != "":
		ok.Content[rt.Text] = oaMediaType{Schema: &jsonschema.Schema{Type: "string"}}
	}
	op.Responses[strconv.Itoa(rt.Status)] = ok
	return op, nil
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pruneComponents drops the components nothing refers to (the structs
// that are only ever embedded).
func pruneComponents(d *oaDocument) {
	for {
		b, err := json.Marshal(d)
		if err != nil {
			return
		}
		dropped := false
		for n := range d.Components.Schemas {
			if !bytes.Contains(b, []byte(`"`+schemaRefs+n+`"`)) {
				delete(d.Components.Schemas, n)
				dropped = true
			}
		}
		if !dropped {
			return
		}
	}
}

// mustDocument is openAPIDocument, failing the test on an error.
func mustDocument(t *testing.T) *oaDocument {
	t.Helper()
	d, err := openAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// indentJSON is v as the generated files hold JSON: indented by two
// spaces, <, > and & as they are, with a final newline.
func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkGenerated compares a generated file with the committed one (writes
// it with -update).
func checkGenerated(t *testing.T, file string, got []byte, how string) {
	t.Helper()
	if *updateFlag {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		line := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end of file)"
		}
		t.Errorf("%s is stale: regenerate it with\n\t%s\nfirst difference at line %d:\n\tcommitted: %s\n\tgenerated: %s", file, how, i+1, line(w), line(g))
	}
}

// TestOpenAPI: the committed openapi.json is the document of the route
// table and its types as they are.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	checkGenerated(t, "openapi.json", indentJSON(t, mustDocument(t)), "go test ./bots/web -run TestOpenAPI -update")
}

// recordingMux records the patterns registered on it.
type recordingMux struct{ patterns []string }

func (m *recordingMux) Handle(pattern string, _ http.Handler) {
	m.patterns = append(m.patterns, pattern)
}

// TestRoutesMatchTheDocument: an API with every option registers exactly
// the operations of the committed document (and the CORS preflight).
func TestRoutesMatchTheDocument(t *testing.T) {
	t.Parallel()
	var d oaDocument
	if err := json.Unmarshal(openapiJSON, &d); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for p, ops := range d.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	// Every part the server may have is there (none is called).
	opts := Options{
		Grants: (*core.Service)(nil), SignIn: &SignIn{}, Schedules: struct{ Schedules }{}, Rulebooks: struct{ Rulebooks }{},
		Skills: struct{ Skills }{}, Pairings: struct{ Pairings }{}, Personalities: struct{ Personalities }{},
		Connections: struct{ Connections }{}, Compare: func(context.Context, *CompareRequest) ([]compare.Result, error) { return nil, nil },
		MCPStatus: func() []mcpclient.Status { return nil }, ConfigStatus: func() config.ReloadStatus { return config.ReloadStatus{} },
		Sessions: (*core.Service)(nil),
		Bridges:  struct{ Bridges }{},
		Voice:    struct{ Voice }{},
	}
	a := &API{opts: opts}
	mux := &recordingMux{}
	a.Routes(mux)
	registered := slices.DeleteFunc(mux.patterns, func(p string) bool { return p == "OPTIONS /api/" })
	slices.Sort(registered)
	slices.Sort(documented)
	if !slices.Equal(registered, documented) {
		t.Errorf("registered routes %v\ndocumented operations %v\nwant the same", registered, documented)
	}
}

// httpReference renders docs/reference/http.md from the document: the
// routes by tag, then every schema with its fields.
func httpReference(t *testing.T) []byte {
	t.Helper()
	d := mustDocument(t)
	var b strings.Builder
	b.WriteString("# HTTP routes\n\n")
	b.WriteString("<!-- Generated from bots/web's route table by `go test ./bots/web -run TestReference -update`; do not edit. -->\n\n")
	b.WriteString("Every route of the HTTP API (see [The HTTP API](../api.md) for how to call\n" +
		"it), generated from the same table as the OpenAPI 3.1 document the server\n" +
		"serves at `GET /api/openapi.json` (committed as\n" +
		"[`bots/web/openapi.json`](../../bots/web/openapi.json)). Auth is who may\n" +
		"call it: *any principal* (the operator, a person's token or console session,\n" +
		"an agent's session; the route narrows what each sees), the *operator* only,\n" +
		"or *none*. A body or answer links to its schema below; every refusal or\n" +
		"failure answers [Error](#error).\n\n" +
		"Not here: what the server mounts besides this API: `/healthz`, `/readyz`,\n" +
		"[`/metrics`](metrics.md), `/mcp` ([MCP](../mcp.md)), the platforms'\n" +
		"webhooks, the connections' OAuth flow and the console's pages.\n")
	link := func(s *jsonschema.Schema) string {
		if s == nil {
			return ""
		}
		if n, ok := strings.CutPrefix(s.Ref, schemaRefs); ok {
			return "[" + n + "](#" + strings.ToLower(n) + ")"
		}
		return "JSON"
	}
	for _, tag := range apiTags {
		fmt.Fprintf(&b, "\n## %s\n\n%s.\n\n| route | what | auth | body | answer |\n| --- | --- | --- | --- | --- |\n", tag.Name, tag.Description)
		for i := range routes {
			rt := &routes[i]
			if rt.Tag != tag.Name {
				continue
			}
			op := d.Paths[rt.Path][strings.ToLower(rt.Method)]
			var body []string
			if op.RequestBody != nil {
				for _, m := range slices.Sorted(maps.Keys(op.RequestBody.Content)) {
					if m == "application/json" {
						body = append(body, link(op.RequestBody.Content[m].Schema))
					} else {
						body = append(body, "`"+m+"`")
					}
				}
				if !op.RequestBody.Required {
					body = append(body, "(optional)")
				}
			}
			answer := []string{strconv.Itoa(rt.Status)}
			res := op.Responses[strconv.Itoa(rt.Status)]
			for _, m := range slices.Sorted(maps.Keys(res.Content)) {
				if m == "application/json" {
					answer = append(answer, link(res.Content[m].Schema))
				} else {
					answer = append(answer, "`"+m+"`")
				}
			}
			route := "`" + rt.Method + " " + rt.Path + "`"
			var query []string
			for _, p := range rt.Query {
				if p.In == "" {
					query = append(query, p.Name)
				}
			}
			if len(query) > 0 {
				route += " `?" + strings.Join(query, "&") + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", route, mdCell(rt.Summary), rt.Auth, strings.Join(body, " "), strings.Join(answer, " "))
		}
	}
	b.WriteString("\n## Schemas\n")
	for _, n := range slices.Sorted(maps.Keys(d.Components.Schemas)) {
		sc := d.Components.Schemas[n]
		fmt.Fprintf(&b, "\n### %s\n\n", n)
		if sc.Description != "" {
			b.WriteString(mdCell(sc.Description) + "\n\n")
		}
		if len(sc.Properties) == 0 {
			b.WriteString("No fields: `{}`.\n")
			continue
		}
		b.WriteString("| field | type | required | about |\n| --- | --- | --- | --- |\n")
		order := sc.PropertyOrder
		if len(order) == 0 {
			order = slices.Sorted(maps.Keys(sc.Properties))
		}
		for _, f := range order {
			p := sc.Properties[f]
			req := ""
			if slices.Contains(sc.Required, f) {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f, schemaType(p), req, mdCell(p.Description))
		}
	}
	return []byte(b.String())
}

// schemaType says what a property holds, linking a component.
func schemaType(s *jsonschema.Schema) string {
	if n, ok := strings.CutPrefix(s.Ref, schemaRefs); ok {
		return "[" + n + "](#" + strings.ToLower(n) + ")"
	}
	if len(s.AnyOf) > 0 {
		var parts []string
		for _, x := range s.AnyOf {
			parts = append(parts, schemaType(x))
		}
		return strings.Join(parts, " or ")
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	var parts []string
	nullable := false
	for _, ty := range types {
		switch ty {
		case "null":
			nullable = true
		case "array":
			parts = append(parts, "array of "+schemaType(s.Items))
		case "object":
			if s.AdditionalProperties != nil && len(s.Properties) == 0 {
				parts = append(parts, "object of "+schemaType(s.AdditionalProperties))
			} else {
				parts = append(parts, "object")
			}
		default:
			if s.Format != "" {
				ty += " (" + s.Format + ")"
			}
			parts = append(parts, ty)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "any")
	}
	out := strings.Join(parts, ", ")
	if nullable {
		out += " or null"
	}
	return out
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// TestReferenceHTTP: docs/reference/http.md is the reference of the route
// table and its types as they are.
func TestReferenceHTTP(t *testing.T) {
	t.Parallel()
	checkGenerated(t, filepath.Join("..", "..", "docs", "reference", "http.md"), httpReference(t), "go test ./bots/web -run TestReference -update")
}
