package store

import (
	"errors"
	"strings"
	"testing"
)

func TestSchemaState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rows   []SchemaMigration
		latest int
		newer  bool
		err    []string // in Err's text; nil: Err is nil
	}{
		{name: "empty", latest: 3},
		{name: "older", rows: []SchemaMigration{{1, 0, "v1"}, {2, 2, "v1"}}, latest: 3},
		{name: "same", rows: []SchemaMigration{{1, 0, "v1"}, {2, 2, "v1"}, {3, 2, "v1"}}, latest: 3},
		{name: "rows before the record", rows: []SchemaMigration{{1, 0, ""}, {2, 0, ""}, {3, 0, ""}}, latest: 3},
		{name: "newer, floor met", rows: []SchemaMigration{{3, 2, "v1"}, {4, 3, "v2"}, {5, 3, "v3"}}, latest: 3, newer: true},
		{name: "newer, floor above", rows: []SchemaMigration{{5, 4, "v3"}, {3, 2, "v1"}, {4, 4, "v2"}}, latest: 3, newer: true,
			err: []string{"schema is at version 5, applied by switchboard v3,", "before 4 stop working", "this binary (switchboard v0) ships schema 3", "run switchboard v2 or later"}},
		{name: "newer, floor above, appliers unknown", rows: []SchemaMigration{{4, 4, ""}}, latest: 3, newer: true,
			err: []string{"applied by a switchboard binary of unknown version", "run a switchboard release that ships schema 4 or later"}},
		{name: "newer, floor's first applier unknown", rows: []SchemaMigration{{4, 4, ""}, {5, 4, "v3"}}, latest: 3, newer: true,
			err: []string{"run switchboard v3 or later"}},
	} {
		s := NewSchemaState(tc.rows, tc.latest, "v0")
		if s.Newer() != tc.newer {
			t.Errorf("%s: Newer() = %v, want %v (%+v)", tc.name, s.Newer(), tc.newer, s)
		}
		err := s.Err()
		if tc.err == nil {
			if err != nil {
				t.Errorf("%s: Err() = %v, want nil", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrSchemaTooNew) {
			t.Errorf("%s: Err() = %v, want ErrSchemaTooNew", tc.name, err)
			continue
		}
		for _, want := range tc.err {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Err() = %q, want it to say %q", tc.name, err, want)
			}
		}
	}
}
