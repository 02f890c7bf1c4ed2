package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/switchboardhq/switchboard/internal/buildinfo"
	"github.com/switchboardhq/switchboard/migrations"
)

// Set by the release build (-ldflags "-X main.version=… -X main.commit=… -X
// main.date=…", GoReleaser's defaults); a plain go build leaves them empty
// and the module's build information fills in what it knows.
var (
	version string
	commit  string
	date    string
)

// buildInfo is what `switchboard version` prints: enough to tell which
// release runs and which schema it writes, for a bug report or an upgrade.
type buildInfo struct {
	buildinfo.Info
	// Schema is the newest migration this binary ships (the same number for
	// both dialects): the schema version `migrate` brings a store to.
	Schema int `json:"schema"`
	// SchemaFloor is the lowest schema version a binary may ship and still
	// run on a store this binary migrated (see docs/production.md#upgrades):
	// older binaries refuse it. The higher of the two dialects' floors.
	SchemaFloor int `json:"schema_floor"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Info: buildinfo.Read(buildinfo.Info{Version: version, Commit: commit, Date: date})}
	for _, dialect := range []string{"sqlite", "postgres"} {
		if ms, err := migrations.Load(dialect); err == nil && len(ms) > 0 {
			b.Schema, b.SchemaFloor = ms[len(ms)-1].Version, max(b.SchemaFloor, ms[len(ms)-1].Floor)
		}
	}
	return b
}

func versionCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b := readBuildInfo()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	fmt.Fprintf(stdout, "switchboard %s\n", b.Version)
	if b.Commit != "" {
		dirty := ""
		if b.Modified {
			dirty = " (modified)"
		}
		fmt.Fprintf(stdout, "commit   %s%s\n", b.Commit, dirty)
	}
	if b.Date != "" {
		fmt.Fprintf(stdout, "built    %s\n", b.Date)
	}
	fmt.Fprintf(stdout, "schema   %d (binaries of schema %d or later run on it)\n", b.Schema, b.SchemaFloor)
	fmt.Fprintf(stdout, "go       %s %s\n", b.Go, b.Platform)
	return nil
}
