package scheduler_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/scheduler"
)

// TestScheduleConfigErrorsSpeakYAML: a typo under schedules names the line
// of the whole file and the setting's path, not a Go type.
func TestScheduleConfigErrorsSpeakYAML(t *testing.T) {
	raw := []byte("agents: []\nschedules:\n  routines:\n    - name: daily\n      cron: \"0 9 * * *\"\n      promtp: hi\n")
	_, err := scheduler.ParseConfig(raw)
	if err == nil {
		t.Fatal("ParseConfig accepted an unknown field")
	}
	want := `line 6: unknown field "promtp" in schedules.routines[0]`
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "scheduler.") {
		t.Fatalf("error %q, want it to contain %q and no Go type", err, want)
	}
}
