package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

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
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Date    string `json:"date,omitempty"`
	// Modified is true for a build from a work tree with uncommitted changes.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	// Schema is the newest migration this binary ships (the same number for
	// both dialects): the schema version `migrate` brings a store to.
	Schema int `json:"schema"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" {
			b.Version = bi.Main.Version // "(devel)" for a build from a clone
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	b.Schema, _ = migrations.Latest("sqlite")
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
	fmt.Fprintf(stdout, "schema   %d\n", b.Schema)
	fmt.Fprintf(stdout, "go       %s %s\n", b.Go, b.Platform)
	return nil
}
