package chart

import (
	"slices"
	"testing"
)

// TestTicksReadAsTyped: axis labels are round numbers with the decimals
// their step needs, never float noise like 0.30000000000000004.
func TestTicksReadAsTyped(t *testing.T) {
	tests := []struct {
		lo, hi float64
		n      int
		want   []string
	}{
		{0, 1, 10, []string{"0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"}},
		{0, 1, 4, []string{"0.00", "0.25", "0.50", "0.75", "1.00"}},
		{-5, 12, 4, []string{"-5", "0", "5", "10"}},
		{2019, 2024, 5, []string{"2019", "2020", "2021", "2022", "2023", "2024"}},
		{0, 3e7, 3, []string{"0", "1e+07", "2e+07", "3e+07"}},
	}
	for _, tt := range tests {
		ticks, step := niceTicks(tt.lo, tt.hi, tt.n)
		var got []string
		for _, v := range ticks {
			got = append(got, formatTick(v, step))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ticks of [%g, %g] (about %d): want %q, got %q", tt.lo, tt.hi, tt.n, tt.want, got)
		}
	}
}
