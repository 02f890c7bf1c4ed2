//go:build benchfakes

package main

// A binary built with -tags benchfakes measures `switchboard bench ack`
// against a fake Slack; a release binary reports that figure skipped.
import _ "github.com/switchboardhq/switchboard/internal/bench/benchfakes"
