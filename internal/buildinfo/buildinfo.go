// Package buildinfo says which build of Switchboard is running: the release
// and commit stamped by the release build (-ldflags -X main.version=…, see
// cmd/switchboard), or else what the Go toolchain recorded in the binary.
// The store records Binary with each migration it applies, so an operator
// can tell which release moved a schema on.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Info is what `switchboard version` prints.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Date    string `json:"date,omitempty"`
	// Modified is true for a build from a work tree with uncommitted changes.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Read returns stamped with its empty fields filled in from the module's
// build information: the module version ("(devel)" for a build from a
// clone) and the VCS revision, time and state when the build recorded them.
func Read(stamped Info) Info {
	b := stamped
	b.Go, b.Platform = runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" {
			b.Version = bi.Main.Version
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
				b.Modified = b.Modified || s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

// Binary is the build as one string, the release and the commit:
// "v1.4.0 (commit 0123abcd4567)", "(devel) (commit 0123abcd4567, modified)",
// or the release alone when no commit is known.
func (i Info) Binary() string {
	if i.Commit == "" {
		return i.Version
	}
	c := i.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if i.Modified {
		c += ", modified"
	}
	return i.Version + " (commit " + c + ")"
}
