package app_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// anthropicEnv points the service at a fake Anthropic through the real SDK.
func anthropicEnv(f *modeltest.Fake) map[string]string {
	return map[string]string{
		"SWITCHBOARD_MODEL":  "anthropic:claude-sonnet-4-5",
		"ANTHROPIC_API_KEY":  "sk-ant-test-key",
		"ANTHROPIC_BASE_URL": f.URL,
	}
}

// A model stream cut mid-reply is retried; the live message starts over in
// place, and the user ends with exactly the model's final text, once, with
// no stream left open. When every attempt is cut, the user sees one clear
// error in place of the partial text.
func TestSlackCutStreamRetriesCleanly(t *testing.T) {
	final := "reply c00 c01 c02 c03 c04 c05 c06 c07 c08 c09 c10 c11 done"
	tests := []struct {
		name    string
		replies []modeltest.Reply
		want    func(t *testing.T, shown string)
	}{
		{
			name:    "cut once, then whole",
			replies: []modeltest.Reply{{Text: final, CutAfter: 6}, {Text: final}},
			want: func(t *testing.T, shown string) {
				if shown != final {
					t.Fatalf("the reply shows %q; want exactly the model's final text %q", shown, final)
				}
			},
		},
		{
			name:    "every attempt cut",
			replies: []modeltest.Reply{{Text: final, CutAfter: 6}, {Text: final, CutAfter: 6}, {Text: final, CutAfter: 6}},
			want: func(t *testing.T, shown string) {
				if !strings.HasPrefix(shown, "⚠️") || strings.Contains(shown, "c00") {
					t.Fatalf("the reply shows %q; want one clear error in place of the partial text", shown)
				}
			},
		},
		{
			name:    "malformed stream given up",
			replies: []modeltest.Reply{{Text: final, Malformed: true}, {Text: final, Malformed: true}, {Text: final, Malformed: true}},
			want: func(t *testing.T, shown string) {
				if !strings.HasPrefix(shown, "⚠️") || strings.Contains(shown, "reply c00") {
					t.Fatalf("the reply shows %q; want one clear error and no partial text", shown)
				}
			},
		},
	}
	eachStore(t, func(t *testing.T, db databaseFunc) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				fake := modeltest.NewAnthropic(t)
				fake.Push(tt.replies...)
				env := anthropicEnv(fake)
				// The backend reads the SDK's variables from the process.
				t.Setenv("ANTHROPIC_API_KEY", env["ANTHROPIC_API_KEY"])
				t.Setenv("ANTHROPIC_BASE_URL", env["ANTHROPIC_BASE_URL"])
				e := startSlack(t, db(t), envOptions{env: env})
				ch := fmt.Sprintf("C0CUT%d", i)
				ts := fmt.Sprintf("1700000300.%06d", i)
				e.mustPost(newEvent(fmt.Sprintf("EvCut%d", i), mention(ch, ts, "", alice, "tell me")))
				e.waitIdle()
				msgs := e.botMessages(ch)
				if len(msgs) != 1 {
					var shownAll []string
					for _, m := range msgs {
						shownAll = append(shownAll, shown(m))
					}
					t.Fatalf("%d bot messages, want exactly 1: %q", len(msgs), shownAll)
				}
				for _, m := range e.slack.Messages(ch) {
					if m.Streaming {
						t.Fatalf("a stream was left open: %+v", m)
					}
				}
				tt.want(t, shown(msgs[0]))
			})
		}
	})
}
