// Package archtest checks the import rules ARCHITECTURE.md draws: which way
// the imports go between the service's packages.
package archtest

import (
	"maps"
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

// imports lists, for each package matching pattern, the packages its
// non-test files import directly (go list's Imports: a package's tests
// may reach further, to set up what they check).
func imports(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/"+pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	m := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[strings.TrimPrefix(f[0], module+"/")] = f[1:]
		}
	}
	return m
}

// storeDirect are the packages under bots/ that still import store (or a
// driver) themselves: none. A line here would be a debt, removed once the
// package calls core instead; empty, the rule holds for every package
// under bots/.
var storeDirect = []string{}

// TestBotsReachTheStoreThroughCore: what people and programs reach agents
// through is transport. A package under bots/ calls core's methods for
// what it reads and does, takes a narrow interface core declares for what
// it keeps (core.DeliveryStore), and names store values through core's
// aliases; it imports neither store nor a driver.
func TestBotsReachTheStoreThroughCore(t *testing.T) {
	bots := imports(t, "bots/...")
	for _, pkg := range slices.Sorted(maps.Keys(bots)) {
		deps := bots[pkg]
		var direct []string
		for _, d := range deps {
			if hasAnyPrefix(d, module+"/store") {
				direct = append(direct, d)
			}
		}
		switch allowed := slices.Contains(storeDirect, pkg); {
		case len(direct) > 0 && !allowed:
			t.Errorf("%s imports %s; a package under bots/ reaches the store only through core (its methods, core.DeliveryStore, its aliases of store types)",
				pkg, strings.Join(direct, ", "))
		case len(direct) == 0 && allowed:
			t.Errorf("%s no longer imports store: remove it from storeDirect, so that the rule holds for it", pkg)
		}
	}
}

// appImporters are the packages outside cmd/ that build the whole
// service: the binary's own subcommands that run it in-process or check
// its settings, kept in internal/ beside it.
var appImporters = []string{
	"internal/bench",  // switchboard bench: starts the service and measures it
	"internal/doctor", // switchboard doctor: loads the settings the service would
}

// TestOnlyTheBinaryImportsTheApp: internal/app sees every other package
// (it wires them); nothing but the binary (cmd/) and its subcommands'
// packages imports it, or the wiring would leak into the parts it wires.
// Tests may start the whole service (internal/app's own, end-to-end
// ones): only non-test imports are checked.
func TestOnlyTheBinaryImportsTheApp(t *testing.T) {
	all := imports(t, "...")
	for _, pkg := range slices.Sorted(maps.Keys(all)) {
		deps := all[pkg]
		uses, allowed := slices.Contains(deps, module+"/internal/app"), slices.Contains(appImporters, pkg)
		switch {
		case uses && !allowed && !hasAnyPrefix(pkg, "cmd"):
			t.Errorf("%s imports internal/app; only the binary (cmd/) wires the service", pkg)
		case allowed && !uses:
			t.Errorf("%s no longer imports internal/app: remove it from appImporters", pkg)
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
