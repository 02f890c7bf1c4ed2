package config

import (
	"fmt"
	"time"
)

// Where an agent's model calls run (Agent.RunsOn).
const (
	// RunsOnService runs the agent's model calls inside `switchboard serve`
	// (the default).
	RunsOnService = "service"
	// RunsOnBridge runs them on a machine of the agent's own: a
	// `switchboard bridge` process connected to the service claims each
	// call and runs it with that machine's CLIs, logins and keys.
	RunsOnBridge = "bridge"
)

// Bridge bounds how the service waits for bridges (bridge: in
// switchboard.yaml); see docs/bridge.md.
//
//	bridge:
//	  wait: 2m
//	  lease: 30s
type Bridge struct {
	// Wait is how long a turn of a runs_on: bridge agent waits for a
	// bridge to take its model call (its status says "waiting for the
	// agent's machine") before it answers that no machine of the agent is
	// connected.
	Wait time.Duration `yaml:"wait,omitempty" json:"wait,omitempty" default:"2m"`
	// Lease is how long a bridge holds a model call without a heartbeat:
	// a bridge that dies mid-call loses it after this long, and another
	// bridge takes the call again from the start.
	Lease time.Duration `yaml:"lease,omitempty" json:"lease,omitempty" default:"30s"`
}

// Defaults of Bridge.
const (
	DefaultBridgeWait  = 2 * time.Minute
	DefaultBridgeLease = 30 * time.Second
)

// WaitOrDefault is Wait, or DefaultBridgeWait when unset.
func (b Bridge) WaitOrDefault() time.Duration {
	if b.Wait == 0 {
		return DefaultBridgeWait
	}
	return b.Wait
}

// LeaseOrDefault is Lease, or DefaultBridgeLease when unset.
func (b Bridge) LeaseOrDefault() time.Duration {
	if b.Lease == 0 {
		return DefaultBridgeLease
	}
	return b.Lease
}

func (b Bridge) validate() error {
	if b.Wait < 0 {
		return fmt.Errorf("bridge.wait %s must not be negative", b.Wait)
	}
	if b.Lease < 0 || (b.Lease > 0 && b.Lease < time.Second) {
		return fmt.Errorf("bridge.lease %s must be at least 1s", b.Lease)
	}
	return nil
}

// OnBridge reports whether the agent's model calls run on a bridge.
func (a *Agent) OnBridge() bool { return a.RunsOn == RunsOnBridge }

func (a *Agent) validateRunsOn() error {
	switch a.RunsOn {
	case "", RunsOnService, RunsOnBridge:
		return nil
	}
	return fmt.Errorf("runs_on %q must be service or bridge", a.RunsOn)
}
