package when

import (
	"testing"
	"time"
)

// TestParseAcrossDST: "in Nd" keeps the local time of day across a daylight
// saving change; a time of day that falls in the hour skipped when clocks
// spring forward is due at the first instant after it (03:00); one that
// happens twice when they fall back is due at its first occurrence.
func TestParseAcrossDST(t *testing.T) {
	utc := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, time.UTC) }
	const ny = "America/New_York"
	tests := []struct {
		name, text string
		now, want  time.Time
	}{
		// Spring forward, 2026-03-08 02:00 EST → 03:00 EDT.
		{"in 1d keeps 09:00 across spring forward", "in 1d", utc(2026, 3, 7, 14, 0), utc(2026, 3, 8, 13, 0)},
		{"in 2 days keeps 09:00", "in 2 days", utc(2026, 3, 7, 14, 0), utc(2026, 3, 9, 13, 0)},
		{"in 24h is 24 hours", "in 24h", utc(2026, 3, 7, 14, 0), utc(2026, 3, 8, 14, 0)},
		{"in 1d into the gap fires after it", "in 1d", utc(2026, 3, 7, 7, 30), utc(2026, 3, 8, 7, 0)},
		{"tomorrow 2:30 in the gap fires at 03:00", "tomorrow 2:30", utc(2026, 3, 7, 20, 0), utc(2026, 3, 8, 7, 0)},
		{"a date and time in the gap", "2026-03-08 02:30", utc(2026, 3, 1, 12, 0), utc(2026, 3, 8, 7, 0)},
		{"a time today in the gap", "2:30", utc(2026, 3, 8, 6, 0), utc(2026, 3, 8, 7, 0)},
		{"tomorrow 3:00 after the gap", "tomorrow 3:00", utc(2026, 3, 7, 20, 0), utc(2026, 3, 8, 7, 0)},
		{"tomorrow 1:59 before the gap", "tomorrow 1:59", utc(2026, 3, 7, 20, 0), utc(2026, 3, 8, 6, 59)},
		// Fall back, 2026-11-01 02:00 EDT → 01:00 EST.
		{"in 1d keeps 09:00 across fall back", "in 1d", utc(2026, 10, 31, 13, 0), utc(2026, 11, 1, 14, 0)},
		{"tomorrow 1:30 is the first 01:30", "tomorrow 1:30", utc(2026, 10, 31, 20, 0), utc(2026, 11, 1, 5, 30)},
		{"in 1d to a repeated time is its first occurrence", "in 1d", utc(2026, 10, 31, 5, 30), utc(2026, 11, 1, 5, 30)},
		// 2027: 2027-03-14 and 2027-11-07.
		{"2027 spring gap", "tomorrow 2:15", utc(2027, 3, 13, 20, 0), utc(2027, 3, 14, 7, 0)},
		{"2027 in 1d across spring", "in 1d", utc(2027, 3, 13, 13, 0), utc(2027, 3, 14, 12, 0)},
		{"2027 fall back first occurrence", "tomorrow 1:45", utc(2027, 11, 6, 20, 0), utc(2027, 11, 7, 5, 45)},
		{"2027 in 1d across fall back", "in 1d", utc(2027, 11, 6, 12, 0), utc(2027, 11, 7, 13, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text, tc.now, ny)
			if err != nil {
				t.Fatalf("Parse(%q) at %s: %v", tc.text, tc.now, err)
			}
			loc, _ := time.LoadLocation(ny)
			if !got.Equal(tc.want) {
				t.Fatalf("Parse(%q) at %s New York: want %s (%s), got %s (%s)", tc.text, tc.now.In(loc),
					tc.want, tc.want.In(loc), got, got.In(loc))
			}
		})
	}
}
