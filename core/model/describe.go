package model

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Describe is what people in a chat are told about a failed model call: a
// classified sentence (the model took too long, its answer was too large,
// the provider is unavailable, refused the key, ...), never the text of a
// library or a provider's error body, which goes to the log. ok is false
// when err is not a model failure.
func Describe(err error) (text string, ok bool) {
	var te *TimeoutError
	if errors.As(err, &te) {
		return fmt.Sprintf("The model took longer than %s to answer; stopped.", te.Limit), true
	}
	var e *Error
	if !errors.As(err, &e) {
		return "", false
	}
	who := "The model provider"
	if IsCLI(e.Provider) {
		who = "The " + e.Provider + " CLI"
	}
	status := ""
	if e.Status > 0 {
		status = fmt.Sprintf(" (%d)", e.Status)
	}
	var syntax *json.SyntaxError
	switch {
	case e.Type == ErrorTypeNeedsAuth:
		return fmt.Sprintf("The %s CLI on the Switchboard server is not logged in: %s.", e.Provider, loginHint(e.Provider)), true
	case e.Type == ErrorTypeUnreachable:
		return fmt.Sprintf("The %s CLI is not installed on the Switchboard server: install it (%s) or set %s.", e.Provider, installHint(e.Provider), pathSetting(e.Provider)), true
	case errors.Is(err, bufio.ErrTooLong):
		return "The model's answer was too large to read.", true
	case errors.Is(err, ErrStreamStalled):
		return who + " stopped answering in the middle of the reply; please try again.", true
	case e.Status == http.StatusUnauthorized:
		return who + " refused the key" + status + ": check the agent's API key.", true
	case e.Status == http.StatusForbidden:
		return who + " refused the request" + status + ": the key may not have access to this model.", true
	case e.Status == http.StatusNotFound:
		return who + " does not know this model" + status + ": check the agent's model name.", true
	case e.Status == http.StatusRequestEntityTooLarge:
		return "The conversation is too large for the model" + status + ".", true
	case e.Status == http.StatusTooManyRequests:
		return who + " is rate-limiting this key" + status + "; please try again in a moment.", true
	case e.Status >= 500:
		return who + " is unavailable" + status + "; please try again in a moment.", true
	case e.Status >= 400:
		return who + " rejected the request" + status + ".", true
	case IsCLI(e.Provider) && errors.Is(err, context.DeadlineExceeded):
		return who + " ran past its time limit and was stopped.", true
	case IsCLI(e.Provider) && e.Retryable:
		return who + " stopped before it finished; please try again.", true
	case errors.As(err, &syntax):
		return who + " sent an answer that could not be read.", true
	case e.Retryable:
		return who + " is unavailable (the connection dropped); please try again in a moment.", true
	case errors.Is(err, ErrScriptExhausted):
		return "The scripted model has nothing more to say.", true
	}
	return who + " failed to answer; the details are in the service log.", true
}
