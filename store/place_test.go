package store

import (
	"errors"
	"strings"
	"testing"
)

func TestPlaceColumnsRoundTrip(t *testing.T) {
	for _, p := range []Place{
		{Platform: "slack", Workspace: "T1", Channel: "C1"},
		{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "171.2"},
		DM("slack", "T1", "U1"),
		{Platform: "discord", Channel: "D9", Run: "r1"},
		{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "171.2", Run: "r2"},
		{Platform: "slack", Workspace: "T1", User: "U1", Run: "r3"},
	} {
		if err := p.Validate(); err != nil {
			t.Fatalf("%+v: Validate = %v, want nil", p, err)
		}
		ch, th := p.Columns()
		if got := PlaceFromColumns(p.Platform, p.Workspace, ch, th); got != p {
			t.Errorf("PlaceFromColumns(Columns(%+v)) = %+v, want it back", p, got)
		}
	}
}

func TestPlaceValidateNamesTheField(t *testing.T) {
	for _, c := range []struct {
		p    Place
		want string
	}{
		{Place{Channel: "C1"}, "Platform"},
		{Place{Platform: "slack"}, "neither Channel nor User"},
		{Place{Platform: "slack", Channel: "C1", User: "U1"}, "both Channel"},
		{Place{Platform: "slack", Channel: "user:U1"}, "set User instead"},
		{Place{Platform: "slack", Channel: "C1", Thread: "run:x"}, "set Run instead"},
	} {
		err := c.p.Validate()
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("%+v: Validate = %v, want ErrInvalid", c.p, err)
		}
		if !contains(err.Error(), c.want) {
			t.Errorf("%+v: Validate = %q, want it to say %q", c.p, err, c.want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
