package config

import (
	"fmt"
	"time"
)

// Browser are the settings of the browse tool (browser: in
// switchboard.yaml). The section's presence turns the tool on, for the
// agents that name browse in their tools:
//
//	browser: {timeout: 60s, max_pages: 5}
//
// Each call starts a fresh headless Chromium whose every request goes
// through a filtering proxy: addresses of the local network (loopback,
// private, link-local, cloud metadata) are refused unless allowed.
type Browser struct {
	// Chromium is the browser's path; empty finds chromium (or
	// chromium-browser, google-chrome) on the service's PATH.
	Chromium string `yaml:"chromium,omitempty" json:"chromium,omitempty"`
	// Timeout bounds one browse call, the browser's start included.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty" default:"60s"`
	// MaxPages bounds the pages one call opens (its first page and every
	// one a click or back leads to).
	MaxPages int `yaml:"max_pages,omitempty" json:"max_pages,omitempty" default:"5"`
	// MaxActions bounds the actions (click, type, read, screenshot, wait,
	// back) of one call.
	MaxActions int `yaml:"max_actions,omitempty" json:"max_actions,omitempty" default:"20"`
	// MaxConcurrent bounds the browsers running at once, across agents; a
	// call past it waits.
	MaxConcurrent int `yaml:"max_concurrent,omitempty" json:"max_concurrent,omitempty" default:"2"`
}

func (b *Browser) validate() error {
	if b == nil {
		return nil
	}
	switch {
	case b.Timeout != 0 && (b.Timeout < time.Second || b.Timeout > 30*time.Minute):
		return fmt.Errorf("browser.timeout: %s must be between 1s and 30m", b.Timeout)
	case b.MaxPages < 0 || b.MaxPages > 100:
		return fmt.Errorf("browser.max_pages: %d must be between 1 and 100", b.MaxPages)
	case b.MaxActions < 0 || b.MaxActions > 200:
		return fmt.Errorf("browser.max_actions: %d must be between 1 and 200", b.MaxActions)
	case b.MaxConcurrent < 0 || b.MaxConcurrent > 64:
		return fmt.Errorf("browser.max_concurrent: %d must be between 1 and 64", b.MaxConcurrent)
	}
	return nil
}
