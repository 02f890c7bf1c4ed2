//go:build race

package slackcard_test

// The race detector slows the property test tenfold; the renderers share
// nothing between goroutines, so fewer iterations lose no coverage of races.
const propertyIterations = 60
