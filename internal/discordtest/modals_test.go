package discordtest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckModal: the fake refuses modals Discord refuses.
func TestCheckModal(t *testing.T) {
	label := func(child string) string { return `{"type":18,"label":"Q","component":` + child + `}` }
	text := `{"type":4,"custom_id":"a","style":1}`
	tests := []struct {
		name, modal, want string
	}{
		{"ok", `{"custom_id":"m","title":"T","components":[` + label(text) + `]}`, ""},
		{"six components", `{"custom_id":"m","title":"T","components":[` + strings.Repeat(label(text)+",", 5) + label(`{"type":4,"custom_id":"b","style":1}`) + `]}`, "Must be between 1 and 5"},
		{"long title", `{"custom_id":"m","title":"` + strings.Repeat("t", 46) + `","components":[` + label(text) + `]}`, "Must be between 1 and 45"},
		{"disabled select", `{"custom_id":"m","title":"T","components":[` + label(`{"type":3,"custom_id":"s","disabled":false,"options":[{"label":"A","value":"a"}]}`) + `]}`, "disabled"},
		{"required select with min 0", `{"custom_id":"m","title":"T","components":[` + label(`{"type":3,"custom_id":"s","min_values":0,"options":[{"label":"A","value":"a"}]}`) + `]}`, "min_values"},
		{"bare select", `{"custom_id":"m","title":"T","components":[{"type":1,"components":[{"type":3,"custom_id":"s","options":[{"label":"A","value":"a"}]}]}]}`, "COMPONENT_LAYOUT_WIDTH_EXCEEDED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Modal
			if err := json.Unmarshal([]byte(tt.modal), &m); err != nil {
				t.Fatal(err)
			}
			e := checkModal(&m)
			switch {
			case tt.want == "" && e != nil:
				t.Fatalf("refused: %v", e.body())
			case tt.want != "":
				if e == nil {
					t.Fatalf("accepted; want an error about %s", tt.want)
				}
				if b, _ := json.Marshal(e.body()); !strings.Contains(string(b), tt.want) {
					t.Fatalf("error %s does not name %s", b, tt.want)
				}
			}
		})
	}
}
