package memory

import (
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
)

// Defaults of Config.
const (
	DefaultBudget           = 200 * time.Millisecond
	DefaultDecayEvery       = 6 * time.Hour
	DefaultHalfLife         = 30 * 24 * time.Hour
	DefaultArchiveBelow     = 0.1
	DefaultConsolidateEvery = 24 * time.Hour
)

// Config is what memory runs with: the memory section of switchboard.yaml
// (config.MemorySection, read by ConfigFrom) with the defaults filled in.
// SWITCHBOARD_MEMORY_BUDGET overrides budget (the app reads it).
type Config struct {
	Budget      time.Duration
	Decay       DecayConfig
	Consolidate ConsolidateConfig
}

// DecayConfig says how notes fade (see Relevance).
type DecayConfig struct {
	Every        time.Duration // how often the decay job runs
	HalfLife     time.Duration // unused this long, a note's relevance halves
	ArchiveBelow float64       // a note below this relevance is archived
}

// ConsolidateConfig says how often the family's notes are merged.
type ConsolidateConfig struct {
	Every time.Duration
}

func (c *Config) defaults() {
	if c.Budget == 0 {
		c.Budget = DefaultBudget
	}
	if c.Decay.Every == 0 {
		c.Decay.Every = DefaultDecayEvery
	}
	if c.Decay.HalfLife == 0 {
		c.Decay.HalfLife = DefaultHalfLife
	}
	if c.Decay.ArchiveBelow == 0 {
		c.Decay.ArchiveBelow = DefaultArchiveBelow
	}
	if c.Consolidate.Every == 0 {
		c.Consolidate.Every = DefaultConsolidateEvery
	}
}

func (c *Config) validate() error {
	short := config.ShortDuration
	switch {
	case c.Budget < time.Millisecond || c.Budget > 10*time.Second:
		return fmt.Errorf("memory.budget %s must be between 1ms and 10s", short(c.Budget))
	case c.Decay.Every < time.Minute:
		return fmt.Errorf("memory.decay.every %s must be at least 1m", short(c.Decay.Every))
	case c.Decay.HalfLife < time.Hour:
		return fmt.Errorf("memory.decay.half_life %s must be at least 1h", short(c.Decay.HalfLife))
	case c.Decay.ArchiveBelow <= 0 || c.Decay.ArchiveBelow >= 1:
		return fmt.Errorf("memory.decay.archive_below %v must be between 0 and 1", c.Decay.ArchiveBelow)
	case c.Consolidate.Every < time.Minute:
		return fmt.Errorf("memory.consolidate.every %s must be at least 1m", short(c.Consolidate.Every))
	}
	return nil
}

// ConfigFrom is the memory: section of switchboard.yaml, as config.Load
// decoded it, checked: a value out of range is an error naming the
// setting (memory.decay.half_life). What the section leaves out stays
// zero, and New fills the defaults.
func ConfigFrom(sec *config.MemorySection) (Config, error) {
	c := Config{Budget: sec.Budget, Decay: DecayConfig(sec.Decay), Consolidate: ConsolidateConfig(sec.Consolidate)}
	check := c
	check.defaults()
	return c, check.validate()
}
