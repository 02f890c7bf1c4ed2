package slacktest

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestViewsOpenChecksTheModal: views.open takes a modal within Slack's
// documented limits once per trigger, and refuses the rest.
func TestViewsOpenChecksTheModal(t *testing.T) {
	input := `{"type":"input","block_id":"day","label":{"type":"plain_text","text":"Day"},"element":{"type":"datepicker","action_id":"day"}}`
	tests := []struct {
		name, view, want string
	}{
		{"ok", `{"type":"modal","title":{"type":"plain_text","text":"Book"},"submit":{"type":"plain_text","text":"Go"},"blocks":[` + input + `]}`, ""},
		{"long title", `{"type":"modal","title":{"type":"plain_text","text":"` + strings.Repeat("t", 25) + `"},"submit":{"type":"plain_text","text":"Go"},"blocks":[` + input + `]}`, "invalid_arguments"},
		{"input without submit", `{"type":"modal","title":{"type":"plain_text","text":"Book"},"blocks":[` + input + `]}`, "invalid_arguments"},
		{"unknown element", `{"type":"modal","title":{"type":"plain_text","text":"Book"},"submit":{"type":"plain_text","text":"Go"},"blocks":[{"type":"input","block_id":"x","label":{"type":"plain_text","text":"X"},"element":{"type":"slider","action_id":"x"}}]}`, "invalid_blocks"},
		{"initial option not an option", `{"type":"modal","title":{"type":"plain_text","text":"Book"},"submit":{"type":"plain_text","text":"Go"},"blocks":[{"type":"input","block_id":"s","label":{"type":"plain_text","text":"S"},"element":{"type":"static_select","action_id":"s","options":[{"text":{"type":"plain_text","text":"A"},"value":"a"}],"initial_option":{"text":{"type":"plain_text","text":"B"},"value":"b"}}}]}`, "invalid_blocks"},
	}
	s := NewServer(Options{})
	defer s.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.mu.Lock()
			resp, e := s.viewsOpen(request{method: "views.open", token: "xoxb-x", params: url.Values{
				"trigger_id": {"trig-" + tt.name}, "view": {tt.view},
			}})
			s.mu.Unlock()
			if e != tt.want {
				t.Fatalf("views.open = %v, %q; want error %q", resp, e, tt.want)
			}
			if tt.want == "" {
				b, _ := json.Marshal(resp)
				if !strings.Contains(string(b), `"id":"V`) {
					t.Errorf("answer %s has no view id", b)
				}
			}
		})
	}
}
