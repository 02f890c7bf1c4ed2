package buildinfo

import "testing"

func TestBinary(t *testing.T) {
	for _, tc := range []struct {
		in   Info
		want string
	}{
		{Info{Version: "v1.4.0", Commit: "0123abcd4567890123abcd4567890123abcd4567"}, "v1.4.0 (commit 0123abcd4567)"},
		{Info{Version: "(devel)", Commit: "0123abcd", Modified: true}, "(devel) (commit 0123abcd, modified)"},
		{Info{Version: "v1.4.0"}, "v1.4.0"},
	} {
		if got := tc.in.Binary(); got != tc.want {
			t.Errorf("%+v.Binary() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReadKeepsStamped(t *testing.T) {
	got := Read(Info{Version: "v1.4.0", Commit: "0123abcd", Date: "2026-12-01T10:00:00Z"})
	if got.Version != "v1.4.0" || got.Commit != "0123abcd" || got.Date != "2026-12-01T10:00:00Z" {
		t.Errorf("Read kept %+v; want the stamped version, commit and date", got)
	}
	if got.Go == "" || got.Platform == "" {
		t.Errorf("Read = %+v: want the Go version and platform", got)
	}
	if got := Read(Info{}); got.Version == "" {
		t.Error("Read of an unstamped build has no version; want the module's or (devel)")
	}
}
