//go:build !race

package slackcard_test

const propertyIterations = 300
