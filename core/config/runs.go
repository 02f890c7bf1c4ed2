package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Runs are the settings of plans and runs (runs: in switchboard.yaml).
//
//	runs:
//	  slots: {coding: 2, default: 8}
//
// Slots bound how many run steps of each resource class work at once,
// across every run; a step past the limit waits. An agent's class is its
// own (class:), else coding for a coding-CLI backend, else default.
type Runs struct {
	// Slots are how many run steps of each class (by its name) work at
	// once, across every run; a class left out takes default's limit.
	Slots map[string]int `yaml:"slots,omitempty" json:"slots,omitempty" default:"{coding: 2, default: 8}"`
	// KeepFailedWorktrees is how long a failed run's coding worktrees stay
	// in the data folder for inspection before they are swept; a run that
	// ends otherwise has them removed at once.
	KeepFailedWorktrees time.Duration `yaml:"keep_failed_worktrees,omitempty" json:"keep_failed_worktrees,omitempty" default:"24h"`
	// Repositories are the local paths and git URLs coding steps may work
	// in and push to, each a prefix (/srv/git/, https://git.internal/team/,
	// git@git.internal:team/): a plan is written by a model, and these are
	// reached with the service's own files and keys. None: only owner/name
	// repositories, which go through a person's or workspace's GitHub
	// connection.
	Repositories []string `yaml:"repositories,omitempty" json:"repositories,omitempty"`
}

// RepositoryAllowed reports whether a coding step may use the local path
// or git URL repo: it starts with one of Repositories.
func (r Runs) RepositoryAllowed(repo string) bool {
	for _, p := range r.Repositories {
		if strings.HasPrefix(repo, p) {
			return true
		}
	}
	return false
}

// Default slot limits, for classes the file leaves out.
const (
	ClassDefault = "default"
	ClassCoding  = "coding"
)

// DefaultSlots are the limits of the classes a file leaves out.
var DefaultSlots = map[string]int{ClassCoding: 2, ClassDefault: 8}

// SlotLimit is how many steps of class may work at once: the file's
// limit, else the default class's, else DefaultSlots'.
func (r Runs) SlotLimit(class string) int {
	if n, ok := r.Slots[class]; ok {
		return n
	}
	if n, ok := DefaultSlots[class]; ok {
		return n
	}
	if n, ok := r.Slots[ClassDefault]; ok {
		return n
	}
	return DefaultSlots[ClassDefault]
}

func (r Runs) validate() error {
	for i, p := range r.Repositories {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("runs.repositories[%d] is empty", i)
		}
	}
	if r.KeepFailedWorktrees < 0 {
		return fmt.Errorf("runs.keep_failed_worktrees: %s must not be negative", r.KeepFailedWorktrees)
	}
	for class, n := range r.Slots {
		if !nameRE.MatchString(class) {
			return fmt.Errorf("runs.slots: class %q must be 1-64 lowercase letters, digits, - or _", class)
		}
		if n < 1 || n > 1000 {
			return fmt.Errorf("runs.slots.%s: %d must be between 1 and 1000", class, n)
		}
	}
	return nil
}

// RunCheck is an optional completion check of the runs an agent leads:
// once every step is done, a command run in Dir (its exit status decides)
// and then a judge agent (its answer, PASS or FAIL with a reason) say
// whether the run passed. In a run with coding steps they are each coding
// step's gates instead: the command runs in the step's worktree and the
// judge reviews its diff.
type RunCheck struct {
	// Command is a shell command (sh -c) whose exit status says whether
	// the run passed.
	Command string `yaml:"command,omitempty" json:"command,omitempty"`
	// Dir is the command's working directory; empty: the service's.
	Dir string `yaml:"dir,omitempty" json:"dir,omitempty"`
	// Judge names a declared agent that reads the run (a coding step's
	// diff) and answers PASS or FAIL, with why; after the command when
	// both are set.
	Judge string `yaml:"judge,omitempty" json:"judge,omitempty"`
	// Timeout bounds the check; one that runs out fails the run.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty" default:"10m"`
}

// Empty reports whether no check is set.
func (c RunCheck) Empty() bool { return c.Command == "" && c.Judge == "" }

// codingBackends are the model providers that run a coding CLI.
var codingBackends = []string{"claude-code", "codex"}

// RunClass is the slot class the agent's run steps take.
func (a *Agent) RunClass() string {
	if a.Class != "" {
		return a.Class
	}
	provider, _, _ := strings.Cut(a.Model, ":")
	if slices.Contains(codingBackends, provider) {
		return ClassCoding
	}
	return ClassDefault
}

func (c *Config) validateRuns() error {
	if err := c.Runs.validate(); err != nil {
		return err
	}
	for _, a := range c.Agents {
		if a.Class != "" && !nameRE.MatchString(a.Class) {
			return fmt.Errorf("agent %q: class %q must be 1-64 lowercase letters, digits, - or _", a.Name, a.Class)
		}
		if a.RunCheck.Judge != "" {
			if _, ok := c.Find(a.RunCheck.Judge); !ok {
				return fmt.Errorf("agent %q: run_check.judge: no agent named %q", a.Name, a.RunCheck.Judge)
			}
		}
		if a.RunCheck.Timeout < 0 {
			return fmt.Errorf("agent %q: run_check.timeout must not be negative", a.Name)
		}
	}
	return nil
}
