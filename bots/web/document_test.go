package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/switchboardhq/switchboard/bots/web"
)

// The committed OpenAPI document, checked by a validator of its own
// (kin-openapi, which reads OpenAPI 3.1 and validates its schemas as JSON
// Schema 2020-12), and the tour's exchanges checked against it.

var registerDecoders sync.Once

// loadDocument loads and validates the committed document.
func loadDocument(t *testing.T) *openapi3.T {
	t.Helper()
	registerDecoders.Do(func() {
		// Answers that are text: the validator reads them as strings.
		for _, ct := range []string{"text/markdown", "text/event-stream"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
		}
		for _, ct := range []string{"application/zip", "application/gzip"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
		}
	})
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(web.OpenAPIJSON)
	if err != nil {
		t.Fatalf("loading openapi.json: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() || doc.IsOpenAPI32OrLater() {
		t.Fatalf("openapi.json is OpenAPI %s; want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI 3.1 document: %v", err)
	}
	return doc
}

// TestOpenAPIDocumentIsValid: the committed document is valid OpenAPI 3.1.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	loadDocument(t)
}

// checkExchanges validates every exchange of the tour, request and answer,
// against the document: a success must have the documented status and
// body, a refusal the error body. It returns the operations exercised.
func checkExchanges(t *testing.T, doc *openapi3.T, exchanges []*exchange) map[string]bool {
	t.Helper()
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}
	covered := map[string]bool{}
	for _, ex := range exchanges {
		req, err := http.NewRequestWithContext(ctx, ex.Method, "http://switchboard.test"+ex.Path, bytes.NewReader(ex.Body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = ex.Header.Clone()
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Errorf("%s: %s %s is not in the document: %v", ex.Name, ex.Method, ex.Path, err)
			continue
		}
		op := route.Method + " " + route.Path
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		if ex.Status < 400 {
			covered[op] = true
			if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
				t.Errorf("%s: the request %s %s %s differs from the document: %v", ex.Name, ex.Method, ex.Path, ex.Body, err)
			}
			if documentedStatus(route) != ex.Status {
				t.Errorf("%s: %s answered %d; the document says %d", ex.Name, op, ex.Status, documentedStatus(route))
			}
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: ex.Status, Header: ex.Answer, Options: opts}
		out.SetBodyBytes(ex.Result)
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			t.Errorf("%s: the answer of %s %s (%d) differs from the document: %v\n%s", ex.Name, ex.Method, ex.Path, ex.Status, err, clipBody(ex.Result))
		}
	}
	return covered
}

// documentedStatus is the status of an operation's successful answer.
func documentedStatus(route *routers.Route) int {
	for code := range route.Operation.Responses.Map() {
		if n, err := strconv.Atoi(code); err == nil && n < 400 {
			return n
		}
	}
	return 0
}

func clipBody(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// uncovered lists the document's operations the tour did not exercise.
func uncovered(doc *openapi3.T, covered map[string]bool) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !covered[method+" "+path] {
				out = append(out, method+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkDocumentServed: GET /api/openapi.json serves the committed document.
func checkDocumentServed(t *testing.T, exchanges []*exchange) {
	t.Helper()
	for _, ex := range exchanges {
		if ex.Path == "/api/openapi.json" {
			if !bytes.Equal(ex.Result, web.OpenAPIJSON) || !strings.HasPrefix(ex.Answer.Get("Content-Type"), "application/json") {
				t.Errorf("GET /api/openapi.json = %s %.100s; want the committed document as JSON", ex.Answer.Get("Content-Type"), ex.Result)
			}
			return
		}
	}
	t.Error("the tour did not read GET /api/openapi.json")
}

var _ = io.EOF
var _ = fmt.Sprint
