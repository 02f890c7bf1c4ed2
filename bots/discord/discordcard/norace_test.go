//go:build !race

package discordcard_test

const propertyIterations = 300
