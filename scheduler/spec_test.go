package scheduler

import (
	"strings"
	"testing"
	"time"
)

func TestSpecNext(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("loading America/New_York: %v", err)
	}
	tests := []struct {
		name, spec, tz string
		from           time.Time
		want           []time.Time // successive Next results
		sameHour       bool        // every result is at the first's local hour
	}{
		{
			name: "interval", spec: "every 4h", from: t0,
			want: []time.Time{t0.Add(4 * time.Hour), t0.Add(8 * time.Hour), t0.Add(12 * time.Hour)},
		},
		{
			name: "days", spec: "every 1d", from: t0,
			want: []time.Time{t0.Add(24 * time.Hour), t0.Add(48 * time.Hour)},
		},
		{
			// 08:00 New York on weekdays across the 2026-03-08 change: EST
			// (13:00 UTC) on Friday the 6th, EDT (12:00 UTC) from Monday the 9th.
			name: "cron across spring forward", spec: "cron 0 8 * * 1-5", tz: "America/New_York", sameHour: true,
			from: time.Date(2026, 3, 5, 14, 0, 0, 0, time.UTC),
			want: []time.Time{
				time.Date(2026, 3, 6, 13, 0, 0, 0, time.UTC),
				time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC),
				time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC),
			},
		},
		{
			name: "daily cron on the change day keeps local time", spec: "0 8 * * *", tz: "America/New_York", sameHour: true,
			from: time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC),
			want: []time.Time{
				time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC), // 08:00 EDT
				time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC),
			},
		},
		{
			// 02:30 does not exist in New York on 2026-03-08: it fires at the
			// first instant after the gap, 03:00 EDT (gocron's own cron skips
			// that day).
			name: "wall time in the gap fires after it", spec: "cron 30 2 * * *", tz: "America/New_York",
			from: time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC),
			want: []time.Time{
				time.Date(2026, 3, 7, 7, 30, 0, 0, time.UTC), // 02:30 EST
				time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC),  // 03:00 EDT, after the gap
				time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC), // 02:30 EDT
			},
		},
		{
			// Every occurrence in the skipped hour folds into one fire at
			// 03:00, which is also the 03:00 occurrence.
			name: "occurrences in the gap fire once after it", spec: "cron */30 * * * *", tz: "America/New_York",
			from: time.Date(2026, 3, 8, 6, 15, 0, 0, time.UTC), // 01:15 EST
			want: []time.Time{
				time.Date(2026, 3, 8, 6, 30, 0, 0, time.UTC), // 01:30 EST
				time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC),  // 03:00 EDT (02:00, 02:30 and 03:00)
				time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC), // 03:30 EDT
			},
		},
		{
			name: "hourly cron fires the repeated hour once", spec: "cron 0 * * * *", tz: "America/New_York",
			from: time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC), // 00:30 EDT
			want: []time.Time{
				time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC), // 01:00 EDT
				time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC), // 02:00 EST (01:00 EST is the same wall time)
				time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC),
			},
		},
		{
			name: "2027 cron in the gap fires after it", spec: "cron 30 2 * * *", tz: "America/New_York",
			from: time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC),
			want: []time.Time{
				time.Date(2027, 3, 14, 7, 0, 0, 0, time.UTC),  // 03:00 EDT
				time.Date(2027, 3, 15, 6, 30, 0, 0, time.UTC), // 02:30 EDT
			},
		},
		{
			name: "2027 cron fall back fires once", spec: "cron 30 1 * * *", tz: "America/New_York",
			from: time.Date(2027, 11, 6, 12, 0, 0, 0, time.UTC),
			want: []time.Time{
				time.Date(2027, 11, 7, 5, 30, 0, 0, time.UTC), // 01:30 EDT
				time.Date(2027, 11, 8, 6, 30, 0, 0, time.UTC), // 01:30 EST
			},
		},
		{
			// every 1d is a calendar day in the schedule's zone: 09:00 stays
			// 09:00 across both changes.
			name: "every 1d keeps 09:00 across spring forward", spec: "every 1d", tz: "America/New_York", sameHour: true,
			from: time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC), // 09:00 EST
			want: []time.Time{
				time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC), // 09:00 EDT, 23 hours later
				time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC),
			},
		},
		{
			name: "every 1d keeps 09:00 across fall back", spec: "every 1d", tz: "America/New_York", sameHour: true,
			from: time.Date(2026, 10, 31, 13, 0, 0, 0, time.UTC), // 09:00 EDT
			want: []time.Time{
				time.Date(2026, 11, 1, 14, 0, 0, 0, time.UTC), // 09:00 EST, 25 hours later
				time.Date(2026, 11, 2, 14, 0, 0, 0, time.UTC),
			},
		},
		{
			name: "every 2d keeps 09:00 in 2027", spec: "every 2d", tz: "America/New_York", sameHour: true,
			from: time.Date(2027, 3, 13, 14, 0, 0, 0, time.UTC), // 09:00 EST
			want: []time.Time{
				time.Date(2027, 3, 15, 13, 0, 0, 0, time.UTC), // 09:00 EDT
				time.Date(2027, 3, 17, 13, 0, 0, 0, time.UTC),
			},
		},
		{
			name: "every 1d in the gap fires after it", spec: "every 1d", tz: "America/New_York",
			from: time.Date(2026, 3, 7, 7, 30, 0, 0, time.UTC), // 02:30 EST
			want: []time.Time{
				time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), // 03:00 EDT
			},
		},
		{
			name: "every 1d at a repeated time fires its first occurrence", spec: "every 1d", tz: "America/New_York",
			from: time.Date(2026, 10, 31, 5, 30, 0, 0, time.UTC), // 01:30 EDT
			want: []time.Time{
				time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), // 01:30 EDT
				time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC), // 01:30 EST
			},
		},
		{
			name: "every 24h is 24 hours", spec: "every 24h", tz: "America/New_York",
			from: time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC),
			want: []time.Time{time.Date(2026, 3, 8, 14, 0, 0, 0, time.UTC)},
		},
		{
			// Autumn: 01:30 happens twice on 2026-11-01; it fires once.
			name: "fall back fires once", spec: "cron 30 1 * * *", tz: "America/New_York",
			from: time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC),
			want: []time.Time{
				time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), // 01:30 EDT
				time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC), // 01:30 EST next day
			},
		},
		{name: "once", spec: "at 2026-03-08T09:00:00-05:00", from: t0, want: []time.Time{{}}},
		{name: "continuous", spec: "continuous", from: t0, want: []time.Time{{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec(tc.spec, tc.tz)
			if err != nil {
				t.Fatalf("ParseSpec(%q, %q): %v", tc.spec, tc.tz, err)
			}
			var got []time.Time
			at := tc.from
			for range tc.want {
				at = s.Next(at)
				got = append(got, at)
				if at.IsZero() {
					break
				}
			}
			if fmtTimes(got) != fmtTimes(tc.want) {
				t.Fatalf("Next from %s: want %s, got %s", tc.from.Format(time.RFC3339), fmtTimes(tc.want), fmtTimes(got))
			}
			for _, g := range got {
				if !g.IsZero() && s.Location() == ny && tc.sameHour && g.In(ny).Hour() != tc.want[0].In(ny).Hour() {
					t.Fatalf("cron fire %s is not at the same local hour as the first", g.In(ny))
				}
			}
		})
	}
}

func TestSpecFirstAndLatest(t *testing.T) {
	t.Parallel()
	s, err := ParseSpec("at 2026-03-08T09:00:00-05:00", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.First(t0), time.Date(2026, 3, 8, 14, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("First of a one-shot: want %s, got %s", want, got)
	}
	hourly, err := ParseSpec("every 1h", "")
	if err != nil {
		t.Fatal(err)
	}
	due := t0.Add(time.Hour)
	latest, next := hourly.Latest(due, t0.Add(5*time.Hour+30*time.Minute))
	if !latest.Equal(t0.Add(5*time.Hour)) || !next.Equal(t0.Add(6*time.Hour)) {
		t.Fatalf("Latest of hourly after 5h30m down: want %s then %s, got %s then %s",
			t0.Add(5*time.Hour), t0.Add(6*time.Hour), latest, next)
	}
	daily, err := ParseSpec("cron 0 8 * * *", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	due = time.Date(2026, 3, 6, 13, 0, 0, 0, time.UTC)
	latest, next = daily.Latest(due, time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC))
	if !latest.Equal(time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)) || !next.Equal(time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("Latest of a daily cron across the change: got %s then %s", latest, next)
	}
	// A calendar-day interval missed across the change: the latest
	// occurrence is still 09:00 local.
	everyDay, err := ParseSpec("every 1d", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	latest, next = everyDay.Latest(time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC))
	if !latest.Equal(time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC)) || !next.Equal(time.Date(2026, 3, 11, 13, 0, 0, 0, time.UTC)) {
		t.Fatalf("Latest of every 1d across the change: want 09:00 EDT on the 10th then the 11th, got %s then %s", latest, next)
	}
	latest, next = daily.Latest(due, due)
	if !latest.Equal(due) || !next.Equal(time.Date(2026, 3, 7, 13, 0, 0, 0, time.UTC)) {
		t.Fatalf("Latest of an on-time fire must be the fire itself: got %s then %s", latest, next)
	}
}

func TestParseSpecErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ spec, tz, want string }{
		{"", "", "empty"},
		{"every", "", "want"},
		{"every soon", "", "interval"},
		{"every -1h", "", "positive"},
		{"at tomorrow", "", "RFC 3339"},
		{"0 8 * *", "", "five fields"},
		{"cron 61 8 * * *", "", "cron"},
		{"0 8 * * *", "Mars/Olympus", "time zone"},
		{"TZ=UTC 0 8 * * *", "", "separately"},
	}
	for _, tc := range tests {
		_, err := ParseSpec(tc.spec, tc.tz)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSpec(%q, %q): want an error mentioning %q, got %v", tc.spec, tc.tz, tc.want, err)
		}
	}
}
