package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bots/web"
)

// goldenSteps are the tour's steps whose answers are kept in
// testdata/<step>.golden.json: the main shapes clients read.
var goldenSteps = []string{
	"conversation", "conversation_paused", "entries", "history", "approval", "run", "run_started", "schedules", "workspace", "session_person",
}

var (
	// idRE matches the ids a run makes at random: UUIDs, a scripted model's
	// call ids, key ids.
	idRE   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|toolu_scripted_[0-9a-f]+|\bsb[a-z]_[0-9a-f]{16}\b`)
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// secretKeys are the fields whose values are random secrets.
var secretKeys = []string{"token", "csrf", "key_id"}

// normalize indents a JSON answer with its object keys sorted, ids
// numbered in order of appearance and times and secrets replaced: what is
// left is the shape and the values that do not change from run to run.
func normalize(t *testing.T, raw []byte) []byte {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	ids := map[string]string{}
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				x[k] = walk(x[k], k)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i], key)
			}
		case string:
			if slices.Contains(secretKeys, key) && x != "" {
				return "<secret>"
			}
			x = idRE.ReplaceAllStringFunc(x, func(id string) string {
				if ids[id] == "" {
					ids[id] = fmt.Sprintf("<id %d>", len(ids)+1)
				}
				return ids[id]
			})
			return timeRE.ReplaceAllString(x, "<time>")
		}
		return v
	}
	return web.IndentJSON(t, walk(v, ""))
}

// checkGoldens compares the answers of goldenSteps with
// testdata/<step>.golden.json (rewrites them with -update).
func checkGoldens(t *testing.T, exchanges []*exchange) {
	t.Helper()
	dump := os.Getenv("SWITCHBOARD_TOUR_DUMP") // every answer, to compare a refactoring's before and after
	for _, ex := range exchanges {
		if dump != "" && len(ex.Result) > 0 && strings.HasPrefix(ex.Answer.Get("Content-Type"), "application/json") {
			if err := os.WriteFile(filepath.Join(dump, ex.Name+".json"), normalize(t, ex.Result), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Contains(goldenSteps, ex.Name) {
			continue
		}
		got := normalize(t, ex.Result)
		path := filepath.Join("testdata", ex.Name+".golden.json")
		if *web.Update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (write it with -update)", err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s %s answered\n%s\nwant (%s)\n%s", ex.Method, ex.Path, got, path, want)
		}
	}
	for _, step := range goldenSteps {
		if !slices.ContainsFunc(exchanges, func(ex *exchange) bool { return ex.Name == step }) {
			t.Errorf("the tour has no step %q for its golden file", step)
		}
	}
}

// TestTour drives the API through its routes once and checks the answers
// against the golden files and the OpenAPI document.
func TestTour(t *testing.T) {
	t.Parallel()
	exchanges := runTour(t)
	t.Run("golden", func(t *testing.T) { checkGoldens(t, exchanges) })
	t.Run("openapi", func(t *testing.T) {
		doc := loadDocument(t)
		covered := checkExchanges(t, doc, exchanges)
		t.Logf("the tour exercised %d of the document's operations; not: %v", len(covered), uncovered(doc, covered))
		checkDocumentServed(t, exchanges)
	})
}
