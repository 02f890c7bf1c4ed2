package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"gopkg.in/yaml.v3"

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

// Config is the memory section of switchboard.yaml:
//
//	memory:
//	  budget: 200ms            # the background layer's time budget per turn
//	  decay: {every: 6h, half_life: 720h, archive_below: 0.1}
//	  consolidate: {every: 24h}
//
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
	switch {
	case c.Budget < time.Millisecond || c.Budget > 10*time.Second:
		return fmt.Errorf("memory.budget %s must be between 1ms and 10s", c.Budget)
	case c.Decay.Every < time.Minute:
		return fmt.Errorf("memory.decay.every %s must be at least 1m", c.Decay.Every)
	case c.Decay.HalfLife < time.Hour:
		return fmt.Errorf("memory.decay.half_life %s must be at least 1h", c.Decay.HalfLife)
	case c.Decay.ArchiveBelow <= 0 || c.Decay.ArchiveBelow >= 1:
		return fmt.Errorf("memory.decay.archive_below %v must be between 0 and 1", c.Decay.ArchiveBelow)
	case c.Consolidate.Every < time.Minute:
		return fmt.Errorf("memory.consolidate.every %s must be at least 1m", c.Consolidate.Every)
	}
	return nil
}

// rawConfig is the section's form: durations as Go duration strings.
type rawConfig struct {
	Budget string `yaml:"budget"`
	Decay  struct {
		Every        string  `yaml:"every"`
		HalfLife     string  `yaml:"half_life"`
		ArchiveBelow float64 `yaml:"archive_below"`
	} `yaml:"decay"`
	Consolidate struct {
		Every string `yaml:"every"`
	} `yaml:"consolidate"`
}

// ParseConfig reads the memory section of switchboard.yaml (raw is the
// whole file; nil or no section gives the defaults, filled in by New).
// Errors name the setting.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	if len(raw) == 0 {
		return c, nil
	}
	// Other sections belong to other parts: the memory section is taken
	// out, then read strictly (an unknown field is an error).
	var file struct {
		Memory yaml.Node `yaml:"memory"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		return c, fmt.Errorf("memory: %w", err)
	}
	if file.Memory.Kind == 0 {
		return c, nil
	}
	section, err := yaml.Marshal(&file.Memory)
	if err != nil {
		return c, fmt.Errorf("memory: %w", err)
	}
	var r rawConfig
	dec := yaml.NewDecoder(bytes.NewReader(section))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil && !errors.Is(err, io.EOF) {
		return c, config.YAMLSectionError("", raw, "memory", section, err)
	}
	for _, d := range []struct {
		name string
		val  string
		into *time.Duration
	}{
		{"memory.budget", r.Budget, &c.Budget},
		{"memory.decay.every", r.Decay.Every, &c.Decay.Every},
		{"memory.decay.half_life", r.Decay.HalfLife, &c.Decay.HalfLife},
		{"memory.consolidate.every", r.Consolidate.Every, &c.Consolidate.Every},
	} {
		if d.val == "" {
			continue
		}
		v, err := time.ParseDuration(d.val)
		if err != nil || v <= 0 {
			return c, fmt.Errorf("%s: %q must be a positive duration such as 200ms or 24h", d.name, d.val)
		}
		*d.into = v
	}
	c.Decay.ArchiveBelow = r.Decay.ArchiveBelow
	check := c
	check.defaults()
	return c, check.validate()
}
