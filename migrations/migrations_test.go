package migrations

import "testing"

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
