package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
)

// The schema compatibility tests: which binaries may run on a schema, as
// the version table records it. Each test plays several releases on one
// database with small migration lists of its own (the logic does not
// depend on the shipped schema): a release is the list it ships and the
// version string it records.

func (s suite) schemaTests() []namedTest {
	return []namedTest{
		{"RecordsBinaryAndFloor", s.testSchemaRecords},
		{"OlderSchemaMigrates", s.testSchemaOlder},
		{"NewerCompatibleRuns", s.testSchemaNewerCompatible},
		{"NewerContractRefused", s.testSchemaNewerContract},
		{"ContractUnderRunningBinary", s.testSchemaContractUnderRunning},
	}
}

// schemaDatabase is a fresh database the test opens stores on.
func (s suite) schemaDatabase(t *testing.T) func(ms []migrations.Migration, binary string) store.Store {
	t.Helper()
	if s.h.SchemaDatabase == nil {
		t.Skipf("%s: Harness.SchemaDatabase is not set", s.h.Name)
	}
	return s.h.SchemaDatabase(t)
}

// release is migrations 1..n, each making a table of its own; contracts
// maps a version to the floor its header declares.
func release(n int, contracts map[int]int) []migrations.Migration {
	ms := make([]migrations.Migration, n)
	for i := range ms {
		v := i + 1
		ms[i] = migrations.Migration{
			Version: v, Name: fmt.Sprintf("test/%04d_probe.sql", v),
			SQL: fmt.Sprintf("CREATE TABLE schema_probe_%d (id INTEGER)", v), Contract: contracts[v],
		}
	}
	migrations.WithFloors(ms)
	return ms
}

func migrateTo(t *testing.T, st store.Store, want int, who string) {
	t.Helper()
	v, err := st.Migrate(ctxFor(t))
	noErr(t, err, "migrating with %s", who)
	eq(t, v, want, "version Migrate returns for %s", who)
}

func schemaState(t *testing.T, st store.Store, who string) *store.SchemaState {
	t.Helper()
	got, err := st.SchemaState(ctxFor(t))
	noErr(t, err, "reading the schema state as %s", who)
	return got
}

func (s suite) testSchemaRecords(t *testing.T) {
	open := s.schemaDatabase(t)
	const v1, v11 = "v1.0.0 (commit 1111aaaa1111)", "v1.1.0 (commit 2222bbbb2222)"
	first := open(release(3, map[int]int{2: 2}), v1)
	empty := schemaState(t, first, v1)
	eq(t, *empty, store.SchemaState{Latest: 3, Binary: v1}, "schema state of an empty database")

	migrateTo(t, first, 3, v1)
	got := schemaState(t, first, v1)
	eq(t, *got, store.SchemaState{Applied: 3, AppliedBy: v1, Latest: 3, Floor: 2, FloorBy: v1, Binary: v1},
		"schema state after %s applied 1..3 (3 keeps the floor 2 declared)", v1)
	noErr(t, got.Err(), "the binary that migrated the schema checking it")

	next := open(release(4, map[int]int{2: 2}), v11)
	migrateTo(t, next, 4, v11)
	got = schemaState(t, next, v11)
	eq(t, *got, store.SchemaState{Applied: 4, AppliedBy: v11, Latest: 4, Floor: 2, FloorBy: v1, Binary: v11},
		"schema state after %s applied 4: the floor's binary is still the first at that floor", v11)
	migrateTo(t, next, 4, v11+" again")
}

func (s suite) testSchemaOlder(t *testing.T) {
	open := s.schemaDatabase(t)
	migrateTo(t, open(release(2, nil), "v1"), 2, "v1")
	newer := open(release(3, map[int]int{3: 2}), "v2")
	got := schemaState(t, newer, "v2 before it migrates")
	isTrue(t, got.Applied == 2 && got.Latest == 3 && !got.Newer(), "an older schema: applied %d latest %d", got.Applied, got.Latest)
	noErr(t, got.Err(), "a binary meeting an older schema (it migrates it)")
	migrateTo(t, newer, 3, "v2")
	got = schemaState(t, newer, "v2")
	eq(t, got.Floor, 2, "floor after v2's contract migration")
	eq(t, got.AppliedBy, "v2", "binary that applied version 3")
}

func (s suite) testSchemaNewerCompatible(t *testing.T) {
	open := s.schemaDatabase(t)
	// v2 ships an expand migration (4) and a contract that spares schema-3
	// binaries (5: binaries before schema 3 stop working).
	migrateTo(t, open(release(5, map[int]int{5: 3}), "v2.0.0"), 5, "v2.0.0")
	old := open(release(3, nil), "v1.0.0")
	v, err := old.Migrate(ctxFor(t))
	noErr(t, err, "migrating with v1.0.0 (ships 3) a schema at 5 whose floor is 3")
	eq(t, v, 5, "version Migrate returns on a newer schema")
	got := schemaState(t, old, "v1.0.0")
	eq(t, *got, store.SchemaState{Applied: 5, AppliedBy: "v2.0.0", Latest: 3, Floor: 3, FloorBy: "v2.0.0", Binary: "v1.0.0"}, "schema state v1.0.0 sees")
	isTrue(t, got.Newer(), "a schema at 5 is newer than a binary shipping 3")
	noErr(t, got.Err(), "a newer schema whose floor (3) the binary meets")
	applied, latest, err := old.SchemaVersion(ctxFor(t))
	noErr(t, err, "reading the schema version as v1.0.0")
	isTrue(t, applied == 5 && latest == 3, "SchemaVersion on a newer schema: %d, %d; want 5, 3", applied, latest)
}

func (s suite) testSchemaNewerContract(t *testing.T) {
	open := s.schemaDatabase(t)
	const v1, v2, v3 = "v1.0.0 (commit 1111aaaa1111)", "v2.0.0 (commit 2222bbbb2222)", "v2.1.0 (commit 3333cccc3333)"
	migrateTo(t, open(release(4, map[int]int{4: 4}), v2), 4, v2)
	migrateTo(t, open(release(5, map[int]int{4: 4}), v3), 5, v3)

	old := open(release(3, nil), v1)
	_, err := old.Migrate(ctxFor(t))
	isTrue(t, errors.Is(err, store.ErrSchemaTooNew), "migrating with %s a schema whose floor is 4: got %v, want ErrSchemaTooNew", v1, err)
	for _, want := range []string{
		"schema is at version 5", "applied by switchboard " + v3, "before 4 stop working",
		"this binary (switchboard " + v1 + ") ships schema 3", "run switchboard " + v2 + " or later",
	} {
		isTrue(t, strings.Contains(err.Error(), want), "the refusal %q does not say %q", err, want)
	}
	got := schemaState(t, old, v1)
	eq(t, got.Applied, 5, "applied version after the refusal")
	isTrue(t, errors.Is(got.Err(), store.ErrSchemaTooNew), "SchemaState.Err of the refused binary: %v", got.Err())

	// Binaries at or past the floor run.
	for _, b := range []struct {
		n    int
		name string
	}{{4, "v2.0.0 again"}, {5, "v2.1.0 again"}} {
		v, err := open(release(b.n, map[int]int{4: 4}), b.name).Migrate(ctxFor(t))
		noErr(t, err, "migrating with %s (ships %d) a schema whose floor is 4", b.name, b.n)
		eq(t, v, 5, "version %s sees", b.name)
	}
}

func (s suite) testSchemaContractUnderRunning(t *testing.T) {
	open := s.schemaDatabase(t)
	old := open(release(3, nil), "v1.0.0")
	migrateTo(t, old, 3, "v1.0.0")
	noErr(t, schemaState(t, old, "v1.0.0").Err(), "the running binary on its own schema")

	// A newer binary migrates under the running one: an expand migration
	// leaves it running, a contract does not.
	migrateTo(t, open(release(4, nil), "v2.0.0"), 4, "v2.0.0")
	noErr(t, schemaState(t, old, "v1.0.0").Err(), "the running binary after an expand migration under it")
	migrateTo(t, open(release(5, map[int]int{5: 5}), "v3.0.0"), 5, "v3.0.0")
	err := schemaState(t, old, "v1.0.0").Err()
	isTrue(t, errors.Is(err, store.ErrSchemaTooNew) && strings.Contains(fmt.Sprint(err), "run switchboard v3.0.0 or later"),
		"the running binary after a contract migration under it: %v; want ErrSchemaTooNew naming v3.0.0", err)
}
