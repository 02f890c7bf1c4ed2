// Package deploy holds the tests of what teams deploy Switchboard with: the
// Helm chart (helm/switchboard), the compose file and the container image.
// It is a module of its own so that the Helm, Kubernetes and compose
// libraries the tests need stay out of the service's go.mod and binary.
package deploy
