//go:build race

package app_test

// keepUpMessages is how many messages TestSummariesKeepUpWithSteadyMessages
// sends. The race detector slows every turn several times over; 300 at the
// same pace still pass the budget a dozen times and keep turns waiting.
const keepUpMessages = 300
