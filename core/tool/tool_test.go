package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/stretchr/testify/require"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/tool"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

type point struct {
	X string  `json:"x" jsonschema:"the label on the x axis"`
	Y float64 `json:"y"`
}

type series struct {
	Name   string  `json:"name"`
	Points []point `json:"points"`
}

type searchIn struct {
	Query  string   `json:"query" jsonschema:"what to search for"`
	Limit  int      `json:"limit,omitempty" jsonschema:"how many results to return"`
	Tags   []string `json:"tags,omitempty"`
	Series []series `json:"series,omitempty"`
	ID     int64    `json:"id,omitempty"`
	Hidden string   `json:"-"`
}

type searchOut struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
	ID    int64  `json:"id"`
	Count int    `json:"count"`
}

func searchDef() tool.Def {
	return tool.Def{
		Name:        "search",
		Description: "Search the knowledge base.",
		Risk:        tool.RiskLow,
		SchemaFunc: func(s *jsonschema.Schema) error {
			s.Properties["limit"].Default = json.RawMessage(`10`)
			s.Properties["limit"].Minimum = jsonschema.Ptr(0.0)
			s.Properties["limit"].Maximum = jsonschema.Ptr(50.0)
			s.Properties["query"].MinLength = jsonschema.Ptr(1)
			return nil
		},
	}
}

func newSearch(t *testing.T, calls *atomic.Int32) *tool.Tool {
	t.Helper()
	tl, err := tool.New(searchDef(), func(ctx context.Context, _ *tool.Request, in searchIn) (searchOut, error) {
		if calls != nil {
			calls.Add(1)
		}
		return searchOut{Query: in.Query, Limit: in.Limit, ID: in.ID, Count: len(in.Series)}, nil
	})
	require.NoError(t, err, "building the search tool")
	return tl
}

func TestSchemaGeneratedFromInputType(t *testing.T) {
	tl := newSearch(t, nil)
	got := tl.Schema()

	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, got, "", "  "))
	pretty.WriteByte('\n')
	golden := filepath.Join("testdata", "search_schema.golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, pretty.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "reading golden file (run with -update to create it)")
	require.Equal(t, string(want), pretty.String(), "schema differs from %s", golden)

	var s struct {
		Type                 string                     `json:"type"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
		Properties           map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(got, &s))
	require.Equal(t, "object", s.Type)
	require.Equal(t, []string{"query"}, s.Required, "only fields without omitempty are required")
	require.NotNil(t, s.AdditionalProperties, "additionalProperties must be set")
	require.False(t, *s.AdditionalProperties, "unknown arguments must be rejected")
	require.NotContains(t, s.Properties, "Hidden", "json:\"-\" fields are not arguments")
	require.Contains(t, string(s.Properties["query"]), `"description":"what to search for"`)
	require.Contains(t, string(s.Properties["tags"]), `"type":"array"`, "slices are plain arrays, not null|array")
	require.Contains(t, string(s.Properties["limit"]), `"default":10`)

	// Byte-identical on every build: the prompt cache depends on it.
	for range 5 {
		require.Equal(t, string(got), string(newSearch(t, nil).Schema()), "schema bytes must be stable")
	}
}

func TestSchemaForEmptyInputHasProperties(t *testing.T) {
	tl, err := tool.New(tool.Def{Name: "now", Description: "The time.", Risk: tool.RiskLow},
		func(context.Context, *tool.Request, struct{}) (string, error) { return "noon", nil })
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"object","properties":{},"additionalProperties":false}`, string(tl.Schema()))

	for _, args := range []string{``, `null`, `{}`, ` {} `} {
		res := tl.Call(context.Background(), nil, json.RawMessage(args))
		require.False(t, res.IsError, "args %q: want success, got %s", args, res.Output)
		require.JSONEq(t, `"noon"`, string(res.Output))
	}
}

func TestCallValidationErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name string
		args string
		want []string // substrings of the model-facing error
		// field is the ValidationError.Field; "-" when the error is not a
		// schema violation.
		field string
	}{
		{"wrong type", `{"query": 5}`, []string{`query: type:`, `want "string"`}, "query"},
		{"missing required", `{"limit": 3}`, []string{`missing properties: ["query"]`}, ""},
		{"unexpected property", `{"query":"a","colour":"red"}`, []string{`unexpected additional properties ["colour"]`}, ""},
		{"bound", `{"query":"a","limit":99}`, []string{`limit: maximum:`}, "limit"},
		{"empty string", `{"query":""}`, []string{`query: minLength:`}, "query"},
		{"array item", `{"query":"a","tags":["x", 3]}`, []string{`tags[1]: type:`}, "tags[1]"},
		{
			"nested array item",
			`{"query":"a","series":[{"name":"ok","points":[{"x":"a","y":1}]},{"name":"bad","points":[{"x":"a","y":1},{"x":"b","y":"high"}]}]}`,
			[]string{`series[1].points[1].y: type:`, `want "number"`},
			"series[1].points[1].y",
		},
		{"nested missing", `{"query":"a","series":[{"name":"s"}]}`, []string{`series[0]: required: missing properties: ["points"]`}, "series[0]"},
		{"not an object", `["query"]`, []string{`arguments must be a JSON object`}, "-"},
		{"not json", `{"query":`, []string{`arguments are not valid JSON`}, "-"},
		{"null slice", `{"query":"a","tags":null}`, []string{`tags: type:`}, "tags"},
		{"huge value is cut", `{"query":"a","limit":"` + strings.Repeat("z", 5000) + `"}`, []string{`limit: type:`}, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			tl := newSearch(t, &calls)
			res := tl.Call(context.Background(), nil, json.RawMessage(tt.args))
			require.True(t, res.IsError, "want an error result for %s", tt.args)
			require.Zero(t, calls.Load(), "the handler must not run on invalid arguments")
			var out struct{ Error string }
			require.NoError(t, json.Unmarshal(res.Output, &out), "error output must be JSON: %s", res.Output)
			require.True(t, strings.HasPrefix(out.Error, "invalid arguments for search: "), "got %q", out.Error)
			for _, w := range tt.want {
				require.Contains(t, out.Error, w)
			}
			require.Less(t, len(out.Error), 500, "the message must stay short")
			if tt.field != "-" {
				ve, ok := errors.AsType[*tool.ValidationError](res.Err)
				require.True(t, ok, "Err must wrap a *tool.ValidationError, got %v", res.Err)
				require.Equal(t, tt.field, ve.Field)
			}
		})
	}
}

func TestCallAppliesDefaults(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantLimit int
	}{
		{"omitted gets the default", `{"query":"a"}`, 10},
		{"explicit zero is kept", `{"query":"a","limit":0}`, 0},
		{"explicit value is kept", `{"query":"a","limit":7}`, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := newSearch(t, nil).Call(context.Background(), nil, json.RawMessage(tt.args))
			require.False(t, res.IsError, "want success, got %s", res.Output)
			var out searchOut
			require.NoError(t, json.Unmarshal(res.Output, &out))
			require.Equal(t, tt.wantLimit, out.Limit)
		})
	}
}

func TestCallKeepsLargeIntegersExact(t *testing.T) {
	res := newSearch(t, nil).Call(context.Background(), nil, json.RawMessage(`{"query":"a","id":9007199254740993}`))
	require.False(t, res.IsError, "want success, got %s", res.Output)
	var out searchOut
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.Equal(t, int64(9007199254740993), out.ID, "2^53+1 must not be rounded through float64")
}

func TestCallHandlerErrorAndPanic(t *testing.T) {
	sentinel := errors.New("the upstream said no")
	tests := []struct {
		name     string
		h        func(context.Context, *tool.Request, struct{}) (string, error)
		wantOut  string
		wantErr  string // substring of Result.Err
		isTarget error
	}{
		{
			name: "handler error",
			h: func(context.Context, *tool.Request, struct{}) (string, error) {
				return "", fmt.Errorf("fetching page: %w", sentinel)
			},
			wantOut:  `{"error":"fetching page: the upstream said no"}`,
			wantErr:  "running tool t",
			isTarget: sentinel,
		},
		{
			name:    "panic",
			h:       func(context.Context, *tool.Request, struct{}) (string, error) { panic("secret-token-123 exploded") },
			wantOut: `{"error":"tool t failed with an internal error"}`,
			wantErr: "panicked: secret-token-123 exploded",
		},
		{
			name: "nil map write panic",
			h: func(context.Context, *tool.Request, struct{}) (string, error) {
				var m map[string]int
				m["x"] = 1
				return "", nil
			},
			wantOut: `{"error":"tool t failed with an internal error"}`,
			wantErr: "assignment to entry in nil map",
		},
		{
			name:    "output not JSON",
			h:       nil, // replaced below
			wantOut: `{"error":"tool t produced output that is not valid JSON"}`,
			wantErr: "encoding output of t",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tl *tool.Tool
			var err error
			d := tool.Def{Name: "t", Description: "test", Risk: tool.RiskLow}
			if tt.h == nil {
				tl, err = tool.New(d, func(context.Context, *tool.Request, struct{}) (func(), error) { return func() {}, nil })
			} else {
				tl, err = tool.New(d, tt.h)
			}
			require.NoError(t, err)
			res := tl.Call(context.Background(), nil, nil)
			require.True(t, res.IsError, "want an error result")
			require.JSONEq(t, tt.wantOut, string(res.Output))
			require.ErrorContains(t, res.Err, tt.wantErr)
			if tt.isTarget != nil {
				require.ErrorIs(t, res.Err, tt.isTarget, "Err must wrap the handler's error")
			}
			require.NotContains(t, string(res.Output), "goroutine", "the model must not see a stack trace")
		})
	}
}

type chartOut struct {
	Rendered bool `json:"rendered"`
	png      []byte
}

func (c chartOut) Attachments() []tool.Attachment {
	return []tool.Attachment{{Name: "c.png", MimeType: "image/png", Data: c.png}}
}

func TestCallAttachmentsAndPause(t *testing.T) {
	r := tool.NewRegistry()
	tool.MustRegister(r, tool.Def{Name: "chart", Description: "draws", Risk: tool.RiskLow},
		func(context.Context, *tool.Request, struct{}) (chartOut, error) {
			return chartOut{Rendered: true, png: []byte("\x89PNG")}, nil
		})
	tool.MustRegister(r, tool.Def{Name: "ask", Description: "asks", Risk: tool.RiskLow},
		func(context.Context, *tool.Request, struct{}) (struct{}, error) {
			return struct{}{}, fmt.Errorf("asking: %w", tool.PauseWith(tool.Pause{Kind: tool.PauseQuestion, Prompt: "Which?", Choices: []string{"a", "b"}}))
		})

	chart, ok := r.Get("chart")
	require.True(t, ok)
	res := chart.Call(context.Background(), nil, nil)
	require.False(t, res.IsError, "got %s", res.Output)
	require.JSONEq(t, `{"rendered":true}`, string(res.Output), "attachment bytes must not reach the model")
	require.Len(t, res.Attachments, 1)
	require.Equal(t, []byte("\x89PNG"), res.Attachments[0].Data)

	ask, ok := r.Get("ask")
	require.True(t, ok)
	res = ask.Call(context.Background(), nil, nil)
	require.False(t, res.IsError, "a pause is not an error")
	require.NotNil(t, res.Pause, "a wrapped PauseError must still pause")
	require.Equal(t, tool.Pause{Kind: tool.PauseQuestion, Prompt: "Which?", Choices: []string{"a", "b"}}, *res.Pause)
}

func TestCallOutputTooLarge(t *testing.T) {
	tl, err := tool.New(tool.Def{Name: "dump", Description: "dumps", Risk: tool.RiskLow, MaxOutputBytes: 100},
		func(context.Context, *tool.Request, struct{}) (string, error) { return strings.Repeat("x", 200), nil })
	require.NoError(t, err)
	res := tl.Call(context.Background(), nil, nil)
	require.True(t, res.IsError, "output over MaxOutputBytes must be an error")
	require.Contains(t, string(res.Output), "202 bytes of output, more than the limit of 100")
}

func TestUnknownTool(t *testing.T) {
	r := tool.NewRegistry()
	tool.MustRegister(r, tool.Def{Name: "internal_admin", Description: "x", Risk: tool.RiskHigh},
		func(context.Context, *tool.Request, struct{}) (string, error) { return "", nil })
	_, ok := r.Get("nope")
	require.False(t, ok)

	res := tool.UnknownTool("nope")
	require.True(t, res.IsError)
	require.ErrorIs(t, res.Err, tool.ErrUnknownTool)
	require.Contains(t, string(res.Output), `unknown tool \"nope\"`)
	require.NotContains(t, string(res.Output), "internal_admin", "must not list registered tools")

	long := tool.UnknownTool(strings.Repeat("a", 500))
	require.Less(t, len(long.Output), 200, "a huge name must be truncated")
}

func TestRegisterRejectsBadDefinitions(t *testing.T) {
	h := func(context.Context, *tool.Request, struct{}) (string, error) { return "", nil }
	ok := tool.Def{Name: "ok", Description: "fine", Risk: tool.RiskLow}
	tests := []struct {
		name string
		mod  func(d *tool.Def)
		want string
	}{
		{"empty name", func(d *tool.Def) { d.Name = "" }, "Def.Name"},
		{"name with space", func(d *tool.Def) { d.Name = "send mail" }, "Def.Name"},
		{"name with dot", func(d *tool.Def) { d.Name = "mail.send" }, "Def.Name"},
		{"name too long", func(d *tool.Def) { d.Name = strings.Repeat("a", 65) }, "Def.Name"},
		{"no description", func(d *tool.Def) { d.Description = "  " }, "Def.Description"},
		{"no risk", func(d *tool.Def) { d.Risk = "" }, "Def.Risk"},
		{"bad tier", func(d *tool.Def) { d.Tier = "client" }, "Def.Tier"},
		{"schema func error", func(d *tool.Def) {
			d.SchemaFunc = func(*jsonschema.Schema) error { return errors.New("nope") }
		}, "adjusting schema: nope"},
		{"invalid default", func(d *tool.Def) {
			d.SchemaFunc = func(s *jsonschema.Schema) error {
				s.Properties["n"] = &jsonschema.Schema{Type: "integer", Default: json.RawMessage(`"ten"`)}
				return nil
			}
		}, "resolving input schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ok
			tt.mod(&d)
			err := tool.Register(tool.NewRegistry(), d, h)
			require.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("max length name accepted", func(t *testing.T) {
		d := ok
		d.Name = strings.Repeat("a", 64)
		require.NoError(t, tool.Register(tool.NewRegistry(), d, h))
	})
	t.Run("non-struct input", func(t *testing.T) {
		err := tool.Register(tool.NewRegistry(), ok, func(context.Context, *tool.Request, string) (string, error) { return "", nil })
		require.ErrorContains(t, err, "must be a struct")
	})
	t.Run("tier defaults to server", func(t *testing.T) {
		tl, err := tool.New(ok, h)
		require.NoError(t, err)
		require.Equal(t, tool.TierServer, tl.Tier())
	})
	t.Run("MustRegister panics", func(t *testing.T) {
		require.Panics(t, func() { tool.MustRegister(tool.NewRegistry(), tool.Def{}, h) })
	})
}

func TestRegisterDuplicate(t *testing.T) {
	r := tool.NewRegistry()
	require.NoError(t, tool.Register(r, searchDef(), func(context.Context, *tool.Request, searchIn) (int, error) { return 1, nil }))
	err := tool.Register(r, searchDef(), func(context.Context, *tool.Request, searchIn) (int, error) { return 2, nil })
	require.ErrorIs(t, err, tool.ErrDuplicate)
	got, ok := r.Get("search")
	require.True(t, ok)
	res := got.Call(context.Background(), nil, json.RawMessage(`{"query":"q"}`))
	require.JSONEq(t, `1`, string(res.Output), "the first registration must win")
}

func TestListSortedAndStable(t *testing.T) {
	names := []string{"zeta", "alpha", "Beta", "m_2", "m-1", "a", "delta"}
	r := tool.NewRegistry()
	for _, n := range names {
		tool.MustRegister(r, tool.Def{Name: n, Description: "d", Risk: tool.RiskLow},
			func(context.Context, *tool.Request, struct{}) (string, error) { return "", nil })
	}
	want := []string{"Beta", "a", "alpha", "delta", "m-1", "m_2", "zeta"}
	for range 20 { // map iteration order varies run to run; List must not
		var got []string
		for _, tl := range r.List() {
			got = append(got, tl.Name())
		}
		require.Equal(t, want, got, "List must be sorted by name (byte order)")
	}
}

func TestConcurrentCalls(t *testing.T) {
	r := tool.NewRegistry()
	require.NoError(t, r.Add(newSearch(t, nil)))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			tl, ok := r.Get("search")
			if !ok {
				t.Error("search not found")
				return
			}
			args := fmt.Sprintf(`{"query":"q%d","limit":%d}`, i, i)
			if i%2 == 1 {
				args = `{"query":"a","series":[{"name":"s","points":[{"x":"a","y":"bad"}]}]}`
			}
			res := tl.Call(context.Background(), nil, json.RawMessage(args))
			if res.IsError != (i%2 == 1) {
				t.Errorf("call %d: IsError=%v, output %s", i, res.IsError, res.Output)
			}
			_ = r.List()
		})
	}
	wg.Wait()
}

func TestCallPassesRequest(t *testing.T) {
	var got *tool.Request
	tl, err := tool.New(tool.Def{Name: "who", Description: "says who calls", Risk: tool.RiskLow},
		func(_ context.Context, req *tool.Request, _ struct{}) (string, error) {
			got = req
			return req.Agent, nil
		})
	require.NoError(t, err)

	req := &tool.Request{CallID: "call_1", ConversationID: uuid.New(), Agent: "ops", Context: tool.ContextSlack, Starter: "U1", TurnID: uuid.New()}
	res := tl.Call(context.Background(), req, nil)
	require.False(t, res.IsError, "got %s", res.Output)
	require.Same(t, req, got, "the handler must get the caller's request")
	require.JSONEq(t, `"ops"`, string(res.Output))

	res = tl.Call(context.Background(), nil, nil)
	require.False(t, res.IsError, "got %s", res.Output)
	require.NotNil(t, got, "a nil request must reach the handler as an empty one")
	require.Equal(t, tool.Request{}, *got)
}
