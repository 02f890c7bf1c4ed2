package core_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestHideLinkCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"!link ABCD2345", "!link ••••••••"},
		{"  !LINK abcd2345  ", "!LINK ••••••••"},
		{"! link ABCD2345 extra", "!link ••••••••"},
		{"!link", "!link"},
		{"!linkage ABCD2345", "!linkage ABCD2345"},
		{"link ABCD2345", "link ABCD2345"}, // not a command
		{"!remind in 2h -- ABCD2345", "!remind in 2h -- ABCD2345"},
	} {
		if got := core.HideLinkCode(tc.in); got != tc.want {
			t.Errorf("HideLinkCode(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
