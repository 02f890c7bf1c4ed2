// Package when reads the times people write: when a reminder is due ("in
// 2h", "tomorrow 9:00", "2026-03-08 09:00"), durations ("4h", "1d") and
// time zones, and writes a time back the way people read it.
//
// It depends on the standard library only, so both the command language
// (package command) and the scheduler's remind tool read times the same
// way without the scheduler depending on the command language.
//
// Every error is about the text or the time zone given; its message says
// what is wrong in words fit for the person or agent who wrote it. Callers
// mark it as invalid input of their own kind.
package when

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Parse reads when something is due, relative to now, in time zone tz
// (IANA; "" is UTC):
//
//	in 20m, in 2h, in 1d, in 2 hours, in 10 minutes   after a while
//	20m, 2h                                           the same without "in"
//	15:30, at 15:30                                   the next 15:30
//	tomorrow 9:00, tomorrow at 9:00                   tomorrow
//	2026-03-08 09:00                                  that day and time
//	2026-03-08T09:00:00-05:00                         an instant (RFC 3339)
//
// Days are calendar days in tz: "in 1d" at 09:00 is 09:00 the next day even
// across a daylight saving change, while "in 24h" is 24 hours. A time of
// day is read as Date reads it: one in the hour skipped when clocks spring
// forward is due at the first instant after the gap, one that happens twice
// when they fall back at its first occurrence. The result is in UTC.
func Parse(text string, now time.Time, tz string) (time.Time, error) {
	loc, err := Location(tz)
	if err != nil {
		return time.Time{}, err
	}
	s := strings.ToLower(strings.Join(strings.Fields(text), " "))
	if s == "" {
		return time.Time{}, fmt.Errorf("when? say in 2h, at 15:30, tomorrow 9:00 or 2026-03-08 09:00")
	}
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(s)); err == nil {
		return t.UTC(), nil
	}
	if rest, ok := strings.CutPrefix(s, "in "); ok {
		return after(rest, now, loc)
	}
	if d, err := after(s, now, loc); err == nil {
		return d, nil
	}
	s = strings.TrimPrefix(s, "at ")
	local := now.In(loc)
	if rest, ok := strings.CutPrefix(s, "tomorrow"); ok {
		h, m, err := clockOf(strings.TrimPrefix(strings.TrimSpace(rest), "at "))
		if err != nil {
			return time.Time{}, err
		}
		return Date(local.Year(), local.Month(), local.Day()+1, h, m, 0, 0, loc).UTC(), nil
	}
	if day, clock, ok := strings.Cut(s, " "); ok {
		if d, err := time.Parse("2006-01-02", day); err == nil {
			h, m, err := clockOf(clock)
			if err != nil {
				return time.Time{}, err
			}
			return Date(d.Year(), d.Month(), d.Day(), h, m, 0, 0, loc).UTC(), nil
		}
	}
	h, m, err := clockOf(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot read %q as a time: say in 2h, at 15:30, tomorrow 9:00 or 2026-03-08 09:00", text)
	}
	t := Date(local.Year(), local.Month(), local.Day(), h, m, 0, 0, loc)
	if !t.After(now) {
		t = Date(local.Year(), local.Month(), local.Day()+1, h, m, 0, 0, loc)
	}
	return t.UTC(), nil
}

// Date is time.Date for a wall-clock time in loc, with the daylight saving
// edges decided rather than left to time.Date (which reads a time in the
// spring-forward gap with the offset after it, so 02:30 becomes 01:30):
//
//   - a wall time that does not exist (the hour skipped when clocks spring
//     forward) is the first valid instant after the gap: 02:30 on New York's
//     spring-forward day is 03:00 EDT;
//   - a wall time that happens twice (the hour repeated when clocks fall
//     back) is its first occurrence: 01:30 on New York's fall-back day is
//     01:30 EDT.
//
// Out-of-range fields normalise as in time.Date (day 32 is the next month).
func Date(year int, month time.Month, day, hour, min, sec, nsec int, loc *time.Location) time.Time {
	// The wall time read as if it were UTC; the instant it names in loc is
	// naive minus loc's offset at that instant. Offsets span at most -12h to
	// +14h and zone changes are weeks apart, so the offsets 15 hours before
	// and 15 hours after cover every candidate.
	naive := time.Date(year, month, day, hour, min, sec, nsec, time.UTC)
	_, before := naive.Add(-15 * time.Hour).In(loc).Zone()
	_, after := naive.Add(15 * time.Hour).In(loc).Zone()
	var first time.Time
	for _, off := range []int{before, after} {
		t := naive.Add(-time.Duration(off) * time.Second)
		if _, o := t.In(loc).Zone(); o == off && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if !first.IsZero() {
		return first.In(loc)
	}
	// In a gap: read with the earlier offset the instant is already past the
	// change, whose start is the first valid instant after the gap.
	start, _ := naive.Add(-time.Duration(before) * time.Second).In(loc).ZoneBounds()
	return start.In(loc)
}

// Duration reads Go durations plus a "d" (24h) unit: "4h", "90m", "1d".
func Duration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("interval %q: want a number of days such as 1d", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("interval %q: want a duration such as 30m, 4h or 1d", s)
	}
	return d, nil
}

// Location loads an IANA time zone; "" and "UTC" are UTC.
func Location(tz string) (*time.Location, error) {
	if tz == "" || strings.EqualFold(tz, "UTC") {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: want an IANA name such as America/New_York: %w", tz, err)
	}
	return loc, nil
}

// Format writes t in time zone tz (UTC when tz cannot be loaded) the way a
// confirmation shows it: "Mon 2 Mar 2026 14:00 UTC".
func Format(t time.Time, tz string) string {
	loc, err := Location(tz)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Mon 2 Jan 2006 15:04 MST")
}

var units = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// after reads "2h", "90m", "1d", "2 hours". Days are calendar days in loc
// (AddDays); the other units are exact durations.
func after(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, unit, ok := strings.Cut(s, " "); ok {
		var k int
		if _, err := fmt.Sscanf(n, "%d", &k); err != nil || fmt.Sprint(k) != n {
			return time.Time{}, fmt.Errorf("cannot read %q as a duration", s)
		}
		u, ok := units[unit]
		if !ok || k <= 0 {
			return time.Time{}, fmt.Errorf("cannot read %q as a duration", s)
		}
		if u == 24*time.Hour {
			return AddDays(now, k, loc).UTC(), nil
		}
		return now.Add(time.Duration(k) * u).UTC(), nil
	}
	d, err := Duration(s)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("cannot read %q as a duration", s)
	}
	if days, ok := Days(s); ok {
		return AddDays(now, days, loc).UTC(), nil
	}
	return now.Add(d).UTC(), nil
}

// Days reports the number of days of an interval written in days ("1d",
// "7d"), as Duration reads it; false for any other unit ("24h").
func Days(s string) (int, bool) {
	n, ok := strings.CutSuffix(strings.TrimSpace(s), "d")
	if !ok {
		return 0, false
	}
	days, err := strconv.Atoi(n)
	return days, err == nil
}

// AddDays is t moved by days calendar days in loc, at the same wall-clock
// time of day, read as Date reads it: across a daylight saving change a day
// is 23 or 25 hours, so 09:00 stays 09:00.
func AddDays(t time.Time, days int, loc *time.Location) time.Time {
	l := t.In(loc)
	return Date(l.Year(), l.Month(), l.Day()+days, l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), loc)
}

func clockOf(s string) (int, int, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"15:04", "3:04pm", "3pm", "15"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Hour(), t.Minute(), nil
		}
	}
	return 0, 0, fmt.Errorf("%q is not a time of day such as 09:00 or 3pm", s)
}
