package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/switchboardhq/switchboard/command/when"
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
// Cron lines are evaluated by gocron's own cron implementation with the
// schedule's time zone, so "0 8 * * *" in America/New_York is 08:00 local
// time on both sides of a daylight saving change (13:00 UTC in winter, 12:00
// UTC in summer), a wall time that does not exist on the day clocks spring
// forward is skipped that day, and one that happens twice when they fall
// back fires once.
type Spec struct {
	text     string
	every    time.Duration // interval specs
	at       time.Time     // one-shot specs
	cron     gocron.Cron   // cron specs
	loc      *time.Location
	kind     specKind
	cronText string
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
		// IsValid only checks that the line has an occurrence after its
		// reference time; any fixed instant will do.
		if err := c.IsValid(line, loc, time.Unix(0, 0)); err != nil {
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

// Next is the first occurrence strictly after t; the zero time when there is
// none (a one-shot, a continuous loop: the loop decides its next run).
func (s *Spec) Next(t time.Time) time.Time {
	switch s.kind {
	case specInterval:
		return t.Add(s.every).UTC()
	case specCron:
		n := s.cron.Next(t.In(s.loc))
		// When clocks fall back, a wall time happens twice; it fires once,
		// at its first occurrence.
		for i := 0; i < 120 && !n.IsZero() && s.repeatedWall(n); i++ {
			n = s.cron.Next(n)
		}
		return n.UTC()
	}
	return time.Time{}
}

const wallLayout = "2006-01-02 15:04:05"

// repeatedWall reports whether the wall time of n in the spec's zone
// already happened earlier (n falls in the hour repeated when clocks fall
// back).
func (s *Spec) repeatedWall(n time.Time) bool {
	_, now := n.In(s.loc).Zone()
	_, before := n.Add(-3 * time.Hour).In(s.loc).Zone()
	if before <= now {
		return false
	}
	shift := time.Duration(before-now) * time.Second
	return n.Add(-shift).In(s.loc).Format(wallLayout) == n.In(s.loc).Format(wallLayout)
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
