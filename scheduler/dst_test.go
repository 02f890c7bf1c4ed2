package scheduler

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/store"
)

// TestDailyRoutinesKeepWallClockTime fires daily routines in
// America/New_York across both 2026 daylight saving changes with the
// scheduler's injected clock: "every 1d" and a cron line both fire at the
// same local time each day; on the spring-forward day a time in the skipped
// hour fires at 03:00, the first instant after the gap, and the day after at
// its own time again; on the fall-back day a repeated time fires once, at
// its first occurrence.
func TestDailyRoutinesKeepWallClockTime(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("loading America/New_York: %v", err)
	}
	at := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, ny) }
	tests := []struct {
		name  string
		start time.Time // the clock when the routines are made
		specs []string
		days  int
		want  map[string][]string // by spec: the local fire times
	}{
		{
			name: "spring forward 2026-03-08", start: at(2026, 3, 6, 2, 30), days: 4,
			specs: []string{"every 1d", "cron 30 2 * * *", "cron 0 9 * * *"},
			want: map[string][]string{
				"every 1d":        {"03-07 02:30 EST", "03-08 03:00 EDT", "03-09 02:30 EDT", "03-10 02:30 EDT"},
				"cron 30 2 * * *": {"03-07 02:30 EST", "03-08 03:00 EDT", "03-09 02:30 EDT", "03-10 02:30 EDT"},
				"cron 0 9 * * *":  {"03-06 09:00 EST", "03-07 09:00 EST", "03-08 09:00 EDT", "03-09 09:00 EDT"},
			},
		},
		{
			name: "fall back 2026-11-01", start: at(2026, 10, 30, 1, 30), days: 4,
			specs: []string{"every 1d", "cron 30 1 * * *"},
			want: map[string][]string{
				"every 1d":        {"10-31 01:30 EDT", "11-01 01:30 EDT", "11-02 01:30 EST", "11-03 01:30 EST"},
				"cron 30 1 * * *": {"10-31 01:30 EDT", "11-01 01:30 EDT", "11-02 01:30 EST", "11-03 01:30 EST"},
			},
		},
		{
			name: "spring forward 2027-03-14", start: at(2027, 3, 12, 9, 0), days: 3,
			specs: []string{"every 1d"},
			want:  map[string][]string{"every 1d": {"03-13 09:00 EST", "03-14 09:00 EDT", "03-15 09:00 EDT"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
				e := newEnv(t, open(t), clockwork.NewFakeClockAt(tc.start.UTC()))
				ctx := context.Background()
				names := map[uuid.UUID]string{} // schedule id → spec
				for i, spec := range tc.specs {
					p := routine(string(rune('a'+i))+"-daily", spec)
					p.TimeZone = "America/New_York"
					sc := must(e.sched.CreateSchedule(ctx, p))(t)
					names[sc.ID] = spec
				}
				end := tc.start.AddDate(0, 0, tc.days).Add(time.Minute)
				for range 100 {
					// Move the clock to the next due fire and dispatch there.
					var next time.Time
					for id := range names {
						sc := e.schedule(id)
						if next.IsZero() || sc.NextRunAt.Before(next) {
							next = *sc.NextRunAt
						}
					}
					if !next.Before(end) {
						break
					}
					e.clock.Advance(next.Sub(e.clock.Now()))
					if n := e.tick(); n == 0 {
						t.Fatalf("nothing fired at %s, when a routine was due", next.In(ny))
					}
				}
				got := map[string][]string{}
				for _, it := range e.fires() {
					var p fireArgs
					if err := json.Unmarshal(it.Payload, &p); err != nil {
						t.Fatalf("decoding fire %s: %v", it.ID, err)
					}
					if p.Late {
						t.Errorf("fire %s of %s is late: the clock stood at it", p.Due.In(ny), names[p.ScheduleID])
					}
					spec := names[p.ScheduleID]
					got[spec] = append(got[spec], p.Due.In(ny).Format("01-02 15:04 MST"))
				}
				for _, spec := range tc.specs {
					sort.Strings(got[spec])
					if g, w := got[spec], tc.want[spec]; len(g) != len(w) || !equalStrings(g, w) {
						t.Errorf("%q fired at %q, want %q", spec, g, w)
					}
				}
				for id := range names {
					if sc := e.schedule(id); sc.State != store.ScheduleActive {
						t.Errorf("%s is %s after the change, want active", names[id], sc.State)
					}
				}
			})
		})
	}
}

func equalStrings(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
