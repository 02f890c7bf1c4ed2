//go:build !race

package app_test

// keepUpMessages is how many messages TestSummariesKeepUpWithSteadyMessages
// sends: the 1,500.
const keepUpMessages = 1500
