package config

import (
	"fmt"
	"time"
)

// Sandbox turns on the run_code tool (sandbox: in switchboard.yaml): an
// agent whose tools list names run_code may run a short Python,
// JavaScript or shell program inside bubblewrap and get back what it
// printed and the files it wrote (see docs/tools-sandbox.md).
//
//	sandbox: {network: false, timeout: 30s, memory_mb: 256}
//
// Left out, the tool is never offered; set (even as sandbox: {}), it is
// offered once the host proves at start that it can set a sandbox up.
type Sandbox struct {
	// Network lets programs use the host's network, every address the
	// host reaches (its loopback included); it raises run_code's risk
	// from medium to high. Off, a run has no network at all.
	Network bool `yaml:"network,omitempty" json:"network,omitempty" default:"false"`
	// Timeout is the wall-clock bound of one run.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty" default:"30s"`
	// MemoryMB bounds each process's data memory (heap and private
	// mappings), in MiB.
	MemoryMB int `yaml:"memory_mb,omitempty" json:"memory_mb,omitempty" default:"256"`
	// CPUSeconds bounds each process's CPU time.
	CPUSeconds int `yaml:"cpu_seconds,omitempty" json:"cpu_seconds,omitempty" default:"10"`
	// MaxProcesses bounds the processes and threads of one run at once
	// (a fork bomb stops there).
	MaxProcesses int `yaml:"max_processes,omitempty" json:"max_processes,omitempty" default:"32"`
	// MaxOutputBytes bounds what the model gets of stdout and of stderr,
	// each; the rest is dropped and the cut marked.
	MaxOutputBytes int `yaml:"max_output_bytes,omitempty" json:"max_output_bytes,omitempty" default:"32768"`
	// MaxFileBytes bounds each file a program writes, and each input file.
	MaxFileBytes int64 `yaml:"max_file_bytes,omitempty" json:"max_file_bytes,omitempty" default:"1048576"`
	// MaxFiles bounds the files handed back from one run.
	MaxFiles int `yaml:"max_files,omitempty" json:"max_files,omitempty" default:"10"`
	// MaxRuns bounds the runs at once across the instance; a call past it
	// waits.
	MaxRuns int `yaml:"max_runs,omitempty" json:"max_runs,omitempty" default:"2"`
	// Bwrap is the bubblewrap program; empty: bwrap on PATH.
	Bwrap string `yaml:"bwrap,omitempty" json:"bwrap,omitempty"`
}

func (s *Sandbox) validate() error {
	if s == nil {
		return nil
	}
	for _, c := range []struct {
		name     string
		v, lo, h int64
	}{
		{"memory_mb", int64(s.MemoryMB), 16, 64 << 10},
		{"cpu_seconds", int64(s.CPUSeconds), 1, 3600},
		{"max_processes", int64(s.MaxProcesses), 2, 4096},
		{"max_output_bytes", int64(s.MaxOutputBytes), 1, 1 << 20},
		{"max_file_bytes", s.MaxFileBytes, 1, 100 << 20},
		{"max_files", int64(s.MaxFiles), 1, 100},
		{"max_runs", int64(s.MaxRuns), 1, 64},
	} {
		// Zero is the default.
		if c.v != 0 && (c.v < c.lo || c.v > c.h) {
			return fmt.Errorf("sandbox.%s: %d must be between %d and %d", c.name, c.v, c.lo, c.h)
		}
	}
	if s.Timeout < 0 || s.Timeout > time.Hour {
		return fmt.Errorf("sandbox.timeout: %s must be between 0 (the default) and 1h", s.Timeout)
	}
	return nil
}
