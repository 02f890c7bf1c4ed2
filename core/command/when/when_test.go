package when

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 3, 2, 16, 0, 0, 0, time.UTC) // 11:00 in New York
	tests := []struct {
		text, tz string
		want     time.Time
	}{
		{"in 20m", "", now.Add(20 * time.Minute)},
		{"in 2 hours", "", now.Add(2 * time.Hour)},
		{"2h", "", now.Add(2 * time.Hour)},
		{"in 1d", "", now.Add(24 * time.Hour)},
		{"17:30", "", time.Date(2026, 3, 2, 17, 30, 0, 0, time.UTC)},
		{"at 15:00", "", time.Date(2026, 3, 3, 15, 0, 0, 0, time.UTC)}, // past today: tomorrow
		{"15:00", "America/New_York", time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC)},
		{"tomorrow 9:00", "America/New_York", time.Date(2026, 3, 3, 14, 0, 0, 0, time.UTC)},
		{"tomorrow at 3pm", "", time.Date(2026, 3, 3, 15, 0, 0, 0, time.UTC)},
		{"2026-03-09 09:00", "America/New_York", time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC)}, // EDT by then
		{"2026-03-08T09:00:00-05:00", "", time.Date(2026, 3, 8, 14, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		got, err := Parse(tc.text, now, tc.tz)
		if err != nil {
			t.Errorf("Parse(%q, %q): %v", tc.text, tc.tz, err)
			continue
		}
		if !got.Equal(tc.want) {
			t.Errorf("Parse(%q, %q): want %s, got %s", tc.text, tc.tz, tc.want, got)
		}
	}
	bad := []struct{ text, tz, want string }{
		{"", "", "when?"},
		{"soonish", "", `cannot read "soonish" as a time`},
		{"in forever", "", `cannot read "forever" as a duration`},
		{"in -2h", "", `cannot read "-2h" as a duration`},
		{"tomorrow lunch", "", `"lunch" is not a time of day`},
		{"in 2h", "Mars/Olympus", `time zone "Mars/Olympus"`},
	}
	for _, tc := range bad {
		if _, err := Parse(tc.text, now, tc.tz); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q, %q): want an error mentioning %q, got %v", tc.text, tc.tz, tc.want, err)
		}
	}
}

func TestFormat(t *testing.T) {
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	tests := []struct{ tz, want string }{
		{"", "Mon 2 Mar 2026 14:00 UTC"},
		{"America/New_York", "Mon 2 Mar 2026 09:00 EST"},
		{"Mars/Olympus", "Mon 2 Mar 2026 14:00 UTC"}, // an unknown zone shows UTC
	}
	for _, tc := range tests {
		if got := Format(at, tc.tz); got != tc.want {
			t.Errorf("Format(%s, %q) = %q; want %q", at, tc.tz, got, tc.want)
		}
	}
}
