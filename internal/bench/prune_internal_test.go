package bench

import (
	"testing"
	"time"
)

// TestPruneResultMeasuresTheTeeth: the growth of the prune figure is read
// on the most rows of each sweep period of the last half: a saw that keeps
// its height has none, one whose teeth rise has the rise.
func TestPruneResultMeasuresTheTeeth(t *testing.T) {
	const d, period = 10 * time.Minute, time.Minute
	saw := func(rise int64) []pruneSample {
		var ss []pruneSample
		for at := time.Duration(0); at < d; at += 5 * time.Second {
			k := int64(at / period)
			into := int64((at % period) / time.Second)
			ss = append(ss, pruneSample{at: at, rows: 30000 + into*500 + k*rise})
		}
		return ss
	}
	flat, err := pruneResult(saw(0), d, period, period, pruneRun{elapsed: d})
	if err != nil {
		t.Fatal(err)
	}
	if flat.Extra["last_half_peaks"] != 5 || flat.Extra["last_half_growth_rows"] != 0 || flat.Extra["last_half_peak_slope_per_min"] != 0 {
		t.Errorf("a flat saw: %v; want 5 teeth, no growth", flat.Extra)
	}
	if flat.Value != 30000+55*500 || flat.BaselineValue != 60000 {
		t.Errorf("a flat saw: most rows %v, steady state %v; want 57,500 and 60,000", flat.Value, flat.BaselineValue)
	}
	rising, err := pruneResult(saw(1000), d, period, period, pruneRun{elapsed: d})
	if err != nil {
		t.Fatal(err)
	}
	if rising.Extra["last_half_growth_rows"] != 4000 || rising.Extra["last_half_peak_slope_per_min"] < 999 || rising.Extra["last_half_peak_slope_per_min"] > 1001 {
		t.Errorf("teeth rising 1,000 rows a period: %v; want a growth of 4,000 and 1,000 rows a minute", rising.Extra)
	}
	if _, err := pruneResult(saw(0)[:60], d, period, period, pruneRun{elapsed: d}); err == nil {
		t.Error("samples of the first half only made a figure")
	}
}
