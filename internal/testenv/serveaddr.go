package testenv

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// listeningLine is `switchboard serve`'s "listening" log line, in the text
// or the JSON format, with the address its HTTP server bound.
var listeningLine = regexp.MustCompile(`msg=listening addr=(\S+)|"msg":"listening","addr":"([^"]+)"`)

// ServeAddr waits until out (the output of a `switchboard serve` started
// with SWITCHBOARD_ADDR=127.0.0.1:0) holds its "listening" line and returns
// the address named there. The process binds a free port of its own: a
// port chosen by the test and closed again before the process bound it
// could be taken in between by another test's server, which then answered
// the test's requests (seen in CI: a readiness probe answered, events
// refused with 401). exited, when closed, ends the wait.
func ServeAddr(out func() string, exited <-chan struct{}, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		if m := listeningLine.FindStringSubmatch(out()); m != nil {
			if m[1] != "" {
				return m[1], nil
			}
			return m[2], nil
		}
		select {
		case <-exited:
			return "", errors.New("the process exited before it listened")
		default:
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no \"listening\" line within %s", timeout)
		}
		time.Sleep(10 * time.Millisecond) // polling the output with a deadline
	}
}
