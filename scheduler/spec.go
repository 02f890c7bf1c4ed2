package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/switchboardhq/switchboard/core/command/when"
	"github.com/switchboardhq/switchboard/store"
)

// Spec is when a schedule fires, parsed from its text form:
//
//	every 4h          an interval (s, m, h and d units; at least MinInterval for routines)
//	cron 0 8 * * 1-5  a five-field cron line, read in the schedule's time zone
//	0 8 * * 1-5       the same without the word "cron"; @daily and friends too
//	at 2026-03-08T09:00:00-05:00
//	                  once (reminders)
//	continuous        a goal loop that runs its next iteration as soon as the
//	                  server decides to go on
//
// Schedules keep wall-clock time in the schedule's time zone. A cron line
// is evaluated on the zone's wall clock with gocron's own cron parser, and
// "every Nd" counts calendar days, so "0 8 * * *" and a daily routine made
// at 08:00 in America/New_York both fire at 08:00 local on each side of a
// daylight saving change (13:00 UTC in winter, 12:00 UTC in summer). At the
// edges of a change (when.Date):
//
//   - a wall time in the hour skipped when clocks spring forward fires at
//     the first valid instant after the gap (02:30 fires at 03:00 that day;
//     several occurrences in the gap fire once). gocron's cron, which steps
//     through absolute hours, would skip that day instead;
//   - a wall time that happens twice when clocks fall back fires once, at
//     its first occurrence.
//
// "every" in hours, minutes or seconds ("every 24h") is an exact duration.
type Spec struct {
	text     string
	every    time.Duration // interval specs
	days     int           // interval specs written in days: calendar days
	at       time.Time     // one-shot specs
	cron     gocron.Cron   // cron specs, read on the wall clock (a UTC cron)
	loc      *time.Location
	kind     specKind
	cronText string
	// anchor is an earlier occurrence of a day interval (SetAnchor): its
	// time of day is the one meant when a fire had to move past a gap.
	anchor time.Time
}

type specKind int

const (
	specInterval specKind = iota + 1
	specCron
	specOnce
	specContinuous
)

// errSpec marks a spec that cannot be parsed; the message shows the forms.
var errSpec = errors.New(`want "every 4h", "cron 0 8 * * 1-5", "at 2026-03-08T09:00:00Z" or "continuous"`)

// ParseSpec parses a schedule's spec in the time zone tz (IANA name; ""
// is UTC).
func ParseSpec(text, tz string) (*Spec, error) {
	loc, err := loadLocation(tz)
	if err != nil {
		return nil, err
	}
	s := &Spec{text: strings.TrimSpace(text), loc: loc}
	fields := strings.Fields(s.text)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty schedule: %w", errSpec)
	}
	switch strings.ToLower(fields[0]) {
	case "every":
		if len(fields) != 2 {
			return nil, fmt.Errorf("schedule %q: %w", text, errSpec)
		}
		d, err := parseDuration(fields[1])
		if err != nil {
			return nil, fmt.Errorf("schedule %q: %w", text, err)
		}
		if d <= 0 {
			return nil, fmt.Errorf("schedule %q: the interval must be positive", text)
		}
		s.kind, s.every = specInterval, d
		if n, ok := when.Days(fields[1]); ok && loc != time.UTC {
			s.days = n
		}
	case "at":
		if len(fields) != 2 {
			return nil, fmt.Errorf("schedule %q: %w", text, errSpec)
		}
		t, err := time.Parse(time.RFC3339, fields[1])
		if err != nil {
			return nil, fmt.Errorf("schedule %q: the time must be RFC 3339, as in 2026-03-08T09:00:00Z: %w", text, err)
		}
		s.kind, s.at = specOnce, t.UTC()
	case "continuous":
		if len(fields) != 1 {
			return nil, fmt.Errorf("schedule %q: %w", text, errSpec)
		}
		s.kind = specContinuous
	case "cron":
		fields = fields[1:]
		fallthrough
	default:
		line := strings.Join(fields, " ")
		if strings.HasPrefix(line, "TZ=") || strings.HasPrefix(line, "CRON_TZ=") {
			return nil, fmt.Errorf("schedule %q: give the time zone separately, not in the cron line", text)
		}
		if !strings.HasPrefix(line, "@") && len(fields) != 5 {
			return nil, fmt.Errorf("schedule %q: a cron line has five fields (minute hour day month weekday): %w", text, errSpec)
		}
		c := gocron.NewDefaultCron(false)
		// The cron runs on the wall clock: a wall time read as UTC, where no
		// hour is skipped or repeated; Next maps its answers back to loc.
		// IsValid only checks that the line has an occurrence after its
		// reference time; any fixed instant will do.
		if err := c.IsValid(line, time.UTC, time.Unix(0, 0)); err != nil {
			return nil, fmt.Errorf("schedule %q: %w", text, err)
		}
		s.kind, s.cron, s.cronText = specCron, c, line
	}
	return s, nil
}

// loadLocation and parseDuration read zones and intervals as package when
// does, so a spec's "every 1d" and a reminder's "in 1d" mean the same.
func loadLocation(tz string) (*time.Location, error) { return when.Location(tz) }

func parseDuration(s string) (time.Duration, error) { return when.Duration(s) }

// String is the spec as written.
func (s *Spec) String() string { return s.text }

// Location is the time zone the spec is read in.
func (s *Spec) Location() *time.Location { return s.loc }

// Interval is the interval of an "every" spec, 0 otherwise.
func (s *Spec) Interval() time.Duration { return s.every }

// Once reports whether the spec fires only once.
func (s *Spec) Once() bool { return s.kind == specOnce }

// Continuous reports whether the spec is a continuous loop.
func (s *Spec) Continuous() bool { return s.kind == specContinuous }

// First is the first fire at or after from: the one-shot time, from+interval,
// or the cron's next occurrence after from. Continuous loops start at from.
func (s *Spec) First(from time.Time) time.Time {
	switch s.kind {
	case specOnce:
		return s.at
	case specContinuous:
		return from.UTC()
	}
	return s.Next(from)
}

// SetAnchor gives a day interval an earlier occurrence of the schedule (its
// last run, or its creation), whose time of day is the one meant when the
// occurrence Next starts from was moved past a spring-forward gap: a daily
// 02:30 fires at 03:00 on that day and at 02:30 again the day after.
func (s *Spec) SetAnchor(t time.Time) { s.anchor = t }

// anchorOf is the occurrence a schedule's day interval keeps the time of
// day of: its last run, or its creation before it ever ran.
func anchorOf(sc *store.Schedule) time.Time {
	if sc.LastRunAt != nil {
		return *sc.LastRunAt
	}
	return sc.CreatedAt
}

// Next is the first occurrence strictly after t; the zero time when there is
// none (a one-shot, a continuous loop: the loop decides its next run).
func (s *Spec) Next(t time.Time) time.Time {
	switch s.kind {
	case specInterval:
		if s.days > 0 {
			return s.nextDay(t)
		}
		return t.Add(s.every).UTC()
	case specCron:
		w := wallClock(t.In(s.loc))
		// An occurrence maps back to an instant at or before t when t is in
		// the second pass of a repeated hour, or at the end of a gap whose
		// occurrences all fired at once: those are passed over.
		for range maxWallSteps {
			if w = s.cron.Next(w); w.IsZero() {
				return time.Time{}
			}
			if n := fromWallClock(w, s.loc); n.After(t) {
				return n.UTC()
			}
		}
	}
	return time.Time{}
}

// maxWallSteps bounds the cron occurrences passed over in one Next: at most
// one per minute of a repeated or skipped hour.
const maxWallSteps = 4 * 60

// nextDay is t moved on by the interval's days at the same local time of
// day; when t is the first instant after a spring-forward gap and the
// anchor's time of day lies in that gap, the anchor's time of day is kept.
func (s *Spec) nextDay(t time.Time) time.Time {
	l := t.In(s.loc)
	h, m, sec, ns := l.Hour(), l.Minute(), l.Second(), l.Nanosecond()
	if a := s.anchor; !a.IsZero() && gapEnd(t, s.loc) {
		_, before := t.Add(-time.Nanosecond).In(s.loc).Zone()
		from := wallClock(t.In(time.FixedZone("", before))) // the gap's wall start
		to := wallClock(l)
		al := a.In(s.loc)
		aw := time.Date(l.Year(), l.Month(), l.Day(), al.Hour(), al.Minute(), al.Second(), al.Nanosecond(), time.UTC)
		if !aw.Before(from) && aw.Before(to) {
			h, m, sec, ns = al.Hour(), al.Minute(), al.Second(), al.Nanosecond()
		}
	}
	return when.Date(l.Year(), l.Month(), l.Day()+s.days, h, m, sec, ns, s.loc).UTC()
}

// gapEnd reports whether t is the first instant after a spring-forward gap
// in loc (the zone's offset grows at t).
func gapEnd(t time.Time, loc *time.Location) bool {
	l := t.In(loc)
	start, _ := l.ZoneBounds()
	if !start.Equal(t) {
		return false
	}
	_, now := l.Zone()
	_, before := t.Add(-time.Nanosecond).In(loc).Zone()
	return now > before
}

// wallClock is t's wall-clock reading as a UTC time.
func wallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// fromWallClock is the instant of a wall-clock reading in loc (when.Date).
func fromWallClock(w time.Time, loc *time.Location) time.Time {
	return when.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
}

// maxCatchUp bounds the walk over missed cron occurrences; past it the
// latest occurrence is approximated from the last one walked (a minutely
// cron left off for more than a year).
const maxCatchUp = 600000

// Latest returns the latest occurrence at or before now, starting from due
// (an occurrence at or before now), and the one after it. A schedule that
// was down for a while fires once, for the latest occurrence, not once per
// occurrence missed.
func (s *Spec) Latest(due, now time.Time) (latest, next time.Time) {
	latest = due
	switch s.kind {
	case specInterval:
		if s.days > 0 {
			// Days are 23 to 25 hours long: jump close, then walk.
			if k := int(now.Sub(due)/s.every) - 1; k > 0 {
				latest = when.AddDays(due, k*s.days, s.loc)
			}
			for range maxCatchUp {
				n := s.Next(latest)
				if n.After(now) {
					return latest.UTC(), n
				}
				latest = n
			}
			return latest.UTC(), s.Next(now)
		}
		if k := now.Sub(due) / s.every; k > 0 {
			latest = due.Add(k * s.every)
		}
		return latest.UTC(), s.Next(latest)
	case specCron:
		for range maxCatchUp {
			n := s.Next(latest)
			if n.IsZero() || n.After(now) {
				return latest.UTC(), n
			}
			latest = n
		}
		return latest.UTC(), s.Next(now)
	}
	return latest.UTC(), time.Time{}
}
