package config

import (
	"strings"
	"testing"
	"time"
)

func TestSandboxSettings(t *testing.T) {
	cfg, err := Parse("", []byte("agents:\n- name: atlas\n  tools: [run_code]\n"), nil)
	if err != nil || cfg.Sandbox != nil {
		t.Fatalf("no sandbox: section: %+v, %v; want no sandbox", cfg.Sandbox, err)
	}
	cfg, err = Parse("", []byte("sandbox: {}\n"), nil)
	if err != nil || cfg.Sandbox == nil {
		t.Fatalf("sandbox: {} = %+v, %v; want a sandbox with the defaults", cfg.Sandbox, err)
	}
	cfg, err = Parse("", []byte("sandbox: {network: true, timeout: 45s, memory_mb: 128, cpu_seconds: 5, max_processes: 8}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Sandbox; !s.Network || s.Timeout != 45*time.Second || s.MemoryMB != 128 || s.CPUSeconds != 5 || s.MaxProcesses != 8 {
		t.Fatalf("sandbox = %+v; want the file's values", s)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"sandbox: {memory_mb: 4}", "sandbox.memory_mb: 4 must be between 16 and 65536"},
		{"sandbox: {max_processes: 1}", "sandbox.max_processes"},
		{"sandbox: {timeout: -1s}", "sandbox.timeout"},
		{"sandbox: {timeout: soon}", "soon"},
		{"sandbox: {netwrok: true}", "netwrok"},
	} {
		if _, err := Parse("", []byte(tc.yaml), nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want an error with %q", tc.yaml, err, tc.want)
		}
	}
}
