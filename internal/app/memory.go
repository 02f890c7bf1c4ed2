package app

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/memory"
	"github.com/switchboardhq/switchboard/scheduler"
)

// buildMemory makes the agents' memory from the memory section of
// switchboard.yaml (SWITCHBOARD_MEMORY_BUDGET over its budget) and
// registers remember and recall.
func (a *App) buildMemory(agents *config.Config) error {
	cfg, err := memory.ConfigFrom(&agents.Memory)
	if err != nil {
		return fmt.Errorf("config %s: %w", a.cfg.ConfigPath, err)
	}
	if a.cfg.MemoryBudget != 0 {
		cfg.Budget = a.cfg.MemoryBudget
	}
	a.Memory, err = memory.New(memory.Options{
		Store: a.Store, Agents: agents, Config: cfg, Now: a.cfg.Now, Logger: a.log.With("part", "memory"),
	})
	if err != nil {
		return err
	}
	return memory.RegisterTools(a.Registry, a.Memory)
}

// memoryJobs are the memory upkeep's periodic jobs, for the scheduler.
func (a *App) memoryJobs() []scheduler.Job {
	var out []scheduler.Job
	for _, j := range a.Memory.Jobs() {
		out = append(out, scheduler.Job(j))
	}
	return out
}
