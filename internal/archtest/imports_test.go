// Package archtest checks the import rules ARCHITECTURE.md draws: which way
// the imports go between the service's packages.
package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/switchboardhq/switchboard"

// deps lists every package pkg depends on, directly or not (go list -deps).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func TestImportRules(t *testing.T) {
	for _, rule := range []struct {
		pkg    string
		why    string
		banned func(dep string) bool
	}{
		{"store", "store imports nothing of ours", func(d string) bool {
			return strings.HasPrefix(d, module+"/") && d != module+"/store"
		}},
		{"core", "core imports no platform SDK and none of the parts built on it", func(d string) bool {
			return strings.HasPrefix(d, "github.com/slack-go/") || strings.HasPrefix(d, "github.com/bwmarrin/") ||
				hasAnyPrefix(d, module+"/bots", module+"/scheduler", module+"/core/command", module+"/headless", module+"/internal/app")
		}},
		{"scheduler", "the scheduler imports no platform and no delivery package", func(d string) bool {
			return strings.HasPrefix(d, "github.com/slack-go/") || strings.HasPrefix(d, "github.com/bwmarrin/") ||
				hasAnyPrefix(d, module+"/bots", module+"/internal/app") || d == module+"/core/command"
		}},
	} {
		for _, d := range deps(t, rule.pkg) {
			if rule.banned(d) {
				t.Errorf("%s depends on %s; the rule: %s", rule.pkg, d, rule.why)
			}
		}
	}
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}

// rooms are the top level the design card names; every Go package lives in
// one of them.
var rooms = []string{"cmd", "bots", "core", "headless", "scheduler", "store", "migrations", "internal"}

func TestEveryPackageIsInARoom(t *testing.T) {
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(p, module+"/")
		top, _, _ := strings.Cut(rel, "/")
		if !slices.Contains(rooms, top) {
			t.Errorf("package %s is outside the rooms %v (ARCHITECTURE.md)", p, rooms)
		}
	}
}
