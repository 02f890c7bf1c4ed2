package bench_test

// The figures run in this package's tests and benchmarks (BENCH_FIGURE=ack
// included) measure against the fake Slack.
import _ "github.com/switchboardhq/switchboard/internal/bench/benchfakes"
