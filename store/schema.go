package store

import (
	"errors"
	"fmt"
)

// ErrSchemaTooNew means the database's schema was migrated past what this
// binary ships by a migration that leaves binaries like it behind (a
// contract migration, see package migrations): this binary must not run on
// it. The error's text names the schema version, the binary that applied
// it and which binary to run instead.
var ErrSchemaTooNew = errors.New("schema too new for this binary")

// SchemaMigration is one applied migration as a driver records it.
type SchemaMigration struct {
	Version int
	// Floor is the lowest schema version a binary may ship and still run
	// on the schema with this migration applied (migrations.Migration.Floor);
	// 0 when the row predates the record.
	Floor int
	// AppliedBy is the version of the binary that applied it (the drivers'
	// BinaryVersion option); "" when unknown.
	AppliedBy string
}

// SchemaState is what a database's schema says about the binaries that may
// run on it, beside what this binary ships.
type SchemaState struct {
	// Applied is the highest version applied, 0 on an empty database.
	Applied int
	// AppliedBy is the binary version that applied Applied, "" when unknown.
	AppliedBy string
	// Latest is the highest version this binary ships.
	Latest int
	// Floor is the highest floor recorded with any applied migration: a
	// binary shipping a schema below it cannot run on this one.
	Floor int
	// FloorBy is the binary version that applied the first migration
	// raising the floor to Floor: a binary it is safe to run.
	FloorBy string
	// Binary is this binary's version (BinaryVersion), for messages.
	Binary string
}

// NewSchemaState sums up rows (in any order) for a binary, named binary,
// that ships schema versions up to latest.
func NewSchemaState(rows []SchemaMigration, latest int, binary string) *SchemaState {
	s := &SchemaState{Latest: latest, Binary: binary}
	for _, r := range rows {
		if r.Version > s.Applied {
			s.Applied, s.AppliedBy = r.Version, r.AppliedBy
		}
		s.Floor = max(s.Floor, r.Floor)
	}
	// Any binary that applied a migration at the floor ships that schema
	// or later: the earliest one known is the one to name.
	at := 0
	for _, r := range rows {
		if s.Floor > 0 && r.Floor == s.Floor && r.AppliedBy != "" && (at == 0 || r.Version < at) {
			s.FloorBy, at = r.AppliedBy, r.Version
		}
	}
	return s
}

// Newer reports whether the schema is past what this binary ships.
func (s *SchemaState) Newer() bool { return s.Applied > s.Latest }

// Err is nil when this binary may run on the schema (it may migrate it,
// or the schema is newer but still compatible), and an ErrSchemaTooNew
// saying which binary to run when it may not.
func (s *SchemaState) Err() error {
	if !s.Newer() || s.Floor <= s.Latest {
		return nil
	}
	run := fmt.Sprintf("run a switchboard release that ships schema %d or later (switchboard version shows it)", s.Floor)
	if s.FloorBy != "" {
		run = "run switchboard " + s.FloorBy + " or later"
	}
	return fmt.Errorf("%w: the database schema is at version %d, applied by %s, and binaries shipping a schema before %d stop working on it; "+
		"this binary (%s) ships schema %d: %s",
		ErrSchemaTooNew, s.Applied, binaryName(s.AppliedBy), s.Floor, binaryName(s.Binary), s.Latest, run)
}

func binaryName(v string) string {
	if v == "" {
		return "a switchboard binary of unknown version"
	}
	return "switchboard " + v
}
