package sqlfile

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"q/a.sql": {Data: []byte("-- preamble ignored\n-- name: One\nSELECT 1;\n\n-- name: Two\n-- a comment kept\nSELECT 2\nFROM t;\n")},
		"q/b.sql": {Data: []byte("-- name: Three\nSELECT 3;\n")},
	}
	q, err := Load(fsys, "q")
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Get("One"); got != "SELECT 1;" {
		t.Fatalf("One = %q", got)
	}
	if got := q.Get("Two"); got != "-- a comment kept\nSELECT 2\nFROM t;" {
		t.Fatalf("Two = %q", got)
	}
	if len(q) != 3 {
		t.Fatalf("loaded %d queries, want 3", len(q))
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"duplicate", "-- name: A\nSELECT 1;\n-- name: A\nSELECT 2;\n", `query "A" defined twice`},
		{"empty", "-- name: A\n\n-- name: B\nSELECT 1;\n", `query "A" is empty`},
		{"nameless", "-- name:\nSELECT 1;\n", "without a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{"q/x.sql": {Data: []byte(tt.body)}}, "q")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load error = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := Load(fstest.MapFS{}, "q"); err == nil {
		t.Fatal("Load of a folder without .sql files must fail")
	}
}

func TestGetUnknownPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Get of an unknown name must panic")
		}
	}()
	Queries{}.Get("nope")
}
