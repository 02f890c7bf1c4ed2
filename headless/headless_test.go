package headless_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/stretchr/testify/require"
	"image/png"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless"
)

// registry holds the built-ins plus a server tool and a frontend tool that
// has no headless equivalent.
func registry(t *testing.T) *tool.Registry {
	t.Helper()
	r := tool.NewRegistry()
	require.NoError(t, headless.RegisterBuiltins(r), "registering built-ins")
	tool.MustRegister(r, tool.Def{Name: "web_search", Description: "search", Risk: tool.RiskLow},
		func(context.Context, *tool.Request, struct{}) (string, error) { return "ok", nil })
	tool.MustRegister(r, tool.Def{Name: "open_tab", Description: "open a browser tab", Risk: tool.RiskLow, Tier: tool.TierFrontend},
		func(context.Context, *tool.Request, struct{}) (string, error) {
			return "", tool.PauseWith(tool.Pause{Kind: tool.PauseFrontend})
		})
	return r
}

const askArgs = `{"question":"Which hotel?","choices":["Ritz","  Savoy  Hotel ","Hilton"]}`

const chartArgs = `{"title":"Revenue by month","kind":"bar","series":[{"name":"2025","points":[{"x":"Jan","y":1},{"x":"Feb","y":3}]},{"name":"2024","points":[{"x":"Jan","y":2},{"x":2,"y":5}]}],"labels":{"y":"k$"}}`

func names(ts []*tool.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

func TestSwapTablePerContext(t *testing.T) {
	type want struct {
		tools     []string
		askPause  string // "" when ask_user is not offered
		chartPNG  bool   // server render with an attachment
		chartLeft bool   // render_chart pauses for the client
	}
	all := []string{"ask_user", "open_tab", "render_chart", "web_search"}
	headlessTools := []string{"ask_user", "render_chart", "web_search"}
	tests := map[tool.ContextName]want{
		tool.ContextWeb:       {tools: all, askPause: tool.PauseFrontend, chartLeft: true},
		tool.ContextAPI:       {tools: all, askPause: tool.PauseFrontend, chartLeft: true},
		tool.ContextSlack:     {tools: headlessTools, askPause: tool.PauseQuestion, chartPNG: true},
		tool.ContextDiscord:   {tools: headlessTools, askPause: tool.PauseQuestion, chartPNG: true},
		tool.ContextTerminal:  {tools: headlessTools, askPause: tool.PauseQuestion, chartPNG: true},
		tool.ContextScheduler: {tools: []string{"render_chart", "web_search"}, chartPNG: true},
		"carrier-pigeon":      {tools: []string{"web_search"}},
	}
	r := registry(t)
	for ctxName, w := range tests {
		t.Run(string(ctxName), func(t *testing.T) {
			offered := headless.ToolsFor(r, ctxName)
			require.Equal(t, w.tools, names(offered), "tools offered in %s, sorted by name", ctxName)

			ask, ok := headless.Get(r, ctxName, "ask_user")
			require.Equal(t, w.askPause != "", ok, "ask_user offered in %s", ctxName)
			if ok {
				res := ask.Call(context.Background(), nil, json.RawMessage(askArgs))
				require.False(t, res.IsError, "ask_user failed: %s", res.Output)
				require.NotNil(t, res.Pause, "ask_user must pause")
				require.Equal(t, w.askPause, res.Pause.Kind)
				require.Equal(t, "Which hotel?", res.Pause.Prompt)
				require.Equal(t, []string{"Ritz", "Savoy Hotel", "Hilton"}, res.Pause.Choices, "choices are trimmed for the buttons")
				if w.askPause == tool.PauseFrontend {
					require.JSONEq(t, `{"question":"Which hotel?","choices":["Ritz","Savoy Hotel","Hilton"],"allow_free_text":false}`, string(res.Pause.Payload))
				} else {
					require.JSONEq(t, `{"allow_free_text":false}`, string(res.Pause.Payload))
				}
			}

			ch, ok := headless.Get(r, ctxName, "render_chart")
			require.Equal(t, w.chartPNG || w.chartLeft, ok, "render_chart offered in %s", ctxName)
			if !ok {
				return
			}
			res := ch.Call(context.Background(), nil, json.RawMessage(chartArgs))
			require.False(t, res.IsError, "render_chart failed: %s", res.Output)
			if w.chartLeft {
				require.NotNil(t, res.Pause, "render_chart must hand the data to the client")
				require.Equal(t, tool.PauseFrontend, res.Pause.Kind)
				require.Len(t, res.Attachments, 0)
				var payload struct {
					Kind   string
					Series []json.RawMessage
				}
				require.NoError(t, json.Unmarshal(res.Pause.Payload, &payload))
				require.Equal(t, "bar", payload.Kind)
				require.Len(t, payload.Series, 2)
				return
			}
			require.True(t, res.Pause == nil, "a headless chart must not pause")
			require.JSONEq(t, `{"rendered":true,"points":4,"series":2}`, string(res.Output), "the model sees a short summary only")
			require.Len(t, res.Attachments, 1)
			att := res.Attachments[0]
			require.Equal(t, "revenue-by-month.png", att.Name)
			require.Equal(t, "image/png", att.MimeType)
			require.Equal(t, "Revenue by month", att.Title)
			img, err := png.Decode(bytes.NewReader(att.Data))
			require.NoError(t, err, "attachment must be a PNG")
			require.Equal(t, 960, img.Bounds().Dx())
			require.Equal(t, 540, img.Bounds().Dy())
		})
	}
}

// A conversation paused in Slack may be resumed anywhere: the swapped tool
// must keep the frontend tool's name and schema.
func TestSwappedToolsKeepNameAndSchema(t *testing.T) {
	r := registry(t)
	for _, name := range []string{"ask_user", "render_chart"} {
		front, ok := headless.Get(r, tool.ContextWeb, name)
		require.True(t, ok)
		require.Equal(t, tool.TierFrontend, front.Tier())
		for _, c := range []tool.ContextName{tool.ContextSlack, tool.ContextDiscord, tool.ContextTerminal, tool.ContextScheduler} {
			back, ok := headless.Get(r, c, name)
			if !ok {
				continue
			}
			require.Equal(t, tool.TierServer, back.Tier(), "%s in %s", name, c)
			require.Equal(t, string(front.Schema()), string(back.Schema()), "%s schema in %s must equal the frontend one", name, c)
			require.Equal(t, front.Description(), back.Description())
		}
	}
	_, ok := headless.Get(r, tool.ContextSlack, "no_such_tool")
	require.False(t, ok, "unknown names are not found")
}

func TestAskUserRejectsBadInput(t *testing.T) {
	r := registry(t)
	ask, ok := headless.Get(r, tool.ContextSlack, "ask_user")
	require.True(t, ok)
	tests := []struct {
		name, args, want string
	}{
		{"one choice", `{"question":"q?","choices":["a"]}`, "choices: minItems"},
		{"eleven choices", fmt.Sprintf(`{"question":"q?","choices":[%s]}`, quoted(11)), "choices: maxItems"},
		{"choice too long", fmt.Sprintf(`{"question":"q?","choices":["a",%q]}`, strings.Repeat("x", 76)), "choices[1]: maxLength"},
		{"duplicate", `{"question":"q?","choices":["Yes","No","yes "]}`, `choices[2]: \"yes\" repeats choices[0]`},
		{"exact duplicate", `{"question":"q?","choices":["a","a"]}`, "choices: uniqueItems"},
		{"blank choice", `{"question":"q?","choices":["a","   "]}`, "choices[1]: must not be blank"},
		{"blank question", `{"question":"   ","choices":["a","b"]}`, "question: must not be blank"},
		{"no question", `{"choices":["a","b"]}`, `missing properties: [\"question\"]`},
		{"question too long", fmt.Sprintf(`{"question":%q,"choices":["a","b"]}`, strings.Repeat("q", 1501)), "question: maxLength"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ask.Call(context.Background(), nil, json.RawMessage(tt.args))
			require.True(t, res.IsError, "want an error result")
			require.True(t, res.Pause == nil, "an invalid question must not pause")
			require.Contains(t, string(res.Output), tt.want)
		})
	}
	t.Run("75 characters fit a Slack button", func(t *testing.T) {
		res := ask.Call(context.Background(), nil, json.RawMessage(fmt.Sprintf(`{"question":"q?","choices":["a",%q],"allow_free_text":true}`, strings.Repeat("x", 75))))
		require.False(t, res.IsError, "got %s", res.Output)
		require.JSONEq(t, `{"allow_free_text":true}`, string(res.Pause.Payload))
	})
}

func quoted(n int) string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf("%q", fmt.Sprint("c", i))
	}
	return strings.Join(q, ",")
}

func TestRenderChartRejectsBadInput(t *testing.T) {
	r := registry(t)
	for _, c := range []tool.ContextName{tool.ContextWeb, tool.ContextSlack} {
		ch, ok := headless.Get(r, c, "render_chart")
		require.True(t, ok)
		tests := []struct {
			name, args, want string
		}{
			{"bad kind", `{"title":"t","kind":"pie","series":[{"points":[{"x":1,"y":1}]}]}`, "kind: enum"},
			{"no series", `{"title":"t","series":[]}`, "series: minItems"},
			{"empty points", `{"title":"t","series":[{"name":"a","points":[]}]}`, "series[0].points: minItems"},
			{"y not a number", `{"title":"t","series":[{"points":[{"x":1,"y":1},{"x":2,"y":"lots"}]}]}`, "series[0].points[1].y: type"},
			{"x an object", `{"title":"t","series":[{"points":[{"x":{"a":1},"y":1}]}]}`, "series[0].points[0].x: type"},
			{"too many series", fmt.Sprintf(`{"title":"t","series":[%s]}`, strings.TrimSuffix(strings.Repeat(`{"points":[{"x":1,"y":1}]},`, 21), ",")), "series: maxItems"},
			{"duplicate label", `{"title":"t","series":[{"points":[{"x":"a","y":1},{"x":"a","y":2}]}]}`, "appears twice"},
			{"blank label", `{"title":"t","series":[{"points":[{"x":" ","y":1}]}]}`, "series[0].points[0].x: a label must not be blank"},
			{"too many points", fmt.Sprintf(`{"title":"t","series":[{"points":[%s]},{"points":[%s]}]}`, points(2600), points(2600)), "5200 points in all, at most 5000"},
		}
		for _, tt := range tests {
			t.Run(string(c)+"/"+tt.name, func(t *testing.T) {
				res := ch.Call(context.Background(), nil, json.RawMessage(tt.args))
				require.True(t, res.IsError, "want an error result, got %s", res.Output)
				require.Len(t, res.Attachments, 0)
				require.Contains(t, string(res.Output), tt.want)
			})
		}
	}
}

func points(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf(`{"x":%d,"y":%d}`, i, i%7)
	}
	return strings.Join(p, ",")
}

func TestRenderChartHonoursCancellation(t *testing.T) {
	ch, ok := headless.Get(registry(t), tool.ContextSlack, "render_chart")
	require.True(t, ok)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := ch.Call(ctx, nil, json.RawMessage(chartArgs))
	require.True(t, res.IsError, "a cancelled call must not render")
	require.ErrorIs(t, res.Err, context.Canceled)
}

func TestSwapperAdd(t *testing.T) {
	server, err := tool.New(tool.Def{Name: "x", Description: "x", Risk: tool.RiskLow},
		func(context.Context, *tool.Request, struct{}) (string, error) { return "", nil })
	require.NoError(t, err)
	front, err := tool.New(tool.Def{Name: "x", Description: "x", Risk: tool.RiskLow, Tier: tool.TierFrontend},
		func(context.Context, *tool.Request, struct{}) (string, error) { return "", nil })
	require.NoError(t, err)

	s := headless.NewSwapper()
	require.NoError(t, s.Add(tool.ContextSlack, server))
	require.ErrorIs(t, s.Add(tool.ContextSlack, server), headless.ErrDuplicateSwap)
	require.ErrorContains(t, s.Add("fax", server), `context "fax"`)
	require.ErrorContains(t, s.Add(tool.ContextDiscord, front), "must be a server tool")
	require.ErrorContains(t, s.Add(tool.ContextDiscord, nil), "tool is nil")

	// A swap for a tool the registry does not hold offers nothing.
	r := tool.NewRegistry()
	require.Len(t, s.ToolsFor(r, tool.ContextSlack), 0)
	// A swap replaces the frontend tool of the same name.
	require.NoError(t, r.Add(front))
	got, ok := s.Get(r, tool.ContextSlack, "x")
	require.True(t, ok)
	require.True(t, got == server, "want the registered equivalent")
	_, ok = s.Get(r, tool.ContextDiscord, "x")
	require.False(t, ok, "no equivalent in discord: not offered")
}

func TestRegisterBuiltinsTwice(t *testing.T) {
	r := tool.NewRegistry()
	require.NoError(t, headless.RegisterBuiltins(r))
	err := headless.RegisterBuiltins(r)
	require.True(t, errors.Is(err, tool.ErrDuplicate), "want ErrDuplicate, got %v", err)

	s, err := headless.BuiltinSwapper()
	require.NoError(t, err)
	require.Equal(t, []string{"ask_user", "render_chart"}, names(s.ToolsFor(r, tool.ContextTerminal)))
}
