package main

// The bench tests measure every figure, the ack one against the fake Slack.
import _ "github.com/switchboardhq/switchboard/internal/bench/benchfakes"
