package doctor_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/doctor"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// Doctor checks the sandbox only when switchboard.yaml turns it on: it
// runs a program in one, lists the languages and who is offered
// run_code, and says what to install when bwrap is missing.
func TestDoctorChecksTheSandbox(t *testing.T) {
	testenv.RequireBwrap(t)
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	cfg := s.cfg
	rs, out := run(t, cfg, "")
	if r := find(rs, "sandbox"); r != nil {
		t.Fatalf("sandbox checked without a sandbox: section: %+v", r)
	}
	const agent = "agents:\n  - name: ana\n    model: anthropic:claude-sonnet-4-5\n    tools: [run_code]\n"
	write(t, cfg.ConfigPath, agent+"sandbox: {timeout: 20s}\n")
	rs, out = run(t, cfg, "")
	if r := find(rs, "sandbox"); r == nil || r.Status != doctor.StatusOK || !strings.Contains(r.Detail, "risk medium; languages: python") || !strings.Contains(r.Detail, "offered to ana") {
		t.Fatalf("sandbox = %+v:\n%s", r, out)
	}
	write(t, cfg.ConfigPath, agent+"sandbox: {bwrap: /nonexistent/bwrap}\n")
	rs, out = run(t, cfg, "")
	if r := find(rs, "sandbox"); r == nil || r.Status != doctor.StatusFail || !strings.Contains(r.Detail, "run_code is not offered") || !strings.Contains(r.Fix, "apt-get install bubblewrap") {
		t.Fatalf("sandbox without bwrap = %+v:\n%s", r, out)
	}
}
