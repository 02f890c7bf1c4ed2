package migrations

import (
	"strings"
	"testing"
)

func TestLoadBothDialects(t *testing.T) {
	for _, d := range []string{"postgres", "sqlite"} {
		ms, err := Load(d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if len(ms) == 0 {
			t.Fatalf("%s: no migrations", d)
		}
		for i, m := range ms {
			if m.Version != i+1 {
				t.Fatalf("%s: migration %d has version %d; versions must run 1, 2, 3... without gaps", d, i, m.Version)
			}
			if m.SQL == "" {
				t.Fatalf("%s: %s is empty", d, m.Name)
			}
		}
	}
	pg, _ := Latest("postgres")
	lite, _ := Latest("sqlite")
	if pg != lite {
		t.Fatalf("postgres ships version %d, sqlite %d: the dialects must move together", pg, lite)
	}
	if _, err := Load("oracle"); err == nil {
		t.Fatal("an unknown dialect must be an error")
	}
}

func TestParseContract(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       int
		err        string
	}{
		{"none", "-- Adds a column.\nALTER TABLE t ADD COLUMN c text;\n", 0, ""},
		{"declared", "-- Drops t.b.\n--\n-- contract: binaries before schema 12 stop working (they read t.b)\nALTER TABLE t DROP COLUMN b;\n", 12, ""},
		{"own version", "-- contract: binaries before schema 14 stop working\nDROP TABLE t;\n", 14, ""},
		{"after a statement", "DROP TABLE t;\n-- contract: binaries before schema 3 stop working\n", 0, "must be in the header"},
		{"misspelt", "-- contract: binaries older than 3 break\nDROP TABLE t;\n", 0, "want \"-- contract: binaries before schema N stop working\""},
		{"above own version", "-- contract: binaries before schema 15 stop working\nDROP TABLE t;\n", 0, "between 1 and the migration's own version 14"},
		{"zero", "-- contract: binaries before schema 0 stop working\nDROP TABLE t;\n", 0, "between 1 and"},
		{"twice", "-- contract: binaries before schema 3 stop working\n-- contract: binaries before schema 4 stop working\n", 0, "a second contract line"},
	} {
		got, err := parseContract("postgres/0014_x.sql", 14, tc.body)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "postgres/0014_x.sql")):
			t.Errorf("%s: error %v; want one naming the file and saying %q", tc.name, err, tc.err)
		case got != tc.want:
			t.Errorf("%s: floor %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestFloorsCarryForward(t *testing.T) {
	ms := []Migration{{Version: 1}, {Version: 2, Contract: 2}, {Version: 3}, {Version: 4, Contract: 3}, {Version: 5}}
	WithFloors(ms)
	for i, want := range []int{0, 2, 2, 3, 3} {
		if ms[i].Floor != want {
			t.Errorf("migration %d: floor %d, want %d (an expand migration keeps the floor before it)", ms[i].Version, ms[i].Floor, want)
		}
	}
	for _, d := range []string{"postgres", "sqlite"} {
		loaded, err := Load(d)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(loaded); i++ {
			if loaded[i].Floor < loaded[i-1].Floor || loaded[i].Floor < loaded[i].Contract {
				t.Errorf("%s: floor of %s is %d after %d (contract %d): floors only rise", d, loaded[i].Name, loaded[i].Floor, loaded[i-1].Floor, loaded[i].Contract)
			}
		}
	}
}
