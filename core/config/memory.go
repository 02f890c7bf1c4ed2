package config

import "time"

// MemorySection is the memory: section of switchboard.yaml: how the
// agents' memory notes are recalled, fade and merge. Load checks the
// shape; package memory fills the defaults and checks the values
// (memory.ConfigFrom).
//
//	memory:
//	  budget: 200ms
//	  decay: {every: 6h, half_life: 720h, archive_below: 0.1}
//	  consolidate: {every: 24h}
type MemorySection struct {
	// Budget is the background layer's time budget per turn, from 1ms to
	// 10s; SWITCHBOARD_MEMORY_BUDGET overrides it.
	Budget time.Duration `yaml:"budget,omitempty" default:"200ms"`
	// Decay says how notes fade.
	Decay MemoryDecay `yaml:"decay,omitempty"`
	// Consolidate says how often a family's notes are merged.
	Consolidate MemoryConsolidate `yaml:"consolidate,omitempty"`
}

// MemoryDecay says how notes fade.
type MemoryDecay struct {
	// Every is how often the decay job runs, at least 1m.
	Every time.Duration `yaml:"every,omitempty" default:"6h"`
	// HalfLife is how long a note goes unused before its relevance
	// halves, at least 1h.
	HalfLife time.Duration `yaml:"half_life,omitempty" default:"720h"`
	// ArchiveBelow is the relevance, between 0 and 1, under which a note
	// is archived.
	ArchiveBelow float64 `yaml:"archive_below,omitempty" default:"0.1"`
}

// MemoryConsolidate says how often notes are merged.
type MemoryConsolidate struct {
	// Every is how often a family's notes are merged, at least 1m.
	Every time.Duration `yaml:"every,omitempty" default:"24h"`
}
